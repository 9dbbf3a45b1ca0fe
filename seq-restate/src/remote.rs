//! `seq_run` on Restate: [`Submitter`], the seq tools' [`Remote`], submits each run as a
//! `SeqRun` workflow and answers with its report; a cancelled request cancels the run.

use crate::admin::{self, AdminError};
use crate::input::RunInput;
use crate::submit::{SubmitError, submit_observed};
use seq_exec::engine::{CancellationToken, Observer};
use seq_exec::{BoxFuture, Reason, RunReport, ToolError};
use seq_service::{Remote, RemoteRun, Submission};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a cancellation waits for the run to be known to the server (it may still be on
/// its way there when the request is cancelled).
const CANCEL_WITHIN: Duration = Duration::from_secs(10);

/// Submits runs to the ingress at `ingress`; cancels them through the admin API at `admin`.
#[derive(Clone, Debug)]
pub struct Submitter {
    ingress: String,
    admin: String,
}

impl Submitter {
    pub fn new(ingress: &str, admin: &str) -> Submitter {
        Submitter {
            ingress: ingress.to_owned(),
            admin: admin.to_owned(),
        }
    }

    async fn submit(
        &self,
        run: RemoteRun<'_>,
        cancel: &CancellationToken,
    ) -> Result<RunReport, ToolError> {
        let run_id = run.run_id.map_or_else(fresh_id, |(id, _)| id.to_owned());
        // A run under a fresh id keeps what it was submitted with too, as `seqc run --restate`
        // does: whoever names that id later is compared with it.
        let submission = run.run_id.map_or_else(
            || Submission::of(&run.caller.id, &run.sequence.name.value, &run.args),
            |(_, submission)| submission.clone(),
        );
        // The owners and this server's policy for them and the caller travel with the run:
        // the worker holds every dispatch to them as well as to its own bound.
        let input = RunInput {
            sequence: run.sequence.clone(),
            owner: run.owner.map(str::to_owned),
            sequences: run.sequences,
            owners: run.owners,
            args: run.args,
            caller: run.caller.id.clone(),
            policy: run.policy,
            traceparent: run.traceparent.map(str::to_owned),
            submission: Some(submission),
        };
        let submitted = submit_observed(&self.ingress, &run_id, &input, run.observer);
        let mut submitted = std::pin::pin!(submitted);
        let answered = tokio::select! {
            answered = &mut submitted => answered,
            () = cancel.cancelled() => {
                // The run winds down and still reports, as a local one does.
                tokio::select! {
                    answered = &mut submitted => answered,
                    () = self.cancel(&run_id) => submitted.await,
                }
            }
        };
        answered.map_err(|error| failure(&run_id, error))
    }

    /// Cancels run `run_id` once the server knows it, trying until [`CANCEL_WITHIN`].
    async fn cancel(&self, run_id: &str) {
        let started = tokio::time::Instant::now();
        loop {
            match admin::cancel(&self.admin, run_id, admin::CANCEL_GRACE).await {
                Err(AdminError::NoSuchRun(_)) if started.elapsed() < CANCEL_WITHIN => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Ok(_) | Err(_) => return,
            }
        }
    }
}

impl Remote for Submitter {
    fn run<'a>(
        &'a self,
        run: RemoteRun<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<RunReport, ToolError>> {
        Box::pin(self.submit(run, cancel))
    }

    fn attach<'a>(
        &'a self,
        run_id: &'a str,
        submission: &'a Submission,
        observer: Option<&'a dyn Observer>,
    ) -> BoxFuture<'a, Result<Option<RunReport>, ToolError>> {
        Box::pin(async move {
            crate::submit::attach(&self.ingress, run_id, submission, observer)
                .await
                .map_err(|error| failure(run_id, error))
        })
    }
}

/// Why durable run `run_id` has no report, as a tool's error.
fn failure(run_id: &str, error: SubmitError) -> ToolError {
    match error {
        SubmitError::Mismatch(error) => error,
        SubmitError::Unreachable(_) | SubmitError::Refused { .. } | SubmitError::NotReport(_) => {
            ToolError::new(Reason::Failed, format!("durable run `{run_id}`: {error}")).with_hint(
                "check that the Restate server is up and a `seqc worker` is registered with it",
            )
        }
    }
}

/// A run id unlikely to repeat: the time in nanoseconds, the process id and a counter.
pub fn fresh_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "run-{nanos:x}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
