//! How the engine's effects happen: the seam between the interpreter and what runs it.
//!
//! The interpreter (`call`, `group`, `item`) makes every decision of a run — which group next,
//! `when`, retries, `missing`, the order of slots, the depth and cycle bounds, the result
//! contract, authorization of the caller at every depth. A [`Driver`] decides only *how* one
//! attempt at a host tool call happens: [`InProcess`] awaits it; a durable driver (the
//! `seq-restate` crate) journals its outcome, so that a replay of the run gets the same
//! outcome back without calling the tool again. Control flow then depends only on what an
//! attempt returned, which is what makes a run replay-safe.

use crate::error::ToolError;
use crate::host::BoxFuture;
use seq_syntax::ast::Group;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Runs the attempts of host tool calls.
pub trait Driver: Send + Sync {
    /// One attempt at a host tool call, named by `step`, with `args` (rendered): `work` looks
    /// the tool up, authorizes the caller, validates the arguments, calls the tool within the
    /// per-tool timeout and applies the result contract. Its outcome is what the interpreter
    /// decides on. A driver may make the attempt elsewhere ([`Engine::attempt`] is the same
    /// work, given the arguments) and drop `work`.
    ///
    /// [`Engine::attempt`]: super::Engine::attempt
    fn attempt<'a>(
        &'a self,
        step: Step<'a>,
        args: &'a Map<String, Value>,
        work: BoxFuture<'a, Attempt>,
    ) -> BoxFuture<'a, Attempt>;

    /// Whether the items of parallel `group` may be in flight at once. When not, they run one
    /// at a time, in item order; they still see only the slots written before the group, and
    /// their slots are written at the group's barrier, so the report of a group that ends well
    /// is the same.
    fn concurrent(&self, _group: &Group) -> bool {
        true
    }

    /// Whether attempts go through [`Driver::attempt`]. `false`: they are awaited where they
    /// are made, as [`InProcess`] does, which spares boxing every call.
    fn intercepts(&self) -> bool {
        true
    }
}

/// Today's behaviour: every attempt is awaited where it is made.
#[derive(Clone, Copy, Debug, Default)]
pub struct InProcess;

impl Driver for InProcess {
    fn attempt<'a>(
        &'a self,
        _step: Step<'a>,
        _args: &'a Map<String, Value>,
        work: BoxFuture<'a, Attempt>,
    ) -> BoxFuture<'a, Attempt> {
        work
    }

    fn intercepts(&self) -> bool {
        false
    }
}

/// Which attempt of which item: enough to name it in a journal and to derive an idempotency
/// key for the tool.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    /// The running groups and sequences, from the bottom: `#main/fetch`, and deeper through
    /// calls (`#main/fetch/#other/build`).
    pub(crate) stack: &'a super::stack::Stack,
    /// The item's index in its group, from 0.
    pub index: usize,
    /// 0 for the first attempt, then one more for every retry.
    pub attempt: u32,
    /// The tool called.
    pub tool: &'a str,
    /// The item runs side by side with the others of its group (a parallel group whose items
    /// the driver let be in flight at once, [`Driver::concurrent`]).
    pub beside: bool,
}

impl Step<'_> {
    /// `GROUP/INDEX` of the innermost group, the name of the item in a journal.
    pub fn name(&self) -> String {
        format!(
            "{}/{}",
            self.stack.innermost_group().unwrap_or(""),
            self.index
        )
    }

    /// `PATH/INDEX/ATTEMPT`, unique within a run for every attempt at every depth (`PATH`:
    /// the groups and sequences on the stack). Prefixed with the run's id, it is the
    /// idempotency key a tool can be given.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.stack.path(), self.index, self.attempt)
    }
}

tokio::task_local! {
    static IDEMPOTENCY_KEY: String;
}

/// The idempotency key of the attempt being made, when its driver gave it one (a durable run:
/// `RUN/PATH/INDEX/ATTEMPT`). A host reads it while it calls a tool, to pass it on to a tool
/// that takes one (`cmd_run` sets `SEQC_IDEMPOTENCY_KEY`).
pub fn idempotency_key() -> Option<String> {
    IDEMPOTENCY_KEY.try_with(String::clone).ok()
}

/// Runs `work` (an attempt's work) with `key` as its [`idempotency_key`].
pub async fn with_idempotency_key<F: std::future::Future>(key: String, work: F) -> F::Output {
    IDEMPOTENCY_KEY.scope(key, work).await
}

/// What one attempt produced, as a journal can hold it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub outcome: Result<Value, ToolError>,
    /// The tool is not there (looked up, or lost before the call): `missing` decides, not
    /// `on_error`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}
