//! `each` items over arrays too large for a run fixture: the bound on elements, and the element
//! reports cut at `MAX_REPORTED_ELEMENTS`. Element order, overlap, `[]` for an empty array,
//! `null` for a tolerated failure, retries per element, `max_parallel` and a value that is not
//! an array are run fixtures (`tests/runs/each_*`).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use serde_json::json;

/// Runs `work` over `$args.n`, the numbers below `count`, writing slot `seen`.
async fn over_numbers(count: u32) -> (std::sync::Arc<ScriptedHost>, seq_exec::engine::RunReport) {
    let host = ScriptedHost::new();
    let n: Vec<u32> = (0..count).collect();
    let g = json!({"name": "g", "in": {"n": "array"}, "out": {"seen": "array"}});
    let item =
        r#"{"tool":"work","each":$args.n,"args":{"id":"x","value":$each_index},"as":"seen"}"#;
    let report = run_groups_with(&host, vec![group(g, &[item])], json!({"n": n})).await;
    (host, report)
}

#[tokio::test(start_paused = true)]
async fn more_elements_than_the_bound_fail_the_item_before_any_runs() {
    let (host, report) = over_numbers(10_001).await;
    assert!(!report.ok);
    assert_eq!(host.calls("work"), 0);
    let error = report.groups[0].items[0].error.as_ref().unwrap();
    assert_eq!(error.field.as_deref(), Some("each"), "{error:?}");
}

#[tokio::test(start_paused = true)]
async fn reports_detail_the_first_elements_and_count_the_rest() {
    let (_, report) = over_numbers(250).await;
    assert!(report.ok, "{report:#?}");
    let each = report.groups[0].items[0].each.as_ref().unwrap();
    assert_eq!(each.count, 250);
    assert_eq!(each.ok, 250);
    assert_eq!(each.elements.len(), seq_exec::engine::MAX_REPORTED_ELEMENTS);
    assert_eq!(each.elements_omitted, 150);
    let n: Vec<u32> = (0..250).collect();
    assert_eq!(report.out["g"]["seen"], json!(n));
}
