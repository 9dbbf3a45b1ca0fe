//! The engine's `Driver` on a Restate workflow context.
//!
//! Every attempt at a host tool call is one `ctx.run` step named `group/index`, whose journaled
//! value is the attempt's whole outcome — a tool's failure included, so that the engine, not
//! Restate, decides what a failure means (retries, `missing`, `on_error`). A worker that dies
//! during a step leaves no entry for it: the next worker replays the steps before it from the
//! journal and runs that one again.
//!
//! The SDK awaits one journaled step at a time (several `ctx.run` in flight break replay), so
//! this driver is not concurrent: a parallel group's items run one after another, with the
//! same slots and report.

use restate_sdk::prelude::*;
use seq_exec::engine::{Attempt, Driver, Step, with_idempotency_key};
use seq_exec::{BoxFuture, Reason, ToolError};

/// The largest journal entry the server accepts by default (its message size limit): 32 MiB.
/// An attempt whose outcome is larger fails its item instead of being retried forever.
pub const ENTRY_LIMIT: usize = 32 * 1024 * 1024;

/// Journals a run's attempts in the workflow context of the run.
pub struct Journaled<'ctx> {
    ctx: &'ctx WorkflowContext<'ctx>,
    entry_limit: usize,
}

impl std::fmt::Debug for Journaled<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journaled")
            .field("entry_limit", &self.entry_limit)
            .finish_non_exhaustive()
    }
}

impl<'ctx> Journaled<'ctx> {
    pub fn new(ctx: &'ctx WorkflowContext<'ctx>) -> Journaled<'ctx> {
        Journaled {
            ctx,
            entry_limit: ENTRY_LIMIT,
        }
    }
}

impl Driver for Journaled<'_> {
    fn attempt<'a>(
        &'a self,
        step: Step<'a>,
        work: BoxFuture<'a, Attempt>,
    ) -> BoxFuture<'a, Attempt> {
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
            match journaled {
                Ok(Json(attempt)) => attempt,
                Err(error) => Attempt {
                    outcome: Err(ToolError::new(
                        Reason::Failed,
                        format!("the durable engine refused the step of `{tool}`: {error}"),
                    )),
                    missing: false,
                },
            }
        })
    }

    fn concurrent(&self) -> bool {
        false
    }
}

/// `attempt`, unless its journal entry would pass `limit`: then a failure saying so.
fn within_entry_limit(tool: &str, attempt: Attempt, limit: usize) -> Attempt {
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
