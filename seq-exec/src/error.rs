//! The result contract: a failure is structured data with a machine-readable reason,
//! never a string to be searched. "Not found" (no such tool), "absent" (no such file) and
//! "failed" are different reasons.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a tool call did not succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A required parameter is missing.
    Required,
    /// A parameter or input has the wrong type, or is not one the tool or sequence takes.
    Type,
    /// The calling identity may not use this tool.
    Unauthorized,
    /// The tool or the group ran past its time bound.
    Timeout,
    /// No host provides the tool right now (existence is a run-time property).
    NotFound,
    /// A file tool was asked about a path that does not exist (the tool itself is there).
    /// Retried, as `failed` is.
    Absent,
    /// An argument's value is not acceptable: a sequence with errors given to `seq_create`, a
    /// name that is taken or malformed, a path outside the root, or arguments truncated or
    /// malformed upstream (`__arg_error`). `field` names the argument.
    ArgError,
    /// Cross-sequence calls nested deeper than the bound.
    Depth,
    /// A call would re-enter a sequence already on the stack.
    Cycle,
    /// The tool ran and failed.
    Failed,
    /// The run would hold more than its byte budget, at every depth. Never retried.
    Budget,
    /// The run was cancelled: never retried, never handled by `on_error`.
    Cancelled,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Required => "required",
            Reason::Type => "type",
            Reason::Unauthorized => "unauthorized",
            Reason::Timeout => "timeout",
            Reason::NotFound => "not_found",
            Reason::Absent => "absent",
            Reason::ArgError => "arg_error",
            Reason::Depth => "depth",
            Reason::Cycle => "cycle",
            Reason::Failed => "failed",
            Reason::Budget => "budget",
            Reason::Cancelled => "cancelled",
        }
    }

    /// Whether `on_error: retry` may re-run an item that failed for this reason: execution
    /// failures, and a path not there yet (another process may make it; retrying is how a
    /// sequence waits for a file).
    pub fn is_retryable(self) -> bool {
        match self {
            Reason::Timeout | Reason::Failed | Reason::Absent => true,
            Reason::Required
            | Reason::Type
            | Reason::Unauthorized
            | Reason::NotFound
            | Reason::ArgError
            | Reason::Depth
            | Reason::Cycle
            | Reason::Budget
            | Reason::Cancelled => false,
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A structured failure: which field, why, what happened, what to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolError {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub reason: Reason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl ToolError {
    pub fn new(reason: Reason, detail: impl Into<String>) -> ToolError {
        ToolError {
            field: None,
            reason,
            detail: Some(detail.into()),
            hint: None,
        }
    }

    pub fn with_field(mut self, field: impl Into<String>) -> ToolError {
        self.field = Some(field.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ToolError {
        self.hint = Some(hint.into());
        self
    }

    /// An argument `field` that `tool` does not take: `type`, since the arguments object does
    /// not fit the signature. The hint lists what it takes, and asks for the one meant when a
    /// top-level name is close (a nested path is not compared with the top-level names).
    pub fn unknown_parameter<'a>(
        tool: &str,
        field: &str,
        takes: impl IntoIterator<Item = &'a str>,
    ) -> ToolError {
        let takes: Vec<&str> = takes.into_iter().collect();
        let meant = if field.contains(['.', '[']) {
            None
        } else {
            seq_syntax::diagnostic::did_you_mean(field, takes.iter().copied())
        };
        let listed = if takes.is_empty() {
            "no parameters".to_owned()
        } else {
            takes
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        ToolError::new(
            Reason::Type,
            format!("`{field}` is not a parameter of `{tool}`"),
        )
        .with_hint(match meant {
            Some(meant) => format!("did you mean `{meant}`? `{tool}` takes {listed}"),
            None => format!("`{tool}` takes {listed}"),
        })
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.reason)?;
        if let Some(field) = &self.field {
            write!(f, " `{field}`")?;
        }
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ToolError {}
