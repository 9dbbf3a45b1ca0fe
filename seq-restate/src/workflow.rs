//! The `SeqRun` workflow: one run of a sequence, keyed by its run id; and the `SeqItem`
//! service: one attempt of an item of a parallel group, a child invocation of the run.
//!
//! A worker is a trust boundary: what reaches it may come from anyone who reaches the Restate
//! ingress. Its own [`Authorizer`] is the upper bound of what any run may do on it, tools and
//! rights (`seq_call`, `seq_run`) alike; every run (and every attempt) is held besides to the
//! policy that travelled with it ([`Authorizer::within`]), for its caller and every owner on the
//! stack; and the sequence it is given is checked again before it runs, never trusted as
//! "already checked".

use crate::input::{AttemptInput, Snapshot, WorkflowInput};
use crate::journal::{ENTRY_LIMIT, EXPIRED, Journaled, Outcome, now, within, within_entry_limit};
use crate::progress::{BATCH, Finished, Recorder, key};
use restate_sdk::prelude::*;
use seq_catalog::Catalog;
use seq_exec::engine::RunRequest;
use seq_exec::engine::{
    Attempt, CancellationToken, Deadline, Driver, FinishedRun, RunRecorder, with_idempotency_key,
};
use seq_exec::{Authorizer, Caller, Engine, Limits, Reason, RunReport, ToolError, ToolHost};
use seq_service::Submission;
use std::sync::Arc;

/// The run of `input`'s sequence refused before it starts, for the errors the worker's own
/// check finds in it (or in the sequences it may call).
fn rechecked(input: &crate::input::RunInput, catalog: &Catalog) -> Option<RunReport> {
    let checked = seq_check::check_into_store(&input.sequence, &input.sequences, catalog);
    let errors: Vec<String> = checked
        .own
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    if errors.is_empty() {
        return None;
    }
    let error = ToolError::new(
        Reason::ArgError,
        format!(
            "`{}` is not run: the worker's check finds {}",
            input.sequence.name.value,
            errors.join("; ")
        ),
    )
    .with_field("sequence")
    .with_hint("submit runs through `seqc mcp` or `seqc run`, which check what they submit");
    Some(RunReport::failed(error))
}

/// What a worker runs sequences with: its tool host, its own authorizer and the engine's
/// bounds.
pub struct SeqRun {
    host: Arc<dyn ToolHost>,
    /// The worker's own bound on every run, whoever submits it.
    authorizer: Authorizer,
    limits: Limits,
    /// Where the reports of the runs submitted here go once they end (their traces).
    recorder: Option<Arc<dyn RunRecorder>>,
}

impl std::fmt::Debug for SeqRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeqRun")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SeqRun {
    /// Runs on `host`, every dispatch held to `authorizer` (the worker's own policy) and to
    /// the policy that travels with each run.
    pub fn new(host: Arc<dyn ToolHost>, authorizer: Authorizer) -> SeqRun {
        SeqRun {
            host,
            authorizer,
            limits: Limits::default(),
            recorder: None,
        }
    }

    /// Hands the report of every run submitted here (not the `#name` calls it runs as runs of
    /// their own: they are in its report) to `recorder` once the run ends.
    pub fn with_recorder(mut self, recorder: Arc<dyn RunRecorder>) -> SeqRun {
        self.recorder = Some(recorder);
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> SeqRun {
        self.limits = limits;
        self
    }

    /// The service making the attempts of this workflow's parallel items, on the same host.
    pub fn items(&self) -> SeqItem {
        SeqItem::new(
            Arc::clone(&self.host),
            self.authorizer.clone(),
            self.limits.clone(),
        )
    }

    /// How long Restate may hear nothing from a run before it asks the run to suspend. A run
    /// makes no attempt itself (its items are `SeqItem` invocations): it waits for them, for
    /// timers and for the runs it calls, suspended soon, so that a worker killed by one of its
    /// items is seldom running the run too; a run's own attempts are bounded
    /// ([`crate::worker::MAX_ATTEMPTS`]), and one suspended between them starts counting again.
    pub const RUN_INACTIVITY: std::time::Duration = std::time::Duration::from_secs(1);

    /// How long Restate may hear nothing from an item before it asks the invocation to
    /// suspend: longer than an attempt's cancellation guard. Asked while an item (or one of
    /// the run's own steps) runs, the guard's wait would suspend the invocation, which stops the
    /// attempt and makes it again only when the guard's timer fires. Past the guard, the step is
    /// awaited alone, which a request to suspend does not interrupt.
    pub fn inactivity_timeout(&self) -> std::time::Duration {
        self.limits.tool_timeout + 2 * GUARD_MARGIN
    }
}

