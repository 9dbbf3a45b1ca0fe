//! Faults of tools, contained to their item: a tool that panics, hangs past its
//! timeout, returns enormous output, or returns a value of the wrong shape fails that item with
//! a reason, and the rest of the run behaves as its group's `on_error` says. Also the run-time
//! bounds on nesting: a long chain of calls fails with `depth` instead of overflowing the stack,
//! a cycle with `cycle`.
//!
//! Every test runs on a paused clock and on the test harness's thread (a 2 MiB stack, as small
//! as a tokio worker's).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::RunRequest;
use seq_exec::engine::{GroupReport, GroupStatus, ItemStatus, RunReport};
use seq_exec::{BoxFuture, Limits, Reason, ToolError};
use seq_test_support::parsed;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Panics inside the call's future, the first `times` calls; then returns `"ok"`.
fn panics(times: u32) -> Behavior {
    Arc::new(move |call: Invocation| {
        Box::pin(async move {
            assert!(call.nth > times, "the tool broke on call {}", call.nth);
            Ok(json!("ok"))
        }) as BoxFuture<'static, Result<Value, ToolError>>
    })
}

/// Panics before it even returns a future.
fn panics_at_once() -> Behavior {
    Arc::new(|_call: Invocation| panic!("the tool broke before it started"))
}

/// Runs the sequence `s` of the one group `g` under `limits`.
async fn run_limited(host: &Arc<ScriptedHost>, limits: Limits, g: Value) -> RunReport {
    let source = MemorySource::new();
    let seq = one_s(host, vec![g]);
    engine_with(host, &source, limits)
        .run(&seq, Map::new(), RunRequest::new(&alice()))
        .await
}

/// The run's first group, which must have ended `partial`.
#[track_caller]
fn partial(report: &RunReport) -> &GroupReport {
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Partial, "{report:#?}");
    g
}

fn item_reason(report: &RunReport, group: usize, item: usize) -> Option<Reason> {
    report.groups[group].items[item]
        .error
        .as_ref()
        .map(|e| e.reason)
}

