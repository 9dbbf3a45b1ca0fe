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
///
/// Models write JSON on one line, so a line can be megabytes long: every [`STRIDE`] bytes of a
/// long line a checkpoint records the characters and UTF-16 units before it on its line, and a
/// column is counted from the nearest checkpoint, never from the line's start. Any lookup costs
/// at most `STRIDE` bytes of counting, however long the line.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<u32>,
    checkpoints: Vec<Checkpoint>,
}

/// How far apart the checkpoints of a long line are, in bytes.
pub const STRIDE: u32 = 1024;

/// A point on a long line: its byte offset in the file, and the characters and UTF-16 units
/// between its line's start and it.
#[derive(Clone, Copy, Debug)]
struct Checkpoint {
    offset: u32,
    chars: u32,
    utf16: u32,
}

/// What precedes a point on its line: the byte offset counting starts from, and the characters
/// and UTF-16 units before that.
#[derive(Clone, Copy)]
struct Base {
    line: u32,
    offset: u32,
    chars: u32,
    utf16: u32,
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
        let mut checkpoints = Vec::new();
        for (i, &start) in line_starts.iter().enumerate() {
            let end = line_starts
                .get(i + 1)
                .map_or(text.len(), |&next| next as usize - 1);
            if end.saturating_sub(start as usize) > STRIDE as usize {
                mark_line(text, start as usize, end, &mut checkpoints);
            }
        }
        LineIndex {
            line_starts,
            checkpoints,
        }
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

    /// The nearest point at or before `offset` on its line whose counts are known.
    fn base(&self, offset: u32) -> Base {
        let (line, start) = self.line_of(offset);
        let at = self.checkpoints.partition_point(|c| c.offset <= offset);
        match at.checked_sub(1).and_then(|i| self.checkpoints.get(i)) {
            Some(c) if c.offset > start => Base {
                line,
                offset: c.offset,
                chars: c.chars,
                utf16: c.utf16,
            },
            _ => Base {
                line,
                offset: start,
                chars: 0,
                utf16: 0,
            },
        }
    }

    /// 1-based line and 1-based column in characters. An offset inside a character or past the
    /// end is clamped to the last character boundary before it.
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let base = self.base(offset);
        let prefix = clamped_slice(text, base.offset as usize, offset as usize);
        let column = base.chars as usize + prefix.chars().count();
        LineCol {
            line: base.line + 1,
            column: u32::try_from(column).unwrap_or(u32::MAX).saturating_add(1),
        }
    }

    /// 0-based line and 0-based column in UTF-16 code units (LSP's default encoding).
    pub fn line_col_utf16(&self, text: &str, offset: u32) -> (u32, u32) {
        let base = self.base(offset);
        let prefix = clamped_slice(text, base.offset as usize, offset as usize);
        let col = base.utf16 as usize + utf16_len(prefix);
        (base.line, u32::try_from(col).unwrap_or(u32::MAX))
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

    /// The byte range of a 0-based line, without its `\n`.
    pub fn line_range(&self, text: &str, line: usize) -> Option<Range<usize>> {
        let start = *self.line_starts.get(line)? as usize;
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(text.len(), |&next| next as usize - 1);
        Some(start..end.max(start))
    }

    /// Byte offset of a 0-based line and a 0-based UTF-16 column, clamped to the line.
    pub fn offset_utf16(&self, text: &str, line: u32, col: u32) -> u32 {
        let Some(Range { start, end }) = self.line_range(text, line as usize) else {
            return u32::try_from(text.len()).unwrap_or(u32::MAX);
        };
        // The last checkpoint of this line that is not past `col`.
        let first = self
            .checkpoints
            .partition_point(|c| (c.offset as usize) <= start);
        let last = self
            .checkpoints
            .partition_point(|c| (c.offset as usize) <= end);
        let on_line = self.checkpoints.get(first..last).unwrap_or(&[]);
        let (mut at, mut units) = match on_line.partition_point(|c| c.utf16 <= col) {
            0 => (start, 0),
            n => on_line
                .get(n - 1)
                .map_or((start, 0), |c| (c.offset as usize, c.utf16)),
        };
        let rest = text.get(at..end).unwrap_or("");
        for ch in rest.chars() {
            if units >= col {
                break;
            }
            units += u32::try_from(ch.len_utf16()).unwrap_or(2);
            at += ch.len_utf8();
        }
        u32::try_from(at).unwrap_or(u32::MAX)
    }

    /// Byte offset of a 0-based line and a 0-based column in bytes (LSP's `utf-8` encoding),
    /// clamped to the line and to the character boundary at or before it.
    pub fn offset_utf8(&self, text: &str, line: u32, col: u32) -> u32 {
        let Some(Range { start, end }) = self.line_range(text, line as usize) else {
            return u32::try_from(text.len()).unwrap_or(u32::MAX);
        };
        let mut at = (start + col as usize).min(end);
        while at > start && !text.is_char_boundary(at) {
            at -= 1;
        }
        u32::try_from(at).unwrap_or(u32::MAX)
    }
}

