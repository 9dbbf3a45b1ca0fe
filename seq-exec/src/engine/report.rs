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
    /// Every problem with the run's arguments that kept it from starting, one per argument
    /// (`field`). Omitted otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argument_errors: Vec<ToolError>,
    /// The run was cancelled: `ok` is false, the group it
    /// stopped in says `cancelled`, and no group after it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// What the run's `output_send__<channel>` items sent, by channel, in order, at every depth;
    /// `dropped` counts lines past the bound. Omitted when nothing was sent.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub output: Map<String, Value>,
}

/// What one group of the run did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupReport {
    pub name: String,
    pub status: GroupStatus,
    /// Whether tool runs went side by side (a serial group without a fan-out, one plain item,
    /// or items that all send to one output channel say false).
    pub parallel: bool,
    pub duration_ms: u64,
    /// When the group started: milliseconds from the run's start (one clock for the report).
    #[serde(default)]
    pub started_ms: u64,
    /// The slots this group set. Over MCP, left out: the run's `out` holds them, once.
    #[serde(default)]
    pub out: Map<String, Value>,
    /// The group's `local` slots that were set, never part of its result. Omitted when none.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub local: Map<String, Value>,
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
    /// A call item's groups its last attempt ran, in order (the target group, or those of the
    /// `#name` sequence). Omitted when it ran none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub called: Vec<CalledGroup>,
    /// When the item's first attempt started (or its group gave up on it): milliseconds from
    /// the run's start.
    #[serde(default)]
    pub started_ms: u64,
    /// How long the item ran, its attempts and the pauses between them together (0 for one
    /// that never started).
    #[serde(default)]
    pub duration_ms: u64,
    /// When each attempt of a retried item ran, in order: the failed ones (`failed_attempts`)
    /// then the last. Omitted when the item ran once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<AttemptTime>,
    /// An `each` item: what its elements did. Omitted for other items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub each: Option<EachReport>,
    /// A `cmd_run` item's `command` with its values in place, quoted: for reading only (the
    /// shell got the values in its environment), cut when long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// When one attempt of an item ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttemptTime {
    /// Milliseconds from the run's start.
    pub started_ms: u64,
    pub duration_ms: u64,
}

/// How many of an `each` item's elements are reported one by one; the rest are counted. Past
/// them, up to as many more failed or caught elements are reported too, with their `index`:
/// a failure is never only a count.
pub const MAX_REPORTED_ELEMENTS: usize = 100;

/// What the elements of an `each` item did: counts by status, and the runs of the first 100
/// elements and of failed or caught ones past them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EachReport {
    /// How many elements the array had.
    pub count: usize,
    /// How many element runs succeeded.
    pub ok: usize,
    /// How many failed (their result is `null`).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub failed: usize,
    /// How many were skipped or degraded by `missing`.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub skipped: usize,
    /// How many were stopped or never started: the run was cancelled, or another element
    /// failed under `on_error: abort`.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub cancelled: usize,
    /// The first 100 elements' runs, in element order, then those of the failed or caught
    /// elements past them (up to 100 more, each with its `index`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<ElementReport>,
    /// The elements counted above but not reported one by one.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub elements_omitted: usize,
}

/// One element's run of an `each` item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ElementReport {
    /// The element's place in the array (`$each_index`), given past the first 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    pub status: ItemStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// How many times the element was re-run by `on_error: retry`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// The errors of the element's attempts that were retried, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_attempts: Vec<ToolError>,
    /// When the element's run started: milliseconds from the run's start.
    #[serde(default)]
    pub started_ms: u64,
    pub duration_ms: u64,
}

impl ElementReport {
    /// The element's place in the array, given its place `at` in `elements`.
    pub fn index(&self, at: usize) -> usize {
        self.index.unwrap_or(at)
    }
}

impl EachReport {
    pub(crate) fn new(count: usize) -> EachReport {
        EachReport {
            count,
            ok: 0,
            failed: 0,
            skipped: 0,
            cancelled: 0,
            elements: Vec::new(),
            elements_omitted: 0,
        }
    }

