//! `each` items on a scripted host: one run per element, side by side or in order, results in
//! element order, `null` for a tolerated failure, `[]` for an empty array, the bound on
//! elements, `max_parallel`, and the element reports. Paused clock; order is read from the
//! host's event log.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::RunRequest;
use seq_exec::engine::{GroupStatus, ItemStatus};
use seq_exec::{Reason, ToolError};
use serde_json::{Value, json};
use std::sync::Arc;

/// The most calls in flight at once, from the event log.
fn most_in_flight(host: &ScriptedHost) -> usize {
    let mut now = 0usize;
    let mut most = 0;
    for event in host.events() {
        match event {
            Event::Start(_) => {
                now += 1;
                most = most.max(now);
            }
            Event::End(_) => now -= 1,
        }
    }
    most
}

#[tokio::test(start_paused = true)]
async fn parallel_elements_overlap_and_results_keep_element_order() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "g", "in": {"hosts": "array"}, "out": {"seen": "array"}}),
            // The first element sleeps longest, so it finishes last.
            &[
                r#"{"tool":"work","each":$args.hosts,"args":{"id":"${each.name}","ms":$each.ms,"value":"$each_index:${each.name}"},"as":"seen"}"#,
            ],
        )],
    );
    let hosts = json!([{"name": "a", "ms": 30}, {"name": "b", "ms": 20}, {"name": "c", "ms": 10}]);
    let report = engine(&host, &source)
        .run(
            &seq,
            args(json!({"hosts": hosts})),
            RunRequest::new(&alice()),
        )
        .await;
    assert!(report.ok, "{report:#?}");
    assert!(host.overlapped("a", "c"), "{:?}", host.events());
    assert_eq!(report.out["g"]["seen"], json!(["0:a", "1:b", "2:c"]));
    let each = report.groups[0].items[0].each.as_ref().unwrap();
    assert_eq!((each.count, each.ok, each.elements.len()), (3, 3, 3));
}

#[tokio::test(start_paused = true)]
async fn serial_elements_run_in_element_order() {
    let host = ScriptedHost::new();
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "parallel": false, "out": {"seen": "array"}}),
            &[r#"{"tool":"work","each":["a","b","c"],"args":{"id":$each,"ms":10},"as":"seen"}"#],
        )],
    )
    .await;
    assert!(report.ok, "{report:#?}");
    assert!(
        host.before("a", "b") && host.before("b", "c"),
        "{:?}",
        host.events()
    );
    assert_eq!(report.out["g"]["seen"], json!(["a", "b", "c"]));
}

#[tokio::test(start_paused = true)]
async fn an_empty_array_runs_nothing_and_writes_an_empty_array() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "g", "in": {"hosts": "array"}, "out": {"seen": "array", "whole": "any"}}),
            &[
                r#"{"tool":"work","each":$args.hosts,"args":{"id":"x"},"as":"seen"}"#,
                r#"{"tool":"work","each":[],"args":{"id":"y"},"as":"whole"}"#,
            ],
        )],
    );
    let report = run_on(&host, &source, &seq, args(json!({"hosts": []}))).await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(host.calls("work"), 0);
    assert_eq!(report.out["g"]["seen"], json!([]));
    assert_eq!(report.out["g"]["whole"], json!([]));
}

#[tokio::test(start_paused = true)]
async fn a_tolerated_failure_is_null_and_the_group_is_partial() {
    let host = ScriptedHost::new();
    host.add_simple(
        "picky",
        Arc::new(|call: Invocation| {
            Box::pin(async move {
                match call.args.get("value") {
                    Some(Value::String(bad)) if bad == "bad" => {
                        Err(ToolError::new(Reason::Failed, "refused"))
                    }
                    other => Ok(other.cloned().unwrap_or(Value::Null)),
                }
            })
        }),
    );
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "on_error": "continue", "out": {"seen": "array"}}),
            &[r#"{"tool":"picky","each":["a","bad","c"],"args":{"value":$each},"as":"seen"}"#],
        )],
    )
    .await;
    assert_eq!(report.groups[0].status, GroupStatus::Partial, "{report:#?}");
    assert_eq!(report.out["g"]["seen"], json!(["a", null, "c"]));
    let item = &report.groups[0].items[0];
    assert_eq!(item.status, ItemStatus::Failed);
    let each = item.each.as_ref().unwrap();
    assert_eq!((each.ok, each.failed), (2, 1));
    assert_eq!(each.elements[1].status, ItemStatus::Failed);
    assert!(
        item.error
            .as_ref()
            .unwrap()
            .detail
            .as_ref()
            .unwrap()
            .contains("element 1")
    );
}

