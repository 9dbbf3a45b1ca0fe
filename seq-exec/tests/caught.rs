//! Failures kept as data and retry pauses, on a scripted host and a paused clock, where a run
//! fixture cannot say it: cancellation is never caught by `error_as`, the pauses of
//! `retry_delay` and `retry_backoff` (read as virtual time between calls), and the attempts of
//! an item its group's timeout stops. What `error_as` catches, and that `missing` comes first,
//! are run fixtures (`tests/runs/caught_*`).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::{GroupStatus, ItemStatus, RunReport};
use seq_exec::{Reason, ToolError};
use serde_json::{Value, json};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Runs a group of `fields` whose one `item` calls a tool that hangs, cancels the run, and
/// asserts that `error_as` caught nothing.
async fn cancel_a_hung_call(fields: Value, item: &str) {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    host.add_simple("hang", hangs(dropped.clone()));
    let report = run_groups_cancelled(&host, vec![group(fields, &[item])]).await;
    assert_cancelled_and_dropped(&report, &dropped);
}

#[tokio::test(start_paused = true)]
async fn cancellation_is_never_caught() {
    cancel_a_hung_call(
        json!({"name": "g", "out": {"e": "object"}}),
        r#"{"tool":"hang","error_as":"e"}"#,
    )
    .await;
}

/// Runs the one group of `fields` calling `down`, a tool that fails every time: the report,
/// and the gaps in virtual time between the calls, in milliseconds.
async fn run_down(fields: Value) -> (RunReport, Vec<u128>) {
    let host = ScriptedHost::new();
    let times = Arc::new(Mutex::new(Vec::new()));
    let noted = Arc::clone(&times);
    host.add_simple(
        "down",
        Arc::new(move |_| {
            noted.lock().unwrap().push(Instant::now());
            Box::pin(async { Err(ToolError::new(Reason::Failed, "no")) })
        }),
    );
    let report = run_groups(&host, vec![group(fields, &[r#"{"tool":"down"}"#])]).await;
    let times = times.lock().unwrap();
    let gaps = times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect();
    (report, gaps)
}

#[tokio::test(start_paused = true)]
async fn retries_pause_by_delay_and_backoff() {
    let (report, gaps) = run_down(json!({"name": "g", "on_error": "retry", "retries": 3,
                                         "retry_delay": "100ms", "retry_backoff": 2}))
    .await;
    let item = &report.groups[0].items[0];
    assert_eq!((item.status, item.retries), (ItemStatus::Failed, 3));
    assert_eq!(gaps, vec![100, 200, 400]);
}

#[tokio::test(start_paused = true)]
async fn a_group_timeout_during_the_pauses_keeps_the_attempts() {
    let (report, gaps) = run_down(
        json!({"name": "g", "timeout": "250ms", "on_error": "retry", "retries": 3,
               "retry_delay": "100ms", "retry_backoff": 2}),
    )
    .await;
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Failed);
    assert_eq!(g.error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(g.duration_ms, 250);
    // Calls at 0 and 100 ms; the pause of 200 ms before the third passes the timeout.
    assert_eq!(gaps, vec![100]);
    let item = &g.items[0];
    assert_eq!(item.status, ItemStatus::Failed);
    assert_eq!(item.error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(item.retries, 2);
    let reasons: Vec<Reason> = item.failed_attempts.iter().map(|e| e.reason).collect();
    assert_eq!(reasons, vec![Reason::Failed, Reason::Failed]);
}

#[tokio::test(start_paused = true)]
async fn cancelling_an_each_item_catches_no_element() {
    cancel_a_hung_call(
        json!({"name": "g", "out": {"r": "array", "e": "array"}}),
        r#"{"tool":"hang","each":[1,2],"as":"r","error_as":"e"}"#,
    )
    .await;
}
