//! A value named many times cannot multiply into gigabytes: an item's arguments are bounded as
//! they are rendered; and many values cannot add up past the run's byte budget, however they
//! are held — in slots, at a parallel group's barrier, in calls in flight, at any depth
//! (docs/robustness.md, "Bounds").

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::MemorySource;
use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::NoSequences;
use seq_exec::engine::RunRequest;
use seq_exec::engine::{GroupStatus, ItemStatus, RunReport};
use seq_exec::{Caller, Engine, Limits, Reason};
use seq_syntax::ast::Sequence;
use seq_test_support::parsed;
use seq_test_support::{assert_detail, assert_refused};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Three `echo` items: a 1 KB value, then 10,000 copies of it (10 MB, within the bound), then
/// 1,000 copies of that (10 GB, which must be refused before it is built).
fn amplifier() -> Sequence {
    let item = |value: String, slot: &str| {
        format!(
            "{} ;",
            json!({"tool": "echo", "args": {"value": value}, "as": slot})
        )
    };
    let tools = [
        item("x".repeat(1000), "a"),
        item("$out.a".repeat(10_000), "b"),
        item("$out.b".repeat(1_000), "c"),
    ]
    .join(" ");
    let text = json!({"name": "amplify", "groups": [{
        "name": "g",
        "parallel": false,
        "out": {"a": "string", "b": "string", "c": "string"},
        "tools": tools,
    }]})
    .to_string();
    parsed(&text)
}

#[tokio::test]
async fn rendering_past_the_bound_fails_the_item_not_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::new(
        Arc::new(BuiltinHost::new(dir.path())),
        Arc::new(NoSequences),
    );
    let report = engine
        .run(&amplifier(), Map::new(), RunRequest::new(&Caller::new("t")))
        .await;
    let group = &report.groups[0];
    assert_eq!(group.status, GroupStatus::Failed, "{report:#?}");
    let statuses: Vec<ItemStatus> = group.items.iter().map(|item| item.status).collect();
    assert_eq!(
        statuses,
        [ItemStatus::Ok, ItemStatus::Ok, ItemStatus::Failed],
        "{report:#?}"
    );
    let error = group.items[2].error.as_ref().unwrap();
    assert_refused(
        error,
        Reason::Failed,
        "more than 16 MiB once their references are filled in",
    );
}

/// The size of the files the budget tests read: small, so that the tests are fast; the budget
/// is set in multiples of it.
const FILE: usize = 100_000;

/// A sequence of the groups `(fields, items)`; each item gets its `;`.
fn sequence(name: &str, groups: &[(Value, Vec<String>)]) -> Sequence {
    let groups: Vec<Value> = groups
        .iter()
        .map(|(fields, items)| {
            let mut group = fields.clone();
            group["tools"] = Value::String(items.iter().map(|i| format!("{i} ;")).collect());
            group
        })
        .collect();
    parsed(&json!({"name": name, "groups": groups}).to_string())
}

fn item(tool: &str, args: Value, slot: &str) -> String {
    json!({"tool": tool, "args": args, "as": slot}).to_string()
}

/// Runs `sequence` on the built-in tools over a root holding `big.txt` (`FILE` bytes), with a
/// run budget of `budget` bytes, and `stored` as the stored sequences.
async fn run_with_budget(sequence: &Sequence, stored: Vec<Sequence>, budget: usize) -> RunReport {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(FILE)).unwrap();
    let source = MemorySource::new();
    for stored in stored {
        source.put(stored);
    }
    let limits = Limits {
        max_run_bytes: budget,
        ..Limits::default()
    };
    Engine::new(Arc::new(BuiltinHost::new(dir.path())), source)
        .with_limits(limits)
        .run(sequence, Map::new(), RunRequest::new(&Caller::new("t")))
        .await
}

fn statuses(report: &RunReport, group: usize) -> Vec<ItemStatus> {
    report.groups[group]
        .items
        .iter()
        .map(|item| item.status)
        .collect()
}

/// The detail of item `index`'s error, which must be the budget's.
fn past_budget(report: &RunReport, group: usize, index: usize) -> String {
    let error = report.groups[group].items[index].error.as_ref().unwrap();
    assert_eq!(error.reason, Reason::Budget, "{error:?}");
    let detail = error.detail.clone().unwrap();
    assert!(detail.contains("in slots and in flight"), "{detail}");
    assert!(
        error
            .hint
            .as_deref()
            .unwrap()
            .contains("pass large data by file"),
        "{error:?}"
    );
    detail
}

/// The issue's 1,000 parallel reads of a 15 MiB file, shrunk: five parallel reads of a file,
/// with a budget that holds three. The results wait at the barrier, so they are all held at
/// once: the fourth and fifth to arrive fail, whichever they are; the process holds no more.
#[tokio::test]
async fn parallel_results_at_the_barrier_count_against_the_run_budget() {
    let read = |slot: &str| item("files_read", json!({"path": "big.txt"}), slot);
    let reads = (0..5).map(|i| read(&format!("r{i}"))).collect();
    let out: Map<String, Value> = (0..5).map(|i| (format!("r{i}"), json!("string"))).collect();
    let seq = sequence(
        "reads",
        &[(
            json!({"name": "g", "on_error": "continue", "out": out}),
            reads,
        )],
    );
    let report = run_with_budget(&seq, Vec::new(), 3 * FILE + FILE / 2).await;
    assert_eq!(report.groups[0].status, GroupStatus::Partial, "{report:#?}");
    let items = statuses(&report, 0);
    let ok = items.iter().filter(|s| **s == ItemStatus::Ok).count();
    assert_eq!(ok, 3, "{report:#?}");
    let failed: Vec<usize> = (0..5).filter(|&i| items[i] == ItemStatus::Failed).collect();
    assert_eq!(failed.len(), 2, "{report:#?}");
    for i in failed {
        let detail = past_budget(&report, 0, i);
        // Refused before reading (the read charges the file's size first), or, when another
        // read's result was between the tool and its slot, on keeping the result.
        // Three results (293 KiB), and the item runs in flight (2.25 KiB each, up to five).
        assert!(
            detail.starts_with("reading `big.txt`: the run holds ")
                || detail.starts_with("keeping the result of `files_read`: the run holds "),
            "{detail}"
        );
        let held = held_kib(&detail);
        assert!((293.0..=305.0).contains(&held), "{detail}");
        assert!(detail.ends_with("its budget of 341.8 KiB"), "{detail}");
        // What the run holds is three results and the arguments of the reads in flight.
        assert!(detail.contains(", and 97.7 KiB more"), "{detail}");
    }
    assert_eq!(report.groups[0].out.len(), 3, "{report:#?}");
}

