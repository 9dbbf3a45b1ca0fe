//! The text content of an answer: for the tools that carry values, a summary in words (the
//! groups and those their items called, the printed lines, the values), each part bounded with
//! a count of what it leaves out; for the others, their JSON when that is short.

use super::{
    CALLED_IN_TEXT, CUT_MARK, Cut, LINES_IN_TEXT_BYTES, MIN_VALUE_IN_TEXT_BYTES, TEXT_BYTES,
    VALUES_IN_TEXT_BYTES, escape, json_len, prefix,
};
use seq_catalog::SEQ_RUN;
use serde_json::{Map, Value};

pub(super) fn bounded(text: String) -> String {
    if text.len() <= TEXT_BYTES {
        return text;
    }
    format!(
        "{} {CUT_MARK} ({} bytes; the whole is in the structured content)",
        prefix(&text, TEXT_BYTES),
        text.len()
    )
}

/// The text of a management tool's answer: its JSON, when short.
pub(super) fn copy(structured: &Value) -> String {
    let text = structured.to_string();
    if text.len() <= TEXT_BYTES {
        return text;
    }
    format!(
        "The answer is {} bytes of JSON, in the structured content.",
        text.len()
    )
}

pub(super) fn cut_line(cut: &[Cut]) -> String {
    let listed: Vec<String> = cut
        .iter()
        .map(|c| format!("{} ({} bytes)", c.pointer, c.bytes))
        .collect();
    format!(
        "\nLeft out to stay within the message bound: {}.",
        listed.join(", ")
    )
}

/// The text of a run's or a call's answer: what happened (a run's groups and the groups its
/// items called), which slots hold values and how large, the lines the run printed and the
/// values, each bounded ([`LINES_IN_TEXT_BYTES`], [`VALUES_IN_TEXT_BYTES`]) with a count of what
/// the text leaves out (the structured content has it all, once).
pub(super) fn summary(tool: &str, structured: &Value, cut: &[Cut]) -> String {
    let mut text = String::new();
    let slots = if tool == SEQ_RUN {
        text.push_str("The run succeeded.");
        if let Some(Value::Array(groups)) = structured.get("groups") {
            let listed: Vec<String> = groups
                .iter()
                .map(|g| format!("`{}` {}", name_of(g), word(g, "status")))
                .collect();
            if !listed.is_empty() {
                text.push_str(&format!(" Groups: {}.", listed.join(", ")));
            }
            text.push_str(&called_text(groups));
        }
        structured.get("out")
    } else if structured.is_null() || structured.get("result").is_some_and(Value::is_null) {
        None
    } else {
        Some(structured)
    };
    let values = slot_values(tool, slots);
    if values.is_empty() {
        text.push_str(" No slot was set.");
    } else {
        let listed: Vec<String> = values
            .iter()
            .map(
                |(name, pointer, value)| match cut.iter().find(|c| &c.pointer == pointer) {
                    Some(c) => format!("`{name}` ({} bytes, left out)", c.bytes),
                    None => format!("`{name}` ({} bytes)", json_len(value)),
                },
            )
            .collect();
        text.push_str(&format!(" Slots set: {}.", listed.join(", ")));
    }
    if tool == SEQ_RUN
        && let Some(Value::Object(channels)) = structured.get("output")
    {
        text.push_str(&printed(channels, cut));
    }
    // The values too, for a client that shows a model only the text: whole when small, else
    // each within what is left of the bound.
    match slots.map(|v| (v, json_len(v))) {
        Some((values, bytes)) if bytes <= VALUES_IN_TEXT_BYTES && cut.is_empty() => {
            text.push_str(&format!("\nValues: {values}"));
        }
        Some(_) => text.push_str(&values_text(&values, cut)),
        None => {}
    }
    if !cut.is_empty() {
        text.push_str(&cut_line(cut));
    }
    bounded(text.trim_start().to_owned())
}

/// The lines a run printed written out most to [`LINES_IN_TEXT_BYTES`] (`{channel: [lines],
/// "dropped": N}`), with a count of each channel's lines not written.
pub(super) fn printed(channels: &Map<String, Value>, cut: &[Cut]) -> String {
    let mut text = String::new();
    let mut room = LINES_IN_TEXT_BYTES;
    for (channel, lines) in channels {
        match lines {
            // Said after the lines, below.
            Value::Number(_) if channel == "dropped" => {}
            Value::Array(lines) => {
                text.push_str(&format!(
                    "\nOutput `{channel}` ({}):",
                    lines_count(lines.len())
                ));
                let mut written = 0;
                for line in lines {
                    let line = match line {
                        Value::String(line) => line.clone(),
                        other @ (Value::Null
                        | Value::Bool(_)
                        | Value::Number(_)
                        | Value::Array(_)
                        | Value::Object(_)) => other.to_string(),
                    };
                    if line.len() + 1 > room {
                        break;
                    }
                    room -= line.len() + 1;
                    text.push('\n');
                    text.push_str(&line);
                    written += 1;
                }
                if written < lines.len() {
                    text.push_str(&format!(
                        "\n{CUT_MARK} {} of `{channel}` not written here (in the structured content).",
                        lines_count(lines.len() - written)
                    ));
                }
            }
            Value::Null => {
                let pointer = format!("/output/{}", escape(channel));
                match cut.iter().find(|c| c.pointer == pointer) {
                    Some(c) => text.push_str(&format!(
                        "\nOutput `{channel}` left out ({} bytes).",
                        c.bytes
                    )),
                    None => text.push_str(&format!("\nOutput `{channel}`.")),
                }
            }
            Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Object(_) => {
                text.push_str(&format!("\nOutput `{channel}`."));
            }
        }
    }
    if let Some(dropped) = channels.get("dropped").and_then(Value::as_u64) {
        text.push_str(&format!("\n{dropped} lines dropped past the bound."));
    }
    text
}

