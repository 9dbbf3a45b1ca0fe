//! The chumsky grammar of strict JSON over logos tokens, with recovery at separators.

use super::tree::Node;
use crate::diagnostic::Diagnostic;

/// Brackets and braces nested deeper than this are reported (E0006) instead of parsed, so that
/// hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// Which JSON is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The sequence file: strict JSON.
    File,
    /// An item of a `tools` string: JSON plus bare references as values (D-2).
    Item,
}

/// Parses `text`. Never fails wholesale: returns the tree it could build (with error nodes where
/// recovery skipped input; `None` only when nothing resembling a value was found) and every
/// syntax diagnostic, with spans relative to `text`.
pub fn parse(text: &str, mode: Mode) -> (Option<Node<'_>>, Vec<Diagnostic>) {
    let _ = (text, mode);
    todo!("json::parse")
}
