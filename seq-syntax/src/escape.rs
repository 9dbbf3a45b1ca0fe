//! JSON string unescaping that remembers where every byte came from, so that a diagnostic about a
//! word inside a `tools` or `when` string points at that word in the file.

use crate::span::Span;
use crate::swar::{WORD, first_backslash};
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
        // A file's own map, which every span of every item ends in.
        if self.points.is_empty() {
            return self.base + offset;
        }
        let i = self.points.partition_point(|&(u, _)| u <= offset);
        let (u, r) = if i == 0 { (0, 0) } else { self.points[i - 1] };
        self.base + r + (offset - u)
    }
}

/// An offset map spelled out by [`unescape_dense`]: entry `i` is the raw offset of `i`.
/// Offsets past the end extrapolate from the last entry, as the sparse map does.
#[derive(Clone, Copy, Debug)]
struct DenseMap<'b> {
    raw: &'b [u32],
}

impl MapOffset for DenseMap<'_> {
    #[inline]
    fn to_raw(&self, unescaped: u32) -> u32 {
        match self.raw.get(unescaped as usize) {
            Some(&raw) => raw,
            None => {
                let last = self.raw.len().saturating_sub(1);
                let raw = self.raw.get(last).copied().unwrap_or(0);
                raw.saturating_add(unescaped.saturating_sub(offset(last)))
            }
        }
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

/// Escapes `text` for the inside of a JSON string literal: the inverse of [`unescape`]. Fixes
/// whose edits land inside a `tools` or `when` string go through this once per enclosing string.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// An unescaped string and its offset map.
#[derive(Clone, Debug)]
pub struct Unescaped<'a> {
    pub text: Cow<'a, str>,
    pub map: OffsetMap,
}

/// An escape that JSON's grammar allows but a Rust string cannot hold: a lone surrogate
/// (`\uD800` without its pair). The span is raw, in the coordinates of [`MapOffset::to_raw`]
/// (offsets in the body plus `base`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoneSurrogate {
    pub span: Span,
}

/// Unescapes the body of a JSON string literal (the text between the quotes, which the lexer has
/// already validated). `base` is the raw offset of the body's first byte. A lone surrogate becomes
/// U+FFFD and is reported.
///
/// Bodies without a backslash are borrowed with the identity map. Otherwise the map gets one
/// point after each escape. A malformed escape (impossible after the lexer, but never a panic)
/// is kept as literal text.
pub fn unescape(body: &str, base: u32) -> (Unescaped<'_>, Vec<LoneSurrogate>) {
    let mut points = Vec::new();
    let (text, lone) = unescape_sparse(body, base, &mut points);
    let map = OffsetMap { base, points };
    (Unescaped { text, map }, lone)
}

/// The buffers [`unescape_dense`] writes its text and map into, meant to be reused from text to
/// text: they only grow, so a run over many texts allocates (and zeroes) only a few times.
#[derive(Debug, Default)]
struct DenseBuffers {
    text: Vec<u8>,
    map: Vec<u32>,
}

/// The longest text whose offset map [`unescape_text`] spells out (four bytes per byte of text):
/// past it the buffer would outweigh the text, and the sparse map's binary search is kept.
const DENSE_MAP_BYTES: usize = 1 << 20;

/// The buffers of [`unescape_text`], meant to be reused from text to text (a group's `tools`
/// string to the next): they only grow, so a run over many texts allocates only a few times.
#[derive(Debug, Default)]
pub struct TextBuffers {
    dense: DenseBuffers,
    sparse: OffsetMap,
}

/// The offset map of a text unescaped by [`unescape_text`]. Whether it is spelled out or
/// sparse is decided there and hidden here: callers see one concrete, `Copy` map, so that the
/// maps built on it stay monomorphized and a lookup makes no dynamic call.
#[derive(Clone, Copy, Debug)]
pub struct TextMap<'b>(TextMapRepr<'b>);

