//! The logos lexer shared by the file level and the item language.
//!
//! Besides JSON's own tokens it recognises the usual ways people get JSON wrong — comments,
//! unquoted words, single quotes, malformed strings and numbers — as tokens of their own, so
//! that the parser can report each precisely instead of "unexpected character". Where a valid
//! and a lenient pattern match the same text, the valid one wins by priority; the lenient one
//! only wins when it matches further, that is when the text is not valid JSON.

use logos::Logos;
use std::fmt;

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n]+")]
pub enum Token<'src> {
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBrack,
    #[token("]")]
    RBrack,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("null")]
    Null,

    /// A valid string literal, quotes included.
    #[regex(
        r#""([^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#,
        priority = 10
    )]
    String(&'src str),

    /// A number in JSON's grammar.
    #[regex(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?", priority = 10)]
    Number(&'src str),

    /// A bare reference, `$args.hosts[0]`, `$each.host`, `$each_index` (a value in item mode
    /// only).
    #[regex(
        r"\$(args|out|each|each_index)(\.[\p{XID_Start}_]\p{XID_Continue}*|\[[0-9]+\])*",
        priority = 10
    )]
    Ref(&'src str),

    /// Something reference-like that is not a reference: `$args.`, `$args[x]`, `$HOME`.
    #[regex(
        r"\$\p{XID_Continue}*(\.\p{XID_Continue}*|\[[^\]\s,}]*\]?)*",
        priority = 1
    )]
    BadRef(&'src str),

    #[regex(r"//[^\r\n]*", allow_greedy = true)]
    LineComment(&'src str),

    #[regex(r"/\*([^*]|\*+[^*/])*\*+/")]
    BlockComment(&'src str),

    /// `/*` never closed: runs to the end of the input.
    #[regex(r"/\*([^*]|\*+[^*/])*\**")]
    UnclosedComment(&'src str),

    /// A string literal that is not valid JSON: a bad escape, a raw control character, or no
    /// closing quote before the end of the line.
    #[regex(r#""([^"\\\r\n]|\\[^\r\n])*\\?"?"#, priority = 1)]
    BadString(&'src str),

    /// Something number-like that is not a JSON number: `+1`, `01`, `.5`, `1.`, `0x1F`, `-NaN`.
    #[regex(
        r"[+-]*\.?[0-9][0-9A-Za-z_.+-]*|[+-]+[A-Za-z_.][0-9A-Za-z_.+-]*|[+-]+",
        priority = 1
    )]
    BadNumber(&'src str),

    /// A bare word: an unquoted key or string, or a literal spelled wrong (`True`, `NaN`).
    #[regex(r"[\p{XID_Start}_]\p{XID_Continue}*", priority = 1)]
    Word(&'src str),

    /// A string in single quotes.
    #[regex(r"'([^'\\\r\n]|\\[^\r\n])*'?")]
    SingleQuoted(&'src str),

    /// Characters no token starts with (never produced by logos itself: the front end turns
    /// lexer errors into it).
    Unknown(&'src str),

    /// Stands for input already reported and skipped (a malformed token, or a structure nested
    /// too deeply); the grammar accepts it as a value or key without a further error.
    Invalid(&'src str),
}

impl Token<'_> {
    /// Whether a JSON value (or, for a string, an object key) can start with this token.
    pub(crate) fn starts_value(self) -> bool {
        match self {
            Token::LBrace
            | Token::LBrack
            | Token::True
            | Token::False
            | Token::Null
            | Token::String(_)
            | Token::Number(_)
            | Token::Ref(_)
            | Token::BadRef(_)
            | Token::BadString(_)
            | Token::BadNumber(_)
            | Token::Word(_)
            | Token::SingleQuoted(_)
            | Token::Invalid(_) => true,
            Token::RBrace
            | Token::RBrack
            | Token::Colon
            | Token::Comma
            | Token::LineComment(_)
            | Token::BlockComment(_)
            | Token::UnclosedComment(_)
            | Token::Unknown(_) => false,
        }
    }

    pub(crate) fn is_opener(self) -> bool {
        matches!(self, Token::LBrack | Token::LBrace)
    }

    pub(crate) fn is_closer(self) -> bool {
        matches!(self, Token::RBrack | Token::RBrace)
    }

    /// Whether a JSON value can end with this token (so a `,` after it may be trailing).
    pub(crate) fn ends_value(self) -> bool {
        // A closer, or what starts a value and is whole by itself (not an opener).
        self.is_closer() || (self.starts_value() && !self.is_opener())
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match *self {
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::LBrack => "[",
            Token::RBrack => "]",
            Token::Colon => ":",
            Token::Comma => ",",
            Token::True => "true",
            Token::False => "false",
            Token::Null => "null",
            Token::String(s)
            | Token::Number(s)
            | Token::Ref(s)
            | Token::BadRef(s)
            | Token::LineComment(s)
            | Token::BlockComment(s)
            | Token::UnclosedComment(s)
            | Token::BadString(s)
            | Token::BadNumber(s)
            | Token::Word(s)
            | Token::SingleQuoted(s)
            | Token::Unknown(s)
            | Token::Invalid(s) => s,
        };
        write!(f, "`{}`", shorten(text))
    }
}

/// The body of a string token, between its quotes.
pub(super) fn body(token: &str) -> &str {
    token
        .get(1..token.len().saturating_sub(1))
        .unwrap_or_default()
}

/// At most 24 characters of `text`, with `…` when cut and invisible characters escaped, for
/// quoting tokens in messages.
pub(crate) fn shorten(text: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 24;
    let cut = text.char_indices().nth(MAX).map(|(at, _)| at);
    if cut.is_none() && !text.chars().any(invisible) {
        return text.into();
    }
    let mut shown = String::with_capacity(text.len().min(4 * MAX) + 3);
    for c in text
        .get(..cut.unwrap_or(text.len()))
        .unwrap_or(text)
        .chars()
    {
        if invisible(c) {
            shown.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            shown.push(c);
        }
    }
    if cut.is_some() {
        shown.push('…');
    }
    shown.into()
}

/// Characters that would not show in a message: controls, and the zero-width ones people meet
/// in JSON by accident (byte order mark, zero-width space, word joiner).
fn invisible(c: char) -> bool {
    c.is_control() || matches!(c, '\u{feff}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> Vec<Result<Token<'_>, ()>> {
        Token::lexer(text).collect()
    }

    #[test]
    fn valid_tokens_win_over_lenient_ones() {
        use Token::*;
        assert_eq!(
            lex(r#"{"a\n\u00e9": [-1.5e3, 0, true, null]}"#),
            [
                Ok(LBrace),
                Ok(String(r#""a\n\u00e9""#)),
                Ok(Colon),
                Ok(LBrack),
                Ok(Number("-1.5e3")),
                Ok(Comma),
                Ok(Number("0")),
                Ok(Comma),
                Ok(True),
                Ok(Comma),
                Ok(Null),
                Ok(RBrack),
                Ok(RBrace),
            ]
        );
    }

    #[test]
    fn malformed_tokens_are_tokens_of_their_own() {
        use Token::*;
        assert_eq!(lex(r#""a\x""#), [Ok(BadString(r#""a\x""#))]);
        assert_eq!(lex("\"a\tb\""), [Ok(BadString("\"a\tb\""))]);
        assert_eq!(lex("\"abc\n1"), [Ok(BadString("\"abc")), Ok(Number("1"))]);
        for bad in [
            "01", "-01", "+1", ".5", "1.", "1.e3", "0x1F", "-NaN", "1e", "-",
        ] {
            assert_eq!(lex(bad), [Ok(BadNumber(bad))], "{bad}");
        }
        assert_eq!(lex("True"), [Ok(Word("True"))]);
        assert_eq!(lex("truex"), [Ok(Word("truex"))]);
        assert_eq!(lex("'a'"), [Ok(SingleQuoted("'a'"))]);
        assert_eq!(
            lex("// c\n/* d */"),
            [Ok(LineComment("// c")), Ok(BlockComment("/* d */"))]
        );
        assert_eq!(lex("/* d * e"), [Ok(UnclosedComment("/* d * e"))]);
        assert_eq!(lex("@"), [Err(())]);
        assert_eq!(lex("\u{feff}"), [Err(())]);
    }

    #[test]
    fn messages_show_invisible_characters_and_cut_long_tokens() {
        assert_eq!(shorten("\u{feff}\0x"), "\\u{feff}\\u{0}x");
        assert_eq!(shorten(&"a".repeat(30)), format!("{}…", "a".repeat(24)));
        assert_eq!(Token::Unknown("\u{2060}").to_string(), "`\\u{2060}`");
    }

    #[test]
    fn references_follow_d2() {
        use Token::*;
        assert_eq!(lex("$args.hosts[0].主机"), [Ok(Ref("$args.hosts[0].主机"))]);
        assert_eq!(lex("$out._x"), [Ok(Ref("$out._x"))]);
        assert_eq!(lex("$args"), [Ok(Ref("$args"))]);
        assert_eq!(lex("[$args.x]")[1], Ok(Ref("$args.x")));
        for bad in ["$args.", "$args[x]", "$HOME", "$arguments", "$args.0", "$"] {
            assert_eq!(lex(bad), [Ok(BadRef(bad))], "{bad}");
        }
    }
}
