//! Submitting a run to a Restate ingress and waiting for its report.
//!
//! The run id is the workflow's key: a second submission with the same id does not start a
//! second run, it attaches to the first and gets its report. So a submission whose answer is
//! lost (a cluster node losing leadership, a broken connection) is simply made again.

use crate::input::RunInput;
use seq_exec::engine::Observer;
use seq_exec::{RunReport, ToolError};
use seq_service::Submission;
use std::fmt;
use std::time::Duration;

/// Why a submission got no report.
#[derive(Debug)]
pub enum SubmitError {
    /// The ingress could not be reached, or the connection broke.
    Unreachable(String),
    /// The ingress answered with an error status.
    Refused { status: u16, body: String },
    /// What came back is not a run report.
    NotReport(String),
    /// The run id names a run submitted otherwise (another caller, sequence or arguments).
    Mismatch(ToolError),
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubmitError::Unreachable(detail) => write!(f, "cannot reach the ingress: {detail}"),
            SubmitError::Refused { status, body } => {
                write!(f, "the ingress answered {status}: {body}")
            }
            SubmitError::NotReport(detail) => {
                write!(f, "the ingress did not return a run report: {detail}")
            }
            SubmitError::Mismatch(error) => write!(f, "{}", error.detail.as_deref().unwrap_or("")),
        }
    }
}

impl std::error::Error for SubmitError {}

/// Submits `input` as run `run_id` at the ingress `ingress` (`http://HOST:PORT`) and waits for
/// its report.
pub async fn submit(
    ingress: &str,
    run_id: &str,
    input: &RunInput,
) -> Result<RunReport, SubmitError> {
    submit_observed(ingress, run_id, input, None).await
}

