//! The checker of tool sequences: every static rule (see "Static rules (the checker)" in
//! docs/reference.md) and the call graph across groups and sequences, over the tool vocabulary
//! of `seq_catalog`.
//!
//! [`check`] is a pure function: text in, diagnostics and checked sequences out, no I/O. The
//! command line, the language server and the engine's `seq_create` all call it; [`admit`] is the
//! one check before a sequence is stored or run.

mod admission;
mod batch;
pub mod dataflow;
pub mod file_set;
mod fix_all;
pub mod graph;
pub mod regular_file;
mod rules;

pub use admission::{Admission, admit, admit_stored};
pub use batch::{
    Check, FileCheck, Source, StoreCheck, check, check_batch, check_into_store, check_with_stored,
};
pub use fix_all::{AppliedFix, FixedFile, Fixes, Fixing, MAX_PASSES, fix_all};
