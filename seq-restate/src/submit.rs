//! Submitting a run to a Restate ingress and waiting for its report.
//!
//! The run id is the workflow's key: a second submission with the same id does not start a
//! second run, it attaches to the first and gets its report.

use crate::input::RunInput;
use seq_exec::RunReport;
use std::fmt;

/// Why a submission got no report.
#[derive(Debug)]
pub enum SubmitError {
    /// The ingress could not be reached, or the connection broke.
    Unreachable(String),
    /// The ingress answered with an error status.
    Refused { status: u16, body: String },
    /// What came back is not a run report.
    NotReport(String),
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
    let ingress = ingress.trim_end_matches('/');
    let client = reqwest::Client::new();
    let body = serde_json::to_vec(input).map_err(|e| SubmitError::NotReport(e.to_string()))?;
    let key = path_segment(run_id);
    // Sent, not called: a run already submitted under this id answers "previously accepted".
    let sent = client
        .post(format!("{ingress}/SeqRun/{key}/run/send"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| SubmitError::Unreachable(e.to_string()))?;
    answer(sent).await?;
    let attached = client
        .get(format!("{ingress}/restate/workflow/SeqRun/{key}/attach"))
        .send()
        .await
        .map_err(|e| SubmitError::Unreachable(e.to_string()))?;
    let bytes = answer(attached).await?;
    serde_json::from_slice(&bytes).map_err(|e| SubmitError::NotReport(e.to_string()))
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
