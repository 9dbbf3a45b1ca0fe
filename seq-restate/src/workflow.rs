//! The `SeqRun` workflow: one run of a sequence, keyed by its run id; and the `SeqItem`
//! service: one attempt of an item of a parallel group, a child invocation of the run.

use crate::input::{AttemptInput, RunInput, Snapshot};
use crate::journal::{ENTRY_LIMIT, Journaled, within_entry_limit};
use restate_sdk::prelude::*;
use seq_exec::engine::{Attempt, CancellationToken, with_idempotency_key};
use seq_exec::{Caller, Engine, Limits, Reason, RunReport, ToolError, ToolHost};
use std::sync::Arc;

/// What a worker runs sequences with: its tool host and the engine's bounds.
pub struct SeqRun {
    host: Arc<dyn ToolHost>,
    limits: Limits,
}

impl std::fmt::Debug for SeqRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeqRun")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SeqRun {
    pub fn new(host: Arc<dyn ToolHost>) -> SeqRun {
        SeqRun {
            host,
            limits: Limits::default(),
        }
    }

    pub fn with_limits(mut self, limits: Limits) -> SeqRun {
        self.limits = limits;
        self
    }

    /// The service making the attempts of this workflow's parallel items, on the same host.
    pub fn items(&self) -> SeqItem {
        SeqItem::new(Arc::clone(&self.host), self.limits.clone())
    }
}

#[restate_sdk::workflow]
impl SeqRun {
    /// Runs the input's sequence with the engine, its tool calls journaled; returns the report
    /// a local run would give.
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        input: Json<RunInput>,
    ) -> HandlerResult<Json<RunReport>> {
        let input = input.into_inner();
        let engine = Engine::new(Arc::clone(&self.host), Arc::new(Snapshot::of(&input)))
            .with_limits(self.limits.clone());
        let caller = Caller::new(input.caller);
        let cancel = CancellationToken::new();
        let driver = Journaled::new(&ctx, self.host.as_ref(), &caller, &cancel);
        let report = engine
            .run_driven(&input.sequence, input.args, &caller, &cancel, &driver)
            .await;
        Ok(Json(report))
    }
}

/// How much longer than the per-tool bound an attempt's cancellation guard waits.
const GUARD_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);

/// What a worker makes the attempts of parallel items with: the engine on its tool host.
pub struct SeqItem {
    engine: Engine,
}

impl std::fmt::Debug for SeqItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeqItem").finish_non_exhaustive()
    }
}

impl SeqItem {
    pub fn new(host: Arc<dyn ToolHost>, limits: Limits) -> SeqItem {
        SeqItem {
            engine: Engine::new(host, Arc::new(Snapshot::empty())).with_limits(limits),
        }
    }
}

#[restate_sdk::service]
impl SeqItem {
    /// One attempt, as the run would make it itself: its outcome, failures included, is the
    /// answer (Restate retries only an attempt its worker did not finish).
    #[handler]
    async fn attempt(
        &self,
        ctx: Context<'_>,
        input: Json<AttemptInput>,
    ) -> HandlerResult<Json<Attempt>> {
        let AttemptInput {
            tool,
            args,
            caller,
            key,
        } = input.into_inner();
        let caller = Caller::new(caller);
        let cancel = CancellationToken::new();
        let work = with_idempotency_key(key, self.engine.attempt(&caller, &tool, args, &cancel));
        let mut work = std::pin::pin!(work);
        // The one durable future this handler awaits, beside the work: it is how Restate's
        // cancellation of the run reaches the attempt (409), which then stops its tool (a
        // command and what it started). Longer than the per-tool bound: it never cuts off a call.
        let guard = ctx.sleep(self.engine.limits().tool_timeout + GUARD_MARGIN);
        let attempt = tokio::select! {
            attempt = &mut work => attempt,
            slept = guard => match slept {
                Err(error) if error.code() == 409 => Attempt {
                    outcome: Err(ToolError::new(Reason::Cancelled, "the run was cancelled")),
                    missing: false,
                },
                // A tool with a longer `timeout` of its own.
                Ok(()) | Err(_) => work.await,
            },
        };
        Ok(Json(within_entry_limit(&tool, attempt, ENTRY_LIMIT)))
    }
}
