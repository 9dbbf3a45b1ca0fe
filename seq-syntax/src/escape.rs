//! JSON string unescaping that remembers where every byte came from, so that a diagnostic about a
//! word inside a `tools` or `when` string points at that word in the file (D-1).

use crate::span::Span;
use std::borrow::Cow;

/// Maps offsets in an unescaped string back to offsets in the text it was written in.
pub trait MapOffset {
    /// The raw offset of the unescaped offset `offset`.
    fn to_raw(&self, offset: u32) -> u32;

    fn span(&self, span: Span) -> Span {
        Span::new(self.to_raw(span.start), self.to_raw(span.end))
    }
}

/// The map of one unescaped string body. Between escapes raw and unescaped text advance together,
/// so the map stores one point after each escape and extrapolates from the nearest point before.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OffsetMap {
    /// Raw offset of the first byte of the body (just after the opening quote).
    base: u32,
    /// `(unescaped, raw - base)` after each escape, ascending.
    points: Vec<(u32, u32)>,
}

impl OffsetMap {
    /// The map of a body without escapes that starts at raw offset `base`.
    pub fn identity(base: u32) -> OffsetMap {
        OffsetMap {
            base,
            points: Vec::new(),
        }
    }
}

impl MapOffset for OffsetMap {
    fn to_raw(&self, offset: u32) -> u32 {
        let i = self.points.partition_point(|&(u, _)| u <= offset);
        let (u, r) = if i == 0 { (0, 0) } else { self.points[i - 1] };
        self.base + r + (offset - u)
    }
}

/// Two maps applied one after the other: `inner` first, then `outer` (an item string inside a
/// `tools` string inside the file).
#[derive(Clone, Copy, Debug)]
pub struct Composed<'a, A: ?Sized, B: ?Sized> {
    pub inner: &'a A,
    pub outer: &'a B,
}

impl<A: MapOffset + ?Sized, B: MapOffset + ?Sized> MapOffset for Composed<'_, A, B> {
    fn to_raw(&self, offset: u32) -> u32 {
        self.outer.to_raw(self.inner.to_raw(offset))
    }
}

/// An unescaped string and its offset map.
#[derive(Clone, Debug)]
pub struct Unescaped<'a> {
    pub text: Cow<'a, str>,
    pub map: OffsetMap,
}

/// An escape that JSON's grammar allows but a Rust string cannot hold: a lone surrogate
/// (`\uD800` without its pair). The span is raw, relative to the text `unescape` was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoneSurrogate {
    pub span: Span,
}

/// Unescapes the body of a JSON string literal (the text between the quotes, which the lexer has
/// already validated). `base` is the raw offset of the body's first byte. A lone surrogate becomes
/// U+FFFD and is reported.
pub fn unescape(body: &str, base: u32) -> (Unescaped<'_>, Vec<LoneSurrogate>) {
    let _ = (body, base);
    todo!("escape::unescape")
}
