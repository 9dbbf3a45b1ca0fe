//! The engine on a scripted host, where a run fixture (tests/runs.rs) cannot say it: a tool
//! whose definition changes between the check and the run, and the observer's callbacks.
//! Concurrency, order, slots, timeouts, retries, `on_error`, `missing`, run arguments and the
//! dispatch path are run fixtures, in `tests/runs/`. Every test runs on a paused clock: sleeps
//! and timeouts advance virtual time, and order is read from the host's event log, never from
//! wall time.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::Caller;
use seq_exec::engine::GroupStatus;
use seq_exec::engine::RunRequest;
use serde_json::{Map, json};
use std::sync::Arc;

#[tokio::test(start_paused = true)]
async fn a_tool_that_became_unsafe_never_runs_beside_another() {
    let host = ScriptedHost::new();
    let params = json!({"type": "object", "properties": {"id": {"type": "string"}, "ms": {"type": "integer"}}});
    host.add(def("writer", params.clone(), true), sleeper());
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "g"}),
            &[
                r#"{"tool":"writer","args":{"id":"w1","ms":10}}"#,
                r#"{"tool":"writer","args":{"id":"w2","ms":10}}"#,
                r#"{"tool":"work","args":{"id":"other","ms":5}}"#,
            ],
        )],
    );
    // Replaced under the same name by an implementation that is not parallel-safe.
    host.add(def("writer", params, false), sleeper());
    let report = run_on(&host, &source, &seq, Map::new()).await;
    assert!(report.ok);
    assert!(
        !host.overlapped("w1", "w2") && !host.overlapped("w1", "other"),
        "{:?}",
        host.events()
    );
}

#[tokio::test(start_paused = true)]
async fn the_observer_sees_groups_and_items_in_order() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![
            group(
                json!({"name": "one", "in": {"go": "bool"}, "when": "$args.go"}),
                &[r#"{"tool":"work","args":{"id":"x"}}"#],
            ),
            group(
                json!({"name": "two", "parallel": false}),
                &[
                    r#"{"tool":"work","args":{"id":"a"}}"#,
                    r#"{"tool":"work","args":{"id":"b"}}"#,
                ],
            ),
        ],
    );
    let recorder = Arc::new(Recorder::default());
    let engine = engine(&host, &source).with_observer(recorder.clone());
    let report = engine
        .run(&seq, Map::new(), RunRequest::new(&Caller::new("alice")))
        .await;
    assert!(report.ok);
    assert_eq!(report.groups[0].status, GroupStatus::Skipped);
    assert_eq!(
        *recorder.lines.lock().unwrap(),
        [
            "group_started s/one parallel=false",
            "group_finished one Skipped",
            "group_started s/two parallel=false",
            "item_started two[0] work",
            "item_finished two[0] Ok",
            "item_started two[1] work",
            "item_finished two[1] Ok",
            "group_finished two Ran",
        ]
    );
}