#[restate_sdk::workflow]
impl SeqRun {
    /// Runs the input's sequence with the engine, its tool calls journaled; returns the report
    /// a local run would give. A run called from another run goes on from that run's stack.
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        input: Json<WorkflowInput>,
    ) -> HandlerResult<Json<RunReport>> {
        let WorkflowInput {
            run: mut input,
            called,
        } = input.into_inner();
        let traceparent = input.traceparent.take();
        // First, so that a submission under the same id finds it as soon as the run is known.
        if let (Some(submission), None) = (&input.submission, &called) {
            ctx.set(SUBMISSION, Json(submission.clone()));
        }
        if let Some(refused) = rechecked(&input, &Catalog::builtin()) {
            return Ok(Json(refused));
        }
        let sequences = Arc::new(Snapshot::of(&input));
        let policy = input.policy.clone();
        let host = Arc::clone(&self.host);
        // The worker's bound and the run's travelling policy, for the caller and the owners.
        let engine = Engine::new(Arc::clone(&host), Arc::clone(&sequences) as _)
            .with_authorizer(self.authorizer.within(input.policy))
            .with_limits(self.limits.clone());
        let caller = Caller::new(input.caller);
        let cancel = CancellationToken::new();
        let submitted = called.is_none();
        let (root, stack, started) = match called {
            Some(called) => (
                called.root,
                Some((called.stack, called.deadline)),
                called.started,
            ),
            None => (ctx.key().to_owned(), None, None),
        };
        // The run's time axis: its caller's, or a clock reading journaled at its start.
        let started = match started {
            Some(at) => at,
            None => ctx
                .run(|| async { Ok(now()) })
                .name("clock")
                .await
                // Not journaled (the run was cancelled meanwhile): the worker's clock; the run
                // stops at its next step anyway.
                .unwrap_or_else(|_| now()),
        };
        let driver = Journaled::new(
            &ctx,
            &root,
            &sequences,
            host.as_ref(),
            &caller,
            &policy,
            &cancel,
            self.limits.tool_timeout + GUARD_MARGIN,
            started,
        );
        let report = match stack {
            Some((stack, deadline)) => {
                let run = engine.run_called(
                    &input.sequence,
                    input.args,
                    RunRequest::new(&caller).cancel(&cancel).driver(&driver),
                    stack,
                    deadline.map(Deadline::Wall),
                );
                match called_within(run, &driver, deadline).await {
                    Some(report) => report,
                    None => {
                        return Err(TerminalError::new_with_code(
                            EXPIRED,
                            "the time of the caller's group ran out",
                        )
                        .into());
                    }
                }
            }
            None => {
                // What finishes is recorded for `finished`, the submitter's progress.
                let recorder = Recorder::new(&ctx);
                engine
                    .run(
                        &input.sequence,
                        input.args,
                        RunRequest::new(&caller)
                            .owner(input.owner.as_deref())
                            .cancel(&cancel)
                            .driver(&driver)
                            .observer(Some(&recorder)),
                    )
                    .await
            }
        };
        if let (Some(recorder), true) = (&self.recorder, submitted) {
            recorder.finished(&FinishedRun {
                sequence: &input.sequence.name.value,
                caller: &caller,
                started: std::time::UNIX_EPOCH + std::time::Duration::from_millis(started),
                report: &report,
                traceparent: traceparent.as_deref(),
            });
        }
        Ok(Json(report))
    }

    /// The records of what the run submitted under this key has finished, from the `from`th
    /// on, at most [`BATCH`] ([`crate::progress`]); none yet, or none left, is empty.
    #[handler]
    async fn finished(
        &self,
        ctx: SharedWorkflowContext<'_>,
        from: Json<u32>,
    ) -> HandlerResult<Json<Vec<Finished>>> {
        let from = from.into_inner();
        let keys: Vec<String> = (from..from.saturating_add(BATCH)).map(key).collect();
        let mut told = Vec::new();
        for key in &keys {
            match read(&ctx, key).await? {
                Some(finished) => told.push(finished),
                None => break,
            }
        }
        Ok(Json(told))
    }

    /// What the run under this key was submitted with; `None` before it started (or for a run
    /// submitted without it).
    #[handler]
    async fn submission(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> HandlerResult<Json<Option<Submission>>> {
        Ok(Json(
            ctx.get::<Json<Submission>>(SUBMISSION)
                .await?
                .map(Json::into_inner),
        ))
    }
}

