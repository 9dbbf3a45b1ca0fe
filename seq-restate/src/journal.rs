//! The engine's `Driver` on a Restate workflow context.
//!
//! Every attempt at a host tool call is journaled, with its whole outcome — a tool's failure
//! included, so that the engine, not Restate, decides what a failure means (retries,
//! `missing`, `on_error`). A worker that dies during an attempt leaves no outcome for it: the
//! next worker replays the outcomes before it from the journal and makes that one again.
//!
//! - Every attempt runs as a child invocation of the `SeqItem` service ([`crate::SeqItem`]),
//!   whose body is the attempt, on any worker: a worker the attempt kills is then the
//!   invocation's to retry, within Restate's bounded retry policy
//!   ([`crate::worker::MAX_ATTEMPTS`]), and past it the item fails while the run goes on. The
//!   children of a parallel group run side by side. The run observes their outcomes in the
//!   order it made the calls ([`Gate`]): what it does after an outcome (a retry, the next call)
//!   is then made at the same place of the journal on a replay, where every outcome is there at
//!   once, as the first time.
//! - A send to an output channel, which writes to the run's own output, is a `ctx.run` step
//!   named `group/index` of the run: the SDK awaits one such step at a time (several in flight
//!   break replay). A durable sleep is awaited beside it, so that the run's cancellation stops
//!   the step at once.
//!
//! A parallel group runs side by side only when every item is a host tool call that is
//! parallel-safe by its current definition and sends to no output channel, and so do the
//! elements of a fan-out (an `each` item with `max_parallel`) only when its item is one: a
//! `#name` or group call runs groups of its own, and the sends to one channel wait for each
//! other, both of which would make calls at moments a replay cannot reproduce. Such a group
//! runs one item at a time, and such a fan-out one element at a time, as before.

use crate::halting::halting;
use crate::input::{AttemptInput, CalledFrom, RunInput, Snapshot, WorkflowInput};
use crate::workflow::{SeqItemClient, SeqRunClient};
use restate_sdk::prelude::*;
use seq_catalog::ParallelSafety;
use seq_catalog::is_output_send;
use seq_catalog::{Catalog, SEQ_RUN};
use seq_exec::engine::{
    Attempt, Called, CancellationToken, Deadline, Driver, RunClock, Step, with_idempotency_key,
};
use seq_exec::policy::Policy;
use seq_exec::{BoxFuture, Caller, Reason, RunReport, ToolError, ToolHost};
use seq_syntax::ast::{Group, Item};
use seq_syntax::names::CallTarget;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;

/// The largest journal entry the server accepts by default (its message size limit): 32 MiB.
/// An attempt whose outcome is larger fails its item instead of being retried forever.
pub const ENTRY_LIMIT: usize = 32 * 1024 * 1024;

/// Journals a run's attempts in the workflow context of the run.
pub struct Journaled<'ctx> {
    ctx: &'ctx WorkflowContext<'ctx>,
    /// The id of the run at the bottom (this one, unless it is a called run): the first part of
    /// every idempotency key, and of the ids of the runs it calls.
    root: &'ctx str,
    /// What the runs it calls take with them.
    sequences: &'ctx Snapshot,
    /// Where the run's tools are, to tell which are parallel-safe.
    host: &'ctx dyn ToolHost,
    /// Given to the children, which authorize it as the run does.
    caller: &'ctx Caller,
    /// The run's travelling policy, given to the children with the caller.
    policy: &'ctx Policy,
    /// The run's cancellation, cancelled when Restate says the run is (`seqc cancel`).
    cancel: &'ctx CancellationToken,
    /// How long a step's cancellation guard waits: longer than the per-tool bound.
    guard: Duration,
    entry_limit: usize,
    gate: Gate,
    /// The deadlines attempts have ended at (milliseconds since the epoch): the groups whose
    /// deadlines they are stop.
    expired: watch::Sender<BTreeSet<u64>>,
    /// When the run at the bottom started (milliseconds since the epoch, journaled): the
    /// origin of every `started_ms`, handed on to the runs it calls.
    started: u64,
}

impl std::fmt::Debug for Journaled<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journaled")
            .field("entry_limit", &self.entry_limit)
            .finish_non_exhaustive()
    }
}

