//! The driver seam: a run's decisions depend only on the outcomes of its attempts. A driver
//! that records every attempt's outcome, then one that replays them without calling the host,
//! give the same report; a driver that is not concurrent gives a parallel group's report too.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::Engine;
use seq_exec::engine::RunRequest;
use seq_exec::engine::{Attempt, CancellationToken, Driver, RunReport, Step};
use seq_exec::{BoxFuture, Reason};
use serde_json::{Map, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Awaits every attempt and keeps its outcome under the attempt's key, in order.
#[derive(Default)]
struct Recording {
    attempts: Mutex<Vec<(String, String, Attempt)>>,
    concurrent: bool,
}

impl Driver for Recording {
    fn attempt<'a>(
        &'a self,
        step: Step<'a>,
        _args: &'a Map<String, serde_json::Value>,
        work: BoxFuture<'a, Attempt>,
    ) -> BoxFuture<'a, Attempt> {
        Box::pin(async move {
            let attempt = work.await;
            self.attempts
                .lock()
                .unwrap()
                .push((step.name(), step.key(), attempt.clone()));
            attempt
        })
    }

    fn concurrent(&self, _group: &seq_syntax::ast::Group) -> bool {
        self.concurrent
    }
}

/// Returns the recorded outcomes and never runs an attempt's work (a journal replayed).
struct Replaying {
    journal: HashMap<String, Attempt>,
}

impl Driver for Replaying {
    fn attempt<'a>(
        &'a self,
        step: Step<'a>,
        _args: &'a Map<String, serde_json::Value>,
        _work: BoxFuture<'a, Attempt>,
    ) -> BoxFuture<'a, Attempt> {
        let attempt = self.journal.get(&step.key()).cloned();
        Box::pin(async move {
            attempt.unwrap_or_else(|| panic!("{} is not in the journal", step.key()))
        })
    }

    fn concurrent(&self, _group: &seq_syntax::ast::Group) -> bool {
        false
    }
}

fn redacted(report: RunReport) -> RunReport {
    report.untimed()
}

/// Retries, `missing: degrade`, a call to another group and a `#name` call, an `array` slot
/// written by a parallel group, and a `when` on a tool's result.
fn fixture(host: &Arc<ScriptedHost>, source: &Arc<MemorySource>) -> seq_syntax::ast::Sequence {
    host.add_simple("flaky", fails(2, Reason::Failed));
    let files = [
        file(
            "main",
            vec![
                group(
                    json!({"name": "fan", "out": {"all": "array"}}),
                    &[
                        r#"{"tool":"work","args":{"id":"a","ms":30},"as":"all"}"#,
                        r#"{"tool":"work","args":{"id":"b","ms":10},"as":"all"}"#,
                        r#"{"tool":"work","args":{"id":"c","ms":20},"as":"all"}"#,
                    ],
                ),
                group(
                    json!({"name": "steps", "parallel": false, "on_error": "retry", "retries": 2,
                           "missing": "degrade", "fallback": {"gone": "none"},
                           "out": {"r": "string", "gone": "string", "called": "object", "ext": "object"}}),
                    &[
                        r#"{"tool":"flaky","as":"r"}"#,
                        r#"{"tool":"vanished","as":"gone"}"#,
                        r#"{"tool":"seq_call","args":{"target":"helper","args":{"x":"$out.r"}},"as":"called"}"#,
                        r##"{"tool":"seq_call","args":{"target":"#other"},"as":"ext"}"##,
                    ],
                ),
                group(
                    json!({"name": "helper", "in": {"x": "string"}, "out": {"y": "string"}}),
                    &[r#"{"tool":"work","args":{"id":"$args.x"},"as":"y"}"#],
                ),
            ],
        ),
        file(
            "other",
            vec![group(
                json!({"name": "inner", "out": {"v": "string"}}),
                &[r#"{"tool":"work","args":{"id":"inner"},"as":"v"}"#],
            )],
        ),
    ];
    let mut sequences = checked(host, &files).into_iter();
    let main = sequences.next().unwrap();
    source.put(sequences.next().unwrap());
    main
}

/// A fresh host (its tools count their calls from 1), and the fixture on it.
fn setup() -> (Arc<ScriptedHost>, Engine, seq_syntax::ast::Sequence) {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = fixture(&host, &source);
    let engine = engine(&host, &source);
    (host, engine, seq)
}

/// The fixture's report on the in-process engine.
async fn local() -> RunReport {
    let (_, engine, seq) = setup();
    let report = engine
        .run(&seq, Map::new(), RunRequest::new(&alice()))
        .await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(report.groups[1].items[0].retries, 2, "{report:#?}");
    assert_eq!(
        report.out["steps"],
        json!({"r": "ok", "gone": "none", "called": {"y": "ok"}, "ext": {"inner": {"v": "inner"}}})
    );
    report
}

#[tokio::test(start_paused = true)]
async fn a_replayed_run_decides_as_the_recorded_one_without_calling_tools() {
    let local = local().await;
    let (host, engine, seq) = setup();
    let cancel = CancellationToken::new();
    let recording = Recording::default();
    let recorded = engine
        .run(
            &seq,
            Map::new(),
            RunRequest::new(&alice()).cancel(&cancel).driver(&recording),
        )
        .await;
    assert_eq!(redacted(recorded.clone()), redacted(local.clone()));
    let attempts = recording.attempts.into_inner().unwrap();
    // Names are `group/index`; keys add the stack and the attempt (three of `flaky`).
    let keys: Vec<&str> = attempts.iter().map(|(_, key, _)| key.as_str()).collect();
    for key in [
        "#main/steps/0/0",
        "#main/steps/0/1",
        "#main/steps/0/2",
        "#main/steps/1/0",
        "#main/steps/helper/0/0",
        "#main/steps/#other/inner/0/0",
    ] {
        assert!(keys.contains(&key), "{key} not in {keys:?}");
    }
    assert!(attempts.iter().any(|(name, _, _)| name == "helper/0"));
    let vanished = attempts
        .iter()
        .find(|(_, key, _)| key == "#main/steps/1/0")
        .unwrap();
    assert!(vanished.2.missing);

    let calls = (host.calls("work"), host.calls("flaky"));
    let replaying = Replaying {
        journal: attempts.into_iter().map(|(_, key, a)| (key, a)).collect(),
    };
    let replayed = engine
        .run(
            &seq,
            Map::new(),
            RunRequest::new(&alice()).cancel(&cancel).driver(&replaying),
        )
        .await;
    assert_eq!(redacted(replayed), redacted(local));
    let after = (host.calls("work"), host.calls("flaky"));
    assert_eq!(after, calls, "a replay calls no tool");
}

#[tokio::test(start_paused = true)]
async fn a_driver_that_is_not_concurrent_gives_a_parallel_group_the_same_report() {
    let local = local().await;
    let (host, engine, seq) = setup();
    let one_at_a_time = Recording::default();
    let report = engine
        .run(
            &seq,
            Map::new(),
            RunRequest::new(&alice())
                .cancel(&CancellationToken::new())
                .driver(&one_at_a_time),
        )
        .await;
    assert_eq!(redacted(report.clone()), redacted(local));
    assert!(report.groups[0].parallel);
    assert_eq!(report.out["fan"], json!({"all": ["a", "b", "c"]}));
    // One after another, in item order.
    assert!(
        host.before("a", "b") && host.before("b", "c"),
        "{:?}",
        host.events()
    );
}
