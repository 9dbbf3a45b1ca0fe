//! `cmd_run`: a shell command in its own process group, tracked by [`procs`], so that when the
//! item ends (however it ends) the shell *and* everything it started are stopped, leaving no
//! process behind.

use super::procs::{self, Tracked};
use super::{MAX_READ_BYTES, args};
use crate::error::{Reason, ToolError};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

/// Without a `timeout` argument (the engine also caps every call at 60 s, D-7).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How much of stderr a failure's detail quotes, from its end (where the error usually is).
const STDERR_TAIL: usize = 1000;

pub(super) async fn cmd_run(root: &Path, args: &Value) -> Result<Value, ToolError> {
    let command = args::string(args, "command")?;
    let timeout = match args::optional_string(args, "timeout")? {
        None => DEFAULT_TIMEOUT,
        Some(text) => seq_syntax::parse_duration(text).map_err(|problem| {
            ToolError::new(
                Reason::Type,
                format!("`timeout` is not a duration: `{text}`: {problem}"),
            )
            .with_field("timeout")
            .with_hint("write a duration such as \"500ms\", \"30s\" or \"1m30s\"")
        })?,
    };

    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    shell.process_group(0);
    // Dropped when this call ends or is dropped (finished, failed, timed out, cancelled): the
    // item's processes are stopped then, also those the command left running.
    let mut tracked = Tracked::new();
    shell.env(procs::COOKIE_VAR, tracked.cookie());
    let mut child = shell.spawn().map_err(|error| {
        ToolError::new(Reason::Failed, format!("cannot start `sh`: {error}"))
            .with_hint("check that `sh` is installed and the root directory exists")
    })?;
    tracked.started(child.id());
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ToolError::new(
            Reason::Failed,
            "the command's output is not piped",
        ));
    };
    let finished = async {
        // Both streams at once (a command can fill either pipe first); the first to pass the
        // bound ends the wait.
        let (stdout, stderr) =
            tokio::try_join!(read_capped(stdout, "stdout"), read_capped(stderr, "stderr"))?;
        let status = child.wait().await.map_err(|error| {
            ToolError::new(
                Reason::Failed,
                format!("waiting for the command failed: {error}"),
            )
        })?;
        Ok::<_, ToolError>((stdout, stderr, status))
    };
    let (stdout, stderr, status) = match tokio::time::timeout(timeout, finished).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(ToolError::new(
                Reason::Timeout,
                format!("the command ran longer than {timeout:?} and was killed"),
            )
            .with_field("timeout")
            .with_hint("raise `timeout`, or make the command finish sooner"));
        }
    };
    drop(tracked);
    let output = std::process::Output {
        status,
        stdout,
        stderr,
    };

    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    match output.status.code() {
        Some(0) => Ok(json!({"stdout": stdout, "stderr": stderr, "exit_code": 0})),
        Some(code) => Err(ToolError::new(
            Reason::Failed,
            format!("exit status {code}: {}", tail(&stderr)),
        )
        .with_hint("the command failed; its stderr is quoted above")),
        None => Err(ToolError::new(
            Reason::Failed,
            format!("killed by a signal: {}", tail(&stderr)),
        )),
    }
}

/// All of `stream`, or a failure once it passes [`MAX_READ_BYTES`] (the command is then killed).
async fn read_capped(stream: impl AsyncRead + Unpin, name: &str) -> Result<Vec<u8>, ToolError> {
    let mut bytes = Vec::new();
    let bound = u64::try_from(MAX_READ_BYTES).unwrap_or(u64::MAX);
    stream
        .take(bound.saturating_add(1))
        .read_to_end(&mut bytes)
        .await
        .map_err(|error| {
            ToolError::new(
                Reason::Failed,
                format!("reading the command's {name} failed: {error}"),
            )
        })?;
    if bytes.len() > MAX_READ_BYTES {
        return Err(ToolError::new(
            Reason::Failed,
            format!(
                "the command wrote more than {} MiB to {name} and was killed",
                MAX_READ_BYTES / (1024 * 1024)
            ),
        )
        .with_hint(
            "write less, for instance through `head -c`, or write to a file and read a part of it",
        ));
    }
    Ok(bytes)
}

fn tail(text: &str) -> &str {
    let text = text.trim_end();
    let mut start = text.len().saturating_sub(STDERR_TAIL);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..).unwrap_or(text)
}
