//! A fan-out: an `each` item with `max_parallel` runs its elements side by side, at most that
//! many at once, also in a serial group, and the group's next item waits for all of them.
//!
//! No clock: a gated tool counts the calls in flight and ends one only when the test lets it,
//! so the test sees the engine start every element it is going to before it lets one end.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::ItemStatus;
use seq_exec::{Reason, ToolError};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Semaphore, watch};

/// Calls that wait for the test's leave to end, counted as they start and end.
struct Gate {
    /// (started, ended) so far.
    counts: watch::Sender<(usize, usize)>,
    /// The most calls ever in flight at once.
    most: AtomicUsize,
    /// One permit ends one call.
    leave: Semaphore,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            counts: watch::Sender::new((0, 0)),
            most: AtomicUsize::new(0),
            leave: Semaphore::new(0),
        })
    }

    /// A tool that returns its `value` once the gate lets it.
    fn tool(self: &Arc<Gate>) -> Behavior {
        let gate = Arc::clone(self);
        Arc::new(move |call: Invocation| {
            let gate = Arc::clone(&gate);
            Box::pin(async move {
                gate.counts.send_modify(|(started, ended)| {
                    *started += 1;
                    gate.most.fetch_max(*started - *ended, Ordering::SeqCst);
                });
                gate.leave.acquire().await.unwrap().forget();
                gate.counts.send_modify(|(_, ended)| *ended += 1);
                Ok(call.args.get("value").cloned().unwrap_or(Value::Null))
            })
        })
    }

    /// Lets `total` calls end one at a time, each once the engine has started every call it
    /// could (`bound` in flight, or all that are left).
    async fn let_through(&self, total: usize, bound: usize) {
        let mut counts = self.counts.subscribe();
        for released in 0..total {
            let want = total.min(released + bound);
            counts
                .wait_for(|&(started, ended)| ended == released && started == want)
                .await
                .unwrap();
            self.leave.add_permits(1);
        }
    }
}

/// Runs the sequence `s` of `groups` on `host` while `gate` lets `total` calls through, at most
/// `bound` in flight.
async fn run_gated(
    host: &Arc<ScriptedHost>,
    gate: &Gate,
    groups: Vec<Value>,
    total: usize,
    bound: usize,
) -> seq_exec::engine::RunReport {
    let (report, ()) = tokio::join!(run_groups(host, groups), gate.let_through(total, bound));
    report
}

#[tokio::test]
async fn a_fan_out_in_a_serial_group_runs_at_most_its_bound_at_once() {
    let host = ScriptedHost::new();
    let gate = Gate::new();
    host.add_simple("gated", gate.tool());
    host.add_simple("record", echo_args());
    let report = run_gated(
        &host,
        &gate,
        vec![group(
            json!({"name": "g", "parallel": false, "out": {"names": "array", "texts": "array", "last": "object"}}),
            &[
                r#"{"tool":"record","args":{"value":["a","b","c","d","e","f","g"]},"as":"names"}"#,
                r#"{"tool":"gated","each":$out.names[0].value,"max_parallel":3,"args":{"value":"${each}!"},"as":"texts"}"#,
                r#"{"tool":"record","args":{"texts":$out.texts},"as":"last"}"#,
            ],
        )],
        7,
        3,
    )
    .await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(gate.most.load(Ordering::SeqCst), 3);
    let texts = json!(["a!", "b!", "c!", "d!", "e!", "f!", "g!"]);
    assert_eq!(report.out["g"]["texts"], texts);
    assert_eq!(report.out["g"]["last"], json!({"texts": texts}));
    // The item after the fan-out started only once every element had ended.
    let events = host.events();
    let last_gated = events
        .iter()
        .rposition(|e| matches!(e, Event::End(label) if label.starts_with("gated")))
        .unwrap();
    let second_record = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::Start(label) if label.starts_with("record")))
        .nth(1)
        .unwrap()
        .0;
    assert!(last_gated < second_record, "{events:?}");
    let each = report.groups[0].items[1].each.as_ref().unwrap();
    assert_eq!((each.count, each.ok), (7, 7));
}

#[tokio::test]
async fn a_bound_of_one_runs_the_elements_one_at_a_time() {
    let host = ScriptedHost::new();
    let gate = Gate::new();
    host.add_simple("gated", gate.tool());
    let report = run_gated(
        &host,
        &gate,
        vec![group(
            json!({"name": "g", "parallel": false, "out": {"r": "array"}}),
            &[
                r#"{"tool":"gated","each":[1,2,3],"max_parallel":1,"args":{"value":$each},"as":"r"}"#,
            ],
        )],
        3,
        1,
    )
    .await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(gate.most.load(Ordering::SeqCst), 1);
    assert_eq!(report.out["g"]["r"], json!([1, 2, 3]));
}

/// Under `abort`, the first failed element stops the fan-out: the elements in flight are
/// dropped, those not started never start, and each is reported at its index.
#[tokio::test]
async fn a_failed_element_stops_every_element_of_the_fan_out() {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    let first = hangs(Arc::clone(&dropped));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    host.add_simple(
        "mixed",
        Arc::new(move |call: Invocation| {
            log.lock().unwrap().push(call.args["n"].clone());
            match call.args["n"].as_u64() {
                Some(0) => first(call),
                Some(_) | None => {
                    Box::pin(async move { Err(ToolError::new(Reason::Failed, "element 1 fails")) })
                }
            }
        }),
    );
    host.add_simple("after", returns(json!("after")));
    let report = run_groups(
        &host,
        vec![group(
            json!({"name": "g", "parallel": false, "out": {"r": "array"}}),
            &[
                r#"{"tool":"mixed","each":[0,1,2,3,4],"max_parallel":2,"args":{"n":$each},"as":"r"}"#,
                r#"{"tool":"after","args":{}}"#,
            ],
        )],
    )
    .await;
    assert!(!report.ok);
    assert!(dropped.load(Ordering::SeqCst), "element 0 was not dropped");
    assert_eq!(*seen.lock().unwrap(), vec![json!(0), json!(1)]);
    assert_eq!(host.calls("after"), 0);
    let item = &report.groups[0].items[0];
    assert_eq!(item.status, ItemStatus::Failed);
    let each = item.each.as_ref().unwrap();
    let statuses: Vec<ItemStatus> = each.elements.iter().map(|e| e.status).collect();
    assert_eq!(
        statuses,
        vec![
            ItemStatus::Cancelled,
            ItemStatus::Failed,
            ItemStatus::Cancelled,
            ItemStatus::Cancelled,
            ItemStatus::Cancelled
        ]
    );
}
