//! A forgiving JSON tokenizer for text that is being typed: it never fails, a string without its
//! closing quote ends at the end of its line, and the item language's `;` and bare references are
//! tokens of their own. Completion, semantic tokens and document detection read the text through
//! it, where the parser's recovery would drop the half-written part they care about.

use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    LBrace,
    RBrace,
    LBrack,
    RBrack,
    Colon,
    Comma,
    Semicolon,
    /// A string literal, quotes included; `closed` is false when the line or text ended first.
    String {
        closed: bool,
    },
    Number,
    /// A bare word: `true`, `false`, `null`, or an unquoted key or value being typed.
    Word,
    /// `$…`: a bare reference (or the start of one).
    Ref,
    /// Any other character.
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tok {
    pub kind: Kind,
    pub range: Range<usize>,
}

impl Tok {
    /// The string's body: between the quotes, or to the end of an unclosed string.
    pub(crate) fn body(&self) -> Range<usize> {
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
            | Kind::Semicolon
            | Kind::Number
            | Kind::Word
            | Kind::Ref
            | Kind::Other => self.range.end,
        };
        start..end
    }

    /// Whether a cursor at `offset` edits this token: inside a string (not before its opening
    /// quote, not after its closing one), or inside or at the end of a word.
    pub(crate) fn holds_cursor(&self, offset: usize) -> bool {
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
            | Kind::Semicolon
            | Kind::Other => false,
        }
    }
}

/// The tokens of `text`, comments and whitespace skipped.
pub(crate) fn tokenize(text: &str) -> Vec<Tok> {
    Tokens::new(text).collect()
}

/// The tokens of a text, read as they are asked for: a reader that decides early (is this a
/// sequence?) reads no further than it must.
#[derive(Clone, Debug)]
pub(crate) struct Tokens<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(text: &'a str) -> Tokens<'a> {
        Tokens { text, pos: 0 }
    }
}

impl Iterator for Tokens<'_> {
    type Item = Tok;

    fn next(&mut self) -> Option<Tok> {
        let text = self.text;
        let bytes = text.as_bytes();
        loop {
            let pos = self.pos;
            let ch = text.get(pos..)?.chars().next()?;
            let start = pos;
            let single = |kind| (kind, start + 1);
            let (kind, end) = match ch {
                c if c.is_whitespace() => {
                    self.pos += c.len_utf8();
                    continue;
                }
                '/' if bytes.get(pos + 1) == Some(&b'/') => {
                    self.pos = line_end(bytes, pos);
                    continue;
                }
                '/' if bytes.get(pos + 1) == Some(&b'*') => {
                    self.pos = text
                        .get(pos + 2..)
                        .and_then(|rest| rest.find("*/"))
                        .map_or(text.len(), |i| pos + 2 + i + 2);
                    continue;
                }
                '{' => single(Kind::LBrace),
                '}' => single(Kind::RBrace),
                '[' => single(Kind::LBrack),
                ']' => single(Kind::RBrack),
                ':' => single(Kind::Colon),
                ',' => single(Kind::Comma),
                ';' => single(Kind::Semicolon),
                '"' => string(bytes, pos),
                '$' => (Kind::Ref, reference_end(text, pos)),
                '-' | '0'..='9' => (Kind::Number, number_end(bytes, pos)),
                c if c == '_' || unicode_ident::is_xid_start(c) => {
                    (Kind::Word, word_end(text, pos))
                }
                c => (Kind::Other, pos + c.len_utf8()),
            };
            self.pos = end;
            return Some(Tok {
                kind,
                range: start..end,
            });
        }
    }
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&b| b == b'\n' || b == b'\r'))
        .map_or(bytes.len(), |i| from + i)
}

/// A string from its quote at `start`: to the closing quote, or unclosed at the end of the line.
fn string(bytes: &[u8], start: usize) -> (Kind, usize) {
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => return (Kind::String { closed: true }, i + 1),
            b'\n' | b'\r' => return (Kind::String { closed: false }, i),
            // An escape takes the next byte, unless the line ends there.
            b'\\' => match bytes.get(i + 1) {
                Some(b'\n' | b'\r') | None => i += 1,
                Some(_) => i += 2,
            },
            _ => i += 1,
        }
    }
    (Kind::String { closed: false }, bytes.len().max(start + 1))
}

fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while bytes
        .get(i)
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
    {
        i += 1;
    }
    i
}

fn is_continue(c: char) -> bool {
    unicode_ident::is_xid_continue(c)
}

fn word_end(text: &str, start: usize) -> usize {
    let rest = text.get(start..).unwrap_or("");
    start
        + rest
            .char_indices()
            .find(|&(_, c)| !is_continue(c))
            .map_or(rest.len(), |(i, _)| i)
}

/// `$args.x.y[0]`, `${out.x}`, `$arg` or `$`: everything a reference could be made of.
fn reference_end(text: &str, start: usize) -> usize {
    let rest = text.get(start + 1..).unwrap_or("");
    let braced = rest.starts_with('{');
    let mut end = start + 1 + usize::from(braced);
    let mut open = false;
    for c in text.get(end..).unwrap_or("").chars() {
        let index = match c {
            '[' => !std::mem::replace(&mut open, true),
            ']' => std::mem::replace(&mut open, false),
            _ => false,
        };
        if is_continue(c) || c == '.' || index {
            end += c.len_utf8();
        } else {
            if braced && c == '}' {
                end += 1;
            }
            break;
        }
    }
    end
}

/// Identifier characters just before `end` in `text`: the name being typed.
pub(crate) fn ident_before(text: &str, end: usize) -> usize {
    let before = text.get(..end).unwrap_or("");
    before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_continue(c))
        .last()
        .map_or(end, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        tokenize(text)
            .into_iter()
            .map(|t| (t.kind, &text[t.range]))
            .collect()
    }

    #[test]
    fn tokens_of_broken_text() {
        let closed = Kind::String { closed: true };
        assert_eq!(
            kinds("{\"a\\\"\": [1, tr, $args.主机[0]] ; \"unclosed\n}"),
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
                (Kind::RBrack, "]"),
                (Kind::Semicolon, ";"),
                (Kind::String { closed: false }, "\"unclosed"),
                (Kind::RBrace, "}"),
            ]
        );
        assert_eq!(
            kinds("// c\n/* d */ ${out.x}} \"\\"),
            [
                (Kind::Ref, "${out.x}"),
                (Kind::RBrace, "}"),
                (Kind::String { closed: false }, "\"\\"),
            ]
        );
        assert_eq!(ident_before("$args.主机", "$args.主机".len()), 6);
        assert_eq!(ident_before("$args.", 6), 6);
    }
}
