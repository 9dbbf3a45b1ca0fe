//! A seq tool's outcome as an MCP answer, and the `outputSchema` that says what those answers
//! are: one home for both, so that every answer sent validates against the schema listed (a
//! client such as the TypeScript SDK checks failures against it too, and refuses what does not
//! match).
//!
//! - A success is `structuredContent`: the tool's value when it is an object, else
//!   `{"result": value}`.
//! - A failure is `isError: true` with `structuredContent` `{"error": {field, reason, detail,
//!   hint}, "diagnostics": [...], "report": {...}}` — `diagnostics` (from `seq_create`) and
//!   `report` (from `seq_run`) only when there are any — and the error rendered as text.
//! - Each value once: a run's report holds the slots in its `out` only (the groups' own `out`,
//!   the same values, are left out), and the text content of the tools that carry values
//!   (`seq_run`, `seq_call`, `seq_when_call`) is a summary in words: the groups and those their
//!   items called, the lines the run printed and the values, each bounded with a count of what
//!   it leaves out (the structured content has it all). The other tools' text is their JSON
//!   when that is short.
//! - Within the message bound: when the structured content would pass [`ANSWER_BYTES`], the
//!   largest values are left out (a value as `null`, a long text shortened), largest first,
//!   until it fits, then, when many small texts still do not fit, the longest lists are
//!   shortened; `cut` lists each one's JSON pointer (for a list, of its first element left out)
//!   and size.

mod text;

use text::{bounded, copy, cut_line, summary};

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use seq_catalog::{SEQ_CALL, SEQ_RUN, SEQ_WHEN_CALL};
use seq_exec::ToolError;
use seq_service::SeqOutcome;
use serde_json::{Map, Value, json};

/// The most bytes of structured content an answer carries: 10 MiB, less room for the envelope
/// and the text content. Below the 16 MiB line bound ([`crate::bound`]) and below the 10 MiB
/// the TypeScript SDK's stdio client reads at most, which closes the connection past it.
pub const ANSWER_BYTES: usize = 10 * 1024 * 1024 - 256 * 1024;

/// The longest text content; the structured content always has the whole answer.
const TEXT_BYTES: usize = 64 * 1024;

/// Values up to this size are also in a run's or call's text content, as JSON: a client that
/// shows a model only the text still shows them; larger ones are there once, in the structured
/// content.
const VALUES_IN_TEXT_BYTES: usize = 16 * 1024;

/// The lines a run printed that its text content also holds, at most.
const LINES_IN_TEXT_BYTES: usize = 16 * 1024;

/// A value is written into the text only if at least this much of the bound is left.
const MIN_VALUE_IN_TEXT_BYTES: usize = 64;

/// The most called groups a run's text names (each once, however often it was called).
const CALLED_IN_TEXT: usize = 50;

/// What marks a text shortened, here and in the structured content.
const CUT_MARK: &str = "…";

/// A text anywhere in an answer longer than this may be shortened to fit the bound.
const LONG_TEXT_BYTES: usize = 64 * 1024;

/// What is kept of a shortened text.
const KEPT_TEXT_BYTES: usize = 1024;

/// The tools whose answers carry the values of runs.
fn carries_values(tool: &str) -> bool {
    matches!(tool, SEQ_RUN | SEQ_CALL | SEQ_WHEN_CALL)
}

/// MCP's `outputSchema` for `tool`, whose result has the schema `result` (`seq_run`: the
/// report's): a success as [`to_result`] shapes it, or a failure. `None` for a result that may
/// or may not be an object (several types, or none): no schema can say its success.
pub fn output_schema(tool: &str, result: Option<&Value>) -> Option<JsonObject> {
    let success = if tool == SEQ_RUN {
        let mut report = as_object(seq_exec::engine::report_schema());
        if let Some(Value::Object(properties)) = report.get_mut("properties") {
            properties.insert("cut".to_owned(), cut_schema());
        }
        report
    } else {
        let result = result?.as_object()?;
        match result.get("type")?.as_str()? {
            "object" => result.clone(),
            _ => as_object(
                json!({"type": "object", "properties": {"result": result}, "required": ["result"]}),
            ),
        }
    };
    Some(with_failure(success, tool == SEQ_RUN))
}

