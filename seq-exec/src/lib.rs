//! The engine of seqc: runs checked tool sequences.
//!
//! - [`host`]: the [`ToolHost`] boundary to whatever provides tools, and the calling identity.
//! - [`error`]: the result contract — [`ToolError`] with a machine-readable [`Reason`].
//! - [`engine`]: the interpreter of the checked AST.
//! - [`builtin`]: the embedded host (`cmd_run`, `echo`, `sleep`, files, `output_send__stdout`).
//! - [`storage`]: sequences on disk. [`seq_tools`]: the six `seq_*` tools.

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
