//! Where seqc's commands evaluate `jq` filters: in child processes of this binary
//! (`seqc __jq`), so that no filter can take seqc down (docs/robustness.md, "jq filters").

use crate::status::{Status, trouble};
use seq_exec::builtin::JqRunner;

/// The hidden subcommand children are started with.
const SUBCOMMAND: &str = "__jq";

/// The runner `run`, `mcp` and `worker` give their embedded host: children of this very
/// binary; in this process only if its path cannot be known.
pub fn runner() -> JqRunner {
    match std::env::current_exe() {
        Ok(program) => JqRunner::isolated(program, [SUBCOMMAND]),
        Err(_) => JqRunner::InThread,
    }
}

/// `seqc __jq`: serves filters for the seqc process that started it.
pub fn serve() -> Status {
    match seq_exec::builtin::serve_jq() {
        Ok(()) => Status::Clean,
        Err(error) => trouble(format_args!("jq: {error}")),
    }
}