#[tokio::test(start_paused = true)]
async fn a_panicking_tool_fails_its_item_and_the_group_goes_on_under_continue() {
    let host = ScriptedHost::new();
    host.add_simple("boom", panics(u32::MAX));
    host.add_simple("boom_now", panics_at_once());
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "on_error": "continue", "out": {"r": "string"}}),
            &[
                r#"{"tool":"boom","args":{}}"#,
                r#"{"tool":"boom_now","args":{}}"#,
                r#"{"tool":"work","args":{"id":"after","value":"fine"},"as":"r"}"#,
            ],
        )],
    )
    .await;
    let g = partial(&report);
    assert!(report.ok);
    for i in [0, 1] {
        assert_eq!(g.items[i].status, ItemStatus::Failed);
        assert_eq!(item_reason(&report, 0, i), Some(Reason::Failed));
    }
    assert_eq!(g.items[2].status, ItemStatus::Ok);
    assert_eq!(g.out.get("r"), Some(&json!("fine")));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_tool_is_retried_and_aborts_its_group_when_retries_run_out() {
    let host = ScriptedHost::new();
    host.add_simple("flaky", panics(2));
    host.add_simple("broken", panics(u32::MAX));
    let report = run_groups(
        &host,
        vec![
            group(
                json!({"name": "first", "parallel": false, "on_error": "retry", "retries": 2}),
                &[r#"{"tool":"flaky","args":{}}"#],
            ),
            group(
                json!({"name": "second", "parallel": false, "on_error": "abort"}),
                &[
                    r#"{"tool":"broken","args":{}}"#,
                    r#"{"tool":"work","args":{"id":"never"}}"#,
                ],
            ),
            group(
                json!({"name": "third"}),
                &[r#"{"tool":"work","args":{"id":"not reached"}}"#],
            ),
        ],
    )
    .await;
    assert!(!report.ok);
    assert_eq!(report.groups[0].status, GroupStatus::Ran);
    assert_eq!(report.groups[0].items[0].retries, 2);
    let second = &report.groups[1];
    assert_eq!(second.status, GroupStatus::Failed);
    assert_eq!(second.error.as_ref().unwrap().reason, Reason::Failed);
    assert_eq!(second.items[1].status, ItemStatus::Skipped);
    assert_eq!(
        report.groups.len(),
        2,
        "the run stops after the failed group"
    );
    assert_eq!(host.calls("work"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_hangs_is_cut_off_by_the_per_tool_timeout_and_dropped() {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    host.add_simple("stuck", hangs(dropped.clone()));
    let limits = Limits {
        tool_timeout: Duration::from_secs(5),
        ..Limits::default()
    };
    let report = run_limited(
        &host,
        limits,
        group(
            json!({"name": "g", "parallel": false, "on_error": "continue"}),
            &[
                r#"{"tool":"stuck","args":{}}"#,
                r#"{"tool":"work","args":{"id":"after"}}"#,
            ],
        ),
    )
    .await;
    let g = partial(&report);
    assert_eq!(item_reason(&report, 0, 0), Some(Reason::Timeout));
    assert!(dropped.load(Ordering::SeqCst), "the hung call was dropped");
    assert_eq!(g.items[1].status, ItemStatus::Ok);
    assert_eq!(g.duration_ms, 5_000);
}

#[tokio::test(start_paused = true)]
async fn enormous_output_fails_its_item_and_output_at_the_bound_passes() {
    let host = ScriptedHost::new();
    let bound = 1024;
    // Compact JSON of a string: its characters and two quotes.
    host.add_simple("fits", returns(json!("x".repeat(bound - 2))));
    host.add_simple("floods", returns(json!("x".repeat(bound - 1))));
    host.add_simple("wide", returns(json!(vec![0; bound])));
    let limits = Limits {
        max_result_bytes: bound,
        ..Limits::default()
    };
    let report = run_limited(
        &host,
        limits,
        group(
            json!({"name": "g", "on_error": "continue", "out": {"a": "string", "b": "any", "c": "any"}}),
            &[
                r#"{"tool":"fits","args":{},"as":"a"}"#,
                r#"{"tool":"floods","args":{},"as":"b"}"#,
                r#"{"tool":"wide","args":{},"as":"c"}"#,
            ],
        ),
    )
    .await;
    let g = partial(&report);
    assert_eq!(g.items[0].status, ItemStatus::Ok);
    assert_eq!(
        g.out.get("a").and_then(Value::as_str).map(str::len),
        Some(bound - 2)
    );
    for i in [1, 2] {
        assert_eq!(item_reason(&report, 0, i), Some(Reason::Failed));
    }
    assert!(!g.out.contains_key("b") && !g.out.contains_key("c"));
}

#[tokio::test(start_paused = true)]
async fn the_default_output_bound_is_sixteen_mebibytes() {
    assert_eq!(Limits::default().max_result_bytes, 16 * 1024 * 1024);
    let host = ScriptedHost::new();
    host.add_simple("floods", returns(json!("x".repeat(16 * 1024 * 1024))));
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g"}),
            &[r#"{"tool":"floods","args":{}}"#],
        )],
    )
    .await;
    assert!(!report.ok);
    assert_eq!(item_reason(&report, 0, 0), Some(Reason::Failed));
}

#[tokio::test(start_paused = true)]
async fn values_of_the_wrong_shape_fail_where_they_are_used() {
    let host = ScriptedHost::new();
    // A host that answers with text that merely looks like JSON: it stays a string.
    host.add_simple("text", returns(json!("{\"status\": \"ok\"")));
    // Values shaped like failures are data: only a host's `Err` is a failure.
    host.add_simple(
        "legacy_error",
        returns(json!({"reason": "failed", "detail": "disk full"})),
    );
    host.add_simple("legacy_gone", returns(json!({"reason": "not_found"})));
    // An ordinary result that merely has a `reason` key is a success.
    host.add_simple("http", returns(json!({"reason": "OK", "status": 200})));
    let report = run_groups(
        &host,
        vec![group(
            json!({
                "name": "g", "parallel": false, "on_error": "continue", "missing": "skip",
                "out": {"doc": "object", "raw": "any", "status": "any", "http": "object"}
            }),
            &[
                r#"{"tool":"text","args":{},"as":"doc"}"#,
                r#"{"tool":"text","args":{},"as":"raw"}"#,
                r#"{"tool":"work","args":{"id":"reads","value":$out.raw.status},"as":"status"}"#,
                r#"{"tool":"legacy_error","args":{}}"#,
                r#"{"tool":"legacy_gone","args":{}}"#,
                r#"{"tool":"http","args":{},"as":"http"}"#,
            ],
        )],
    )
    .await;
    let g = partial(&report);
    // Declared `object`, got a string: a type failure of that item.
    assert_eq!(item_reason(&report, 0, 0), Some(Reason::Type));
    assert_eq!(g.items[1].status, ItemStatus::Ok);
    assert_eq!(g.out.get("raw"), Some(&json!("{\"status\": \"ok\"")));
    // A field of a string: the path does not fit the value, a `type` failure of the reader.
    assert_eq!(item_reason(&report, 0, 2), Some(Reason::Type));
    assert_eq!(g.items[3].status, ItemStatus::Ok);
    assert_eq!(g.items[4].status, ItemStatus::Ok);
    assert_eq!(g.items[5].status, ItemStatus::Ok);
    assert_eq!(
        g.out.get("http"),
        Some(&json!({"reason": "OK", "status": 200}))
    );
}

/// `n` groups, each calling the next; the last echoes.
fn chain(n: usize) -> String {
    let groups = (0..n)
        .map(|i| {
            let item = if i + 1 < n {
                format!(r#"{{"tool":"seq_call","args":{{"target":"g{}"}}}}"#, i + 1)
            } else {
                r#"{"tool":"work","args":{"id":"bottom"}}"#.to_owned()
            };
            group(
                json!({"name": format!("g{i}"), "parallel": false}),
                &[&item],
            )
        })
        .collect();
    file("chain", groups)
}

#[tokio::test(start_paused = true)]
async fn a_long_chain_of_group_calls_fails_with_depth_instead_of_overflowing_the_stack() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let bound = Limits::default().max_nested_groups as usize;
    let fits = one(&host, chain(bound));
    let report = engine(&host, &source)
        .call(Some(&fits), "g0", Map::new(), RunRequest::new(&alice()))
        .await;
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(host.calls("work"), 1);

    for n in [bound + 1, 1_000] {
        // The checker refuses the chain (E0606) at the same bound; the engine, handed it
        // unchecked (storage changed since), still stops it.
        let text = chain(n);
        let check = seq_check::check(
            &[seq_check::Source::new("chain.json", text.clone())],
            &host.catalog(),
        );
        let codes: Vec<&str> = check.files[0]
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        assert_eq!(codes, ["E0606"], "{n} groups");
        let deep = parsed(&text);
        let report = engine(&host, &source)
            .call(Some(&deep), "g0", Map::new(), RunRequest::new(&alice()))
            .await;
        assert_eq!(report.unwrap_err().reason, Reason::Depth);
        let run = run_on(&host, &source, &deep, Map::new()).await;
        assert!(!run.ok);
        assert_eq!(run.groups[0].error.as_ref().unwrap().reason, Reason::Depth);
    }
    assert_eq!(
        host.calls("work"),
        1,
        "the bottom of a chain too deep never runs"
    );
}

/// `n` groups of sequence `name` (group names prefixed `prefix`), each calling the next; the
/// last makes `last`.
fn chain_of(name: &str, prefix: &str, n: usize, last: &str) -> String {
    let groups = (0..n)
        .map(|i| {
            let item = if i + 1 < n {
                format!(
                    r#"{{"tool":"seq_call","args":{{"target":"{prefix}{}"}}}}"#,
                    i + 1
                )
            } else {
                last.to_owned()
            };
            group(json!({"name": format!("{prefix}{i}")}), &[&item])
        })
        .collect();
    file(name, groups)
}

#[tokio::test(start_paused = true)]
async fn the_checker_and_the_engine_count_groups_nested_across_sequences_alike() {
    let bound = Limits::default().max_nested_groups as usize;
    let call_b = r##"{"tool":"seq_call","args":{"target":"#b"}}"##;
    let bottom = r#"{"tool":"work","args":{"id":"bottom"}}"#;
    // 20 groups in `a`, the last calling `#b`, whose first group starts a chain: `b`'s groups
    // are entered at 21, 22, ... so `b` may hold `bound - 20` of them, and no more.
    for (in_b, fits) in [(bound - 20, true), (bound - 19, false)] {
        let host = ScriptedHost::new();
        let source = MemorySource::new();
        let texts = [
            chain_of("a", "g", 20, call_b),
            chain_of("b", "h", in_b, bottom),
        ];
        let sources: Vec<_> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| seq_check::Source::new(format!("f{i}.json"), t.clone()))
            .collect();
        let check = seq_check::check(&sources, &host.catalog());
        let codes: Vec<&str> = check
            .files
            .iter()
            .flat_map(|f| &f.diagnostics)
            .map(|d| d.code.as_str())
            .collect();
        assert_eq!(codes.is_empty(), fits, "{in_b} groups in b: {codes:?}");
        if !fits {
            assert_eq!(codes, ["E0606"]);
        }
        let a = parsed(&texts[0]);
        source.put(parsed(&texts[1]));
        let report = engine(&host, &source)
            .call(Some(&a), "g0", Map::new(), RunRequest::new(&alice()))
            .await;
        match report {
            Ok(_) => assert!(fits, "{in_b} groups in b ran"),
            Err(error) => {
                assert!(!fits, "{in_b} groups in b: {error:?}");
                assert_eq!(error.reason, Reason::Depth);
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_cycle_of_group_calls_the_checker_never_saw_fails_with_cycle() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    // Parsed only: the checker would refuse it (E0601), as a stored sequence changed since.
    // `start` is the entry group; `a` and `b` call each other once it calls `a`.
    let cyclic = parsed(&file(
        "loop",
        vec![
            group(
                json!({"name": "start"}),
                &[r#"{"tool":"seq_call","args":{"target":"a"}}"#],
            ),
            group(
                json!({"name": "a"}),
                &[r#"{"tool":"seq_call","args":{"target":"b"}}"#],
            ),
            group(
                json!({"name": "b"}),
                &[r#"{"tool":"seq_call","args":{"target":"a"}}"#],
            ),
        ],
    ));
    let report = run_on(&host, &source, &cyclic, Map::new()).await;
    assert!(!report.ok);
    assert_eq!(
        report.groups[0].error.as_ref().unwrap().reason,
        Reason::Cycle
    );
}

#[tokio::test(start_paused = true)]
async fn errors_that_list_groups_or_inputs_stay_short_in_a_big_sequence() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let groups = (0..5_000)
        .map(|i| {
            group(
                json!({"name": format!("group_number_{i}"), "in": {format!("input_number_{i}"): "string"}}),
                &[r#"{"tool":"work","args":{"id":"x"}}"#],
            )
        })
        .collect();
    let text = file("big", groups);
    let big = parsed(&text);
    source.put(parsed(&text));
    let unknown_group = engine(&host, &source)
        .call(Some(&big), "nope", Map::new(), RunRequest::new(&alice()))
        .await
        .unwrap_err();
    let hint = unknown_group.hint.unwrap_or_default();
    assert!(hint.contains("`group_number_0`"), "{hint}");
    assert!(hint.ends_with("more"), "{hint}");
    assert!(hint.len() < 2_000, "{} bytes", hint.len());

    let undeclared = engine(&host, &source)
        .call(
            Some(&big),
            "#big",
            args(json!({"nope": "x"})),
            RunRequest::new(&alice()),
        )
        .await
        .unwrap_err();
    let hint = undeclared.hint.unwrap_or_default();
    assert!(hint.contains("`input_number_0`"), "{hint}");
    assert!(hint.len() < 2_000, "{} bytes", hint.len());
}