    /// Adds the next element's run, which took `duration_ms`.
    pub(crate) fn push(&mut self, run: ItemReport, duration_ms: u64) {
        let index = self.ok + self.failed + self.skipped + self.cancelled;
        match run.status {
            ItemStatus::Ok => self.ok += 1,
            // A caught element failed all the same: its error is in the `error_as` slot.
            ItemStatus::Failed | ItemStatus::Caught => self.failed += 1,
            ItemStatus::Skipped | ItemStatus::Degraded => self.skipped += 1,
            ItemStatus::Cancelled => self.cancelled += 1,
        }
        let failed = matches!(run.status, ItemStatus::Failed | ItemStatus::Caught);
        let room = if index < MAX_REPORTED_ELEMENTS {
            Some(None)
        } else {
            (failed && self.elements.len() < 2 * MAX_REPORTED_ELEMENTS).then_some(Some(index))
        };
        if let Some(index) = room {
            self.elements.push(ElementReport {
                index,
                status: run.status,
                error: run.error,
                retries: run.retries,
                failed_attempts: run.failed_attempts,
                started_ms: run.started_ms,
                duration_ms,
            });
        } else {
            self.elements_omitted += 1;
        }
    }
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
            started_ms: 0,
            duration_ms: 0,
            attempts: Vec::new(),
            each: None,
            command: None,
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
    /// Milliseconds from the start of the run at the bottom (the caller's axis, also for a
    /// `#name` call run elsewhere).
    #[serde(default)]
    pub started_ms: u64,
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
            started_ms: report.started_ms,
            items,
            items_omitted,
            error: report.error,
        }
    }
}

impl RunReport {
    /// The report with every `started_ms` and `duration_ms` set to 0, at every level: what two
    /// runs of the same outcomes share.
    pub fn untimed(mut self) -> RunReport {
        for group in &mut self.groups {
            group.started_ms = 0;
            group.duration_ms = 0;
            untime_items(&mut group.items);
        }
        self
    }
}

fn untime_items(items: &mut [ItemReport]) {
    for item in items {
        item.started_ms = 0;
        item.duration_ms = 0;
        for attempt in &mut item.attempts {
            *attempt = AttemptTime {
                started_ms: 0,
                duration_ms: 0,
            };
        }
        if let Some(each) = &mut item.each {
            for element in &mut each.elements {
                element.started_ms = 0;
                element.duration_ms = 0;
            }
        }
        for called in &mut item.called {
            called.started_ms = 0;
            called.duration_ms = 0;
            untime_items(&mut called.items);
        }
    }
}

/// The JSON Schema of [`RunReport`], derived from these types (with their doc comments as
/// descriptions): `seq_run`'s output schema.
pub fn report_schema() -> Value {
    portable_schema::<RunReport>()
}

/// The JSON Schema of [`ToolError`], derived as [`report_schema`] is: the `error` of a failed
/// call's structured answer.
pub fn error_schema() -> Value {
    portable_schema::<ToolError>()
}

/// `T`'s JSON Schema in the words every validator knows: schemars marks integers with formats
/// of its own (`uint`, `uint32`, `uint64`), which clients' validators (the TypeScript SDK's,
/// the Inspector's) warn about as unknown, and says an optional value with a list of types,
/// which strict validators flag as not portable. Integers keep their `minimum`; `[T, "null"]`
/// becomes `anyOf` of the two.
fn portable_schema<T: JsonSchema>() -> Value {
    let portable = |schema: &mut schemars::Schema| {
        let Some(object) = schema.as_object_mut() else {
            return;
        };
        if object.get("type").and_then(Value::as_str) == Some("integer") {
            object.remove("format");
        }
        if let Some(Value::Array(types)) = object.get("type")
            && types.len() > 1
        {
            let one_of_each: Vec<Value> = types
                .iter()
                .map(|t| serde_json::json!({ "type": t }))
                .collect();
            object.remove("type");
            object.insert("anyOf".to_owned(), Value::Array(one_of_each));
        }
    };
    schemars::generate::SchemaSettings::default()
        .with_transform(schemars::transform::RecursiveTransform(portable))
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
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
    /// Not run, nothing written: `missing: skip`, a `when` that was false, or not reached
    /// before the group failed or timed out.
    Skipped,
    /// The tool was missing and `missing: degrade` wrote the fallback.
    Degraded,
    /// Failed, caught by `error_as`: the error is in that slot too; the group went on.
    Caught,
    /// Stopped, or never started, because the run was cancelled; or stopped because another
    /// item failed under `on_error: abort`.
    Cancelled,
}

impl GroupStatus {
    /// Every status, in the order the type declares them.
    pub const ALL: [GroupStatus; 5] = [
        GroupStatus::Ran,
        GroupStatus::Skipped,
        GroupStatus::Failed,
        GroupStatus::Partial,
        GroupStatus::Cancelled,
    ];

    /// The status as the report spells it (its serialized name): `partial`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupStatus::Ran => "ran",
            GroupStatus::Skipped => "skipped",
            GroupStatus::Failed => "failed",
            GroupStatus::Partial => "partial",
            GroupStatus::Cancelled => "cancelled",
        }
    }

    /// The status in words, as a count or a line says it: "2 groups partly failed", "group
    /// `g` cancelled after 3 ms".
    pub fn words(self) -> &'static str {
        match self {
            GroupStatus::Ran => "ran",
            GroupStatus::Skipped => "skipped",
            GroupStatus::Failed => "failed",
            GroupStatus::Partial => "partly failed",
            GroupStatus::Cancelled => "cancelled",
        }
    }

    /// The status as a sentence's verb: "group `g` was skipped".
    pub fn predicate(self) -> &'static str {
        match self {
            GroupStatus::Skipped => "was skipped",
            GroupStatus::Cancelled => "was cancelled",
            GroupStatus::Ran | GroupStatus::Failed | GroupStatus::Partial => self.words(),
        }
    }
}

