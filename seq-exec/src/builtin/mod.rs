//! The embedded host: the tools that make seqc run out of the box.
//!
//! | tool | does | parallel-safe |
//! | --- | --- | --- |
//! | `cmd_run {command, timeout?}` | `sh -c` in the root; `{stdout, stderr, exit_code}`; a non-zero exit fails | yes |
//! | `echo {value}` | returns `value` | yes |
//! | `jq {filter, input?}` | a jq filter's one output over `input` (`jq`) | yes |
//! | `sleep {ms}` | waits | yes |
//! | `files_read {path}` | a regular file's text | yes |
//! | `files_write {path, content}` | replaces a regular file atomically (creating parent directories) | no |
//! | `files_list {path}` | sorted entry names, directories with a trailing `/` | yes |
//! | `files_stat {path}` | `{exists, kind, size, modified_ms}`, never failing for a missing path | yes |
//! | `files_delete {path, recursive?}` | deletes an entry (a link as itself) | no |
//! | `files_move {from, to, replace?}` | one rename beneath the root | no |
//! | `output_send__stdout {text}` | a line on the output sink | yes (ordered per channel) |
//!
//! Definitions come from [`Catalog::builtin`], the one place they are written. The file tools
//! are confined to the root by [`resolve_beneath`] and `beneath`. Who may use them is the
//! engine's [`crate::Authorizer`]'s to say, not the host's.

pub mod args;
mod beneath;
mod cgroup;
mod cmd;
mod entries;
pub(crate) mod files;
mod jq;
mod output;
mod procs;
mod root;

pub use cgroup::available as cgroup_available;
pub use cmd::DEFAULT_TIMEOUT as CMD_DEFAULT_TIMEOUT;
pub use entries::MAX_DELETE_DEPTH;
pub use files::{FileError, read_regular};
pub use jq::{
    JqRunner, MAX_CHILDREN as JQ_MAX_CHILDREN, MAX_PER_CALLER as JQ_MAX_PER_CALLER,
    MEMORY as JQ_MEMORY, Pool as JqPool, running as jq_running, serve as serve_jq,
};
pub use output::{Captured, OutputSink, Stdout};
#[cfg(target_os = "linux")]
pub use procs::die_with_parent;
pub use procs::{GRACE as KILL_GRACE, become_subreaper, kill_all_now, live_items, wait_stopped};
pub use root::{
    Beneath, MAX_PATH_ENTRIES, PathError, canonical_beyond, resolve_beneath, resolve_under,
};

use crate::error::{Reason, ToolError};
use crate::host::{Caller, ToolCall, ToolHost};
use seq_catalog::{
    CMD_RUN, ECHO, FILES_DELETE, FILES_LIST, FILES_MOVE, FILES_READ, FILES_STAT, FILES_WRITE, JQ,
    OUTPUT_STDOUT, SLEEP,
};
use seq_catalog::{Catalog, ToolDef};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The most bytes a built-in tool reads into memory for one result: a command's stdout, its
/// stderr, a file. The engine's own bound on a result (`Limits::max_result_bytes`) is the same;
/// this one stops the read itself, so that `yes` or a huge file never fills memory first.
pub const MAX_READ_BYTES: usize = seq_syntax::limits::MAX_RESULT_BYTES;

/// The names of the embedded host's tools (their one home is the catalog).
pub use seq_catalog::HOST_TOOLS as TOOLS;

/// The embedded host.
pub struct BuiltinHost {
    root: PathBuf,
    /// Directories under the root that the file tools do not reach (the data directory).
    hidden: Arc<[PathBuf]>,
    output: Arc<dyn OutputSink>,
    /// Where `jq` filters are evaluated: in this process unless the embedder isolates them.
    jq: JqRunner,
    /// Sorted by name. Every call looks its tool up, and over eight names a scan (`==` compares
    /// lengths first) costs a third of a `BTreeMap` lookup.
    definitions: Vec<Arc<ToolDef>>,
}

