//! The language server for tool sequences: the checker in the editor, plus navigation,
//! completion and fixes.
//!
//! [`run_stdio`] is `seqc lsp`; [`run`] serves any [`lsp_server::Connection`] (the tests use an
//! in-memory one). [`ide`] answers the editor's questions over byte offsets; the server converts
//! positions, keeps the workspace's documents and checks off the main loop. Neither holds a rule
//! of its own: diagnostics come from `seq_check`.

pub mod ide;
mod server;
pub mod source_file;

pub use ide::is_sequence_document;
pub use server::{Ending, ServerError, run, run_stdio};