/// `{"type": "object", "anyOf": [success, failure]}`, the definitions of both at the top, where
/// their references point. The run's failure says its `error` and `report` in full (the
/// report's definitions are there already); the other tools' say only what every failure has,
/// which keeps `tools/list` short.
fn with_failure(mut success: JsonObject, is_run: bool) -> JsonObject {
    let dialect = success.remove("$schema");
    let mut defs = match success.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        Some(_) | None => Map::new(),
    };
    let (success, failure) = if is_run {
        let mut error = as_object(seq_exec::engine::error_schema());
        error.remove("$schema");
        if let Some(Value::Object(more)) = error.remove("$defs") {
            for (name, def) in more {
                defs.entry(name).or_insert(def);
            }
        }
        defs.entry("ToolError").or_insert(Value::Object(error));
        defs.insert("RunReport".to_owned(), Value::Object(success));
        let failure = json!({
            "type": "object",
            "properties": {
                "error": {"$ref": "#/$defs/ToolError"},
                "report": {"$ref": "#/$defs/RunReport"},
                "cut": {"type": "array"},
            },
            "required": ["error"],
        });
        (json!({"$ref": "#/$defs/RunReport"}), failure)
    } else {
        let failure = json!({
            "type": "object",
            "properties": {
                "error": {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
                "diagnostics": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["error"],
        });
        (Value::Object(success), failure)
    };
    let mut schema = Map::new();
    if let Some(dialect) = dialect {
        schema.insert("$schema".to_owned(), dialect);
    }
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("anyOf".to_owned(), json!([success, failure]));
    if !defs.is_empty() {
        schema.insert("$defs".to_owned(), Value::Object(defs));
    }
    schema
}

fn cut_schema() -> Value {
    json!({
        "type": "array",
        "description": "Left out of this answer to stay within the message bound, largest first: each value's JSON pointer and size. A value left out is null, a long text shortened, a long list shortened from the element the pointer names.",
        "items": {"type": "object", "properties": {"pointer": {"type": "string"}, "bytes": {"type": "integer"}}, "required": ["pointer", "bytes"]},
    })
}

fn as_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other @ (Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::String(_)
        | Value::Array(_)) => {
            let mut object = Map::new();
            object.insert("result".to_owned(), other);
            object
        }
    }
}

/// `tool`'s outcome as an MCP result (module comment).
pub fn to_result(tool: &str, outcome: SeqOutcome) -> CallToolResult {
    match outcome.result {
        Ok(value) => {
            let mut structured = if value.is_object() {
                value
            } else {
                json!({ "result": value })
            };
            if tool == SEQ_RUN {
                once(&mut structured);
            }
            let cut = fit(&mut structured, tool);
            let text = if carries_values(tool) {
                summary(tool, &structured, &cut)
            } else {
                copy(&structured)
            };
            if tool == SEQ_RUN && !cut.is_empty() {
                insert_cut(&mut structured, &cut);
            }
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(structured);
            result
        }
        Err(error) => {
            let mut structured = Map::new();
            structured.insert("error".to_owned(), json!(error));
            if !outcome.diagnostics.is_empty() {
                structured.insert("diagnostics".to_owned(), json!(outcome.diagnostics));
            }
            if let Some(report) = &outcome.report {
                let mut report = json!(report);
                once(&mut report);
                structured.insert("report".to_owned(), report);
            }
            let mut structured = Value::Object(structured);
            let cut = fit(&mut structured, tool);
            // A client that reads only text gets the findings as lines.
            let mut text = render(&error) + &seq_service::finding_lines(&outcome.diagnostics);
            if !cut.is_empty() {
                text.push_str(&cut_line(&cut));
                insert_cut(&mut structured, &cut);
            }
            let mut result = CallToolResult::error(vec![ContentBlock::text(bounded(text))]);
            result.structured_content = Some(structured);
            result
        }
    }
}

/// `reason `field`: detail` and the hint on its own line.
fn render(error: &ToolError) -> String {
    match &error.hint {
        Some(hint) => format!("{error}\nhint: {hint}"),
        None => error.to_string(),
    }
}

/// A report with each slot's value once: in the run's `out`, not again in its group's.
fn once(report: &mut Value) {
    if let Some(Value::Array(groups)) = report.get_mut("groups") {
        for group in groups.iter_mut().filter_map(Value::as_object_mut) {
            group.remove("out");
        }
    }
}

/// Something left out of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cut {
    pointer: String,
    bytes: usize,
}

fn insert_cut(structured: &mut Value, cut: &[Cut]) {
    let listed: Vec<Value> = cut
        .iter()
        .map(|c| json!({"pointer": c.pointer, "bytes": c.bytes}))
        .collect();
    if let Some(object) = structured.as_object_mut() {
        object.insert("cut".to_owned(), Value::Array(listed));
    }
}

