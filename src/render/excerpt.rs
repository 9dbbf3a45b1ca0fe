//! Excerpts of long lines for the human format. Models write a sequence on one line, and a
//! `tools` string alone is often 300–500 columns: a line longer than [`MAX_LINE_CHARS`] is
//! shown as a window around what the diagnostic points at, with `...` on the sides that were
//! cut, as rustc does. Every lookup here is bounded by the window, never by the line, so a
//! report costs the same on a one-line file as on a pretty-printed one.

use seq_syntax::LineIndex;
use std::ops::Range;

/// The longest line drawn whole, in characters.
pub const MAX_LINE_CHARS: usize = 120;
/// Characters of context kept before the first point of a window.
const LEAD: usize = 24;
/// What stands for the cut part of a line.
const CUT: &str = "...";

/// The lines a diagnostic touches, from the first to the last, long ones cut to their window.
#[derive(Debug)]
pub struct Excerpt {
    /// The excerpt's text, one line per line of the file: the lines before the first are empty
    /// (ariadne numbers lines from its text's start, whatever display offset it is given).
    pub text: String,
    lines: Vec<Kept>,
}

/// One line of the excerpt: the bytes of the file it keeps and where they are in the excerpt.
#[derive(Debug)]
struct Kept {
    /// The file's line, without its `\n`.
    line: Range<usize>,
    /// The part of it kept.
    keep: Range<usize>,
    /// Where the kept part starts in the excerpt (after a leading `...`).
    at: usize,
}

impl Excerpt {
    /// The excerpt for `spans` (the first one is the primary), or `None` when every line they
    /// touch is short enough to draw whole: the file is then drawn as it is.
    pub fn of(text: &str, index: &LineIndex, spans: &[Range<usize>]) -> Option<Excerpt> {
        let line_of = |offset: usize| {
            let offset = u32::try_from(offset).unwrap_or(u32::MAX);
            index.line_of(offset).0 as usize
        };
        let touched: Vec<usize> = spans
            .iter()
            .flat_map(|span| [line_of(span.start), line_of(span.end)])
            .collect();
        let long = |line: usize| {
            index
                .line_range(text, line)
                .is_some_and(|r| is_long(text, r))
        };
        if !touched.iter().any(|&line| long(line)) {
            return None;
        }
        let first = touched.iter().copied().min()?;
        let last = touched.iter().copied().max()?;
        let primary = spans.first()?.start;
        let mut excerpt = Excerpt {
            text: "\n".repeat(first),
            lines: Vec::with_capacity(last - first + 1),
        };
        for line in first..=last {
            let range = index.line_range(text, line)?;
            let points: Vec<usize> = spans
                .iter()
                .flat_map(|span| [span.start, span.end])
                .filter(|point| range.contains(point) || *point == range.end)
                .collect();
            let keep = if !is_long(text, range.clone()) {
                range.clone()
            } else {
                let anchor = if range.contains(&primary) || primary == range.end {
                    primary
                } else {
                    points.iter().copied().min().unwrap_or(range.start)
                };
                window(text, range.clone(), &points, anchor)
            };
            if line > first {
                excerpt.text.push('\n');
            }
            if keep.start > range.start {
                excerpt.text.push_str(CUT);
            }
            excerpt.lines.push(Kept {
                line: range.clone(),
                keep: keep.clone(),
                at: excerpt.text.len(),
            });
            excerpt.text.push_str(text.get(keep.clone()).unwrap_or(""));
            if keep.end < range.end {
                excerpt.text.push_str(CUT);
            }
        }
        Some(excerpt)
    }

    /// Where a byte offset of the file is in the excerpt: a point cut away lands on the edge of
    /// its line's window, next to the `...`.
    pub fn map(&self, offset: usize) -> usize {
        let at = self
            .lines
            .partition_point(|kept| kept.line.start <= offset)
            .saturating_sub(1);
        let Some(kept) = self.lines.get(at) else {
            return 0;
        };
        let offset = offset.clamp(kept.keep.start, kept.keep.end);
        kept.at + (offset - kept.keep.start)
    }