#[derive(Clone, Copy, Debug)]
enum TextMapRepr<'b> {
    Dense(DenseMap<'b>),
    Sparse(&'b OffsetMap),
}

impl MapOffset for TextMap<'_> {
    #[inline]
    fn to_raw(&self, offset: u32) -> u32 {
        match self.0 {
            TextMapRepr::Dense(map) => map.to_raw(offset),
            TextMapRepr::Sparse(map) => map.to_raw(offset),
        }
    }
}

/// [`unescape`] for a text whose offsets are looked up many times, such as a `tools` string's,
/// through which every span of every item goes: text and map are written into `buffers`, and
/// the map is spelled out, one entry per byte, so that a lookup is one load instead of a binary
/// search — unless the text is so long that the sparse map is kept.
pub fn unescape_text<'a>(
    body: &'a str,
    base: u32,
    buffers: &'a mut TextBuffers,
) -> (Cow<'a, str>, TextMap<'a>, Vec<LoneSurrogate>) {
    if body.len() <= DENSE_MAP_BYTES {
        let (text, map, lone) = unescape_dense(body, base, &mut buffers.dense);
        return (text, TextMap(TextMapRepr::Dense(map)), lone);
    }
    let sparse = &mut buffers.sparse;
    sparse.base = base;
    sparse.points.clear();
    let (text, lone) = unescape_sparse(body, base, &mut sparse.points);
    (text, TextMap(TextMapRepr::Sparse(sparse)), lone)
}

/// [`unescape`] with the map spelled out, one entry per byte, in the same pass, so that a
/// lookup is one load instead of a binary search; text and map are written into `buffers`. It
/// costs four bytes per byte of text: for texts whose offsets are looked up many times, such as
/// a `tools` string's items.
fn unescape_dense<'a>(
    body: &'a str,
    base: u32,
    buffers: &'a mut DenseBuffers,
) -> (Cow<'a, str>, DenseMap<'a>, Vec<LoneSurrogate>) {
    let bytes = body.as_bytes();
    let DenseBuffers { text, map } = buffers;
    let Some(first) = bytes.iter().position(|&b| b == b'\\') else {
        map.clear();
        // The end of the text maps too.
        map.extend(base..=base.saturating_add(offset(bytes.len())));
        return (Cow::Borrowed(body), DenseMap { raw: map }, Vec::new());
    };
    // Whole words are written past the end of what is final (`Out::word`), hence the slack.
    if text.len() < bytes.len() + WORD {
        text.resize(bytes.len() + WORD, 0);
    }
    if map.len() < bytes.len() + 1 + WORD {
        map.resize(bytes.len() + 1 + WORD, 0);
    }
    let mut out = Out {
        text: text.as_mut_slice(),
        map: map.as_mut_slice(),
        len: 0,
        base,
        lone: Vec::new(),
    };
    out.run(bytes.get(..first).unwrap_or_default(), base);
    let mut at = first;
    // A word at a time while one is left. The text never runs ahead of the body (no escape
    // decodes to more bytes than it is written with), so each word fits where it is written.
    while let Some(word) = bytes.get(at..).and_then(|rest| rest.first_chunk::<WORD>()) {
        let run = out.word(word, base.wrapping_add(offset(at)));
        at += run;
        if run < WORD {
            at = out.escape(bytes, at);
        }
    }
    // The last few bytes.
    while let Some(&byte) = bytes.get(at) {
        if byte == b'\\' {
            at = out.escape(bytes, at);
        } else {
            out.byte(byte, base.saturating_add(offset(at)));
            at += 1;
        }
    }
    let Out {
        text,
        map,
        len,
        lone,
        ..
    } = out;
    // The end of the text maps too.
    if let Some(end) = map.get_mut(len) {
        *end = base.saturating_add(offset(bytes.len()));
    }
    let text = text.get(..len).unwrap_or_default();
    // Escapes decode to whole characters and everything else is copied from a `str`, so this
    // never fails; the lossy form only spares a panic.
    let text = match std::str::from_utf8(text) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(text),
    };
    let map = map.get(..=len).unwrap_or_default();
    (text, DenseMap { raw: map }, lone)
}

