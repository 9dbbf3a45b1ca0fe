//! How the engine's effects happen: the seam between the interpreter and what runs it.
//!
//! The interpreter (`call`, `group`, `item`) makes every decision of a run — which group next,
//! `when`, retries, `missing`, the order of slots, the depth and cycle bounds, the result
//! contract, authorization of the caller at every depth. A [`Driver`] decides only *how* one
//! attempt at a host tool call happens: [`InProcess`] awaits it; a durable driver (the
//! `seq-restate` crate) journals its outcome, so that a replay of the run gets the same
//! outcome back without calling the tool again. Control flow then depends only on what an
//! attempt returned, which is what makes a run replay-safe. A `#name` call the interpreter has
//! decided to make (looked up, within the depth and cycle bounds) is the driver's too: run here
//! ([`InProcess`]), or as a run of its own elsewhere that carries the stack with it. So is how
//! a group's time is measured: a group's timeout is the engine's decision, but when it has run
//! out is read from the driver's clock ([`Driver::deadline`], [`Driver::expired`]): tokio's
//! timer in process, a journaled clock for a durable driver, whose attempts end at their
//! deadline with an outcome it journals.

use super::clock::RunClock;
use super::report::RunReport;
use super::stack::Stack;
use crate::error::ToolError;
use crate::host::BoxFuture;
use seq_syntax::ast::{Group, Item, Sequence};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

/// Runs the attempts of host tool calls.
pub trait Driver: Send + Sync {
    /// One attempt at a host tool call, named by `step`, with `args` (filled in): `work` looks
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

    /// The run of a called sequence: `work` runs it here, sharing the run's budget and output.
    /// A driver may run it elsewhere ([`Engine::run_called`] is the same run, given the call)
    /// and drop `work`; the caller then charges what it keeps of the report.
    ///
    /// [`Engine::run_called`]: super::Engine::run_called
    fn sequence<'a>(
        &'a self,
        _call: Called<'a>,
        work: BoxFuture<'a, RunReport>,
    ) -> BoxFuture<'a, RunReport> {
        work
    }

    /// When the time of group `group`, which starts now, runs out: `timeout` from now, on the
    /// driver's clock. A durable driver reads its clock once and journals it, so that a replay
    /// gets the same deadline.
    fn deadline<'a>(&'a self, _group: &'a str, timeout: Duration) -> BoxFuture<'a, Deadline> {
        let at = tokio::time::Instant::now() + timeout;
        Box::pin(std::future::ready(Deadline::Instant(at)))
    }

    /// Waits until `deadline` has passed; the group whose deadline it is then stops (the items
    /// in flight are dropped). A durable driver wakes it only when an attempt ended at that
    /// deadline, with a journaled outcome saying so: the decision is the journal's, as on a
    /// replay.
    fn expired<'a>(&'a self, deadline: Deadline) -> BoxFuture<'a, ()> {
        match deadline {
            Deadline::Instant(at) => Box::pin(tokio::time::sleep_until(at)),
            Deadline::Wall(_) => Box::pin(std::future::pending()),
        }
    }

    /// The pause before retry [`Step::attempt`] of an item (`retry_delay`, `retry_backoff`).
    /// In process a timer, which the group drops at its deadline and the item at the run's
    /// cancellation; a durable driver makes it a durable timer, which ends at the group's
    /// deadline if that comes first (the group then stops, as at an attempt's).
    fn pause<'a>(&'a self, _step: Step<'a>, pause: Duration) -> BoxFuture<'a, ()> {
        Box::pin(tokio::time::sleep(pause))
    }

    /// An attempt of an item side by side with others ([`Step::beside`]) failed before it
    /// reached [`Driver::attempt`] (its arguments could not be filled in): the failure is
    /// observed when this resolves. A driver that observes its attempts in the order they were
    /// made has it wait its turn among them, so that the failure that stops a group is still
    /// the first in that order. In process: at once.
    fn failed_early<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// Whether the items of parallel `group` may be in flight at once. When not, they run one
    /// at a time, in item order; they still see only the slots written before the group, and
    /// their slots are written at the group's barrier, so the report of a group that ends well
    /// is the same.
    fn concurrent(&self, _group: &Group) -> bool {
        true
    }

    /// Whether the elements of `item`, an `each` item with `max_parallel`, may be in flight at
    /// once, in a serial group too. When not, they run one at a time, in element order, as
    /// without the bound.
    fn fans_out(&self, _item: &Item) -> bool {
        true
    }

    /// The clock of the run this driver runs, read when the run starts: in process, a run
    /// starting now; a durable driver's is a journaled reading (the run's own, or for a
    /// `#name` call run elsewhere, its caller's), so that every `started_ms` of the report is
    /// on one axis.
    fn clock(&self) -> RunClock {
        RunClock::start()
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
    /// For a run of an `each` item, the element's index, from 0.
    pub element: Option<usize>,
    /// 0 for the first attempt, then one more for every retry.
    pub attempt: u32,
    /// The tool called.
    pub tool: &'a str,
    /// The item runs side by side with the others of its group (a parallel group whose items
    /// the driver let be in flight at once, [`Driver::concurrent`]), or the element with the
    /// others of its fan-out ([`Driver::fans_out`]).
    pub beside: bool,
    /// The earliest deadline of the groups running around the item, its own and those of the
    /// groups calling it: where the attempt is cut off, if it runs that long.
    pub deadline: Option<Deadline>,
}

