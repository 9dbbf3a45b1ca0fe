//! The interpreter of checked sequences.
//!
//! The engine walks the checked AST, never text. Its modules, from the outside in:
//! - `call`: runs (`seq_run`), calls (`seq_call`, `seq_when_call`, `seq_run` items) and the
//!   routing of arguments to the groups that declare them;
//! - `group`: one group — `when`, the items in parallel or in order, the barrier, `on_error`,
//!   the group timeout;
//! - `item`: one item — retries, `missing`, the type check of the value it writes;
//! - `dispatch`: the path of every host tool call (`__arg_error`, lookup, authorization,
//!   pre-validation, the per-tool timeout, the result contract);
//! - `tool_timeout`: the per-tool timeout of one group's calls, sharing the group's timers;
//! - `values`, `eval`, `fill`: references, conditions, and arguments filled in from templates;
//! - `stack`: the call stack behind the run-time depth and cycle bounds;
//! - `budget`, `size`: the run's budget of bytes held, and how values are measured for it and
//!   for the bounds on one result and one item's arguments;
//! - `clock`: the run's one time axis, from which every `started_ms` of the report is measured;
//! - `report`, `walk`: the run report, its statuses' names and words, and the one walk of its
//!   tree (groups, items, `each` elements, called groups) that every reader of it uses;
//! - `driver`: how an attempt at a tool call happens (awaited here, or journaled by a durable
//!   driver), the one seam between the interpreter and what runs it.
//!
//! Where the language leaves a choice open, the choice is written next to the code that
//! makes it. The main ones:
//! - input problems (an argument no group declares, a value that does not fit its declared
//!   type) are reason `type`, with the argument as `field`; `null` passed for an input means
//!   "not passed"; a lenient boolean entering a `bool` input or slot becomes a boolean;
//! - an `array` slot written by several items collects their values; written by one item, it
//!   takes that item's value;
//! - a `partial` group (failures tolerated by `on_error: continue`) does not make a run fail;
//!   a `failed` one stops it, and the groups after it are not in the report;
//! - the group timeout fails the group whatever its `on_error`; the per-tool timeout applies
//!   to host tools, not to calls, which are bounded by the timeouts of the groups they run.

pub(crate) mod budget;
mod call;
mod clock;
mod dispatch;
mod driver;
mod each;
mod eval;
mod failure;
mod fill;
mod finished;
mod group;
mod group_cx;
mod item;
mod item_run;
mod output_log;
mod report;
mod request;
mod retries;
mod size;
mod stack;
mod tool_timeout;
mod values;
mod walk;

pub use clock::{Mark, RunClock, wall_now};
pub use driver::{
    Attempt, Called, Deadline, Driver, InProcess, Step, idempotency_key, with_idempotency_key,
};
pub use eval::ConditionScope;
pub use finished::{FinishedRun, RunRecorder};
pub use output_log::MAX_OUTPUT_LOG_BYTES;
pub use report::{
    AttemptTime, CalledGroup, EachReport, ElementReport, GroupReport, GroupStatus, ItemReport,
    ItemStatus, MAX_REPORTED_CALL_DEPTH, MAX_REPORTED_ELEMENTS, RunReport, error_schema,
    report_schema,
};
pub use request::RunRequest;
pub use stack::Stack;
pub use walk::{Descend, ElementAt, GroupAt, GroupOf, ItemAt, Placed, ReportVisitor};

use crate::authorizer::Authorizer;
use crate::error::{Reason, ToolError};
use crate::host::{Caller, ToolHost};
use seq_syntax::ast::Sequence;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
pub use tokio_util::sync::CancellationToken;

/// Where `#name` calls find sequences: looked up afresh at every call, since stored sequences
/// can change between calls (run-time bounds are enforced again).
pub trait SequenceSource: Send + Sync {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>>;

    /// The sequence `name` with the id of its owner, from one read (so that the owner is that
    /// of this very sequence): a run of it goes on the stack with its owner, whose rights bound
    /// every dispatch it makes. A source that keeps no owners answers ownerless ones.
    fn owned(&self, name: &str) -> Option<(Arc<Sequence>, Option<String>)> {
        self.sequence(name).map(|sequence| (sequence, None))
    }
}

/// No stored sequence at all: every `#name` call fails as not found. For runs that call none.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSequences;

impl SequenceSource for NoSequences {
    fn sequence(&self, _name: &str) -> Option<Arc<Sequence>> {
        None
    }
}

/// Sequences held in memory by name (a snapshot handed to a run elsewhere, a test's set).
impl SequenceSource for std::collections::HashMap<String, Arc<Sequence>> {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        self.get(name).cloned()
    }
}

