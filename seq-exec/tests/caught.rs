//! Failures kept as data and retry pauses, on a scripted host and a paused clock: `error_as`
//! (a caught item leaves its group `ran`; cancellation is never caught; `missing` comes first),
//! the pauses of `retry_delay` and `retry_backoff` (read as virtual time between calls), and
//! the attempts of an item its group's timeout stops.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::{GroupStatus, ItemStatus};
use seq_exec::{Reason, ToolError};
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn a_caught_failure_is_data_and_the_group_ran() {
    let host = ScriptedHost::new();
    host.add_simple("broken", fails(100, Reason::Failed));
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "parallel": false,
                       "out": {"r": "any", "e": "object", "ok": "any", "unused": "object", "next": "any"}}),
            &[
                r#"{"tool":"broken","as":"r","error_as":"e"}"#,
                r#"{"tool":"work","args":{"id":"fine"},"as":"ok","error_as":"unused"}"#,
                r#"{"tool":"work","args":{"id":"after","value":$out.e.reason},"as":"next"}"#,
            ],
        )],
    )
    .await;
    assert!(report.ok, "{report:#?}");
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Ran);
    assert_eq!(g.error, None);
    assert_eq!(g.items[0].status, ItemStatus::Caught);
    assert_eq!(g.items[0].error.as_ref().unwrap().reason, Reason::Failed);
    assert_eq!(
        g.out["e"],
        json!({"reason": "failed", "detail": "attempt 1 failed", "field": null, "hint": null})
    );
    // `as` stays unset on a failure, `error_as` on a success.
    assert!(!g.out.contains_key("r"));
    assert_eq!(g.items[1].status, ItemStatus::Ok);
    assert_eq!(g.out["ok"], json!("fine"));
    assert!(!g.out.contains_key("unused"));
    assert_eq!(
        g.out["next"],
        json!("failed"),
        "a later item reads the error"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_come_before_the_catch_and_missing_before_error_as() {
    let host = ScriptedHost::new();
    host.add_simple("flaky", fails(100, Reason::Failed));
    let report = run_groups(
        &host,
        vec![
            group(
                json!({"name": "retried", "on_error": "retry", "retries": 2,
                           "out": {"e": "object"}}),
                &[r#"{"tool":"flaky","error_as":"e"}"#],
            ),
            group(
                json!({"name": "skipped", "missing": "skip", "out": {"e": "object"}}),
                &[r#"{"tool":"absent","error_as":"e"}"#],
            ),
            group(
                json!({"name": "failing", "out": {"e": "object"}}),
                &[r#"{"tool":"absent","error_as":"e"}"#],
            ),
        ],
    )
    .await;
    assert!(report.ok, "{report:#?}");
    let retried = &report.groups[0].items[0];
    assert_eq!((retried.status, retried.retries), (ItemStatus::Caught, 2));
    assert_eq!(retried.failed_attempts.len(), 2);
    assert_eq!(host.calls("flaky"), 3);
    assert_eq!(
        report.groups[0].out["e"]["detail"],
        json!("attempt 3 failed")
    );
    // `missing: skip` applies first: nothing is caught, nothing written.
    assert_eq!(report.groups[1].items[0].status, ItemStatus::Skipped);
    assert!(report.groups[1].out.is_empty());
    // `missing: fail` fails the item, and `error_as` catches that.
    assert_eq!(report.groups[2].items[0].status, ItemStatus::Caught);
    assert_eq!(report.groups[2].out["e"]["reason"], json!("not_found"));
    assert_eq!(report.groups[2].status, GroupStatus::Ran);
}

#[tokio::test(start_paused = true)]
async fn cancellation_is_never_caught() {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    host.add_simple("hang", hangs(dropped.clone()));
    let report = run_groups_cancelled(
        &host,
        vec![group(
            json!({"name": "g", "out": {"e": "object"}}),
            &[r#"{"tool":"hang","error_as":"e"}"#],
        )],
    )
    .await;
    assert!(report.cancelled && !report.ok);
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Cancelled);
    assert_eq!(g.items[0].status, ItemStatus::Cancelled);
    assert!(g.out.is_empty());
    assert!(dropped.load(Ordering::SeqCst));
}

/// A tool that fails every time and notes the (virtual) time of each call.
fn failing_at(times: &Arc<Mutex<Vec<Instant>>>) -> Behavior {
    let times = times.clone();
    Arc::new(move |_| {
        times.lock().unwrap().push(Instant::now());
        Box::pin(async { Err(ToolError::new(Reason::Failed, "no")) })
    })
}

fn gaps(times: &Mutex<Vec<Instant>>) -> Vec<u128> {
    let times = times.lock().unwrap();
    times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect()
}

/// A path not there yet is retried: retrying is how a sequence waits for a file another process
/// makes. A tool that is not there at all is not.
#[tokio::test(start_paused = true)]
async fn an_absent_path_is_retried_and_a_missing_tool_is_not() {
    let host = ScriptedHost::new();
    host.add_simple("appears", fails(2, Reason::Absent));
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![
                group(
                    json!({"name": "waits", "on_error": "retry", "retries": 3,
                           "retry_delay": "1s", "out": {"r": "any"}}),
                    &[r#"{"tool":"appears","as":"r"}"#],
                ),
                group(
                    json!({"name": "missing", "on_error": "retry", "retries": 3,
                           "out": {"e": "object"}}),
                    &[r#"{"tool":"absent","error_as":"e"}"#],
                ),
            ],
        ),
    );
    let report = run_on(&host, &source, &seq, Map::new()).await;
    assert!(report.ok, "{report:#?}");
    let waited = &report.groups[0].items[0];
    assert_eq!((waited.status, waited.retries), (ItemStatus::Ok, 2));
    assert_eq!(host.calls("appears"), 3);
    assert_eq!(report.groups[0].out["r"], json!("ok"));
    let missing = &report.groups[1].items[0];
    assert_eq!((missing.status, missing.retries), (ItemStatus::Caught, 0));
    assert_eq!(report.groups[1].out["e"]["reason"], json!("not_found"));
}

#[tokio::test(start_paused = true)]
async fn retries_pause_by_delay_and_backoff() {
    let host = ScriptedHost::new();
    let times = Arc::new(Mutex::new(Vec::new()));
    host.add_simple("down", failing_at(&times));
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "on_error": "retry", "retries": 3,
                       "retry_delay": "100ms", "retry_backoff": 2}),
            &[r#"{"tool":"down"}"#],
        )],
    )
    .await;
    let item = &report.groups[0].items[0];
    assert_eq!((item.status, item.retries), (ItemStatus::Failed, 3));
    assert_eq!(gaps(&times), vec![100, 200, 400]);
}