    /// The 1-based column, in characters, of an excerpt offset on its line.
    pub fn column(&self, offset: usize) -> usize {
        let before = self.text.get(..offset).unwrap_or("");
        let start = before.rfind('\n').map_or(0, |newline| newline + 1);
        before.get(start..).map_or(0, |s| s.chars().count()) + 1
    }
}

/// A line longer than the window, measured without counting past the window.
fn is_long(text: &str, line: Range<usize>) -> bool {
    line.len() > MAX_LINE_CHARS
        && text
            .get(line)
            .is_some_and(|s| s.chars().nth(MAX_LINE_CHARS).is_some())
}

/// The window of a long line: [`LEAD`] characters before the first point, or before `anchor`
/// when the points lie too far apart for one window, and [`MAX_LINE_CHARS`] characters in all.
fn window(text: &str, line: Range<usize>, points: &[usize], anchor: usize) -> Range<usize> {
    let lo = points.iter().copied().min().unwrap_or(anchor);
    let hi = points.iter().copied().max().unwrap_or(anchor);
    let spread = text
        .get(lo..hi)
        .map_or(0, |s| s.chars().take(MAX_LINE_CHARS).count());
    let from = if spread + LEAD < MAX_LINE_CHARS {
        lo
    } else {
        anchor
    };
    let before = text.get(line.start..from).unwrap_or("");
    let start = before
        .char_indices()
        .rev()
        .take(LEAD)
        .last()
        .map_or(from, |(i, _)| line.start + i);
    let after = text.get(start..line.end).unwrap_or("");
    let end = after
        .char_indices()
        .nth(MAX_LINE_CHARS)
        .map_or(line.end, |(i, _)| start + i);
    start..end
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::single_range_in_vec_init,
    reason = "tests may unwrap; a list of one span is a list of spans"
)]
mod tests {
    use super::*;

    fn excerpt(text: &str, spans: &[Range<usize>]) -> Option<Excerpt> {
        Excerpt::of(text, &LineIndex::new(text), spans)
    }

    #[test]
    fn short_lines_are_drawn_whole() {
        let text = "{\n  \"a\": 1\n}\n";
        assert!(excerpt(text, &[4..7]).is_none());
    }

    #[test]
    fn a_long_line_is_cut_around_the_span_on_both_sides() {
        let text = format!("{}NEEDLE{}", "a".repeat(500), "b".repeat(500));
        let at = text.find("NEEDLE").unwrap();
        let cut = excerpt(&text, &[at..at + 6]).unwrap();
        assert!(cut.text.starts_with("...") && cut.text.ends_with("..."));
        assert_eq!(cut.text.chars().count(), MAX_LINE_CHARS + 6);
        let mapped = cut.map(at);
        assert_eq!(&cut.text[mapped..mapped + 6], "NEEDLE");
        assert_eq!(cut.column(mapped), 3 + LEAD + 1);
    }

    #[test]
    fn lines_keep_their_numbers() {
        let text = format!("{{\n\n  {}X\n}}", "a".repeat(400));
        let at = text.find('X').unwrap();
        let cut = excerpt(&text, &[at..at + 1]).unwrap();
        assert_eq!(cut.text.lines().count(), 3);
        assert!(cut.text.starts_with("\n\n..."));
        assert_eq!(&cut.text[cut.map(at)..cut.map(at) + 1], "X");
    }

    #[test]
    fn points_far_apart_keep_the_primary_in_view() {
        let text = format!("LABEL{}PRIMARY{}", "x".repeat(900), "y".repeat(900));
        let at = text.find("PRIMARY").unwrap();
        let cut = excerpt(&text, &[at..at + 7, 0..5]).unwrap();
        let mapped = cut.map(at);
        assert_eq!(&cut.text[mapped..mapped + 7], "PRIMARY");
        // The label cut away lands on the window's edge, after the `...`.
        assert_eq!(cut.map(0), 3);
    }

    #[test]
    fn windows_cut_on_character_boundaries_and_keep_other_lines() {
        let text = format!("{{\n{}主{}\n}}", "主".repeat(300), "é".repeat(300));
        let at = text.find("主é").unwrap();
        let cut = excerpt(&text, &[0..1, at..at + 3]).unwrap();
        assert!(cut.text.starts_with("{\n..."));
        let mapped = cut.map(at);
        assert_eq!(&cut.text[mapped..mapped + 5], "主é");
    }
}