#[tokio::test(start_paused = true)]
async fn retries_apply_to_each_element() {
    let host = ScriptedHost::new();
    host.add_simple("flaky", fails(1, Reason::Failed));
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "parallel": false, "on_error": "retry", "retries": 1, "out": {"seen": "array"}}),
            &[r#"{"tool":"flaky","each":[1,2],"args":{"n":$each},"as":"seen"}"#],
        )],
    )
    .await;
    assert!(report.ok, "{report:#?}");
    let each = report.groups[0].items[0].each.as_ref().unwrap();
    assert_eq!(each.elements[0].retries, 1);
    assert_eq!(each.elements[1].retries, 0);
    assert_eq!(report.out["g"]["seen"], json!(["ok", "ok"]));
}

#[tokio::test(start_paused = true)]
async fn max_parallel_bounds_items_and_elements_in_flight() {
    let host = ScriptedHost::new();
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "max_parallel": 3, "out": {"seen": "array"}}),
            &[
                r#"{"tool":"work","each":[0,1,2,3,4,5,6,7,8,9],"args":{"id":"e$each","ms":10},"as":"seen"}"#,
                r#"{"tool":"work","args":{"id":"lone","ms":10}}"#,
            ],
        )],
    )
    .await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(host.calls("work"), 11);
    assert_eq!(most_in_flight(&host), 3, "{:?}", host.events());
}

#[tokio::test(start_paused = true)]
async fn more_elements_than_the_bound_fail_the_item_before_any_runs() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "g", "in": {"hosts": "array"}}),
            &[r#"{"tool":"work","each":$args.hosts,"args":{"id":"x"}}"#],
        )],
    );
    let hosts: Vec<u32> = (0..10_001).collect();
    let report = engine(&host, &source)
        .run(
            &seq,
            args(json!({"hosts": hosts})),
            RunRequest::new(&alice()),
        )
        .await;
    assert!(!report.ok);
    assert_eq!(host.calls("work"), 0);
    let error = report.groups[0].items[0].error.as_ref().unwrap();
    assert_eq!(error.field.as_deref(), Some("each"), "{error:?}");
}

#[tokio::test(start_paused = true)]
async fn a_value_that_is_not_an_array_fails_the_item_with_reason_type() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "g", "in": {"hosts": "any"}}),
            &[r#"{"tool":"work","each":$args.hosts,"args":{"id":"x"}}"#],
        )],
    );
    let report = engine(&host, &source)
        .run(
            &seq,
            args(json!({"hosts": "a,b"})),
            RunRequest::new(&alice()),
        )
        .await;
    assert!(!report.ok);
    let error = report.groups[0].items[0].error.as_ref().unwrap();
    assert_eq!(error.reason, Reason::Type, "{error:?}");
    assert_eq!(host.calls("work"), 0);
}

#[tokio::test(start_paused = true)]
async fn reports_detail_the_first_elements_and_count_the_rest() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "g", "in": {"n": "array"}, "out": {"seen": "array"}}),
            &[
                r#"{"tool":"work","each":$args.n,"args":{"id":"x","value":$each_index},"as":"seen"}"#,
            ],
        )],
    );
    let n: Vec<u32> = (0..250).collect();
    let report = run_on(&host, &source, &seq, args(json!({"n": n}))).await;
    assert!(report.ok, "{report:#?}");
    let each = report.groups[0].items[0].each.as_ref().unwrap();
    assert_eq!(each.count, 250);
    assert_eq!(each.ok, 250);
    assert_eq!(each.elements.len(), seq_exec::engine::MAX_REPORTED_ELEMENTS);
    assert_eq!(each.elements_omitted, 150);
    assert_eq!(report.out["g"]["seen"], json!(n));
}
