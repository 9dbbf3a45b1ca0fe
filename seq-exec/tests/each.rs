//! `each` items whose report is too large for a run fixture: the bound on elements, and the
//! element reports cut at `MAX_REPORTED_ELEMENTS`. Element order, overlap, `[]` for an empty
//! array, `null` for a tolerated failure, retries per element, `max_parallel` and a value that
//! is not an array are run fixtures (`tests/runs/each_*`).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn more_elements_than_the_bound_fail_the_item_before_any_runs() {
    let host = ScriptedHost::new();
    let hosts: Vec<u32> = (0..10_001).collect();
    let report = run_groups_with(
        &host,
        vec![group(
            json!({"name": "g", "in": {"hosts": "array"}}),
            &[r#"{"tool":"work","each":$args.hosts,"args":{"id":"x"}}"#],
        )],
        json!({"hosts": hosts}),
    )
    .await;
    assert!(!report.ok);
    assert_eq!(host.calls("work"), 0);
    let error = report.groups[0].items[0].error.as_ref().unwrap();
    assert_eq!(error.field.as_deref(), Some("each"), "{error:?}");
}

#[tokio::test(start_paused = true)]
async fn reports_detail_the_first_elements_and_count_the_rest() {
    let host = ScriptedHost::new();
    let n: Vec<u32> = (0..250).collect();
    let report = run_groups_with(
        &host,
        vec![group(
            json!({"name": "g", "in": {"n": "array"}, "out": {"seen": "array"}}),
            &[
                r#"{"tool":"work","each":$args.n,"args":{"id":"x","value":$each_index},"as":"seen"}"#,
            ],
        )],
        json!({"n": n}),
    )
    .await;
    assert!(report.ok, "{report:#?}");
    let each = report.groups[0].items[0].each.as_ref().unwrap();
    assert_eq!(each.count, 250);
    assert_eq!(each.ok, 250);
    assert_eq!(each.elements.len(), seq_exec::engine::MAX_REPORTED_ELEMENTS);
    assert_eq!(each.elements_omitted, 150);
    assert_eq!(report.out["g"]["seen"], json!(n));
}
