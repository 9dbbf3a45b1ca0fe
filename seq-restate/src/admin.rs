//! Runs seen from outside, through the server's admin API: listing them (its SQL `/query`
//! endpoint over `sys_invocation`) and cancelling one.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One durable run, as the server knows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRow {
    /// The run id (the workflow's key).
    pub id: String,
    /// The invocation's status: `pending`, `scheduled`, `ready`, `running`, `backing-off`,
    /// `suspended` or `completed` (a cancelled run ends `completed` too, with a report that
    /// says `cancelled`).
    pub status: String,
    /// When it was submitted (RFC 3339, UTC).
    pub started: String,
}

/// Why the admin API gave no answer.
#[derive(Debug)]
pub enum AdminError {
    /// The admin API could not be reached, or answered with an error.
    Unreachable(String),
    /// No run has this id.
    NoSuchRun(String),
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdminError::Unreachable(detail) => f.write_str(detail),
            AdminError::NoSuchRun(id) => write!(f, "no durable run has the id `{id}`"),
        }
    }
}

impl std::error::Error for AdminError {}

/// The runs the server at `admin` knows, oldest first; not the runs of `#name` calls, which
/// are runs invoked by other runs.
pub async fn runs(admin: &str) -> Result<Vec<RunRow>, AdminError> {
    let rows = query(
        admin,
        "SELECT target_service_key AS id, status, created_at AS started FROM sys_invocation \
         WHERE target_service_name = 'SeqRun' AND target_handler_name = 'run' \
         AND invoked_by != 'service' ORDER BY created_at",
    )
    .await?;
    serde_json::from_value(serde_json::Value::Array(rows))
        .map_err(|e| AdminError::Unreachable(format!("the admin API's rows are not runs: {e}")))
}

/// Cancels run `run_id` (docs/reference.md, "Cancellation"): Restate cancels its invocation and
/// the child invocations it is waiting for; the engine stops the run at its next step.
pub async fn cancel(admin: &str, run_id: &str) -> Result<(), AdminError> {
    let sql = format!(
        "SELECT id FROM sys_invocation WHERE target_service_name = 'SeqRun' \
         AND target_handler_name = 'run' AND target_service_key = '{}'",
        run_id.replace('\'', "''")
    );
    let rows = query(admin, &sql).await?;
    let Some(invocation) = rows
        .first()
        .and_then(|row| row.get("id"))
        .and_then(serde_json::Value::as_str)
    else {
        return Err(AdminError::NoSuchRun(run_id.to_owned()));
    };
    let url = format!(
        "{}/invocations/{invocation}/cancel",
        admin.trim_end_matches('/')
    );
    let response = reqwest::Client::new()
        .patch(&url)
        .send()
        .await
        .map_err(|e| unreachable(admin, &e))?;
    checked(admin, response).await.map(drop)
}

/// The rows of `sql` at the admin API's `/query`.
async fn query(admin: &str, sql: &str) -> Result<Vec<serde_json::Value>, AdminError> {
    let url = format!("{}/query", admin.trim_end_matches('/'));
    let response = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(serde_json::json!({ "query": sql }).to_string())
        .send()
        .await
        .map_err(|e| unreachable(admin, &e))?;
    let body = checked(admin, response).await?;
    let mut answer: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
        AdminError::Unreachable(format!("the admin API at {admin} answered no rows: {e}"))
    })?;
    match answer.get_mut("rows").map(serde_json::Value::take) {
        Some(serde_json::Value::Array(rows)) => Ok(rows),
        _ => Err(AdminError::Unreachable(format!(
            "the admin API at {admin} answered no rows"
        ))),
    }
}

fn unreachable(admin: &str, error: &reqwest::Error) -> AdminError {
    AdminError::Unreachable(format!("cannot reach the admin API at {admin}: {error}"))
}

async fn checked(admin: &str, response: reqwest::Response) -> Result<Vec<u8>, AdminError> {
    let status = response.status();
    let body = response.bytes().await.map_err(|e| unreachable(admin, &e))?;
    if status.is_success() {
        Ok(body.to_vec())
    } else {
        Err(AdminError::Unreachable(format!(
            "the admin API at {admin} answered {status}: {}",
            String::from_utf8_lossy(&body)
        )))
    }
}