impl ItemStatus {
    /// Every status, in the order the type declares them.
    pub const ALL: [ItemStatus; 6] = [
        ItemStatus::Ok,
        ItemStatus::Failed,
        ItemStatus::Skipped,
        ItemStatus::Degraded,
        ItemStatus::Caught,
        ItemStatus::Cancelled,
    ];

    /// The status as the report spells it (its serialized name): `degraded`.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Ok => "ok",
            ItemStatus::Failed => "failed",
            ItemStatus::Skipped => "skipped",
            ItemStatus::Degraded => "degraded",
            ItemStatus::Caught => "caught",
            ItemStatus::Cancelled => "cancelled",
        }
    }

    /// The status in words, as a line says it after the tool: "`cmd_run` degraded to its
    /// fallback", "`sleep` cancelled".
    pub fn words(self) -> &'static str {
        match self {
            ItemStatus::Ok => "succeeded",
            ItemStatus::Failed => "failed",
            ItemStatus::Skipped => "skipped",
            ItemStatus::Degraded => "degraded to its fallback",
            ItemStatus::Caught => "failed and was caught",
            ItemStatus::Cancelled => "cancelled",
        }
    }

    /// The status as a sentence's verb: "item 2 `sleep` was cancelled".
    pub fn predicate(self) -> &'static str {
        match self {
            ItemStatus::Skipped => "was skipped",
            ItemStatus::Cancelled => "was cancelled",
            ItemStatus::Ok | ItemStatus::Failed | ItemStatus::Degraded | ItemStatus::Caught => {
                self.words()
            }
        }
    }
}

impl RunReport {
    /// The report of a run that could not start, for `error`: what a host that refuses a run
    /// before the engine sees it (a durable worker's own check) answers.
    pub fn failed(error: crate::error::ToolError) -> RunReport {
        failed_run(error)
    }
}

/// A run that could not start.
pub(crate) fn failed_run(error: ToolError) -> RunReport {
    RunReport {
        ok: false,
        groups: Vec::new(),
        out: Map::new(),
        error: Some(error),
        argument_errors: Vec::new(),
        cancelled: false,
        output: Map::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    /// `as_str` is serde's name, and `ALL` is every status the schema knows.
    #[test]
    fn statuses_are_spelled_as_serde_spells_them() {
        let schema = report_schema();
        let names = |def: &str| -> Vec<String> {
            let values = &schema["$defs"][def]["enum"];
            let listed: Option<Vec<String>> = values.as_array().map(|v| {
                v.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            });
            listed.unwrap_or_else(|| {
                // One variant a line when the doc comments split the enum: `oneOf` of consts.
                schema["$defs"][def]["oneOf"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v["const"].as_str().unwrap().to_owned())
                    .collect()
            })
        };
        for status in GroupStatus::ALL {
            assert_eq!(serde_json::json!(status), status.as_str());
        }
        let all: Vec<&str> = GroupStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names("GroupStatus"), all);
        for status in ItemStatus::ALL {
            assert_eq!(serde_json::json!(status), status.as_str());
        }
        let all: Vec<&str> = ItemStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names("ItemStatus"), all);
    }

    /// The descriptions say the depth bound in words: they say the constant's value.
    #[test]
    fn the_schema_states_the_reported_call_depth() {
        let text = report_schema().to_string();
        assert!(
            text.contains(&format!("call depth {MAX_REPORTED_CALL_DEPTH}")),
            "{text}"
        );
    }

    #[test]
    fn failures_past_the_reported_elements_are_reported_with_their_index() {
        let mut each = EachReport::new(1000);
        for i in 0..1000 {
            let status = if i % 200 == 150 || i == 3 {
                ItemStatus::Failed
            } else {
                ItemStatus::Ok
            };
            each.push(ItemReport::new("t", status, None), 1);
        }
        let failed: Vec<(usize, usize)> = each
            .elements
            .iter()
            .enumerate()
            .filter(|(_, e)| e.status == ItemStatus::Failed)
            .map(|(at, e)| (at, e.index(at)))
            .collect();
        assert_eq!(
            failed,
            [
                (3, 3),
                (100, 150),
                (101, 350),
                (102, 550),
                (103, 750),
                (104, 950)
            ]
        );
        assert_eq!((each.ok, each.failed), (994, 6));
        assert_eq!(each.elements_omitted, 1000 - 105);
        // The first 100 carry no index: their place is theirs.
        assert!(each.elements[..100].iter().all(|e| e.index.is_none()));
    }
}