/// Bounds the engine enforces at run time.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Cross-sequence calls nested on the stack: 4.
    pub max_depth: u32,
    /// Per tool call: 60 s.
    pub tool_timeout: Duration,
    /// Groups running one inside another through calls (group and `#name` calls alike): 32,
    /// the checker's bound (E0606). Each nesting is a frame of the future being polled; the
    /// bound keeps a long chain of calls from overflowing a 2 MiB worker thread's stack, and
    /// fails it with reason `depth`.
    pub max_nested_groups: u32,
    /// Largest result one tool call may return, as compact JSON: 16 MiB. A larger one fails
    /// the item with reason `failed`.
    pub max_result_bytes: usize,
    /// Largest an item's arguments may grow as their references are filled in: 16 MiB. Past
    /// it the item fails with reason `failed`, before the bytes are held.
    pub max_argument_bytes: usize,
    /// What one run may hold at once, at every depth (called groups and `#name` calls share
    /// their run's budget): the values in slots, results not yet written at a parallel group's
    /// barrier, and the filled-in arguments of calls in flight, each counted once as compact
    /// JSON, and its item runs (`each` elements included: [`ITEM_RUN_BYTES`] each while they
    /// run, [`ITEM_REPORT_BYTES`] each for its report to the end of the run): 256 MiB, sixteen
    /// results of the largest size. An item that would take the run past it fails with reason
    /// `budget`.
    ///
    /// [`ITEM_RUN_BYTES`]: seq_syntax::limits::ITEM_RUN_BYTES
    /// [`ITEM_REPORT_BYTES`]: seq_syntax::limits::ITEM_REPORT_BYTES
    pub max_run_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: seq_syntax::limits::MAX_CALL_DEPTH,
            tool_timeout: seq_syntax::ast::Item::CALL_TIMEOUT,
            max_nested_groups: seq_syntax::limits::MAX_NESTED_GROUPS,
            max_result_bytes: seq_syntax::limits::MAX_RESULT_BYTES,
            max_argument_bytes: seq_syntax::limits::MAX_RESULT_BYTES,
            max_run_bytes: seq_syntax::limits::RUN_BYTES,
        }
    }
}

/// What the engine tells an observer while it runs (for a live view); called in order per group.
///
/// Only the groups of the run itself are observed (those of `Engine::run`, or of the sequence or
/// group an `Engine::call` names); a group reached through a `seq_call` item shows as that item.
/// Every observed group gets `group_started` and `group_finished`, also when its `when` is false;
/// `item_started` comes when an item really starts (after the same-channel item before it), and
/// `item_finished` once for every item of a group that ran, in finishing order, then the items
/// that never finished (cancelled, or not reached) in item order.
pub trait Observer: Send + Sync {
    fn group_started(&self, _sequence: &str, _group: &str, _parallel: bool) {}
    fn item_started(&self, _group: &str, _index: usize, _tool: &str) {}
    fn item_finished(&self, _group: &str, _index: usize, _report: &ItemReport) {}
    fn group_finished(&self, _report: &GroupReport) {}
    /// A group of a run made elsewhere (a durable run) finished: its name and status, as that
    /// place told them (its timing stays there).
    fn group_finished_elsewhere(&self, _group: &str, _status: GroupStatus) {}
}

/// The engine's observer and a run's, told the same in that order.
struct Both<'a>(Option<&'a dyn Observer>, &'a dyn Observer);

impl Observer for Both<'_> {
    fn group_started(&self, sequence: &str, group: &str, parallel: bool) {
        if let Some(engine) = self.0 {
            engine.group_started(sequence, group, parallel);
        }
        self.1.group_started(sequence, group, parallel);
    }
    fn item_started(&self, group: &str, index: usize, tool: &str) {
        if let Some(engine) = self.0 {
            engine.item_started(group, index, tool);
        }
        self.1.item_started(group, index, tool);
    }
    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        if let Some(engine) = self.0 {
            engine.item_finished(group, index, report);
        }
        self.1.item_finished(group, index, report);
    }
    fn group_finished(&self, report: &GroupReport) {
        if let Some(engine) = self.0 {
            engine.group_finished(report);
        }
        self.1.group_finished(report);
    }
}

/// What one run or direct call holds while it goes: what its output channels sent, its byte
/// budget, its clock, and the token of a request that cannot be cancelled.
struct RunParts {
    output: output_log::OutputLog,
    budget: Arc<budget::RunBudget>,
    clock: RunClock,
    never: CancellationToken,
}