#[tokio::test(start_paused = true)]
async fn a_group_timeout_during_the_pauses_keeps_the_attempts() {
    let host = ScriptedHost::new();
    let times = Arc::new(Mutex::new(Vec::new()));
    host.add_simple("down", failing_at(&times));
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "timeout": "250ms", "on_error": "retry", "retries": 3,
                       "retry_delay": "100ms", "retry_backoff": 2}),
            &[r#"{"tool":"down"}"#],
        )],
    )
    .await;
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Failed);
    assert_eq!(g.error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(g.duration_ms, 250);
    // Calls at 0 and 100 ms; the pause of 200 ms before the third passes the timeout.
    assert_eq!(gaps(&times), vec![100]);
    let item = &g.items[0];
    assert_eq!(item.status, ItemStatus::Failed);
    assert_eq!(item.error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(item.retries, 2);
    let reasons: Vec<Reason> = item.failed_attempts.iter().map(|e| e.reason).collect();
    assert_eq!(reasons, vec![Reason::Failed, Reason::Failed]);
}

#[tokio::test(start_paused = true)]
async fn an_any_slot_holds_the_error() {
    let host = ScriptedHost::new();
    host.add_simple("broken", fails(1, Reason::Failed));
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "out": {"e": "any"}}),
            &[r#"{"tool":"broken","error_as":"e"}"#],
        )],
    )
    .await;
    assert_eq!(report.groups[0].items[0].status, ItemStatus::Caught);
    assert!(matches!(report.out["g"]["e"], Value::Object(_)));
}

#[tokio::test(start_paused = true)]
async fn cancelling_an_each_item_catches_no_element() {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    host.add_simple("hang", hangs(dropped.clone()));
    let report = run_groups_cancelled(
        &host,
        vec![group(
            json!({"name": "g", "out": {"r": "array", "e": "array"}}),
            &[r#"{"tool":"hang","each":[1,2],"as":"r","error_as":"e"}"#],
        )],
    )
    .await;
    assert!(report.cancelled && !report.ok);
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Cancelled);
    assert_eq!(g.items[0].status, ItemStatus::Cancelled);
    assert!(g.out.is_empty(), "{:?}", g.out);
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn missing_comes_before_an_each_items_error_as() {
    let host = ScriptedHost::new();
    let report = run_groups(
        &host,
        vec![
            group(
                json!({"name": "skipped", "missing": "skip", "out": {"e": "array"}}),
                &[r#"{"tool":"absent","each":[1,2],"error_as":"e"}"#],
            ),
            group(
                json!({"name": "failing", "out": {"e": "array"}}),
                &[r#"{"tool":"absent","each":[1,2],"error_as":"e"}"#],
            ),
        ],
    )
    .await;
    assert!(report.ok, "{report:#?}");
    // `missing: skip` applies first: nothing is caught, nothing written.
    assert_eq!(report.groups[0].items[0].status, ItemStatus::Ok);
    assert!(report.groups[0].out.is_empty());
    // `missing: fail` fails each element, and `error_as` catches each.
    assert_eq!(report.groups[1].items[0].status, ItemStatus::Caught);
    assert_eq!(report.groups[1].out["e"][0]["reason"], json!("not_found"));
    assert_eq!(report.groups[1].out["e"][1]["reason"], json!("not_found"));
    assert_eq!(report.groups[1].status, GroupStatus::Ran);
}