impl<'ctx> Journaled<'ctx> {
    #[allow(
        clippy::too_many_arguments,
        reason = "what a run's journal borrows from the run, each once"
    )]
    pub(crate) fn new(
        ctx: &'ctx WorkflowContext<'ctx>,
        root: &'ctx str,
        sequences: &'ctx Snapshot,
        host: &'ctx dyn ToolHost,
        caller: &'ctx Caller,
        policy: &'ctx Policy,
        cancel: &'ctx CancellationToken,
        guard: Duration,
        started: u64,
    ) -> Journaled<'ctx> {
        Journaled {
            ctx,
            root,
            sequences,
            host,
            caller,
            policy,
            cancel,
            guard,
            entry_limit: ENTRY_LIMIT,
            gate: Gate::default(),
            expired: watch::Sender::new(BTreeSet::new()),
            started,
        }
    }

    /// One attempt as a `ctx.run` step of the run itself.
    fn step<'a>(&'a self, step: Step<'a>, work: BoxFuture<'a, Attempt>) -> BoxFuture<'a, Attempt> {
        // The context's lifetime, shortened to the attempt's: the step may borrow the run.
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        let limit = self.entry_limit;
        let tool = step.tool;
        let key = format!("{}/{}", self.root, step.key());
        let deadline = wall(step.deadline);
        let guard = self.guard;
        halting(Box::pin(async move {
            // Restate's cancellation reaches a handler only through a durable future it awaits,
            // and the step's closure runs outside them: a sleep awaited beside it is how the
            // cancellation stops the step (409), its tool's future dropped as a timeout drops
            // it. Created before the step's command, the same on every replay. Longer than
            // the per-tool bound: it never cuts off a call.
            let guard = ctx.sleep(guard);
            let run = ctx
                .run(move || async move {
                    // Journaled with the outcome: a replay reports when the attempt first ran.
                    let began = now();
                    let outcome = within(deadline, with_idempotency_key(key, work)).await;
                    Ok(Json(outcome.map(|a| {
                        within_entry_limit(tool, a, limit).began_at(began)
                    })))
                })
                .name(step.name());
            let mut run = std::pin::pin!(run);
            let journaled = tokio::select! {
                biased;
                journaled = &mut run => journaled,
                slept = guard => match slept {
                    Err(error) if error.code() == CANCELLED => Err(error),
                    // A tool with a longer `timeout` of its own.
                    Ok(()) | Err(_) => run.await,
                },
            };
            match journaled {
                Ok(Json(outcome)) => self.observed(outcome, deadline).await,
                Err(error) => self.refused(tool, &error),
            }
        }))
    }

    /// The attempt of `outcome`; when it ended at `deadline`, the group whose deadline that is
    /// stops, and this attempt is never observed (the group drops it).
    async fn observed(&self, outcome: Outcome, deadline: Option<u64>) -> Attempt {
        match (outcome, deadline) {
            (Outcome::Done(attempt), _) => attempt,
            (Outcome::Expired, Some(at)) => {
                self.expire(at);
                std::future::pending().await
            }
            // Only an attempt with a deadline ends at it.
            (Outcome::Expired, None) => Attempt {
                outcome: Err(ToolError::new(
                    Reason::Timeout,
                    "the attempt ended at a deadline it did not have",
                )),
                missing: false,
                started_at: None,
            },
        }
    }

    fn expire(&self, at: u64) {
        self.expired.send_modify(|expired| {
            expired.insert(at);
        });
    }

    /// One attempt as a child invocation, observed in the order of the calls.
    fn child<'a>(&'a self, step: Step<'a>, args: &'a Map<String, Value>) -> BoxFuture<'a, Attempt> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        let tool = step.tool;
        let input = AttemptInput {
            tool: tool.to_owned(),
            args: args.clone(),
            caller: self.caller.id.clone(),
            stack: step.stack().clone(),
            policy: self.policy.clone(),
            key: format!("{}/{}", self.root, step.key()),
            deadline: wall(step.deadline),
        };
        let input_deadline = input.deadline;
        halting(Box::pin(async move {
            // Called when first polled, which the engine does for every item of the group in
            // item order, and for a retry right after the outcome before it.
            let call = ctx
                .service_client::<SeqItemClient>()
                .attempt(Json(input))
                .call();
            let ticket = self.gate.ticket();
            // Every item the group starts at once makes its call before any call is awaited:
            // a run suspended while it waits replays its journal, where an await met before
            // the last call is made would find no outcome yet (the call awaited first may end
            // last), which the SDK refuses as a different path.
            tokio::task::yield_now().await;
            // One call awaited at a time: the SDK wakes one awaiter of its futures, and the
            // order is the gate's anyway.
            ticket.turn().await;
            let answered = call.await;
            match answered {
                Ok(Json(outcome)) => self.observed(outcome, input_deadline).await,
                Err(error) => self.refused(tool, &error),
            }
        }))
    }
}