/// Runs sequences against a host.
pub struct Engine {
    host: Arc<dyn ToolHost>,
    /// Who may use what: asked at every dispatch, for tools and rights alike.
    authorizer: Authorizer,
    sequences: Arc<dyn SequenceSource>,
    limits: Limits,
    observer: Option<Arc<dyn Observer>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What every part of a run shares: the host, the sequence source, the bounds, the observer, and
/// the calling identity, which is carried unchanged into every nested dispatch.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'a> {
    pub host: &'a dyn ToolHost,
    pub authorizer: &'a Authorizer,
    pub sequences: &'a dyn SequenceSource,
    pub limits: &'a Limits,
    pub observer: Option<&'a dyn Observer>,
    pub caller: &'a Caller,
    /// The run's cancellation (docs/reference.md, "Cancellation"): checked before anything
    /// starts and awaited beside everything that waits.
    pub cancel: &'a CancellationToken,
    /// What the run's output channels sent, for its report.
    pub output: &'a output_log::OutputLog,
    /// How attempts at tool calls happen.
    pub driver: &'a dyn Driver,
    /// The run's budget of bytes held, shared by every depth.
    pub budget: &'a Arc<budget::RunBudget>,
    /// The earliest deadline of the groups running (through calls, and for a called run that
    /// runs elsewhere, its caller's): a driver cuts its attempts off there.
    pub deadline: Option<Deadline>,
    /// The run's clock: every `started_ms` is measured on it. A reference: `Cx` is copied into
    /// every nested call's frame.
    pub clock: &'a RunClock,
}

impl Engine {
    pub fn new(host: Arc<dyn ToolHost>, sequences: Arc<dyn SequenceSource>) -> Engine {
        Engine {
            host,
            authorizer: Authorizer::allow_all(),
            sequences,
            limits: Limits::default(),
            observer: None,
        }
    }

    /// Holds every dispatch to `authorizer` (without one, every caller may use everything).
    pub fn with_authorizer(mut self, authorizer: Authorizer) -> Engine {
        self.authorizer = authorizer;
        self
    }

    /// Who may use what, as this engine asks it.
    pub fn authorizer(&self) -> &Authorizer {
        &self.authorizer
    }

    pub fn with_limits(mut self, limits: Limits) -> Engine {
        self.limits = limits;
        self
    }

    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Engine {
        self.observer = Some(observer);
        self
    }

