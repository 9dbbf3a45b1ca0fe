//! The engine's `Driver` on a Restate workflow context.
//!
//! Every attempt at a host tool call is journaled, with its whole outcome — a tool's failure
//! included, so that the engine, not Restate, decides what a failure means (retries,
//! `missing`, `on_error`). A worker that dies during an attempt leaves no outcome for it: the
//! next worker replays the outcomes before it from the journal and makes that one again.
//!
//! - An item of a serial group (or of a parallel group run one item at a time) is one
//!   `ctx.run` step named `group/index`: the SDK awaits one such step at a time (several in
//!   flight break replay).
//! - An item of a parallel group runs as a child invocation of the `SeqItem` service
//!   ([`crate::SeqItem`]), whose body is the attempt: the children of a group run side by
//!   side, on any worker. The run observes their outcomes in the order it made the calls
//!   ([`Gate`]): what it does after an outcome (a retry, the next call) is then made at the same
//!   place of the journal on a replay, where every outcome is there at once, as the first time.
//!
//! A parallel group runs side by side only when every item is a host tool call that is
//! parallel-safe by its current definition and sends to no output channel: a `#name` or
//! group call runs groups of its own, and the sends to one channel wait for each other, both
//! of which would make calls at moments a replay cannot reproduce. Such a group runs one item
//! at a time, as before.

use crate::input::AttemptInput;
use crate::workflow::SeqItemClient;
use restate_sdk::prelude::*;
use seq_check::ParallelSafety;
use seq_check::catalog::{Catalog, SEQ_RUN};
use seq_exec::engine::{Attempt, CancellationToken, Driver, Step, with_idempotency_key};
use seq_exec::{BoxFuture, Caller, Reason, ToolError, ToolHost};
use seq_syntax::ast::Group;
use serde_json::{Map, Value};
use std::sync::Mutex;
use tokio::sync::watch;

/// The largest journal entry the server accepts by default (its message size limit): 32 MiB.
/// An attempt whose outcome is larger fails its item instead of being retried forever.
pub const ENTRY_LIMIT: usize = 32 * 1024 * 1024;

/// Journals a run's attempts in the workflow context of the run.
pub struct Journaled<'ctx> {
    ctx: &'ctx WorkflowContext<'ctx>,
    /// Where the run's tools are, to tell which are parallel-safe.
    host: &'ctx dyn ToolHost,
    /// Given to the children, which authorize it as the run does.
    caller: &'ctx Caller,
    /// The run's cancellation, cancelled when Restate says the run is (`seqc cancel`).
    cancel: &'ctx CancellationToken,
    entry_limit: usize,
    gate: Gate,
}

impl std::fmt::Debug for Journaled<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journaled")
            .field("entry_limit", &self.entry_limit)
            .finish_non_exhaustive()
    }
}

impl<'ctx> Journaled<'ctx> {
    pub fn new(
        ctx: &'ctx WorkflowContext<'ctx>,
        host: &'ctx dyn ToolHost,
        caller: &'ctx Caller,
        cancel: &'ctx CancellationToken,
    ) -> Journaled<'ctx> {
        Journaled {
            ctx,
            host,
            caller,
            cancel,
            entry_limit: ENTRY_LIMIT,
            gate: Gate::default(),
        }
    }

    /// One attempt as a `ctx.run` step of the run itself.
    fn step<'a>(&'a self, step: Step<'a>, work: BoxFuture<'a, Attempt>) -> BoxFuture<'a, Attempt> {
        // The context's lifetime, shortened to the attempt's: the step may borrow the run.
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        let limit = self.entry_limit;
        let tool = step.tool;
        let key = format!("{}/{}", ctx.key(), step.key());
        Box::pin(async move {
            let journaled = ctx
                .run(move || async move {
                    let attempt = with_idempotency_key(key, work).await;
                    let attempt = within_entry_limit(tool, attempt, limit);
                    Ok(Json(attempt))
                })
                .name(step.name())
                .await;
            journaled.map_or_else(|error| self.refused(tool, &error), |Json(attempt)| attempt)
        })
    }

    /// One attempt as a child invocation, observed in the order of the calls.
    fn child<'a>(&'a self, step: Step<'a>, args: &'a Map<String, Value>) -> BoxFuture<'a, Attempt> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        let tool = step.tool;
        let input = AttemptInput {
            tool: tool.to_owned(),
            args: args.clone(),
            caller: self.caller.id.clone(),
            key: format!("{}/{}", ctx.key(), step.key()),
        };
        Box::pin(async move {
            // Called when first polled, which the engine does for every item of the group in
            // item order, and for a retry right after the outcome before it.
            let call = ctx
                .service_client::<SeqItemClient>()
                .attempt(Json(input))
                .call();
            let ticket = self.gate.ticket();
            // One call awaited at a time: the SDK wakes one awaiter of its futures, and the
            // order is the gate's anyway.
            ticket.turn().await;
            let answered = call.await;
            answered.map_or_else(|error| self.refused(tool, &error), |Json(attempt)| attempt)
        })
    }
}

impl Journaled<'_> {
    /// The failure of an attempt the durable engine gave no outcome for. Restate's cancellation
    /// of the run (409) is the run's cancellation: the engine stops as it does in process.
    fn refused(&self, tool: &str, error: &TerminalError) -> Attempt {
        let error = if error.code() == CANCELLED {
            self.cancel.cancel();
            ToolError::new(Reason::Cancelled, "the run was cancelled".to_owned())
        } else {
            ToolError::new(
                Reason::Failed,
                format!("the durable engine refused the step of `{tool}`: {error}"),
            )
        };
        Attempt {
            outcome: Err(error),
            missing: false,
        }
    }
}

/// The code of a Restate invocation's cancellation.
const CANCELLED: u16 = 409;

impl Driver for Journaled<'_> {
    fn attempt<'a>(
        &'a self,
        step: Step<'a>,
        args: &'a Map<String, Value>,
        work: BoxFuture<'a, Attempt>,
    ) -> BoxFuture<'a, Attempt> {
        if step.beside {
            self.child(step, args)
        } else {
            self.step(step, work)
        }
    }

    fn concurrent(&self, group: &Group) -> bool {
        group.items.iter().all(|item| {
            let tool = item.tool.value.as_str();
            let safe = self
                .host
                .lookup(tool)
                .is_none_or(|def| def.parallel_safe != ParallelSafety::Unsafe);
            safe && !Catalog::is_call(tool) && tool != SEQ_RUN && !tool.starts_with("output_send__")
        })
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
        };
        let kept = within_entry_limit("echo", big.clone(), 1000);
        assert_eq!(kept, big);
        let refused = within_entry_limit("echo", big, 50);
        let error = refused.outcome.unwrap_err();
        assert_eq!(error.reason, Reason::Failed);
        assert!(error.detail.unwrap().contains("entry limit of 50 bytes"));
    }
}
