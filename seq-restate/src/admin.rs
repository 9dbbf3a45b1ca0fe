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

/// How a cancelled run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// Its invocations took the cancellation and ended (the engine stopped the run at its next
    /// step, and its report says `cancelled`).
    Cancelled,
    /// Some did not end within the grace (a worker that cannot be reached, or does not
    /// answer): Restate killed them, with no report.
    Killed,
}

/// Cancels run `run_id` (docs/reference.md, "Cancellation"), its whole tree: its invocation
/// and every invocation under it (its items, the runs it called, theirs), each asked, so that
/// one stuck retrying or running is asked too. What has not ended within `grace` is then killed
/// (Restate ends it without its worker, and its children with it), so that a cancellation that
/// cannot be delivered still stops the run.
pub async fn cancel(
    admin: &str,
    run_id: &str,
    grace: std::time::Duration,
) -> Result<Stopped, AdminError> {
    let sql = format!(
        "SELECT id FROM sys_invocation WHERE target_service_name = 'SeqRun' \
         AND target_handler_name = 'run' AND target_service_key = '{}'",
        run_id.replace('\'', "''")
    );
    let rows = query(admin, &sql).await?;
    let Some(root) = rows
        .first()
        .and_then(|row| row.get("id"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
    else {
        return Err(AdminError::NoSuchRun(run_id.to_owned()));
    };
    for invocation in open_tree(admin, &root).await? {
        act(admin, &invocation, "cancel").await?;
    }
    let until = tokio::time::Instant::now() + grace;
    loop {
        let open = open_tree(admin, &root).await?;
        if open.is_empty() {
            return Ok(Stopped::Cancelled);
        }
        if tokio::time::Instant::now() >= until {
            for invocation in &open {
                act(admin, invocation, "kill").await?;
            }
            return Ok(Stopped::Killed);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// How long a cancelled run's invocations get to end before they are killed.
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// How often a cancellation asks whether the run's invocations have ended.
const POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// The invocations of the tree under `root` (itself included) that have not ended, root first.
async fn open_tree(admin: &str, root: &str) -> Result<Vec<String>, AdminError> {
    let rows = query(
        admin,
        "SELECT id, invoked_by_id FROM sys_invocation WHERE status != 'completed'",
    )
    .await?;
    let field = |row: &serde_json::Value, name: &str| {
        row.get(name)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let edges: Vec<(String, Option<String>)> = rows
        .iter()
        .filter_map(|row| Some((field(row, "id")?, field(row, "invoked_by_id"))))
        .collect();
    // An ended invocation is not listed, so its open children are found from the root's
    // descendants that are listed: an invocation is in the tree if its caller is.
    let mut tree: Vec<String> = Vec::new();
    if edges.iter().any(|(id, _)| id == root) {
        tree.push(root.to_owned());
    }
    let mut known: std::collections::BTreeSet<String> = std::iter::once(root.to_owned()).collect();
    loop {
        let found: Vec<String> = edges
            .iter()
            .filter(|(id, by)| {
                !known.contains(id) && by.as_ref().is_some_and(|by| known.contains(by))
            })
            .map(|(id, _)| id.clone())
            .collect();
        if found.is_empty() {
            return Ok(tree);
        }
        known.extend(found.iter().cloned());
        tree.extend(found);
    }
}

/// `PATCH /invocations/ID/ACTION` (`cancel`, `kill`); an invocation that ended meanwhile is
/// not an error.
async fn act(admin: &str, invocation: &str, action: &str) -> Result<(), AdminError> {
    let url = format!(
        "{}/invocations/{invocation}/{action}",
        admin.trim_end_matches('/')
    );
    let response = reqwest::Client::new()
        .patch(&url)
        .send()
        .await
        .map_err(|e| unreachable(admin, &e))?;
    // Not found, or already completed (409): it ended meanwhile.
    if matches!(
        response.status(),
        reqwest::StatusCode::NOT_FOUND | reqwest::StatusCode::CONFLICT
    ) {
        return Ok(());
    }
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
