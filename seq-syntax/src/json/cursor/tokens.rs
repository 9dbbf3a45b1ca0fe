//! The lexer's tokens as an editor reads them: comments dropped, the malformed ones folded into
//! the kind they were meant to be (a string without its closing quote is still a string, `01`
//! still a number, `$args.` still a reference), so that text being typed keeps its shape.

use super::super::lexer::Token;
use logos::Logos;
use std::ops::Range;

/// What a token is, as far as the structure around it cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    LBrace,
    RBrace,
    LBrack,
    RBrack,
    Colon,
    Comma,
    /// A string literal, quotes included; `closed` is false when the line or text ended first.
    String {
        closed: bool,
    },
    Number,
    /// A bare word: `true`, `false`, `null`, or an unquoted key or value being typed.
    Word,
    /// `$…`: a bare reference (or the start of one).
    Ref,
    /// Anything else: the items' `;`, characters no token starts with.
    Other,
}

/// A token and its byte range in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tok {
    pub kind: Kind,
    pub range: Range<usize>,
}

impl Tok {
    /// The string's body: between the quotes, or to the end of an unclosed string.
    pub fn body(&self) -> Range<usize> {
        let start = (self.range.start + 1).min(self.range.end);
        let end = match self.kind {
            Kind::String { closed: true } => self.range.end.saturating_sub(1).max(start),
            Kind::String { closed: false }
            | Kind::LBrace
            | Kind::RBrace
            | Kind::LBrack
            | Kind::RBrack
            | Kind::Colon
            | Kind::Comma
            | Kind::Number
            | Kind::Word
            | Kind::Ref
            | Kind::Other => self.range.end,
        };
        start..end
    }

    /// What the token says: a string's body, any other token whole.
    pub fn content(&self) -> Range<usize> {
        if let Kind::String { .. } = self.kind {
            self.body()
        } else {
            self.range.clone()
        }
    }

    /// Whether a cursor at `offset` edits this token: inside a string (not before its opening
    /// quote, not after its closing one), or inside or at the end of a word.
    pub fn holds_cursor(&self, offset: usize) -> bool {
        let Range { start, end } = self.range;
        match self.kind {
            Kind::String { closed: true } => start < offset && offset < end,
            Kind::String { closed: false } | Kind::Number | Kind::Word | Kind::Ref => {
                start < offset && offset <= end
            }
            Kind::LBrace
            | Kind::RBrace
            | Kind::LBrack
            | Kind::RBrack
            | Kind::Colon
            | Kind::Comma
            | Kind::Other => false,
        }
    }
}

/// The tokens of `text`.
pub fn tokenize(text: &str) -> Vec<Tok> {
    Tokens::new(text).collect()
}

/// The tokens of a text, read as they are asked for: a reader that decides early (is this a
/// sequence?) reads no further than it must.
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    lexer: logos::Lexer<'a, Token<'a>>,
}

impl<'a> Tokens<'a> {
    pub fn new(text: &'a str) -> Tokens<'a> {
        Tokens {
            lexer: Token::lexer(text),
        }
    }
}

impl Iterator for Tokens<'_> {
    type Item = Tok;

    fn next(&mut self) -> Option<Tok> {
        loop {
            let token = self.lexer.next()?;
            let range = self.lexer.span();
            let kind = match token {
                Ok(Token::LBrace) => Kind::LBrace,
                Ok(Token::RBrace) => Kind::RBrace,
                Ok(Token::LBrack) => Kind::LBrack,
                Ok(Token::RBrack) => Kind::RBrack,
                Ok(Token::Colon) => Kind::Colon,
                Ok(Token::Comma) => Kind::Comma,
                Ok(Token::String(_)) => Kind::String { closed: true },
                Ok(Token::BadString(text)) => Kind::String {
                    closed: closes(text),
                },
                Ok(Token::Number(_) | Token::BadNumber(_)) => Kind::Number,
                Ok(
                    Token::True
                    | Token::False
                    | Token::Null
                    | Token::Word(_)
                    | Token::SingleQuoted(_),
                ) => Kind::Word,
                Ok(Token::Ref(_) | Token::BadRef(_)) => Kind::Ref,
                Ok(Token::LineComment(_) | Token::BlockComment(_) | Token::UnclosedComment(_)) => {
                    continue;
                }
                Ok(Token::Unknown(_) | Token::Invalid(_)) | Err(()) => Kind::Other,
            };
            return Some(Tok { kind, range });
        }
    }
}

/// Whether a malformed string literal (a bad escape, a raw control character, or cut off by the
/// end of its line) has its closing quote.
fn closes(literal: &str) -> bool {
    let mut bytes = literal.bytes().skip(1);
    while let Some(b) = bytes.next() {
        match b {
            b'"' => return bytes.next().is_none(),
            b'\\' => {
                bytes.next();
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        tokenize(text)
            .into_iter()
            .map(|t| (t.kind, text.get(t.range).unwrap_or("?")))
            .collect()
    }

    #[test]
    fn malformed_tokens_keep_their_kind() {
        let closed = Kind::String { closed: true };
        let open = Kind::String { closed: false };
        assert_eq!(
            kinds("{\"a\\\"\": [1, tr, $args.主机[0], 01] ; \"unclosed\n}"),
            [
                (Kind::LBrace, "{"),
                (closed, "\"a\\\"\""),
                (Kind::Colon, ":"),
                (Kind::LBrack, "["),
                (Kind::Number, "1"),
                (Kind::Comma, ","),
                (Kind::Word, "tr"),
                (Kind::Comma, ","),
                (Kind::Ref, "$args.主机[0]"),
                (Kind::Comma, ","),
                (Kind::Number, "01"),
                (Kind::RBrack, "]"),
                (Kind::Other, ";"),
                (open, "\"unclosed"),
                (Kind::RBrace, "}"),
            ]
        );
        assert_eq!(
            kinds("// c\n/* d */ $args.} \"a\\x\" \"\\"),
            [
                (Kind::Ref, "$args."),
                (Kind::RBrace, "}"),
                (closed, "\"a\\x\""),
                (open, "\"\\"),
            ]
        );
        assert_eq!(kinds("\"a\\\""), [(open, "\"a\\\"")]);
    }
}
