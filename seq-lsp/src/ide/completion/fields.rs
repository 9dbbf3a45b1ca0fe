//! The fields of each level, from their one table in seq-syntax.

pub(super) use seq_syntax::fields::{Field, GROUP, INPUT, ITEM, SEQUENCE as FILE};