impl Journaled<'_> {
    /// The report of a called run the durable engine gave none for (its cancellation, 409:
    /// the run's, which the engine then stops).
    fn refused_run(&self, name: &str, error: &TerminalError) -> RunReport {
        let Attempt { outcome, .. } = self.refused(&CallTarget::Sequence(name).to_string(), error);
        let error = outcome.err();
        RunReport {
            ok: false,
            cancelled: error
                .as_ref()
                .is_some_and(|e| e.reason == Reason::Cancelled),
            groups: Vec::new(),
            out: Map::new(),
            error,
            argument_errors: Vec::new(),
            output: Map::new(),
        }
    }

    /// The failure of an attempt the durable engine gave no outcome for. Restate's cancellation
    /// of the run (409) is the run's cancellation: the engine stops as it does in process. Any
    /// other is Restate giving up on the invocation (a `SeqItem` answers with its outcome, a
    /// called run with its report): its attempts did not end, as many times as it makes one
    /// (its worker died, or none could be reached), and its item fails, as any failure does.
    fn refused(&self, tool: &str, error: &TerminalError) -> Attempt {
        let error = if error.code() == CANCELLED {
            self.cancel.cancel();
            ToolError::new(Reason::Cancelled, "the run was cancelled".to_owned())
        } else {
            ToolError::new(
                Reason::Failed,
                format!(
                    "`{tool}` was given up after {} attempts that did not end: the worker making \
                     each died, or none could be reached (the last: {})",
                    crate::worker::MAX_ATTEMPTS,
                    error.message()
                ),
            )
            .with_hint(
                "a tool that kills its worker (exhausts its memory, signals it) fails this way; \
                 make the call do less, or see why the workers stopped",
            )
        };
        Attempt {
            outcome: Err(error),
            missing: false,
            started_at: None,
        }
    }
}

/// The code of a Restate invocation's cancellation.
const CANCELLED: u16 = 409;

/// The code a called run answers with when its caller's deadline passed: the caller's group
/// stops, as in process.
pub(crate) const EXPIRED: u16 = 408;

/// What a journal holds of an attempt: its outcome, or that it ran up to its deadline (the
/// deadline of a group around it), where it was stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Done(Attempt),
    Expired,
}

impl Outcome {
    pub(crate) fn map(self, f: impl FnOnce(Attempt) -> Attempt) -> Outcome {
        match self {
            Outcome::Done(attempt) => Outcome::Done(f(attempt)),
            Outcome::Expired => Outcome::Expired,
        }
    }
}

/// Milliseconds since the Unix epoch, on this worker's clock.
pub(crate) fn now() -> u64 {
    seq_exec::engine::wall_now()
}

/// A durable deadline in milliseconds since the epoch (the only kind this driver makes).
fn wall(deadline: Option<Deadline>) -> Option<u64> {
    match deadline? {
        Deadline::Wall(at) => Some(at),
        Deadline::Instant(_) => None,
    }
}

/// `work`'s attempt, or `Expired` when `deadline` (milliseconds since the epoch) comes first:
/// then `work` is dropped, which stops its tool. Past the deadline, nothing runs.
pub(crate) async fn within(
    deadline: Option<u64>,
    work: impl std::future::Future<Output = Attempt>,
) -> Outcome {
    let Some(at) = deadline else {
        return Outcome::Done(work.await);
    };
    let left = at.saturating_sub(now());
    if left == 0 {
        return Outcome::Expired;
    }
    match tokio::time::timeout(Duration::from_millis(left), work).await {
        Ok(attempt) => Outcome::Done(attempt),
        Err(_) => Outcome::Expired,
    }
}

