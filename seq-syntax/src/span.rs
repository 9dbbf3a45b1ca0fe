//! Byte spans into the file a user wrote, and the line index that turns them into positions.

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// A half-open byte range `start..end` into the *file* (never into an unescaped string).
///
/// `u32` keeps AST nodes small; files are bounded well below 4 GiB by the front end.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// Builds a span from `usize` offsets, saturating at `u32::MAX`.
    pub fn from_range(range: Range<usize>) -> Span {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Span::new(clamp(range.start), clamp(range.end))
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// A span shifted right by `by` bytes.
    pub fn shift(self, by: u32) -> Span {
        Span::new(self.start.saturating_add(by), self.end.saturating_add(by))
    }

    pub fn contains(self, offset: u32) -> bool {
        self.start <= offset && offset < self.end
    }
}

impl From<Range<usize>> for Span {
    fn from(range: Range<usize>) -> Span {
        Span::from_range(range)
    }
}

/// A value with the span of the text it came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub const fn new(value: T, span: Span) -> Spanned<T> {
        Spanned { value, span }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Spanned<U> {
        Spanned::new(f(self.value), self.span)
    }

    pub fn as_ref(&self) -> Spanned<&T> {
        Spanned::new(&self.value, self.span)
    }
}

/// A 1-based line and a 1-based column counted in characters, as `seqc check --format json` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// Offsets of line starts, to turn byte offsets into lines and columns (in characters or in
/// UTF-16 code units, which is what LSP negotiates by default).
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
        LineIndex { line_starts }
    }

    /// The 0-based line holding `offset` and the byte offset where that line starts.
    pub fn line_of(&self, offset: u32) -> (u32, u32) {
        let line = self
            .line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        (u32::try_from(line).unwrap_or(u32::MAX), start)
    }

    /// 1-based line and 1-based column in characters. An offset inside a character or past the
    /// end is clamped to the last character boundary before it.
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let (line, start) = self.line_of(offset);
        let prefix = clamped_slice(text, start as usize, offset as usize);
        LineCol {
            line: line + 1,
            column: u32::try_from(prefix.chars().count()).unwrap_or(u32::MAX) + 1,
        }
    }

    /// 0-based line and 0-based column in UTF-16 code units (LSP's default encoding).
    pub fn line_col_utf16(&self, text: &str, offset: u32) -> (u32, u32) {
        let (line, start) = self.line_of(offset);
        let prefix = clamped_slice(text, start as usize, offset as usize);
        let col = prefix.chars().map(char::len_utf16).sum::<usize>();
        (line, u32::try_from(col).unwrap_or(u32::MAX))
    }

    /// 0-based line and 0-based column in bytes (LSP's `utf-8` encoding).
    pub fn line_col_utf8(&self, text: &str, offset: u32) -> (u32, u32) {
        let (line, start) = self.line_of(offset);
        let prefix = clamped_slice(text, start as usize, offset as usize);
        (line, u32::try_from(prefix.len()).unwrap_or(u32::MAX))
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset of a 0-based line and a 0-based UTF-16 column, clamped to the line.
    pub fn offset_utf16(&self, text: &str, line: u32, col: u32) -> u32 {
        let Some(&start) = self.line_starts.get(line as usize) else {
            return u32::try_from(text.len()).unwrap_or(u32::MAX);
        };
        let mut units = 0u32;
        let rest = text.get(start as usize..).unwrap_or("");
        for (i, ch) in rest.char_indices() {
            if units >= col || ch == '\n' {
                return start + u32::try_from(i).unwrap_or(u32::MAX);
            }
            units += u32::try_from(ch.len_utf16()).unwrap_or(2);
        }
        u32::try_from(text.len()).unwrap_or(u32::MAX)
    }

    /// Byte offset of a 0-based line and a 0-based column in bytes (LSP's `utf-8` encoding),
    /// clamped to the line and to the character boundary at or before it.
    pub fn offset_utf8(&self, text: &str, line: u32, col: u32) -> u32 {
        let Some(&start) = self.line_starts.get(line as usize) else {
            return u32::try_from(text.len()).unwrap_or(u32::MAX);
        };
        let rest = text.get(start as usize..).unwrap_or("");
        let line_len = rest.find('\n').unwrap_or(rest.len());
        let mut at = (col as usize).min(line_len);
        while at > 0 && !rest.is_char_boundary(at) {
            at -= 1;
        }
        start.saturating_add(u32::try_from(at).unwrap_or(u32::MAX))
    }
}

fn clamped_slice(text: &str, start: usize, end: usize) -> &str {
    let mut end = end.min(text.len());
    while end > start && !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(start.min(end)..end).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_utf16_units() {
        let text = "ab\n主机 x\n😀y";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(index.line_col(text, x), LineCol { line: 2, column: 4 });
        assert_eq!(index.line_col_utf16(text, x), (1, 3));
        assert_eq!(index.line_col_utf8(text, x), (1, 7));
        let y = text.find('y').unwrap() as u32;
        assert_eq!(index.line_col(text, y), LineCol { line: 3, column: 2 });
        assert_eq!(index.line_col_utf16(text, y), (2, 2));
        assert_eq!(index.offset_utf16(text, 2, 2), y);
    }

    #[test]
    fn utf8_columns_round_trip_and_clamp() {
        let text = "ab\n主机 x\n😀y";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(index.offset_utf8(text, 1, 7), x);
        // Inside `主` (bytes 3..6 of the file): back to its start.
        assert_eq!(index.offset_utf8(text, 1, 1), 3);
        // Past the end of a line: its end, not the next line.
        assert_eq!(index.offset_utf8(text, 0, 99), 2);
        // Past the last line: the end of the text.
        assert_eq!(index.offset_utf8(text, 9, 0), text.len() as u32);
        for offset in [0, 2, 3, x, text.len() as u32] {
            let (line, col) = index.line_col_utf8(text, offset);
            assert_eq!(index.offset_utf8(text, line, col), offset);
        }
    }
}
