//! The splitter of the item language (7.1): a group's `tools` string, once unescaped, is a list of
//! JSON objects each followed by `;`. A `;` separates only at brace/bracket depth 0 and outside
//! strings, so shell commands full of `;` stay inside their item.
//!
//! The splitter never drops an item silently: every input either splits into exactly its
//! top-level objects, or yields at least one error.

use std::ops::Range;

/// The result of splitting: the byte ranges of the items found (each from `{` to its `}`), and
/// the errors met on the way. Splitting goes on after an error so one run reports them all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub items: Vec<Range<usize>>,
    pub errors: Vec<SplitError>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitError {
    pub kind: SplitErrorKind,
    /// The bytes the error is about, in the split text.
    pub span: Range<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitErrorKind {
    /// `;` with no item before it (`{…} ; ; {…} ;`, or a leading `;`). Span: the extra `;`.
    EmptyItem,
    /// Another item, or stray text, where a `;` must come (`{…} {…} ;`). Span: what stands
    /// there.
    MissingSemicolon,
    /// The last item has no `;` after it. Span: empty, just after the item's `}`.
    MissingFinalSemicolon,
    /// A `{`/`[` never closed (span: the opener) or a string never closed (span: its quote).
    Unclosed,
    /// A closer `}`/`]` with no opener. Span: the closer.
    Unopened,
    /// A top-level value that is not an object (`"x" ;`, `[1] ;`). Span: the value.
    NotObject,
}

/// Splits an unescaped `tools` string into its items.
pub fn split_items(text: &str) -> Split {
    let _ = text;
    todo!("split::split_items")
}