pub(super) fn lines_count(n: usize) -> String {
    if n == 1 {
        "1 line".to_owned()
    } else {
        format!("{n} lines")
    }
}

/// Each slot's value as `GROUP.SLOT = JSON`, within [`VALUES_IN_TEXT_BYTES`] together, the
/// smallest first (so that most of them are written): a value past what is left is shortened,
/// and once nothing is left the rest are counted.
pub(super) fn values_text(values: &[(String, String, &Value)], cut: &[Cut]) -> String {
    let mut text = String::from("\nValues:");
    let mut room = VALUES_IN_TEXT_BYTES;
    let mut left_out = 0usize;
    let mut values: Vec<&(String, String, &Value)> = values.iter().collect();
    values.sort_by_key(|(_, _, value)| json_len(value));
    for (name, pointer, value) in values {
        if cut.iter().any(|c| &c.pointer == pointer) {
            continue;
        }
        if room < MIN_VALUE_IN_TEXT_BYTES {
            left_out += 1;
            continue;
        }
        let json = value.to_string();
        if json.len() <= room {
            room -= json.len();
            text.push_str(&format!("\n`{name}` = {json}"));
        } else {
            let kept = prefix(&json, room);
            room = 0;
            text.push_str(&format!(
                "\n`{name}` = {kept} {CUT_MARK} ({} bytes, shortened here)",
                json.len()
            ));
        }
    }
    if left_out > 0 {
        text.push_str(&format!(
            "\n{CUT_MARK} {left_out} more {} not written here (in the structured content).",
            if left_out == 1 { "value" } else { "values" }
        ));
    }
    text
}

/// The slots of a run's `out` or a call's value, as `(GROUP.SLOT, JSON pointer, value)`: a
/// group's value that is not an object is one, named by the group.
pub(super) fn slot_values<'a>(
    tool: &str,
    slots: Option<&'a Value>,
) -> Vec<(String, String, &'a Value)> {
    let Some(Value::Object(groups)) = slots else {
        return Vec::new();
    };
    let base = if tool == SEQ_RUN { "/out" } else { "" };
    let mut found = Vec::new();
    for (group, slots) in groups {
        match slots {
            Value::Object(slots) => found.extend(slots.iter().map(|(slot, value)| {
                (
                    format!("{group}.{slot}"),
                    format!("{base}/{}/{}", escape(group), escape(slot)),
                    value,
                )
            })),
            other @ (Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_)) => {
                found.push((group.clone(), format!("{base}/{}", escape(group)), other));
            }
        }
    }
    found
}

/// ` Called: `#lib/notify` ran (from `report`).`: the groups the run's items called, down
/// through the calls, each (name, caller, status) once with how many times, at most
/// [`CALLED_IN_TEXT`] of them and a count of the rest.
pub(super) fn called_text(groups: &[Value]) -> String {
    let mut called: Vec<(String, String, String, usize)> = Vec::new();
    for group in groups {
        calls_in(group, name_of(group), None, &mut called);
    }
    if called.is_empty() {
        return String::new();
    }
    let listed: Vec<String> = called
        .iter()
        .take(CALLED_IN_TEXT)
        .map(|(name, from, status, times)| {
            let times = if *times > 1 {
                format!(" ×{times}")
            } else {
                String::new()
            };
            format!("`{name}` {status}{times} (from `{from}`)")
        })
        .collect();
    let more = match called.len().saturating_sub(CALLED_IN_TEXT) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(" Called: {}{more}.", listed.join(", "))
}

/// The groups the items of `group` (a group's or a called group's report, named `from`, of
/// the stored sequence `sequence` or the run's own) called, added to `found` as `(name, caller,
/// status, times)`; a group of a stored sequence is named `#SEQUENCE/GROUP`.
pub(super) fn calls_in(
    group: &Value,
    from: &str,
    sequence: Option<&str>,
    found: &mut Vec<(String, String, String, usize)>,
) {
    let Some(Value::Array(items)) = group.get("items") else {
        return;
    };
    for item in items {
        let Some(Value::Array(called)) = item.get("called") else {
            continue;
        };
        for call in called {
            // A group of the caller's own sequence has none of its own.
            let sequence = call.get("sequence").and_then(Value::as_str).or(sequence);
            let name = match sequence {
                Some(sequence) => format!("#{sequence}/{}", name_of(call)),
                None => name_of(call).to_owned(),
            };
            let status = word(call, "status");
            match found
                .iter_mut()
                .find(|(n, f, s, _)| *n == name && f == from && s == status)
            {
                Some(entry) => entry.3 += 1,
                None => found.push((name.clone(), from.to_owned(), status.to_owned(), 1)),
            }
            calls_in(call, &name, sequence, found);
        }
    }
}

pub(super) fn name_of(group: &Value) -> &str {
    word(group, "name")
}

pub(super) fn word<'a>(node: &'a Value, key: &str) -> &'a str {
    node.get(key).and_then(Value::as_str).unwrap_or_default()
}