/// When a group's time is up, on the clock of its driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Deadline {
    /// On this process's monotonic clock ([`InProcess`]).
    Instant(tokio::time::Instant),
    /// Milliseconds since the Unix epoch, from a clock reading a durable driver journaled.
    Wall(u64),
}

impl Step<'_> {
    /// The stack the item runs on: its owners bound the attempt's authorization, wherever it
    /// is made ([`super::Engine::attempt`]).
    pub fn stack(&self) -> &Stack {
        self.stack
    }

    /// `GROUP/INDEX` of the innermost group (`GROUP/INDEX[ELEMENT]` for an element of an
    /// `each` item), the name of the item in a journal.
    pub fn name(&self) -> String {
        format!(
            "{}/{}",
            self.stack.innermost_group().unwrap_or(""),
            self.place()
        )
    }

    /// `PATH/INDEX/ATTEMPT` (`PATH/INDEX[ELEMENT]/ATTEMPT`), unique within a run for every
    /// attempt at every depth (`PATH`: the groups and sequences on the stack). Prefixed with
    /// the run's id, it is the idempotency key a tool can be given.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.stack.path(), self.place(), self.attempt)
    }

    /// The item's place in its group: `INDEX`, or `INDEX[ELEMENT]`.
    fn place(&self) -> String {
        match self.element {
            Some(element) => format!("{}[{element}]", self.index),
            None => self.index.to_string(),
        }
    }
}

/// A `#name` call the interpreter made: the callee, found and entered on the stack.
#[derive(Clone, Copy, Debug)]
pub struct Called<'a> {
    /// The calling item's attempt: its place names the call.
    pub step: Step<'a>,
    pub sequence: &'a Sequence,
    /// Admitted to nothing yet: the callee's entry groups route them.
    pub args: &'a Map<String, Value>,
    /// The stack with the callee on top, which bounds its calls.
    pub stack: &'a Stack,
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
    /// When the attempt began (milliseconds since the Unix epoch), as a durable driver journals
    /// it with the outcome: a replay then reports when the attempt first ran, not when it was
    /// replayed. `None`: the engine's own reading stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
}

impl Attempt {
    /// The attempt, begun at `epoch_ms`.
    pub fn began_at(self, epoch_ms: u64) -> Attempt {
        Attempt {
            started_at: Some(epoch_ms),
            ..self
        }
    }
}