impl std::fmt::Debug for BuiltinHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinHost")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl BuiltinHost {
    /// A host whose file tools and commands work in `root`, printing
    /// `output_send__stdout` to standard output.
    pub fn new(root: impl Into<PathBuf>) -> BuiltinHost {
        let catalog = Catalog::builtin();
        let mut definitions: Vec<Arc<ToolDef>> = TOOLS
            .iter()
            .filter_map(|name| catalog.get(name))
            .map(|def| Arc::new(def.clone()))
            .collect();
        definitions.sort_by(|a, b| a.name.cmp(&b.name));
        BuiltinHost {
            root: root.into(),
            hidden: Arc::from([]),
            output: Arc::new(Stdout),
            jq: JqRunner::InThread,
            definitions,
        }
    }

    /// Keeps the file tools out of `dir` (and what is below it), wherever it is: `seqc run`
    /// hides its data directory, so that a sequence cannot rewrite stored sequences past the
    /// checker and the policy. The directory need not exist yet.
    pub fn with_hidden(mut self, dir: &Path) -> BuiltinHost {
        let dir = canonical_beyond(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut hidden = self.hidden.to_vec();
        hidden.push(dir);
        self.hidden = Arc::from(hidden);
        self
    }

    pub fn with_output(mut self, output: Arc<dyn OutputSink>) -> BuiltinHost {
        self.output = output;
        self
    }

    /// Where the `jq` tool evaluates filters ([`JqRunner`]); seqc's commands isolate them in
    /// child processes.
    pub fn with_jq(mut self, jq: JqRunner) -> BuiltinHost {
        self.jq = jq;
        self
    }

    /// The `jq` tool's runner (its children, for tests).
    pub fn jq_runner(&self) -> &JqRunner {
        &self.jq
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The host's tool definitions, by name.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.definitions.iter().map(Arc::as_ref)
    }

    /// One tool's call, boxed at that tool's own size: a `sleep` in flight holds a timer, not
    /// the largest state of any tool (`cmd_run`'s), nor its arguments. Items of a wide parallel
    /// group are mostly sleeping or waiting, and all of them are alive at once.
    fn dispatch<'a>(&'a self, caller: &'a Caller, name: &str, args: Value) -> ToolCall<'a> {
        match name {
            CMD_RUN => Box::pin(async move { cmd::cmd_run(&self.root, &args).await }),
            ECHO => ready(args::required(&args, "value").cloned()),
            JQ => Box::pin(async move { jq::jq(&args, &self.jq, caller).await }),
            SLEEP => match args::whole_number(&args, "ms") {
                Ok(ms) => Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(Value::Null)
                }),
                Err(error) => ready(Err(error)),
            },
            FILES_READ => {
                Box::pin(async move { files::files_read(&self.root, &self.hidden, &args).await })
            }
            FILES_WRITE => {
                Box::pin(async move { files::files_write(&self.root, &self.hidden, &args).await })
            }
            FILES_LIST => {
                Box::pin(async move { files::files_list(&self.root, &self.hidden, &args).await })
            }
            FILES_STAT => {
                Box::pin(async move { entries::files_stat(&self.root, &self.hidden, &args).await })
            }
            FILES_DELETE => {
                Box::pin(
                    async move { entries::files_delete(&self.root, &self.hidden, &args).await },
                )
            }
            FILES_MOVE => {
                Box::pin(async move { entries::files_move(&self.root, &self.hidden, &args).await })
            }
            OUTPUT_STDOUT => ready(args::string(&args, "text").and_then(|text| {
                self.output.send(text).map_err(|error| {
                    ToolError::new(
                        Reason::Failed,
                        format!("the output channel failed: {error}"),
                    )
                })?;
                Ok(Value::Null)
            })),
            other => ready(Err(ToolError::new(
                Reason::NotFound,
                format!("the embedded host has no tool `{other}`"),
            )
            .with_hint(format!("its tools are {}", TOOLS.join(", "))))),
        }
    }
}

/// A call whose result is known without waiting.
fn ready<'a>(result: Result<Value, ToolError>) -> ToolCall<'a> {
    Box::pin(std::future::ready(result))
}

impl ToolHost for BuiltinHost {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.definitions
            .iter()
            .find(|def| def.name == name)
            .cloned()
    }

    fn call<'a>(&'a self, caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        self.dispatch(caller, name, args)
    }
}
