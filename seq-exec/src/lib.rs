//! The engine of seqc: runs checked tool sequences.
//!
//! - [`host`]: the [`ToolHost`] boundary to whatever provides tools, and the calling identity.
//! - [`error`]: the result contract — [`ToolError`] with a machine-readable [`Reason`].
//! - [`engine`]: the interpreter of the checked AST.
//! - [`builtin`]: the embedded host (`cmd_run`, `echo`, `sleep`, files, `jq`, `output_send__stdout`).
//! - [`policy`]: who may use which tool, and the rights a dispatch needs.
//! - [`authorizer`]: the one value every dispatch is authorized by.
//!
//! Sequences kept by name and the `seq_*` tools live in seq-store, above this crate; the tool
//! vocabulary (definitions, names, jq filters) in seq-catalog, below it. The engine does not
//! depend on the checker: it runs sequences the checker admitted.

pub mod authorizer;
pub mod builtin;
pub mod engine;
pub mod error;
pub mod host;
pub mod policy;

pub use authorizer::Authorizer;
pub use engine::{Engine, Limits, Observer, RunReport, SequenceSource};
pub use error::{Reason, ToolError};
pub use host::{BoxFuture, Caller, ToolCall, ToolHost};
