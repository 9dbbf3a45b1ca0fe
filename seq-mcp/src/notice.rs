//! What the MCP host reports: why it could not start ([`ConnectError`]), and what happened to
//! its servers afterwards ([`Notice`]: a server that stopped, a tool left out).

use std::fmt;
use std::time::Duration;

/// Why the MCP host could not start. Every variant names the server; the stderr tail is the
/// server's own last words, when it said any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectError {
    /// The command could not be started (not installed, not executable).
    Spawn { server: String, reason: String },
    /// The `initialize` exchange failed: the process exited, spoke something else than MCP, or
    /// the URL did not answer.
    Initialize {
        server: String,
        reason: String,
        stderr: Vec<String>,
    },
    /// No answer in time.
    Timeout {
        server: String,
        after: Duration,
        stderr: Vec<String>,
    },
    /// `tools/list` failed.
    List { server: String, reason: String },
    /// Two servers, or a server and another host, offer a tool of the same name.
    Conflict {
        tool: String,
        first: String,
        second: String,
    },
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Spawn { server, reason } => {
                write!(f, "cannot start MCP server `{server}`: {reason}")
            }
            ConnectError::Initialize {
                server,
                reason,
                stderr,
            } => {
                write!(f, "MCP server `{server}` did not start: {reason}")?;
                write_tail(f, stderr)
            }
            ConnectError::Timeout {
                server,
                after,
                stderr,
            } => {
                write!(
                    f,
                    "MCP server `{server}` did not answer within {} s",
                    after.as_secs()
                )?;
                write_tail(f, stderr)
            }
            ConnectError::List { server, reason } => {
                write!(f, "MCP server `{server}` did not list its tools: {reason}")
            }
            ConnectError::Conflict {
                tool,
                first,
                second,
            } => write!(
                f,
                "tool `{tool}` is offered by {first} and by {second}; give one of the servers a prefix (`--mcp 'NAME=COMMAND'`, or `prefix` in the config file)"
            ),
        }
    }
}

impl std::error::Error for ConnectError {}

/// Something that happened to a server after it started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The server is gone (exited, killed, connection lost): its tools are not found from now on.
    Stopped { server: String, stderr: Vec<String> },
    /// A tool whose definition cannot be read is not offered.
    ToolLeftOut {
        server: String,
        tool: String,
        reason: String,
    },
    /// After a `tools/list_changed`, a new tool clashes with one offered elsewhere; it is not
    /// offered.
    Conflict {
        tool: String,
        first: String,
        second: String,
    },
    /// A `tools/list_changed` refresh failed; the previous list stays.
    RefreshFailed { server: String, reason: String },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Stopped { server, stderr } => {
                write!(
                    f,
                    "MCP server `{server}` stopped; its tools are not found from now on"
                )?;
                write_tail(f, stderr)
            }
            Notice::ToolLeftOut {
                server,
                tool,
                reason,
            } => write!(
                f,
                "tool `{tool}` of MCP server `{server}` is left out: {reason}"
            ),
            Notice::Conflict {
                tool,
                first,
                second,
            } => write!(
                f,
                "tool `{tool}` is now offered by {second} too, and stays with {first}; give one of the servers a prefix"
            ),
            Notice::RefreshFailed { server, reason } => write!(
                f,
                "MCP server `{server}` changed its tools but did not list them ({reason}); the previous list stays"
            ),
        }
    }
}

/// Lines of the stderr tail a message quotes.
const QUOTED_LINES: usize = 3;

fn write_tail(f: &mut fmt::Formatter<'_>, stderr: &[String]) -> fmt::Result {
    if stderr.is_empty() {
        return Ok(());
    }
    let last = &stderr[stderr.len().saturating_sub(QUOTED_LINES)..];
    write!(f, " (its stderr ends: {})", last.join(" | "))
}