/// Leaves out the largest values of `structured` until it is within [`ANSWER_BYTES`]: the
/// values of slots and output channels, and texts longer than [`LONG_TEXT_BYTES`] anywhere.
fn fit(structured: &mut Value, tool: &str) -> Vec<Cut> {
    fit_within(structured, tool, ANSWER_BYTES)
}

fn fit_within(structured: &mut Value, tool: &str, budget: usize) -> Vec<Cut> {
    let mut size = json_len(structured);
    if size <= budget {
        return Vec::new();
    }
    let mut candidates = Vec::new();
    values(structured, tool, &mut candidates);
    long_texts(structured, String::new(), &mut candidates);
    candidates.sort_by_key(|(pointer, bytes)| (std::cmp::Reverse(*bytes), pointer.clone()));
    candidates.dedup_by(|a, b| a.0 == b.0);
    let mut cut = Vec::new();
    for (pointer, bytes) in candidates {
        if size <= budget {
            break;
        }
        let Some(node) = structured.pointer_mut(&pointer) else {
            continue;
        };
        let before = json_len(node);
        let shortened = match node {
            Value::String(text) if !is_value(&pointer, tool) => {
                Value::String(format!("{} {CUT_MARK}", prefix(text, KEPT_TEXT_BYTES)))
            }
            Value::String(_)
            | Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::Array(_)
            | Value::Object(_) => Value::Null,
        };
        *node = shortened;
        size = size.saturating_sub(before.saturating_sub(json_len(node)));
        cut.push(Cut { pointer, bytes });
    }
    if size > budget {
        shorten_lists(structured, size, budget, &mut cut);
    }
    cut
}

/// When no value or long text is left to cut, many small ones still may not fit (10,000 failed
/// items, each with its few hundred bytes): the lists of the most elements are shortened
/// first (the items of a group, the elements of an `each`, never the one list of groups that
/// holds them), each to the start that fits. The cut's pointer names the first element left out.
fn shorten_lists(structured: &mut Value, mut size: usize, budget: usize, cut: &mut Vec<Cut>) {
    let mut lists = Vec::new();
    lists_in(structured, String::new(), &mut lists);
    lists.sort_by_key(|(pointer, count, bytes)| {
        (
            std::cmp::Reverse(*count),
            std::cmp::Reverse(*bytes),
            pointer.clone(),
        )
    });
    for (pointer, _, _) in lists {
        if size <= budget {
            break;
        }
        let Some(Value::Array(items)) = structured.pointer_mut(&pointer) else {
            continue;
        };
        // The list's bytes beside its elements: `[]` and the commas.
        let over = size - budget;
        let mut dropped = 0usize;
        let mut keep = items.len();
        while keep > 0 && dropped < over {
            keep -= 1;
            dropped += items.get(keep).map_or(0, json_len) + usize::from(keep > 0);
        }
        items.truncate(keep);
        size = size.saturating_sub(dropped);
        cut.push(Cut {
            pointer: format!("{pointer}/{keep}"),
            bytes: dropped,
        });
    }
}