/// What [`unescape_dense`] writes: the text, and the raw offset of each of its bytes, in
/// buffers a word longer than the text can be.
struct Out<'b> {
    text: &'b mut [u8],
    map: &'b mut [u32],
    /// How many bytes of both are final.
    len: usize,
    /// The raw offset of the body.
    base: u32,
    lone: Vec<LoneSurrogate>,
}

impl Out<'_> {
    /// Bytes that come one to one from raw offset `raw` on.
    fn run(&mut self, bytes: &[u8], raw: u32) {
        let end = self.len + bytes.len();
        let (Some(text), Some(map)) = (
            self.text.get_mut(self.len..end),
            self.map.get_mut(self.len..end),
        ) else {
            return;
        };
        text.copy_from_slice(bytes);
        for (entry, raw) in map.iter_mut().zip(raw..) {
            *entry = raw;
        }
        self.len = end;
    }

    /// One byte from raw offset `raw`: without `run`'s call to `memcpy`.
    fn byte(&mut self, byte: u8, raw: u32) {
        if let (Some(text), Some(map)) = (self.text.get_mut(self.len), self.map.get_mut(self.len)) {
            *text = byte;
            *map = raw;
            self.len += 1;
        }
    }

    /// Writes `word`, from raw offset `raw`, whole and keeps the bytes before its first
    /// backslash, returning how many: in a `tools` string an escape comes every few bytes, and
    /// this beats finding the run's length first.
    fn word(&mut self, word: &[u8; WORD], raw: u32) -> usize {
        let text = self
            .text
            .get_mut(self.len..)
            .and_then(|t| t.first_chunk_mut::<WORD>());
        let map = self
            .map
            .get_mut(self.len..)
            .and_then(|m| m.first_chunk_mut::<WORD>());
        if let (Some(text), Some(map)) = (text, map) {
            *text = *word;
            *map = std::array::from_fn(|k| raw.wrapping_add(k as u32));
        }
        let run = first_backslash(word);
        self.len += run;
        run
    }

    /// Decodes the escape whose backslash is at `at` in `bytes`; returns where what follows
    /// it starts.
    fn escape(&mut self, bytes: &[u8], at: usize) -> usize {
        let raw = self.base.saturating_add(offset(at));
        if let Some(ch) = bytes.get(at + 1).and_then(|&b| simple(b)) {
            self.byte(ch, raw);
            return at + 2;
        }
        self.unicode_escape(bytes, at, raw)
    }

    /// [`Out::escape`] of a `\\uXXXX` escape (or a malformed one, kept literally).
    #[cold]
    fn unicode_escape(&mut self, bytes: &[u8], at: usize, raw: u32) -> usize {
        match decode_unicode(bytes, at) {
            Some(escape) => {
                if escape.lone {
                    self.lone.push(LoneSurrogate {
                        span: Span::new(raw, raw.saturating_add(6)),
                    });
                }
                // Offsets inside the character advance from the backslash, as in the sparse map.
                let mut utf8 = [0; 4];
                self.run(escape.ch.encode_utf8(&mut utf8).as_bytes(), raw);
                at + escape.len
            }
            // Kept literally, as by `unescape`.
            None => {
                self.byte(b'\\', raw);
                at + 1
            }
        }
    }
}