impl Driver for Journaled<'_> {
    /// An attempt is a `SeqItem` invocation, whatever its group: a tool that kills its worker
    /// then fails its item after [`crate::worker::MAX_ATTEMPTS`] deaths, and the run goes on
    /// (`on_error`, its report). Only a send to an output channel, which writes to the run's
    /// own output, is a step of the run itself.
    fn attempt<'a>(
        &'a self,
        step: Step<'a>,
        args: &'a Map<String, Value>,
        work: BoxFuture<'a, Attempt>,
    ) -> BoxFuture<'a, Attempt> {
        if is_output_send(step.tool) {
            self.step(step, work)
        } else {
            self.child(step, args)
        }
    }

    /// A `#name` call as a child `SeqRun` of its own, whose id is this run's root and the
    /// call's place (`RUN/PATH/INDEX/ATTEMPT`): a replay meets the same child. It takes the
    /// stack with it, and the sequences of this run's input.
    fn sequence<'a>(
        &'a self,
        call: Called<'a>,
        _work: BoxFuture<'a, RunReport>,
    ) -> BoxFuture<'a, RunReport> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        let id = format!("{}/{}", self.root, call.step.key());
        let name = call.sequence.name.value.as_str();
        let input = WorkflowInput {
            run: RunInput {
                sequence: call.sequence.clone(),
                // Also on the stack it takes with it, which bounds its dispatches.
                owner: self.sequences.owners().get(name).cloned(),
                sequences: self.sequences.all(),
                owners: self.sequences.owners().clone(),
                args: call.args.clone(),
                caller: self.caller.id.clone(),
                policy: self.policy.clone(),
                // A called run's spans are its caller's (it is in its caller's report).
                traceparent: None,
                // Its id is its place in its caller: nobody submits it again.
                submission: None,
            },
            called: Some(CalledFrom {
                root: self.root.to_owned(),
                stack: call.stack.clone(),
                deadline: wall(call.step.deadline),
                started: Some(self.started),
            }),
        };
        let deadline = wall(call.step.deadline);
        halting(Box::pin(async move {
            let answered = ctx
                .workflow_client::<SeqRunClient>(id)
                .run(Json(input))
                .call()
                .await;
            match answered {
                Ok(Json(report)) => report,
                Err(error) if error.code() == EXPIRED => match deadline {
                    Some(at) => {
                        self.expire(at);
                        std::future::pending().await
                    }
                    None => self.refused_run(name, &error),
                },
                Err(error) => self.refused_run(name, &error),
            }
        }))
    }

    /// The group's deadline, read from a clock journaled as step `GROUP/clock`.
    fn deadline<'a>(&'a self, group: &'a str, timeout: Duration) -> BoxFuture<'a, Deadline> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        halting(Box::pin(async move {
            let read = ctx
                .run(|| async { Ok(now()) })
                .name(format!("{group}/clock"))
                .await;
            // A clock that cannot be journaled (the run was cancelled meanwhile): the worker's;
            // the run stops at its next step anyway.
            let started = read.unwrap_or_else(|_| now());
            let timeout = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
            Deadline::Wall(started.saturating_add(timeout))
        }))
    }

    /// Wakes when an attempt ended at `deadline` (a journaled outcome says so).
    fn expired<'a>(&'a self, deadline: Deadline) -> BoxFuture<'a, ()> {
        let mut expired = self.expired.subscribe();
        Box::pin(async move {
            let Some(at) = wall(Some(deadline)) else {
                return std::future::pending().await;
            };
            // The sender lives as long as the driver, which outlives the run.
            let _ = expired.wait_for(|expired| expired.contains(&at)).await;
        })
    }

    /// A durable timer (`ctx.sleep`): Restate wakes the run when it ends, whichever worker it is
    /// then on, so a worker killed meanwhile neither shortens nor repeats it; no worker waits
    /// through it. When the pause would pass the deadline of a group around the item (from a
    /// clock read journaled as `GROUP/INDEX/pause/N`), it ends there, and that group stops as
    /// at an attempt ended at its deadline. An item side by side with others pauses in its turn
    /// among their outcomes, so that a replay meets the timer where the first run made it.
    fn pause<'a>(&'a self, step: Step<'a>, pause: Duration) -> BoxFuture<'a, ()> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        let deadline = wall(step.deadline);
        let name = format!("{}/pause/{}", step.name(), step.attempt);
        halting(Box::pin(async move {
            let ticket = step.beside.then(|| self.gate.ticket());
            if let Some(ticket) = &ticket {
                ticket.turn().await;
            }
            let (length, ends_at) = match deadline {
                Some(at) => {
                    let read = ctx.run(|| async { Ok(now()) }).name(name).await;
                    let started = read.unwrap_or_else(|_| now());
                    let left = at.saturating_sub(started);
                    let wanted = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX);
                    if wanted >= left {
                        (Duration::from_millis(left), Some(at))
                    } else {
                        (pause, None)
                    }
                }
                None => (pause, None),
            };
            let slept = ctx.sleep(length).await;
            drop(ticket);
            match (slept, ends_at) {
                // The run was cancelled during the pause: the item stops as cancelled.
                (Err(error), _) if error.code() == CANCELLED => self.cancel.cancel(),
                (Ok(()) | Err(_), Some(at)) => {
                    self.expire(at);
                    std::future::pending().await
                }
                (Ok(()) | Err(_), None) => {}
            }
        }))
    }

    /// Takes its place in the order of the child invocations, as the attempt would have.
    fn failed_early<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, ()> {
        let ticket = self.gate.ticket();
        Box::pin(async move { ticket.turn().await })
    }

    /// Measured from the journaled start of the run at the bottom.
    fn clock(&self) -> RunClock {
        RunClock::since_wall(self.started)
    }

    fn concurrent(&self, group: &Group) -> bool {
        group.items.iter().all(|item| self.fans_out(item))
    }

    /// A fan-out's elements are concurrent child invocations, as a parallel group's items are,
    /// on the same terms: a host tool call, parallel-safe, that sends to no output channel.
    fn fans_out(&self, item: &Item) -> bool {
        let tool = item.tool.value.as_str();
        let safe = self
            .host
            .lookup(tool)
            .is_none_or(|def| def.parallel_safe != ParallelSafety::Unsafe);
        safe && !Catalog::is_call(tool) && tool != SEQ_RUN && !is_output_send(tool)
    }
}

