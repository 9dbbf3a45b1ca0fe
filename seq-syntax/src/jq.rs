//! The built-in `jq` tool as far as the front end knows it: its name, and the argument whose
//! text is a jq filter, whose bytes lowering maps back to the file (see [`TextOffsets`]) so that
//! the checker's diagnostics inside a filter point at the characters written.

/// The tool's name.
pub const TOOL: &str = "jq";
/// The argument holding the filter.
pub const FILTER: &str = "filter";
/// The argument holding the filter's input (default `null`).
pub const INPUT: &str = "input";

/// Filters longer than this keep no map: their diagnostics cover the whole string.
pub const MAX_MAPPED: usize = 64 * 1024;

/// Where the bytes of a literal string's unescaped text land in the file, through every level
/// of escaping: entry `i` is the file offset of byte `i`, the last entry that of the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextOffsets(Box<[u32]>);

impl TextOffsets {
    pub fn new(offsets: Box<[u32]>) -> TextOffsets {
        TextOffsets(offsets)
    }

    /// The file span of `range` of the text; `None` past its end.
    pub fn span(&self, range: std::ops::Range<usize>) -> Option<crate::Span> {
        let start = *self.0.get(range.start)?;
        // An exclusive end maps to where the next character's escape starts: the end of the last.
        let end = *self.0.get(range.end)?;
        Some(crate::Span::new(start, end.max(start)))
    }
}
