//! The offset maps lowering builds on the escape module's: each says where offsets in one text
//! land in the file. [`ToolsMap`], which every span of every item goes through, is concrete and
//! generic over the map it wraps, so that those spans are mapped without a dynamic call.

use crate::escape::{MapOffset, TextMap};
use crate::span::Span;
use std::ops::Range;

/// Where a text's offsets land in the file: a `MapOffset` shifted by the start of a slice.
pub(super) struct Shifted<'a> {
    pub(super) by: u32,
    pub(super) outer: &'a dyn MapOffset,
}

impl MapOffset for Shifted<'_> {
    fn to_raw(&self, offset: u32) -> u32 {
        self.outer.to_raw(offset + self.by)
    }
}

/// How offsets in a `tools` string's unescaped text, or shifted by `by` in one of its items,
/// land in the file: through the text's map, then `outer`. One concrete map rather than a chain
/// of `dyn` ones, since every span of every item goes through it.
pub(super) struct ToolsMap<'a, O> {
    pub(super) by: u32,
    pub(super) text: TextMap<'a>,
    pub(super) outer: &'a O,
}

impl<O: MapOffset> MapOffset for ToolsMap<'_, O> {
    fn to_raw(&self, offset: u32) -> u32 {
        let offset = offset.saturating_add(self.by);
        self.outer.to_raw(self.text.to_raw(offset))
    }
}

/// Spans already in file coordinates.
pub(super) struct Identity;

impl MapOffset for Identity {
    fn to_raw(&self, offset: u32) -> u32 {
        offset
    }
}

pub(super) fn span_in(map: &(impl MapOffset + ?Sized), range: &Range<usize>) -> Span {
    map.span(Span::from_range(range.clone()))
}

/// How offsets of the text lowered land in the file: the identity, unless strings were escaped
/// on the way ([`super::unescaped`]); then each escape maps to the one character it replaces.
#[derive(Clone, Debug, Default)]
pub(super) struct FileMap {
    /// `(start, len, raw)` of each escape written: its bytes in the lowered text, and the
    /// file's offset of the character it replaces. Ascending.
    escapes: Vec<(u32, u32, u32)>,
}

impl FileMap {
    /// Records that `len` bytes at `at` of the lowered text replace the character at `raw` in
    /// the file (one byte: a quote or a control character).
    pub(super) fn replaced(&mut self, at: usize, len: usize, raw: usize) {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.escapes.push((clamp(at), clamp(len), clamp(raw)));
    }
}

impl MapOffset for FileMap {
    fn to_raw(&self, offset: u32) -> u32 {
        // The file lowered as written, the common case.
        if self.escapes.is_empty() {
            return offset;
        }
        let i = self.escapes.partition_point(|&(at, _, _)| at <= offset);
        let Some(&(at, len, raw)) = i.checked_sub(1).and_then(|i| self.escapes.get(i)) else {
            return offset;
        };
        if offset < at.saturating_add(len) {
            raw
        } else {
            raw + 1 + (offset - at - len)
        }
    }
}
