//! Strings embedded in the file: a `tools` or `when` string is JSON-escaped once, a string
//! inside an item twice. [`Embedded`] holds such a string unescaped and maps its offsets back to
//! the file's bytes, exactly, through every escape.

use seq_syntax::Span;
use seq_syntax::escape::{MapOffset, OffsetMap, escape, unescape};
use std::ops::Range;

/// An unescaped string and the map from its offsets to file offsets.
#[derive(Clone, Debug)]
pub(crate) struct Embedded {
    pub text: String,
    /// Offsets of the once-unescaped text to the file.
    outer: OffsetMap,
    /// For a string inside an item: offsets of `text` to the once-unescaped literal.
    inner: Option<OffsetMap>,
}

impl MapOffset for Embedded {
    fn to_raw(&self, offset: u32) -> u32 {
        let once = self.inner.as_ref().map_or(offset, |m| m.to_raw(offset));
        self.outer.to_raw(once)
    }
}

impl Embedded {
    /// The body of a file-level string literal; `body` spans the bytes between its quotes.
    pub(crate) fn file_string(file: &str, body: Span) -> Option<Embedded> {
        let raw = file.get(body.range())?;
        let (once, _) = unescape(raw, body.start);
        Some(Embedded {
            text: once.text.into_owned(),
            outer: once.map,
            inner: None,
        })
    }

    /// The body of a string literal inside an item; `literal` spans it with its quotes, which
    /// are `\"` in the file.
    pub(crate) fn item_string(file: &str, literal: Span) -> Option<Embedded> {
        let raw = file.get(literal.range())?;
        let (once, _) = unescape(raw, literal.start);
        let quoted = once.text.as_ref();
        let body = quoted.strip_prefix('"')?.strip_suffix('"')?;
        let (twice, _) = unescape(body, 1);
        Some(Embedded {
            text: twice.text.into_owned(),
            outer: once.map,
            inner: Some(twice.map),
        })
    }

    /// The file span of a range of `text`.
    pub(crate) fn span_of(&self, range: Range<usize>) -> Span {
        self.span(Span::from_range(range))
    }

    /// The offset in `text` whose character starts at or last before the file offset `raw`.
    pub(crate) fn offset_of(&self, raw: u32) -> usize {
        let mut best = 0;
        let boundaries = self
            .text
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(self.text.len()));
        for at in boundaries {
            if self.to_raw(offset(at)) > raw {
                break;
            }
            best = at;
        }
        best
    }
}

/// A map that adds `by` before handing an offset to `map`: offsets in a slice of a text whose
/// own map is `map`.
pub(crate) struct Shift<'a> {
    pub by: u32,
    pub map: &'a dyn MapOffset,
}

impl MapOffset for Shift<'_> {
    fn to_raw(&self, offset: u32) -> u32 {
        self.map.to_raw(offset.saturating_add(self.by))
    }
}

/// `text` escaped for `depth` enclosing JSON strings.
pub(crate) fn escape_depth(text: &str, depth: u8) -> String {
    let mut out = text.to_owned();
    for _ in 0..depth {
        out = escape(&out);
    }
    out
}

pub(crate) fn offset(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether `offset` is in `span`, its end included (a cursor just after a word is on it).
pub(crate) fn touches(span: Span, offset: u32) -> bool {
    span.start <= offset && offset <= span.end
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    fn slice(text: &str, span: Span) -> &str {
        text.get(span.range()).unwrap_or("")
    }

    #[test]
    fn item_strings_map_through_both_escapes() {
        let file = r#"{"tools": "{\"args\":{\"c\":\"say \\\"主机\\\" $args.x\"}} ;"}"#;
        let literal_start = file.find(r#"\"say"#).unwrap();
        let literal_end = file.find(r#"\"}}"#).unwrap() + 2;
        let literal = Span::from_range(literal_start..literal_end);
        let embedded = Embedded::item_string(file, literal).unwrap();
        assert_eq!(embedded.text, "say \"主机\" $args.x");
        let at = embedded.text.find("主机").unwrap();
        let span = embedded.span_of(at..at + "主机".len());
        assert_eq!(slice(file, span), "主机");
        let quote = embedded.span_of(4..5);
        assert_eq!(slice(file, quote), r#"\\\""#);
        assert_eq!(embedded.offset_of(span.start), at);
        // Inside an escape: the character it belongs to.
        assert_eq!(embedded.offset_of(quote.start + 1), 4);
        assert_eq!(escape_depth("a\"b", 2), r#"a\\\"b"#);
    }
}