/// Every list in `node` of more than one element, with its pointer, length and size.
fn lists_in(node: &Value, pointer: String, found: &mut Vec<(String, usize, usize)>) {
    match node {
        Value::Array(items) => {
            if items.len() > 1 {
                found.push((pointer.clone(), items.len(), json_len(node)));
            }
            for (i, item) in items.iter().enumerate() {
                lists_in(item, format!("{pointer}/{i}"), found);
            }
        }
        Value::Object(members) => {
            for (key, value) in members {
                lists_in(value, format!("{pointer}/{}", escape(key)), found);
            }
        }
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Where the values of slots and output channels are in `tool`'s structured content: a
/// report's `out.GROUP.SLOT` and `output.CHANNEL` (under `report` in a failure), a call's
/// `GROUP.SLOT`.
fn values(structured: &Value, tool: &str, found: &mut Vec<(String, usize)>) {
    let mut at = |base: &str, node: Option<&Value>, depth: usize| {
        let Some(Value::Object(members)) = node else {
            return;
        };
        for (key, value) in members {
            let pointer = format!("{base}/{}", escape(key));
            match (depth, value) {
                (2, Value::Object(slots)) => {
                    for (slot, value) in slots {
                        found.push((format!("{pointer}/{}", escape(slot)), json_len(value)));
                    }
                }
                _ => found.push((pointer, json_len(value))),
            }
        }
    };
    if tool == SEQ_RUN {
        at("/out", structured.get("out"), 2);
        at("/output", structured.get("output"), 1);
    } else if carries_values(tool) {
        at("", Some(structured), 2);
    }
    if let Some(report) = structured.get("report") {
        at("/report/out", report.get("out"), 2);
        at("/report/output", report.get("output"), 1);
    }
    if tool == SEQ_RUN {
        locals(structured, "", found);
    }
    if let Some(report) = structured.get("report") {
        locals(report, "/report", found);
    }
}

/// The values of each group's `local` slots in a report: `BASE/groups/I/local/SLOT`.
fn locals(report: &Value, base: &str, found: &mut Vec<(String, usize)>) {
    let Some(Value::Array(groups)) = report.get("groups") else {
        return;
    };
    for (i, group) in groups.iter().enumerate() {
        if let Some(Value::Object(slots)) = group.get("local") {
            for (slot, value) in slots {
                let pointer = format!("{base}/groups/{i}/local/{}", escape(slot));
                found.push((pointer, json_len(value)));
            }
        }
    }
}

/// Whether `pointer` names a local slot's value: `[/report]/groups/I/local/SLOT`.
fn is_local(pointer: &str) -> bool {
    let rest = pointer.strip_prefix("/report").unwrap_or(pointer);
    let parts: Vec<&str> = rest.split('/').collect();
    matches!(parts.as_slice(), ["", "groups", i, "local", _] if i.parse::<usize>().is_ok())
}

/// Whether `pointer` names a value (left out as `null`) rather than a text (shortened).
fn is_value(pointer: &str, tool: &str) -> bool {
    let depth = pointer.matches('/').count();
    pointer.starts_with("/out/")
        || pointer.starts_with("/output/")
        || pointer.starts_with("/report/out/")
        || pointer.starts_with("/report/output/")
        || is_local(pointer)
        || (carries_values(tool) && tool != SEQ_RUN && depth <= 2)
}

/// Every text longer than [`LONG_TEXT_BYTES`] in `node`, with its pointer.
fn long_texts(node: &Value, pointer: String, found: &mut Vec<(String, usize)>) {
    match node {
        Value::String(text) if text.len() > LONG_TEXT_BYTES => found.push((pointer, text.len())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                long_texts(item, format!("{pointer}/{i}"), found);
            }
        }
        Value::Object(members) => {
            for (key, value) in members {
                long_texts(value, format!("{pointer}/{}", escape(key)), found);
            }
        }
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// A key as a JSON pointer writes it.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

/// The longest start of `text` within `bytes`, on a character boundary.
fn prefix(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn the_largest_values_are_cut_first_until_the_answer_fits() {
        let mut report = json!({
            "ok": true,
            "groups": [{"name": "g", "status": "ran", "items": [{"tool": "cmd_run", "status": "failed",
                "error": {"reason": "failed", "detail": "e".repeat(3000)}}]}],
            "out": {"g": {"big": "x".repeat(5000), "mid": "y".repeat(2000), "small": 1}},
        });
        let cut = fit_within(&mut report, SEQ_RUN, 6000);
        assert_eq!(
            cut,
            vec![Cut {
                pointer: "/out/g/big".to_owned(),
                bytes: 5002
            }]
        );
        assert_eq!(report["out"]["g"]["big"], Value::Null);
        assert_eq!(report["out"]["g"]["small"], 1);
        let cut = fit_within(&mut report, SEQ_RUN, 4000);
        assert_eq!(cut.len(), 1, "{cut:?}");
        assert_eq!(report["out"]["g"]["mid"], Value::Null);
    }

    #[test]
    fn a_groups_local_values_are_cut_as_slot_values_are() {
        let mut report = json!({
            "ok": true,
            "groups": [{"name": "g", "status": "ran", "items": [],
                "local": {"big": "x".repeat(5000), "small": 1}}],
            "out": {"g": {}},
        });
        let cut = fit_within(&mut report, SEQ_RUN, 1000);
        assert_eq!(
            cut,
            vec![Cut {
                pointer: "/groups/0/local/big".to_owned(),
                bytes: 5002
            }]
        );
        assert_eq!(report["groups"][0]["local"]["big"], Value::Null);
        assert_eq!(report["groups"][0]["local"]["small"], 1);
    }

    #[test]
    fn a_runs_summary_writes_its_lines_and_small_values() {
        let report = json!({"ok": true, "groups": [{"name": "g", "status": "ran"}],
            "out": {"g": {"n": 3}},
            "output": {"stdout": ["one", "two"], "dropped": 4}});
        insta::assert_snapshot!(summary(SEQ_RUN, &report, &[]));
    }

    #[test]
    fn a_runs_summary_names_the_groups_its_items_called() {
        let called = |name: &str, items: Value| {
            json!({"name": name, "sequence": "lib", "status": "ran", "parallel": false,
                   "duration_ms": 1, "items": items})
        };
        let inner = json!([{"tool": "seq_call", "status": "ok",
            "called": [{"name": "log", "status": "failed", "parallel": false, "duration_ms": 1}]}]);
        let calls: Vec<Value> = (0..3)
            .map(|_| json!({"tool": "seq_call", "status": "ok", "called": [called("notify", inner.clone())]}))
            .collect();
        let report = json!({"ok": true,
            "groups": [{"name": "fetch", "status": "ran"},
                       {"name": "report", "status": "ran", "items": calls}],
            "out": {"report": {"sent": true}}});
        insta::assert_snapshot!(summary(SEQ_RUN, &report, &[]));
    }

    #[test]
    fn a_runs_many_lines_and_large_values_are_bounded_in_its_text() {
        let lines: Vec<String> = (0..5000).map(|i| format!("line {i} of the log")).collect();
        let report = json!({"ok": true, "groups": [{"name": "g", "status": "ran"}],
            "out": {"g": {"a": 1, "big": "x".repeat(20_000), "c": [1, 2], "d": "after"}},
            "output": {"stdout": lines}});
        let text = summary(SEQ_RUN, &report, &[]);
        assert!(text.len() < TEXT_BYTES, "{}", text.len());
        assert!(text.contains("\nline 0 of the log\n"), "{text}");
        // What the text leaves out, counted: the lines, then the values past the bound.
        let tail: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with(CUT_MARK) || line.starts_with('`'))
            .map(|line| line.get(..line.len().min(60)).unwrap_or(line))
            .collect();
        insta::assert_debug_snapshot!(tail);
    }

    #[test]
    fn a_calls_summary_writes_its_values_bounded() {
        let value = json!({"g": {"small": "ok", "big": "y".repeat(40_000)}});
        let text = summary(SEQ_CALL, &value, &[]);
        assert!(text.contains("`g.small` = \"ok\""), "{text}");
        assert!(text.contains("(40002 bytes, shortened here)"), "{text}");
        let cut = [Cut {
            pointer: "/g/big".to_owned(),
            bytes: 40_002,
        }];
        let value = json!({"g": {"small": "ok", "big": null}});
        insta::assert_snapshot!(summary(SEQ_CALL, &value, &cut));
    }

    #[test]
    fn many_small_failures_are_cut_from_their_list_until_the_answer_fits() {
        let items: Vec<Value> = (0..10_000)
            .map(|i| json!({"tool": "cmd_run", "status": "failed",
                "error": {"reason": "failed", "detail": format!("exit 1: {}", "e".repeat(300)), "i": i}}))
            .collect();
        let mut report = json!({"ok": false, "groups": [{"name": "g", "status": "partial", "items": items}],
            "out": {}});
        let budget = 1024 * 1024;
        let cut = fit_within(&mut report, SEQ_RUN, budget);
        assert!(json_len(&report) <= budget, "{}", json_len(&report));
        let kept = report["groups"][0]["items"].as_array().unwrap().len();
        assert!(kept > 1000 && kept < 10_000, "{kept}");
        assert_eq!(cut.len(), 1, "{cut:?}");
        assert_eq!(cut[0].pointer, format!("/groups/0/items/{kept}"));
        assert!(
            cut[0].bytes > 30 * 10_000 * (10_000 - kept) / 10_000,
            "{cut:?}"
        );
    }

    #[test]
    fn a_long_text_outside_the_values_is_shortened() {
        let detail = "e".repeat(LONG_TEXT_BYTES + 10);
        let mut failure = json!({"error": {"reason": "failed", "detail": detail}});
        let cut = fit_within(&mut failure, SEQ_RUN, 4096);
        assert_eq!(cut[0].pointer, "/error/detail");
        let kept = failure["error"]["detail"].as_str().unwrap();
        assert!(
            kept.len() < 2 * KEPT_TEXT_BYTES && kept.ends_with('…'),
            "{kept}"
        );
    }

    #[test]
    fn every_seq_tool_schema_is_an_object_with_a_failure() {
        for def in seq_service::definitions() {
            let Some(schema) = output_schema(&def.name, def.output.as_ref()) else {
                continue;
            };
            assert_eq!(schema["type"], "object", "{}", def.name);
            assert_eq!(
                schema["anyOf"][1]["required"],
                json!(["error"]),
                "{}",
                def.name
            );
            assert!(
                schema["anyOf"][1]["properties"]["error"].is_object(),
                "{}",
                def.name
            );
        }
    }
}
