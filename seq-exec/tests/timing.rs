//! When things ran: every group, item, retried attempt and called group says `started_ms`
//! (from the run's start, one axis for all) beside `duration_ms`. The clock is paused, so the
//! figures are the tools' own sleeps.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::{AttemptTime, ItemStatus, RunReport};
use seq_exec::{Reason, ToolError};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Sleeps `ms`, then fails the first `times` calls and succeeds after.
fn slow_failures(times: u32, ms: u64) -> Behavior {
    Arc::new(move |call: Invocation| {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            if call.nth <= times {
                Err(ToolError::new(Reason::Failed, "not yet"))
            } else {
                Ok(Value::from("done"))
            }
        })
    })
}

/// Runs the one group `g` on a host whose tool `name` is `slow_failures(times, ms)`.
async fn run_beside_failures(name: &str, (times, ms): (u32, u64), g: Value) -> RunReport {
    let host = ScriptedHost::new();
    host.add_simple(name, slow_failures(times, ms));
    run_groups(&host, vec![g]).await
}

#[tokio::test(start_paused = true)]
async fn groups_and_items_stand_on_one_axis() {
    let host = ScriptedHost::new();
    let report = run_groups(
        &host,
        vec![
            group(
                json!({"name": "steps", "parallel": false}),
                &[
                    r#"{"tool":"work","args":{"id":"a","ms":10}}"#,
                    r#"{"tool":"work","args":{"id":"b","ms":20}}"#,
                ],
            ),
            group(
                json!({"name": "fan"}),
                &[
                    r#"{"tool":"work","args":{"id":"c","ms":30}}"#,
                    r#"{"tool":"work","args":{"id":"d","ms":5}}"#,
                ],
            ),
        ],
    )
    .await;
    assert!(report.ok, "{report:#?}");
    let times = |g: usize| -> Vec<(u64, u64)> {
        report.groups[g]
            .items
            .iter()
            .map(|i| (i.started_ms, i.duration_ms))
            .collect()
    };
    let steps = &report.groups[0];
    assert_eq!((steps.started_ms, steps.duration_ms), (0, 30));
    assert_eq!(times(0), [(0, 10), (10, 20)]);
    let fan = &report.groups[1];
    assert_eq!((fan.started_ms, fan.duration_ms), (30, 30));
    // Side by side: both started with the group.
    assert_eq!(times(1), [(30, 30), (30, 5)]);
    // One attempt each: its time is the item's.
    assert!(
        report
            .groups
            .iter()
            .flat_map(|g| &g.items)
            .all(|i| i.attempts.is_empty())
    );
}

#[tokio::test(start_paused = true)]
async fn each_attempt_of_a_retried_item_says_when_it_ran() {
    let report = run_beside_failures(
        "flaky",
        (2, 15),
        group(
            json!({"name": "settle", "on_error": "retry", "retries": 3}),
            &[r#"{"tool":"flaky","args":{}}"#],
        ),
    )
    .await;
    let item = &report.groups[0].items[0];
    assert_eq!(item.status, ItemStatus::Ok);
    assert_eq!(item.failed_attempts.len(), 2);
    let at = |started_ms, duration_ms| AttemptTime {
        started_ms,
        duration_ms,
    };
    assert_eq!(item.attempts, [at(0, 15), at(15, 15), at(30, 15)]);
    assert_eq!((item.started_ms, item.duration_ms), (0, 45));
}

#[tokio::test(start_paused = true)]
async fn called_groups_are_on_the_callers_axis() {
    let host = ScriptedHost::new();
    let only = r#"{"tool":"work","args":{"id":"lib","ms":7}}"#;
    let lib = file("lib", vec![group(json!({"name": "only"}), &[only])]);
    let main = file(
        "main",
        vec![
            group(
                json!({"name": "first"}),
                &[r#"{"tool":"work","args":{"id":"x","ms":12}}"#],
            ),
            group(
                json!({"name": "call", "parallel": false}),
                &[r##"{"tool":"seq_call","args":{"target":"#lib"}}"##],
            ),
        ],
    );
    let report = run_last(&host, &[lib, main]).await;
    assert!(report.ok, "{report:#?}");
    let call = &report.groups[1].items[0];
    assert_eq!((call.started_ms, call.duration_ms), (12, 7));
    let called = &call.called[0];
    assert_eq!((called.started_ms, called.duration_ms), (12, 7));
    assert_eq!(called.items[0].started_ms, 12);
    // Without its timings, the report is what every run of it says.
    let untimed = report.clone().untimed();
    assert_eq!(untimed.groups[1].items[0].called[0].started_ms, 0);
    assert_eq!(untimed.groups[1].started_ms, 0);
}

#[tokio::test(start_paused = true)]
async fn items_never_started_stand_where_their_group_gave_up() {
    let report = run_beside_failures(
        "boom",
        (9, 8),
        group(
            json!({"name": "g", "parallel": false}),
            &[
                r#"{"tool":"work","args":{"id":"a","ms":4}}"#,
                r#"{"tool":"boom","args":{}}"#,
                r#"{"tool":"work","args":{"id":"c","ms":4}}"#,
            ],
        ),
    )
    .await;
    let items = &report.groups[0].items;
    assert_eq!(items[1].status, ItemStatus::Failed);
    assert_eq!((items[1].started_ms, items[1].duration_ms), (4, 8));
    assert_eq!(items[2].status, ItemStatus::Skipped);
    assert_eq!((items[2].started_ms, items[2].duration_ms), (12, 0));
}
