//! Strict JSON (RFC 8259) with a span on every key and value, for the file level and — with bare
//! references allowed as values — for the items inside `tools`.
//!
//! The result is an untyped tree that may hold [`NodeKind::Error`] where recovery skipped input;
//! lowering turns it into the typed AST and never lets an error node through.
//!
//! Stages: `lexer` (logos) → `scan` (token-level errors, comments, trailing commas, the depth
//! bound) → `parser` (the chumsky grammar with recovery) → `report` (errors as diagnostics).

mod lexer;
mod parser;
mod plain;
mod report;
mod scan;
mod tree;

pub use lexer::Token;
pub use parser::{MAX_DEPTH, Mode, parse};
pub(crate) use parser::{TokenBuffer, parse_reusing};
pub use tree::{Member, Node, NodeKind};

#[cfg(test)]
mod tests;