/// The text of [`unescape`], pushing its map's points, `(unescaped, raw - base)` after each
/// escape, to `points`.
fn unescape_sparse<'a>(
    body: &'a str,
    base: u32,
    points: &mut Vec<(u32, u32)>,
) -> (Cow<'a, str>, Vec<LoneSurrogate>) {
    let Some(first) = body.find('\\') else {
        return (Cow::Borrowed(body), Vec::new());
    };
    let bytes = body.as_bytes();
    // Bytes, not `str` pieces: in a `tools` string escapes come every few bytes, and the
    // UTF-8 checks of `push_str` on each short run between them cost more than the copying.
    // Room for the word `copy_run` writes past the end.
    let mut text = Vec::with_capacity(body.len() + WORD);
    text.extend_from_slice(bytes.get(..first).unwrap_or_default());
    let mut lone = Vec::new();
    let mut at = first;
    while let Some(&byte) = bytes.get(at) {
        if byte != b'\\' {
            at = copy_run(bytes, at, &mut text);
            continue;
        }
        let raw = base.saturating_add(offset(at));
        if let Some(ch) = bytes.get(at + 1).and_then(|&b| simple(b)) {
            text.push(ch);
            points.push((offset(text.len()), offset(at + 2)));
            at += 2;
            continue;
        }
        match decode_unicode(bytes, at) {
            Some(escape) => {
                let mut utf8 = [0; 4];
                text.extend_from_slice(escape.ch.encode_utf8(&mut utf8).as_bytes());
                if escape.lone {
                    lone.push(LoneSurrogate {
                        span: Span::new(raw, raw.saturating_add(6)),
                    });
                }
                points.push((offset(text.len()), offset(at + escape.len)));
                at += escape.len;
            }
            None => {
                // Kept literally: raw and unescaped go on advancing together.
                text.push(byte);
                at += 1;
            }
        }
    }
    // Escapes decode to whole characters and everything else is copied from a `str`, so this
    // never fails; the lossy form only spares a panic.
    let text = String::from_utf8(text)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
    (Cow::Owned(text), lone)
}

/// Copies `bytes` from `at` up to the next backslash into `text`, a word at a time as
/// [`Out::word`] does, and returns where it stopped.
fn copy_run(bytes: &[u8], mut at: usize, text: &mut Vec<u8>) -> usize {
    while let Some(word) = bytes.get(at..).and_then(|rest| rest.first_chunk::<WORD>()) {
        text.extend_from_slice(word);
        let n = first_backslash(word);
        text.truncate(text.len() - (WORD - n));
        at += n;
        if n < WORD {
            return at;
        }
    }
    let rest = bytes.get(at..).unwrap_or_default();
    let run = rest.iter().position(|&b| b == b'\\').unwrap_or(rest.len());
    text.extend_from_slice(rest.get(..run).unwrap_or_default());
    at + run
}

fn offset(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// One decoded escape: the character, how many raw bytes it took, and whether it was a lone
/// surrogate (then always the 6 bytes of one `\uXXXX`).
struct Escape {
    ch: char,
    len: usize,
    lone: bool,
}

/// The byte an escape of one character after the backslash stands for (all but `\\u`).
fn simple(escaped: u8) -> Option<u8> {
    Some(match escaped {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// Decodes the `\\uXXXX` escape (or surrogate pair) whose backslash is at `at`, or `None` if it
/// is malformed.
fn decode_unicode(bytes: &[u8], at: usize) -> Option<Escape> {
    if bytes.get(at + 1) != Some(&b'u') {
        return None;
    }
    let high = hex4(bytes, at + 2)?;
    if (0xD800..0xDC00).contains(&high) {
        let low = (bytes.get(at + 6) == Some(&b'\\') && bytes.get(at + 7) == Some(&b'u'))
            .then(|| hex4(bytes, at + 8))
            .flatten()
            .filter(|low| (0xDC00..0xE000).contains(low));
        if let Some(low) = low {
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            return Some(Escape {
                ch: char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
                len: 12,
                lone: false,
            });
        }
    }
    Some(match char::from_u32(high) {
        Some(ch) => Escape {
            ch,
            len: 6,
            lone: false,
        },
        // Only surrogates fail here: a high one without its pair, or a low one alone.
        None => Escape {
            ch: char::REPLACEMENT_CHARACTER,
            len: 6,
            lone: true,
        },
    })
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |acc, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some(acc * 16 + digit)
    })
}

#[cfg(test)]
mod tests;
