//! The `SeqRun` workflow: one run of a sequence, keyed by its run id.

use crate::input::{RunInput, Snapshot};
use crate::journal::Journaled;
use restate_sdk::prelude::*;
use seq_exec::engine::CancellationToken;
use seq_exec::{Caller, Engine, Limits, RunReport, ToolHost};
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
        let driver = Journaled::new(&ctx);
        let caller = Caller::new(input.caller);
        let report = engine
            .run_driven(
                &input.sequence,
                input.args,
                &caller,
                &CancellationToken::new(),
                &driver,
            )
            .await;
        Ok(Json(report))
    }
}
