//! Strict JSON (RFC 8259) with a span on every key and value, for the file level and — with bare
//! references allowed as values — for the items inside `tools`.
//!
//! The result is an untyped tree that may hold [`NodeKind::Error`] where recovery skipped input;
//! lowering turns it into the typed AST and never lets an error node through.
//!
//! The editor reads where a cursor stands from the same tree and lexer ([`cursor`]).
//!
//! Stages: `lexer` (logos) → `scan` (token-level errors, comments, trailing commas, the depth
//! bound) → `parser` (the chumsky grammar with recovery) → `diagnostics` (errors as diagnostics).

pub mod cursor;
mod diagnostics;
mod lexer;
mod parser;
mod plain;
mod scan;
mod tree;

pub use lexer::Token;
pub use parser::parse;
pub(crate) use parser::{TokenBuffer, parse_reusing};
pub use tree::{Key, Member, Node, NodeKind};

/// Brackets and braces nested deeper than this are reported (E0006) instead of parsed, so that
/// hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// Which JSON is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The sequence file: strict JSON.
    File,
    /// An item of a `tools` string: JSON plus bare references as values.
    Item,
}

/// Labels of the grammar's expectations, which `diagnostics` turns back into what was expected. Here,
/// with [`Mode`] and [`MAX_DEPTH`], so that the stages take what they share from this module and
/// their imports of each other go one way (`parser` uses `scan`, `plain` and `diagnostics`).
const VALUE: &str = "a JSON value";
const KEY: &str = "a string key";

#[cfg(test)]
mod tests;
