//! The run report: what `seq_run` returns to a model and `seqc run --format json` prints.

use crate::error::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A run's report: whether it succeeded, what each group and item did, the final slots
/// (`{group: {slot: value}}`) and what it printed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunReport {
    /// True only when every group ran or was skipped by its `when`, and no item failed in a way
    /// its group did not tolerate (an honest success flag).
    pub ok: bool,
    /// The groups reached, in order: the run stops after a group that failed.
    pub groups: Vec<GroupReport>,
    /// The final `out` snapshot: each group's slots that were set.
    pub out: Map<String, Value>,
    /// Why the run could not start (an undeclared run argument, an input of the wrong type), or
    /// that it was cancelled (reason `cancelled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// Every problem with the run's arguments, one per argument (its name in `field`), when
    /// they kept the run from starting; `error` then says them all in one. Omitted otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argument_errors: Vec<ToolError>,
    /// The run was cancelled: `ok` is false, the group it
    /// stopped in says `cancelled`, and no group after it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// What the run's `output_send__<channel>` items sent, by channel, in order (at every depth:
    /// through calls and nested runs too); `dropped` counts lines past the bound of 1 MiB.
    /// Omitted when nothing was sent.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub output: Map<String, Value>,
}

/// What one group of the run did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupReport {
    pub name: String,
    pub status: GroupStatus,
    /// Whether items ran side by side: a parallel group with at least two items that
    /// do not wait for each other. A serial group, a group of one item, or one whose items all
    /// send to one output channel (kept in order) says false.
    pub parallel: bool,
    pub duration_ms: u64,
    /// The slots this group set.
    pub out: Map<String, Value>,
    pub items: Vec<ItemReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupStatus {
    /// Every item succeeded (or was skipped by `missing: skip`).
    Ran,
    /// The group's `when` was false.
    Skipped,
    /// The group failed: an item failed under `on_error: abort`, or the group timed out.
    Failed,
    /// Some items failed under `on_error: continue`; the others ran.
    Partial,
    /// The run was cancelled while the group ran, or before it started.
    Cancelled,
}

/// What one item did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ItemReport {
    pub tool: String,
    pub status: ItemStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// How many times the item was re-run by `on_error: retry`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// The errors of the attempts that `on_error: retry` ran again, in order (the last
    /// attempt's is `error`). Omitted when the item was not retried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_attempts: Vec<ToolError>,
    /// A call item (`seq_call`, `seq_when_call`, `seq_run`): the groups its last attempt ran,
    /// in order — the target group (`skipped` when its `when` was false), or the groups of the
    /// `#name` sequence. Omitted when the call ran no group (a `seq_when_call` whose `when` was
    /// false, a target not found).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub called: Vec<CalledGroup>,
}

impl ItemReport {
    /// An item of `tool` that ended as `status`, tried once, calling nothing.
    pub fn new(tool: impl Into<String>, status: ItemStatus, error: Option<ToolError>) -> Self {
        ItemReport {
            tool: tool.into(),
            status,
            error,
            retries: 0,
            failed_attempts: Vec::new(),
            called: Vec::new(),
        }
    }
}

/// How deep called groups are reported: a group called by an item of a run's group is at
/// depth 1, one called from within it at depth 2, and so on. A group past this depth is
/// reported without its items (`items_omitted` counts them), which bounds the report
/// whatever the sequences' fan-out.
pub const MAX_REPORTED_CALL_DEPTH: usize = 3;

/// What a called group did: a group's report without its slots (they are the call's value,
/// in the caller's slot).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CalledGroup {
    pub name: String,
    /// The sequence of a `#name` call (without `#`); omitted for a group of the caller's own
    /// sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<String>,
    pub status: GroupStatus,
    /// As the run's groups say it: whether the group's items ran side by side.
    pub parallel: bool,
    pub duration_ms: u64,
    /// Its items' reports, to call depth 3.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ItemReport>,
    /// The items left out past call depth 3.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub items_omitted: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

impl CalledGroup {
    /// The report of a group run at call depth `depth` (1 for a group a run's item called).
    pub(crate) fn of(report: GroupReport, sequence: Option<&str>, depth: usize) -> CalledGroup {
        let (items, items_omitted) = if depth > MAX_REPORTED_CALL_DEPTH {
            (Vec::new(), report.items.len())
        } else {
            (report.items, 0)
        };
        CalledGroup {
            name: report.name,
            sequence: sequence.map(str::to_owned),
            status: report.status,
            parallel: report.parallel,
            duration_ms: report.duration_ms,
            items,
            items_omitted,
            error: report.error,
        }
    }
}

/// The JSON Schema of [`RunReport`], derived from these types (with their doc comments as
/// descriptions): `seq_run`'s output schema.
pub fn report_schema() -> Value {
    schemars::schema_for!(RunReport).to_value()
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemStatus {
    /// The tool (or call) succeeded; its value went to the item's `as` slot.
    Ok,
    /// The item failed: `error` says why.
    Failed,
    /// Not run, nothing written: `missing: skip` (the `not_found` error is kept), a
    /// `seq_when_call` whose `when` was false, a call to a group whose `when` was false,
    /// or not reached before the group failed or timed out.
    Skipped,
    /// The tool was missing and `missing: degrade` wrote the fallback.
    Degraded,
    /// Stopped, or never started, because the run was cancelled; or stopped because another
    /// item failed under `on_error: abort`.
    Cancelled,
}

impl RunReport {
    /// The report of a run that could not start, for `error`: what a host that refuses a run
    /// before the engine sees it (a durable worker's own check) answers.
    pub fn failed(error: crate::error::ToolError) -> RunReport {
        super::call::failed_run(error)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    /// The descriptions say the depth bound in words: they say the constant's value.
    #[test]
    fn the_schema_states_the_reported_call_depth() {
        let text = report_schema().to_string();
        assert!(
            text.contains(&format!("call depth {MAX_REPORTED_CALL_DEPTH}")),
            "{text}"
        );
    }
}
