//! Positions in the negotiated encoding: LSP counts columns in UTF-16 code units unless the
//! client offers UTF-8. Spans are bytes of the file, so every conversion goes through
//! [`LineIndex`] and nothing else.

use lsp_types::{Position, PositionEncodingKind, Range};
use seq_syntax::{LineIndex, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    /// UTF-8 when the client offers it (no conversion at all), else the mandatory UTF-16.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        match offered {
            Some(kinds) if kinds.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
            Some(_) | None => Encoding::Utf16,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }
}

/// A document's text with its line index, for conversions both ways.
#[derive(Clone, Copy, Debug)]
pub struct Lines<'a> {
    pub text: &'a str,
    pub index: &'a LineIndex,
    pub encoding: Encoding,
}

impl Lines<'_> {
    pub fn position(&self, offset: u32) -> Position {
        let (line, character) = match self.encoding {
            Encoding::Utf8 => self.index.line_col_utf8(self.text, offset),
            Encoding::Utf16 => self.index.line_col_utf16(self.text, offset),
        };
        Position { line, character }
    }

    pub fn range(&self, span: Span) -> Range {
        Range {
            start: self.position(span.start),
            end: self.position(span.end),
        }
    }

    /// The byte offset of a position; positions past a line's end or the text's end clamp to it.
    pub fn offset(&self, position: Position) -> u32 {
        match self.encoding {
            Encoding::Utf8 => self
                .index
                .offset_utf8(self.text, position.line, position.character),
            Encoding::Utf16 => {
                self.index
                    .offset_utf16(self.text, position.line, position.character)
            }
        }
    }

    pub fn span(&self, range: Range) -> Span {
        let start = self.offset(range.start);
        let end = self.offset(range.end);
        Span::new(start.min(end), start.max(end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_only_when_offered() {
        let both = [PositionEncodingKind::UTF16, PositionEncodingKind::UTF8];
        assert_eq!(Encoding::negotiate(Some(&both)), Encoding::Utf8);
        let utf32 = [PositionEncodingKind::UTF32];
        assert_eq!(Encoding::negotiate(Some(&utf32)), Encoding::Utf16);
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
    }

    #[test]
    fn cjk_and_astral_columns_round_trip() {
        let text = "{\"名\": \"😀x\"}\nnext";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        for (encoding, column) in [(Encoding::Utf16, 9), (Encoding::Utf8, 13)] {
            let lines = Lines {
                text,
                index: &index,
                encoding,
            };
            let at = lines.position(x);
            assert_eq!(at, Position::new(0, column), "{encoding:?}");
            assert_eq!(lines.offset(at), x);
            let span = Span::new(x, x + 1);
            assert_eq!(lines.span(lines.range(span)), span);
        }
    }
}
