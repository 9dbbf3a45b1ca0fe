//! The run report: what `seq_run` returns to a model and `seqc run --format json` prints.

use crate::error::ToolError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `{"ok", "groups": [...], "out": {group: {slot: value}}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The run was cancelled (docs/reference.md, "Cancellation"): `ok` is false, the group it
    /// stopped in says `cancelled`, and no group after it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// What the run's `output_send__<channel>` items sent, by channel, in order (at every depth:
    /// through calls and nested runs too); `dropped` counts lines past the bound of 1 MiB.
    /// Omitted when nothing was sent.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub output: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemReport {
    pub tool: String,
    pub status: ItemStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// How many times the item was re-run by `on_error: retry`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemStatus {
    Ok,
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