/// The order in which a run observes the outcomes of its child invocations: the order it made
/// the calls. Replayed, every outcome is in the journal at once, and the first one polled
/// would otherwise be observed first; in call order, what follows an outcome happens at the
/// same point of the journal both times.
#[derive(Debug, Default)]
struct Gate {
    tickets: Mutex<Tickets>,
    /// The first ticket not yet done.
    floor: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Tickets {
    issued: u64,
    /// Done, above the floor.
    done: std::collections::BTreeSet<u64>,
}

impl Gate {
    fn ticket(&self) -> Ticket<'_> {
        let mut tickets = self
            .tickets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let number = tickets.issued;
        tickets.issued += 1;
        Ticket { gate: self, number }
    }

    /// Ticket `number` is observed, or dropped with its attempt (its group stopped early).
    fn done(&self, number: u64) {
        let mut tickets = self
            .tickets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tickets.done.insert(number);
        let mut floor = *self.floor.borrow();
        while tickets.done.remove(&floor) {
            floor += 1;
        }
        self.floor.send_if_modified(|old| {
            let moved = *old != floor;
            *old = floor;
            moved
        });
    }
}

/// One child invocation's place in the order; done when dropped.
struct Ticket<'a> {
    gate: &'a Gate,
    number: u64,
}

impl Ticket<'_> {
    /// Waits until every call made before this one is observed.
    async fn turn(&self) {
        let mut floor = self.gate.floor.subscribe();
        // The sender lives as long as the gate, which outlives its tickets.
        let _ = floor.wait_for(|floor| *floor >= self.number).await;
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.gate.done(self.number);
    }
}

/// `attempt`, unless its journal entry would pass `limit`: then a failure saying so.
pub(crate) fn within_entry_limit(tool: &str, attempt: Attempt, limit: usize) -> Attempt {
    let size = serde_json::to_vec(&attempt).map_or(usize::MAX, |bytes| bytes.len());
    if size <= limit {
        return attempt;
    }
    Attempt {
        outcome: Err(ToolError::new(
            Reason::Failed,
            format!(
                "`{tool}` returned {size} bytes, more than the durable engine's entry limit of \
                 {limit} bytes"
            ),
        )
        .with_hint("make the tool return less: write large output to a file and pass its path")),
        missing: false,
        started_at: attempt.started_at,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn an_outcome_past_the_entry_limit_fails_with_the_reason() {
        let big = Attempt {
            outcome: Ok(Value::String("x".repeat(100))),
            missing: false,
            started_at: None,
        };
        let kept = within_entry_limit("echo", big.clone(), 1000);
        assert_eq!(kept, big);
        let refused = within_entry_limit("echo", big, 50);
        let error = refused.outcome.unwrap_err();
        assert_eq!(error.reason, Reason::Failed);
        assert!(error.detail.unwrap().contains("entry limit of 50 bytes"));
    }

    /// An attempt ends at its deadline, and one whose deadline has passed does not start:
    /// both say so, which is what the journal records.
    #[tokio::test]
    async fn an_attempt_stops_at_its_deadline() {
        let done = Attempt {
            outcome: Ok(Value::from(1)),
            missing: false,
            started_at: None,
        };
        let quick = within(Some(now() + 60_000), std::future::ready(done.clone())).await;
        assert_eq!(quick, Outcome::Done(done.clone()));
        assert_eq!(
            within(None, std::future::ready(done.clone())).await,
            Outcome::Done(done.clone())
        );
        let hangs = within(Some(now() + 50), std::future::pending()).await;
        assert_eq!(hangs, Outcome::Expired);
        let started = std::sync::atomic::AtomicBool::new(false);
        let late = within(Some(now().saturating_sub(1)), async {
            started.store(true, std::sync::atomic::Ordering::Relaxed);
            done
        })
        .await;
        assert_eq!(late, Outcome::Expired);
        assert!(!started.load(std::sync::atomic::Ordering::Relaxed));
    }
}