/// The KiB a budget's detail says the run holds.
fn held_kib(detail: &str) -> f64 {
    let (_, after) = detail.split_once("the run holds ").unwrap();
    after.split_once(" KiB").unwrap().0.parse().unwrap()
}

/// A slot written again lets its old value go: five items each writing a `FILE`-byte value to
/// one slot fit a budget of three, while an `array` slot, which keeps them all, does not. The
/// arguments of the call in flight count too: the fourth `echo` cannot even fill its
/// arguments in beside the three values the array holds.
#[tokio::test]
async fn an_overwritten_slot_counts_once_and_an_array_slot_adds_up() {
    let echo = |slot: &str| item("echo", json!({"value": "y".repeat(FILE)}), slot);
    for (ty, expected) in [
        ("string", vec![ItemStatus::Ok; 5]),
        (
            "array",
            vec![
                ItemStatus::Ok,
                ItemStatus::Ok,
                ItemStatus::Ok,
                ItemStatus::Failed,
                ItemStatus::Skipped,
            ],
        ),
    ] {
        let seq = sequence(
            "overwrite",
            &[(
                json!({"name": "g", "parallel": false, "out": {"a": ty}}),
                (0..5).map(|_| echo("a")).collect(),
            )],
        );
        let report = run_with_budget(&seq, Vec::new(), 3 * FILE + FILE / 2).await;
        assert_eq!(statuses(&report, 0), expected, "{ty}: {report:#?}");
        if ty == "array" {
            let detail = past_budget(&report, 0, 3);
            assert!(
                detail.starts_with("filling in the item's arguments: the run holds 296."),
                "{detail}"
            );
        }
    }
}

/// One budget for the whole run: what a called group and a `#name` call hold is the run's,
/// counted once as it moves from the callee's slots to the caller's. Each call loads the file
/// once: two calls fit a budget of two and a half files, the third does not. Were a call's
/// value counted again in the caller's slot, the second call would fail already.
#[tokio::test]
async fn called_groups_and_sequences_share_the_run_budget_and_count_once() {
    let loader = |name: &str| {
        (
            json!({"name": name, "out": {"text": "string"}}),
            vec![item("files_read", json!({"path": "big.txt"}), "text")],
        )
    };
    let stored = sequence("loader", &[loader("load")]);
    let call = |target: &str, slot: &str| item("seq_call", json!({"target": target}), slot);
    let main = (
        json!({"name": "main", "parallel": false,
               "out": {"x": "object", "y": "object", "z": "object"}}),
        vec![call("load", "x"), call("#loader", "y"), call("load", "z")],
    );
    let seq = sequence("calls", &[loader("load"), main]);
    let report = run_with_budget(&seq, vec![stored], 2 * FILE + FILE / 2).await;
    // `load` runs only when called: the run's one group is `main`.
    assert_eq!(report.groups.len(), 1, "{report:#?}");
    assert_eq!(
        statuses(&report, 0),
        [ItemStatus::Ok, ItemStatus::Ok, ItemStatus::Failed],
        "{report:#?}"
    );
    let detail = past_budget(&report, 0, 2);
    // The third read is refused before it reads: the file's size is charged first.
    assert!(
        detail.contains("reading `big.txt`: the run holds"),
        "{detail}"
    );
}

/// Item runs count too: an `each` calling a group with an `each` of its own runs the product of
/// their elements, each holding its state while it runs. 40 × 40 elements side by side would
/// hold 3.2 MiB of item runs; against a budget of 1 MiB the run ends with reason `budget`
/// before most of them start. The inner elements wait on the paused clock, so that all that
/// start are in flight together.
#[tokio::test(start_paused = true)]
async fn elements_of_a_called_each_count_against_the_run_budget() {
    let forty: Vec<u32> = (0..40).collect();
    let inner = (
        json!({"name": "inner", "parallel": true}),
        vec![json!({"tool": "sleep", "each": forty, "args": {"ms": 10}}).to_string()],
    );
    let outer = (
        json!({"name": "main", "parallel": true, "on_error": "continue", "out": {"r": "array"}}),
        vec![
            json!({"tool": "seq_call", "each": forty, "args": {"target": "inner"}, "as": "r"})
                .to_string(),
        ],
    );
    let seq = sequence("fan", &[outer, inner]);
    let report = run_with_budget(&seq, vec![], 1024 * 1024).await;
    let item = &report.groups[0].items[0];
    let each = item.each.as_ref().unwrap();
    assert!(each.failed > 0 && each.ok < 40, "{each:?}");
    let error = item.error.as_ref().unwrap();
    assert_eq!(error.reason, Reason::Budget, "{error:?}");
    assert_detail(error, "would pass its budget of 1 MiB");
}
