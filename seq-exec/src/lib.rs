//! The engine of seqc: runs checked tool sequences (design §4, §6.2, §7, §8; decisions D-7, D-8).
//!
//! - [`host`]: the [`ToolHost`] boundary to whatever provides tools, and the calling identity.
//! - [`error`]: the result contract of §4 — [`ToolError`] with a machine-readable [`Reason`].
//! - [`engine`]: the interpreter of the checked AST.
//! - [`builtin`]: the embedded host (`cmd_run`, `echo`, `sleep`, files, `output_send__stdout`).
//! - [`storage`]: sequences on disk (D-8). [`seq_tools`]: the six `seq_*` tools.

pub mod builtin;
pub mod engine;
pub mod error;
pub mod host;
pub mod policy;
pub mod seq_tools;
pub mod storage;

pub use engine::{Engine, Limits, Observer, RunReport, SequenceSource};
pub use error::{Reason, ToolError};
pub use host::{BoxFuture, Caller, ToolHost};
