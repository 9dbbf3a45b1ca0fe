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

/// The variable holding a durable run's idempotency key for the attempt (docs/reference.md,
/// "Durable runs").
pub const IDEMPOTENCY_VAR: &str = "SEQC_IDEMPOTENCY_KEY";

/// Without a `timeout` argument: as long as the engine lets any call run.
pub const DEFAULT_TIMEOUT: Duration = seq_syntax::ast::Item::CALL_TIMEOUT;

/// How much of stderr a failure's detail quotes, from its end (where the error usually is).
const STDERR_TAIL: usize = 1000;

pub(super) async fn cmd_run(root: &Path, args: &Value) -> Result<Value, ToolError> {
    let program = program(args)?;
    let ok_exit = ok_exit(args)?;
    let env = env(args)?;
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

    let mut shell = match &program {
        Program::Shell(command) => {
            let mut shell = Command::new("sh");
            shell.arg("-c").arg(command);
            shell
        }
        Program::Argv(program, rest) => {
            let mut command = Command::new(program);
            command.args(rest);
            command
        }
    };
    let name = match &program {
        Program::Shell(_) => "sh",
        Program::Argv(program, _) => program.as_str(),
    };
    // The sequence's own variables and the values of `command` (`SEQ_V1`, ...); the engine's
    // own variables below are set after them, so that none stands in for those.
    shell.envs(env);
    shell
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    shell.process_group(0);
    #[cfg(target_os = "linux")]
    procs::die_with_parent(&mut shell);
    // Dropped when this call ends or is dropped (finished, failed, timed out, cancelled): the
    // item's processes are stopped then, also those the command left running.
    let mut tracked = Tracked::new();
    shell.env(procs::COOKIE_VAR, tracked.cookie());
    tracked.contain(&mut shell);
    // A durable run's attempt key, the same when a step runs again after a crash, so that a
    // command can tell a repeat from a new attempt.
    if let Some(key) = crate::engine::idempotency_key() {
        shell.env(IDEMPOTENCY_VAR, key);
    }
    let mut child = shell.spawn().map_err(|error| {
        ToolError::new(Reason::Failed, format!("cannot start `{name}`: {error}")).with_hint(
            format!("check that `{name}` is installed and the root directory exists"),
        )
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
        Some(code) if ok_exit.contains(&code) => {
            Ok(json!({"stdout": stdout, "stderr": stderr, "exit_code": code}))
        }
        Some(code) => Err(failure(&format!("exit status {code}"), &stdout, &stderr)),
        None => Err(failure("killed by a signal", &stdout, &stderr)),
    }
}

/// A command that ended badly: how, then the end of what it printed, and a hint that fits what
/// there is to read.
fn failure(how: &str, stdout: &str, stderr: &str) -> ToolError {
    let (detail, hint) = match (tail(stderr), tail(stdout)) {
        ("", "") => (
            format!("{how}, with no output"),
            "the command printed nothing; commands such as `grep` and `test` exit non-zero to \
             answer no: list that exit code in `ok_exit` when it is not a failure",
        ),
        ("", stdout) => (
            format!("{how}, nothing on stderr; stdout ends: {stdout}"),
            "the command failed; what it printed on stdout ends the `detail`",
        ),
        (stderr, _) => (
            format!("{how}: {stderr}"),
            "the command failed; its stderr ends the `detail`",
        ),
    };
    ToolError::new(Reason::Failed, detail).with_hint(hint)
}

/// `ok_exit`: the exit codes that count as success, `[0]` when left out.
fn ok_exit(args: &Value) -> Result<Vec<i32>, ToolError> {
    let Some(given) = args::optional(args, "ok_exit")? else {
        return Ok(vec![0]);
    };
    let wrong = || {
        args::wrong_type(
            "ok_exit",
            "an array of exit codes (integers 0 to 255)",
            given,
        )
    };
    given
        .as_array()
        .ok_or_else(wrong)?
        .iter()
        .map(|code| {
            code.as_i64()
                .filter(|c| (0..=255).contains(c))
                .and_then(|c| i32::try_from(c).ok())
                .ok_or_else(wrong)
        })
        .collect()
}

/// `env`: the variables to set for the command, an object of strings, `{}` when left out.
fn env(args: &Value) -> Result<Vec<(String, String)>, ToolError> {
    let Some(given) = args::optional(args, "env")? else {
        return Ok(Vec::new());
    };
    let wrong = || {
        args::wrong_type(
            "env",
            "an object of strings (names without `=`, nothing holding a NUL byte)",
            given,
        )
    };
    given
        .as_object()
        .ok_or_else(wrong)?
        .iter()
        .map(|(name, value)| {
            let value = value.as_str().ok_or_else(wrong)?;
            // The C environment cannot hold these: refused here, never cut short.
            if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
                return Err(wrong());
            }
            Ok((name.clone(), value.to_owned()))
        })
        .collect()
}

/// What `cmd_run` runs: shell text, or a program and its arguments without a shell.
enum Program {
    Shell(String),
    /// The program, then its arguments.
    Argv(String, Vec<String>),
}

/// Exactly one of `command` and `argv`.
fn program(args: &Value) -> Result<Program, ToolError> {
    let command = args::optional_string(args, "command")?;
    let argv = args::optional(args, "argv")?;
    match (command, argv) {
        (Some(_), Some(_)) => Err(ToolError::new(
            Reason::ArgError,
            "give exactly one of `command` and `argv`, not both",
        )
        .with_field("argv")
        .with_hint("keep `command` for shell text, or `argv` to run a program without a shell")),
        (None, None) => Err(
            ToolError::new(Reason::Required, "`command` or `argv` is required")
                .with_field("command")
                .with_hint("pass `command` (shell text) or `argv` (an array of strings)"),
        ),
        (Some(command), None) => Ok(Program::Shell(command.to_owned())),
        (None, Some(argv)) => {
            let not_strings = || args::wrong_type("argv", "a non-empty array of strings", argv);
            let items = argv.as_array().ok_or_else(not_strings)?;
            let mut words = items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(not_strings)?
                .into_iter();
            let program = words.next().ok_or_else(not_strings)?;
            Ok(Program::Argv(program, words.collect()))
        }
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