/// The state key of the run's [`Submission`].
const SUBMISSION: &str = "submission";

/// The record at `key`, if written.
async fn read<'a>(
    ctx: &SharedWorkflowContext<'a>,
    key: &'a str,
) -> Result<Option<Finished>, TerminalError> {
    Ok(ctx.get::<Json<Finished>>(key).await?.map(Json::into_inner))
}

/// The report of a called run, or `None` when one of its attempts ended at its caller's
/// `deadline`: the caller's group stops there, not a group of this run.
async fn called_within(
    run: impl std::future::Future<Output = RunReport>,
    driver: &Journaled<'_>,
    deadline: Option<u64>,
) -> Option<RunReport> {
    let Some(at) = deadline else {
        return Some(run.await);
    };
    tokio::select! {
        biased;
        report = run => Some(report),
        () = driver.expired(Deadline::Wall(at)) => None,
    }
}

/// How much longer than the per-tool bound the cancellation guard of an attempt or a step waits.
const GUARD_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);

/// What a worker makes the attempts of parallel items with: the engine on its tool host.
pub struct SeqItem {
    host: Arc<dyn ToolHost>,
    /// The worker's own bound, as [`SeqRun`]'s.
    authorizer: Authorizer,
    limits: Limits,
}

impl std::fmt::Debug for SeqItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeqItem").finish_non_exhaustive()
    }
}

impl SeqItem {
    pub fn new(host: Arc<dyn ToolHost>, authorizer: Authorizer, limits: Limits) -> SeqItem {
        SeqItem {
            host,
            authorizer,
            limits,
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
    ) -> HandlerResult<Json<Outcome>> {
        let AttemptInput {
            tool,
            args,
            caller,
            stack,
            policy,
            key,
            deadline,
        } = input.into_inner();
        let caller = Caller::new(caller);
        let cancel = CancellationToken::new();
        // Held to the worker's bound and the run's travelling policy, for the caller and the
        // owners on the stack.
        let engine = Engine::new(Arc::clone(&self.host), Arc::new(Snapshot::empty()))
            .with_authorizer(self.authorizer.within(policy))
            .with_limits(self.limits.clone());
        let attempt = engine.attempt(&caller, &stack, &tool, args, &cancel);
        // The one durable future this handler awaits beside the work: it is how Restate's
        // cancellation of the run reaches the attempt (409), which then stops its tool (a
        // command and what it started). Longer than the per-tool bound: it never cuts off a
        // call. Created before the step's command, the same on every execution.
        let guard = ctx.sleep(self.limits.tool_timeout + GUARD_MARGIN);
        // The attempt is journaled as a step of this invocation: a new partition leader (or a
        // retry after the output was journaled but before the invocation ended) replays the
        // outcome instead of running the tool again, and the output it answers is the same
        // bytes, which Restate checks.
        let tool_name = tool.clone();
        let work = ctx
            .run(move || async move {
                // Journaled with the outcome: a replay reports when the attempt first ran.
                let began = crate::journal::now();
                let outcome = within(deadline, with_idempotency_key(key, attempt)).await;
                Ok(Json(outcome.map(|attempt| {
                    within_entry_limit(&tool_name, attempt, ENTRY_LIMIT).began_at(began)
                })))
            })
            .name("attempt");
        let mut work = std::pin::pin!(work);
        // In this order on every execution: a replay polls what the first execution polled.
        let journaled = tokio::select! {
            biased;
            journaled = &mut work => journaled,
            slept = guard => match slept {
                Err(error) if error.code() == 409 => {
                    return Ok(Json(Outcome::Done(Attempt {
                        outcome: Err(ToolError::new(Reason::Cancelled, "the run was cancelled")),
                        missing: false,
                        started_at: None,
                    })));
                }
                // A tool with a longer `timeout` of its own.
                Ok(()) | Err(_) => work.await,
            },
        };
        Ok(journaled?)
    }
}