/// Checkpoints every [`STRIDE`] bytes of the line `start..end`, each on a character boundary.
fn mark_line(text: &str, start: usize, end: usize, checkpoints: &mut Vec<Checkpoint>) {
    let (mut at, mut chars, mut utf16) = (start, 0usize, 0usize);
    loop {
        let mut next = at + STRIDE as usize;
        if next >= end {
            return;
        }
        while !text.is_char_boundary(next) {
            next += 1;
        }
        let chunk = text.get(at..next).unwrap_or("");
        chars += chunk.chars().count();
        utf16 += utf16_len(chunk);
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        checkpoints.push(Checkpoint {
            offset: clamp(next),
            chars: clamp(chars),
            utf16: clamp(utf16),
        });
        at = next;
    }
}

/// UTF-16 code units of a text: one per character, two for each outside the BMP (the
/// characters encoded in four UTF-8 bytes, whose lead byte is `0xF0` or above).
fn utf16_len(text: &str) -> usize {
    text.chars().count() + text.bytes().filter(|&b| b >= 0xF0).count()
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
    fn a_long_line_gets_checkpoints_and_a_short_one_none() {
        let long = format!("{}主{}", "a".repeat(3000), "b".repeat(3000));
        assert!(LineIndex::new(&long).checkpoints.len() >= 5);
        assert!(LineIndex::new("{\n  \"a\": 1\n}\n").checkpoints.is_empty());
        let b = u32::try_from(long.rfind('b').unwrap()).unwrap();
        assert_eq!(LineIndex::new(&long).line_col(&long, b).column, 6001);
    }

    /// What the index answers, counted the slow way: from the line's start.
    fn naive(text: &str, offset: usize) -> (u32, u32, u32) {
        let offset = offset.min(text.len());
        let mut end = offset;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let start = text[..end].rfind('\n').map_or(0, |i| i + 1);
        let line = text[..start].matches('\n').count() as u32;
        let prefix = &text[start..end];
        let utf16 = prefix.chars().map(char::len_utf16).sum::<usize>();
        (line, prefix.chars().count() as u32, utf16 as u32)
    }

    proptest::proptest! {
        /// Lines long enough to hold checkpoints, in every kind of character, agree with counting
        /// from the line's start, both ways.
        #[test]
        fn checkpoints_count_as_the_line_start_does(
            pieces in proptest::collection::vec(
                proptest::prop_oneof!["a{1,700}", "[主é😀x]{1,300}", proptest::strategy::Just("\n".to_owned())],
                1..12,
            ),
            probes in proptest::collection::vec(0usize..20_000, 1..40),
        ) {
            let text: String = pieces.concat();
            let index = LineIndex::new(&text);
            for probe in probes {
                let offset = probe % (text.len() + 2);
                let (line, chars, utf16) = naive(&text, offset);
                let at = u32::try_from(offset).unwrap();
                proptest::prop_assert_eq!(index.line_col(&text, at), LineCol { line: line + 1, column: chars + 1 });
                proptest::prop_assert_eq!(index.line_col_utf16(&text, at), (line, utf16));
                if offset <= text.len() && text.is_char_boundary(offset) {
                    proptest::prop_assert_eq!(index.offset_utf16(&text, line, utf16), at);
                }
            }
        }
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
