//! `seqc graph`: the call graph as Graphviz DOT or as JSON. Sequences are clusters of their
//! groups; a `#name` call points at the callee's cluster; a call whose target is not in the
//! store points at a dashed node named after it. Node ids are positions (`s0`, `s0g1`), so any
//! name, CJK or quoted, is only ever a label.

use super::model::{Names, call_targets};
use seq_syntax::ast::Sequence;
use seq_syntax::names::CallTarget;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::fmt::Write;

/// One call item as the picture shows it.
struct CallEdge<'a> {
    from: String,
    /// The callee: a sequence, or a group of one; `None` when it is not in the batch.
    to: Option<(usize, Option<usize>)>,
    tool: &'a str,
    target: String,
}

fn sequence_id(seq: usize) -> String {
    format!("s{seq}")
}

fn group_id(seq: usize, group: usize) -> String {
    format!("s{seq}g{group}")
}

fn calls<'a>(sequences: &[&'a Sequence]) -> Vec<CallEdge<'a>> {
    let names = Names::new(sequences);
    let mut edges = Vec::new();
    for (seq, sequence) in sequences.iter().enumerate() {
        for (group, g) in sequence.groups.iter().enumerate() {
            let targets = g
                .items
                .iter()
                .flat_map(|item| call_targets(item).map(move |(target, _)| (item, target)));
            for (item, target) in targets {
                let to = names.resolve(seq, target);
                let target = target.to_string();
                edges.push(CallEdge {
                    from: group_id(seq, group),
                    to,
                    tool: &item.tool.value,
                    target,
                });
            }
        }
    }
    edges
}

/// A DOT double-quoted string.
fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for ch in text.chars() {
        match ch {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => {}
            other => quoted.push(other),
        }
    }
    quoted.push('"');
    quoted
}

/// The call graph in Graphviz DOT, deterministic for the same input.
pub fn to_dot(sequences: &[&Sequence]) -> String {
    let mut dot = String::from("digraph calls {\n  compound=true;\n  node [shape=box];\n");
    for (seq, sequence) in sequences.iter().enumerate() {
        let id = sequence_id(seq);
        let _ = writeln!(dot, "  subgraph cluster_{seq} {{");
        let _ = writeln!(
            dot,
            "    label={};",
            quote(&CallTarget::Sequence(&sequence.name.value).to_string())
        );
        // The cluster's entry: what a `#name` call runs.
        let _ = writeln!(
            dot,
            "    {id} [label={}, shape=oval];",
            quote(&CallTarget::Sequence(&sequence.name.value).to_string())
        );
        for (group, g) in sequence.groups.iter().enumerate() {
            let _ = writeln!(
                dot,
                "    {} [label={}];",
                group_id(seq, group),
                quote(&g.name.value)
            );
        }
        let _ = writeln!(dot, "  }}");
    }
    let edges = calls(sequences);
    let unknown: BTreeSet<&str> = edges
        .iter()
        .filter(|e| e.to.is_none())
        .map(|e| e.target.as_str())
        .collect();
    let unknown_ids: Vec<(&str, String)> = unknown
        .iter()
        .enumerate()
        .map(|(i, &name)| (name, format!("unknown{i}")))
        .collect();
    for (name, id) in &unknown_ids {
        let _ = writeln!(dot, "  {id} [label={}, style=dashed];", quote(name));
    }
    for edge in &edges {
        let (to, extra) = match edge.to {
            Some((callee, Some(group))) => (group_id(callee, group), String::new()),
            Some((callee, None)) => (sequence_id(callee), format!(", lhead=cluster_{callee}")),
            None => {
                let id = unknown_ids
                    .iter()
                    .find(|(name, _)| *name == edge.target)
                    .map(|(_, id)| id.clone());
                (id.unwrap_or_default(), ", style=dashed".to_owned())
            }
        };
        let _ = writeln!(
            dot,
            "  {} -> {to} [label={}{extra}];",
            edge.from,
            quote(edge.tool)
        );
    }
    dot.push_str("}\n");
    dot
}

/// The call graph as JSON: `sequences` (ids, names, groups) and `edges` (`from`, `to` — `null`
/// when the target is not in the batch —, `tool`, `target`).
pub fn to_json(sequences: &[&Sequence]) -> Value {
    let nodes: Vec<Value> = sequences
        .iter()
        .enumerate()
        .map(|(seq, sequence)| {
            let groups: Vec<Value> = sequence
                .groups
                .iter()
                .enumerate()
                .map(|(group, g)| json!({ "id": group_id(seq, group), "name": g.name.value }))
                .collect();
            json!({ "id": sequence_id(seq), "name": sequence.name.value, "groups": groups })
        })
        .collect();
    let edges: Vec<Value> = calls(sequences)
        .into_iter()
        .map(|e| {
            let to = e.to.map(|(callee, group)| match group {
                Some(group) => group_id(callee, group),
                None => sequence_id(callee),
            });
            json!({ "from": e.from, "to": to, "tool": e.tool, "target": e.target })
        })
        .collect();
    json!({ "sequences": nodes, "edges": edges })
}
