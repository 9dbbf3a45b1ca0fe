//! What a call item's report says of the groups it called: their items (status, parallel,
//! duration, retried attempts), nested down to `MAX_REPORTED_CALL_DEPTH`, and counted beyond.
//! The clock is paused, so durations are the tools' own sleeps.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::Reason;
use seq_exec::engine::MAX_REPORTED_CALL_DEPTH;
use serde_json::{Map, json};

#[tokio::test(start_paused = true)]
async fn a_call_item_carries_the_reports_of_the_groups_it_ran() {
    let host = ScriptedHost::new();
    host.add_simple("flaky", fails(2, Reason::Failed));
    let lib = file(
        "lib",
        vec![group(
            json!({"name": "only", "out": {"v": "any"}}),
            &[r#"{"tool":"work","args":{"id":"lib","ms":5},"as":"v"}"#],
        )],
    );
    let main = file(
        "main",
        vec![
            group(
                json!({"name": "probe", "in": {"host": "string"}, "when": "$args.host != \"skip\"",
                       "out": {"up": "string", "load": "string"}}),
                &[
                    r#"{"tool":"work","args":{"id":"up $args.host","ms":10},"as":"up"}"#,
                    r#"{"tool":"work","args":{"id":"load $args.host","ms":20},"as":"load"}"#,
                ],
            ),
            group(
                json!({"name": "settle", "on_error": "retry", "retries": 3, "out": {"r": "any"}}),
                &[r#"{"tool":"flaky","args":{},"as":"r"}"#],
            ),
            group(
                json!({"name": "all", "parallel": false, "out": {"a": "object", "b": "object", "c": "object", "d": "object"}}),
                &[
                    r#"{"tool":"seq_call","args":{"target":"probe","args":{"host":"h1"}},"as":"a"}"#,
                    r#"{"tool":"seq_call","args":{"target":"probe","args":{"host":"skip"}},"as":"b"}"#,
                    r#"{"tool":"seq_when_call","args":{"target":"settle","when":"$out.a != null"},"as":"c"}"#,
                    r##"{"tool":"seq_call","args":{"target":"#lib"},"as":"d"}"##,
                ],
            ),
        ],
    );
    let report = run_last(&host, &[lib, main]).await;
    assert!(report.ok, "{report:#?}");
    insta::assert_json_snapshot!("called_groups", report.groups);
}

#[tokio::test(start_paused = true)]
async fn called_groups_past_the_depth_bound_are_counted_not_reported() {
    let host = ScriptedHost::new();
    // g0 calls g1, which calls g2, ... : g0 is the run's group, g_n is called at depth n.
    let last = MAX_REPORTED_CALL_DEPTH + 2;
    let groups: Vec<_> = (0..=last)
        .map(|i| {
            let item = if i == last {
                r#"{"tool":"work","args":{"id":"leaf"}}"#.to_owned()
            } else {
                format!(r#"{{"tool":"seq_call","args":{{"target":"g{}"}}}}"#, i + 1)
            };
            group(json!({"name": format!("g{i}")}), &[&item])
        })
        .collect();
    let seq = one(&host, file("chain", groups));
    let report = run_on(&host, &MemorySource::new(), &seq, Map::new()).await;
    assert!(report.ok, "{report:#?}");
    insta::assert_json_snapshot!("called_depth_bound", report.groups);
}