/// [`submit`], telling `observer` what the run finished meanwhile (the records of
/// [`crate::Finished`]): read every half second while it runs, and the rest once it ended.
///
/// With a [`RunInput::submission`], a run already under `run_id` is attached to only if it was
/// submitted the same way ([`Submission::attach_to`]); else [`SubmitError::Mismatch`].
pub async fn submit_observed(
    ingress: &str,
    run_id: &str,
    input: &RunInput,
    observer: Option<&dyn Observer>,
) -> Result<RunReport, SubmitError> {
    let at = At::new(ingress, run_id);
    let body = serde_json::to_vec(input).map_err(|e| SubmitError::NotReport(e.to_string()))?;
    // Sent, not called: a run already submitted under this id answers "previously accepted"
    // and does not run again, so sending again after a broken answer is safe, as attaching
    // again is. No read of the run's submission before: the send is made anyway, and what it
    // answers says whether there is a run to compare with (one invocation less for each run).
    let send_url = format!("{}/SeqRun/{}/run/send", at.ingress, at.key);
    let sent = again(|| async {
        let sent = at
            .client
            .post(&send_url)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .map_err(|e| SubmitError::Unreachable(e.to_string()))?;
        answer(sent).await
    })
    .await?;
    let accepted = serde_json::from_slice::<Sent>(&sent)
        .is_ok_and(|sent| sent.status.as_deref() != Some("PreviouslyAccepted"));
    match input.submission.as_ref() {
        // A run was already under this id (or this send's first try got there and its answer
        // was lost): its report is answered only if its submission, compared, allows it.
        Some(mine) if !accepted => {
            let report = at.report(observer);
            let mut report = std::pin::pin!(report);
            let compared = async {
                loop {
                    if let Some(first) = at.submission().await? {
                        return mine
                            .attach_to(run_id, &first)
                            .map_err(SubmitError::Mismatch);
                    }
                    // Sent, not yet started: its first act is to keep its submission.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            };
            tokio::select! {
                biased;
                compared = compared => {
                    compared?;
                    report.await
                }
                report = &mut report => {
                    // Ended: its submission is in its state. A run that kept none (made before
                    // runs kept them) cannot be shown to be this caller's: refused.
                    match at.submission().await? {
                        Some(first) => {
                            mine.attach_to(run_id, &first).map_err(SubmitError::Mismatch)?;
                        }
                        None => return Err(SubmitError::Mismatch(Submission::unrecorded(run_id))),
                    }
                    report
                }
            }
        }
        Some(_) | None => at.report(observer).await,
    }
}

/// Attaches to the run under `run_id` if there is one and `mine` may attach to it: its report
/// (waited for), telling `observer` what it finished; `None` when no run is known under the id.
pub async fn attach(
    ingress: &str,
    run_id: &str,
    mine: &Submission,
    observer: Option<&dyn Observer>,
) -> Result<Option<RunReport>, SubmitError> {
    let at = At::new(ingress, run_id);
    let Some(first) = at.submission().await? else {
        return Ok(None);
    };
    mine.attach_to(run_id, &first)
        .map_err(SubmitError::Mismatch)?;
    at.report(observer).await.map(Some)
}

/// The ingress's answer to `/send`.
#[derive(serde::Deserialize)]
struct Sent {
    /// `Accepted`, or `PreviouslyAccepted` for a workflow already submitted under the key.
    status: Option<String>,
}

/// One run's workflow at an ingress.
struct At {
    client: reqwest::Client,
    ingress: String,
    key: String,
}

impl At {
    fn new(ingress: &str, run_id: &str) -> At {
        At {
            client: reqwest::Client::new(),
            ingress: ingress.trim_end_matches('/').to_owned(),
            key: path_segment(run_id),
        }
    }

    /// What the run was submitted with, once it started.
    async fn submission(&self) -> Result<Option<Submission>, SubmitError> {
        let read = self
            .client
            .post(format!("{}/SeqRun/{}/submission", self.ingress, self.key))
            .timeout(READ_WITHIN)
            .send()
            .await
            .map_err(|e| SubmitError::Unreachable(e.to_string()))?;
        let bytes = answer(read).await?;
        serde_json::from_slice(&bytes).map_err(|e| SubmitError::NotReport(e.to_string()))
    }

    /// The run's report, waited for, telling `observer` what it finishes meanwhile.
    async fn report(&self, observer: Option<&dyn Observer>) -> Result<RunReport, SubmitError> {
        let (client, ingress, key) = (&self.client, &self.ingress, &self.key);
        let attach_url = format!("{ingress}/restate/workflow/SeqRun/{key}/attach");
        let attached = again(|| async {
            let attached = client
                .get(&attach_url)
                .send()
                .await
                .map_err(|e| SubmitError::Unreachable(e.to_string()))?;
            answer(attached).await
        });
        let bytes = match observer {
            None => attached.await?,
            Some(observer) => {
                let finished = Finished {
                    client,
                    url: format!("{ingress}/SeqRun/{key}/finished"),
                    observer,
                };
                let mut attached = std::pin::pin!(attached);
                let mut ticks = tokio::time::interval(POLL);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                let mut told = 0;
                let bytes = loop {
                    tokio::select! {
                        biased;
                        bytes = &mut attached => break bytes?,
                        _ = ticks.tick() => told += finished.tell(told).await,
                    }
                };
                // The run has ended: every record is there; each read takes the next batch.
                loop {
                    let more = finished.tell(told).await;
                    if more == 0 {
                        break;
                    }
                    told += more;
                }
                bytes
            }
        };
        serde_json::from_slice(&bytes).map_err(|e| SubmitError::NotReport(e.to_string()))
    }
}

/// How many times a request to the ingress is made when its answer is lost or a server error:
/// in a cluster, the node answering may lose a partition's leadership mid-answer (a 500 saying
/// the stream is "no longer needed"), while the run goes on.
const TRIES: u32 = 6;

/// `request` until it succeeds, fails for good (an answer below 500), or [`TRIES`] times have
/// failed; 0.5 s, 1 s, 2 s … between tries.
async fn again<F, R>(request: impl Fn() -> F) -> Result<R, SubmitError>
where
    F: std::future::Future<Output = Result<R, SubmitError>>,
{
    let mut pause = Duration::from_millis(500);
    let mut tries = 1;
    loop {
        match request().await {
            Err(error) if error.is_transient() && tries < TRIES => {
                tokio::time::sleep(pause).await;
                pause *= 2;
                tries += 1;
            }
            outcome => return outcome,
        }
    }
}

impl SubmitError {
    /// Whether asking again may succeed: the ingress could not be reached, the answer broke
    /// off, or it answered with a server error.
    fn is_transient(&self) -> bool {
        match self {
            SubmitError::Unreachable(_) => true,
            SubmitError::Refused { status, .. } => *status >= 500,
            SubmitError::NotReport(_) | SubmitError::Mismatch(_) => false,
        }
    }
}

/// How often a run being waited for is asked what it finished.
const POLL: Duration = Duration::from_millis(500);

/// How long one read of what a run finished may take; past it, the next read tries again.
const READ_WITHIN: Duration = Duration::from_secs(10);

/// The reader of a run's records of what it finished.
struct Finished<'a> {
    client: &'a reqwest::Client,
    url: String,
    observer: &'a dyn Observer,
}

impl Finished<'_> {
    /// Tells the records from the `from`th on that are there now: how many. A read that fails
    /// tells none; progress is no part of the run's outcome.
    async fn tell(&self, from: u32) -> u32 {
        let read = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .body(from.to_string())
            .timeout(READ_WITHIN)
            .send()
            .await;
        let Ok(response) = read else { return 0 };
        let Ok(bytes) = answer(response).await else {
            return 0;
        };
        let Ok(records) = serde_json::from_slice::<Vec<crate::progress::Finished>>(&bytes) else {
            return 0;
        };
        for record in &records {
            record.tell(self.observer);
        }
        u32::try_from(records.len()).unwrap_or(u32::MAX)
    }
}

async fn answer(response: reqwest::Response) -> Result<Vec<u8>, SubmitError> {
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| SubmitError::Unreachable(e.to_string()))?;
    if status.is_success() {
        Ok(bytes.to_vec())
    } else {
        Err(SubmitError::Refused {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// `id` as one URL path segment: characters outside the unreserved set are percent-encoded.
pub(crate) fn path_segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