    /// The bounds it enforces.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn cx<'a>(
        &'a self,
        caller: &'a Caller,
        cancel: &'a CancellationToken,
        output: &'a output_log::OutputLog,
        driver: &'a dyn Driver,
        budget: &'a Arc<budget::RunBudget>,
        clock: &'a RunClock,
    ) -> Cx<'a> {
        Cx {
            host: self.host.as_ref(),
            authorizer: &self.authorizer,
            sequences: self.sequences.as_ref(),
            limits: &self.limits,
            observer: self.observer.as_deref(),
            caller,
            cancel,
            output,
            driver,
            budget,
            deadline: None,
            clock,
        }
    }

    /// The parts of a run asked with `request`.
    fn parts_for(&self, request: &RunRequest<'_>) -> RunParts {
        RunParts {
            output: output_log::OutputLog::default(),
            budget: budget::RunBudget::new(self.limits.max_run_bytes),
            clock: request.driver.clock(),
            never: CancellationToken::new(),
        }
    }

    /// The engine's observer and the request's, when the request brings one.
    fn watchers<'a>(&'a self, request: &RunRequest<'a>) -> Option<Both<'a>> {
        request
            .observer
            .map(|run| Both(self.observer.as_deref(), run))
    }

    /// The context of a run asked with `request`, holding `parts`, told to `watchers` when the
    /// request brings an observer of its own.
    fn cx_for<'a>(
        &'a self,
        request: &RunRequest<'a>,
        parts: &'a RunParts,
        watchers: Option<&'a Both<'a>>,
    ) -> Cx<'a> {
        let cancel = request.cancel.unwrap_or(&parts.never);
        let mut cx = self.cx(
            request.caller,
            cancel,
            &parts.output,
            request.driver,
            &parts.budget,
            &parts.clock,
        );
        if let Some(watchers) = watchers {
            cx.observer = Some(watchers);
        }
        cx
    }

    /// Runs `sequence` (already checked: no error diagnostics) with the run's arguments, as
    /// `request` says: `seq_run`.
    pub async fn run(
        &self,
        sequence: &Sequence,
        args: Map<String, Value>,
        request: RunRequest<'_>,
    ) -> RunReport {
        let parts = self.parts_for(&request);
        let watchers = self.watchers(&request);
        let cx = self.cx_for(&request, &parts, watchers.as_ref());
        let bottom = Stack::default().enter_sequence(
            &sequence.name.value,
            request.owner,
            self.limits.max_depth,
        );
        let mut report = match bottom {
            // The run is over: what it held is the report's now.
            Ok(stack) => call::run_sequence(cx, sequence, args, stack, true).await.0,
            // The bottom of the stack can be neither deeper than the bound nor a cycle.
            Err(error) => report::failed_run(error),
        };
        report.output = parts.output.take();
        report
    }

    /// The run of a sequence called from another run, given the call's stack (the callee on
    /// top, [`Called::stack`]): what a [`Driver`] that runs a `#name` call elsewhere runs
    /// there. Its own calls are bounded by that stack, so the depth and cycle bounds hold
    /// across runs (the owners are the stack's: `request.owner` is not read); its attempts are
    /// cut off at `deadline`, its caller's ([`Step::deadline`]).
    pub async fn run_called(
        &self,
        sequence: &Sequence,
        args: Map<String, Value>,
        request: RunRequest<'_>,
        stack: Stack,
        deadline: Option<Deadline>,
    ) -> RunReport {
        let parts = self.parts_for(&request);
        let watchers = self.watchers(&request);
        let cx = Cx {
            deadline,
            ..self.cx_for(&request, &parts, watchers.as_ref())
        };
        let mut report = call::run_sequence(cx, sequence, args, stack, false).await.0;
        report.output = parts.output.take();
        report
    }

    /// One attempt at host tool `tool` with `args` (filled in) on behalf of `caller`, on its
    /// own: what a [`Driver`] is given as an attempt's work (lookup, authorization,
    /// pre-validation, the call within the per-tool timeout, the result contract), for a
    /// driver that makes attempts elsewhere than where the run is. `stack`: the item's
    /// ([`Step::stack`]), whose owners bound the authorization as the caller does.
    pub async fn attempt(
        &self,
        caller: &Caller,
        stack: &Stack,
        tool: &str,
        args: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Attempt {
        let output = output_log::OutputLog::default();
        // The attempt's own arguments and result; the run they belong to charges the result
        // again where it is kept.
        let budget = budget::RunBudget::new(self.limits.max_run_bytes);
        let clock = RunClock::start();
        let cx = self.cx(caller, cancel, &output, &InProcess, &budget, &clock);
        let lock = tokio::sync::RwLock::new(());
        let timeout = tool_timeout::ToolTimeout::per_call(self.limits.tool_timeout);
        dispatch::attempt(cx, stack, tool, args, &lock, &timeout).await
    }

    /// Calls one target from outside any sequence, as `request` says: `seq_call` /
    /// `seq_when_call` made directly by a model. `target` is a group of `sequence` (whose owner
    /// is `request.owner`) or `#name`.
    ///
    /// The value is what a `seq_call` item would write to its `as` slot: the group's slots, or
    /// `{group: {slot: value}}` for the groups of `#name` that ran; `null` when the group's
    /// `when` was false. A call to `#name` starts at depth 0, as `seq_run` does.
    pub async fn call(
        &self,
        sequence: Option<&Sequence>,
        target: &str,
        args: Map<String, Value>,
        request: RunRequest<'_>,
    ) -> Result<Value, ToolError> {
        // A direct call returns a value, not a report: its output is delivered, not kept.
        let parts = self.parts_for(&request);
        let watchers = self.watchers(&request);
        let cx = self.cx_for(&request, &parts, watchers.as_ref());
        call::direct(cx, sequence, request.owner, target, args)
            .await
            .map(|value| value.unwrap_or(Value::Null))
    }

    /// `seq_when_call` made directly by a model: [`Engine::call`] when `when` holds; when it
    /// does not, the call of `otherwise` (the `else` target and its arguments) if given, else
    /// `null` without calling. The condition is evaluated before anything
    /// else; its `$args` are the arguments of this call (a model has no other scope). A
    /// condition that does not parse is an `arg_error`; one that cannot be evaluated is
    /// a `type` error, never "false".
    pub async fn when_call(
        &self,
        sequence: Option<&Sequence>,
        target: &str,
        args: Map<String, Value>,
        when: &str,
        otherwise: Option<(&str, Map<String, Value>)>,
        request: RunRequest<'_>,
    ) -> Result<Value, ToolError> {
        let condition = eval::parse(when)?;
        let slots = values::Slots {
            args: args.clone(),
            out: Map::new(),
            unwritten: Default::default(),
        };
        if eval::eval(&condition, values::Scope::of(&slots))? {
            return self.call(sequence, target, args, request).await;
        }
        match otherwise {
            Some((target, args)) => self.call(sequence, target, args, request).await,
            None => Ok(Value::Null),
        }
    }
}

/// The detail of `error` with `context` in front: where in the run it happened.
pub(crate) fn within(mut error: ToolError, context: &str) -> ToolError {
    error.detail = Some(match error.detail.take() {
        Some(detail) => format!("{context}: {detail}"),
        None => context.to_owned(),
    });
    error
}

/// Durations in messages are written as the language writes them.
pub(crate) use seq_syntax::duration::format as format_duration;

/// The error of an input or argument that does not fit the signature it goes to. An undeclared
/// argument is a `type` error too: the arguments object does not fit the declared signature.
pub(crate) fn signature_error(field: &str, detail: String, hint: &str) -> ToolError {
    ToolError::new(Reason::Type, detail)
        .with_field(field)
        .with_hint(hint)
}
