//! The engine on a scripted host: concurrency, order, slots, timeouts, retries, `on_error`,
//! `missing`, and the dispatch path. Every test runs on a paused clock: sleeps and
//! timeouts advance virtual time, and order is read from the host's event log, never from wall
//! time.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::{GroupStatus, ItemStatus};
use seq_exec::{Caller, Limits, Reason};
use serde_json::{Map, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn parallel_items_overlap_and_serial_items_do_not() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![
                group(
                    json!({"name": "par", "out": {"a": "string", "b": "string"}}),
                    &[
                        r#"{"tool":"work","args":{"id":"p1","ms":20},"as":"a"}"#,
                        r#"{"tool":"work","args":{"id":"p2","ms":10},"as":"b"}"#,
                    ],
                ),
                group(
                    json!({"name": "ser", "parallel": false, "out": {"a": "string", "b": "string"}}),
                    &[
                        r#"{"tool":"work","args":{"id":"s1","ms":20},"as":"a"}"#,
                        r#"{"tool":"work","args":{"id":"s2","ms":10},"as":"b"}"#,
                    ],
                ),
            ],
        ),
    );
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
    assert!(report.ok, "{report:#?}");
    assert!(host.overlapped("p1", "p2"), "{:?}", host.events());
    assert!(host.before("s1", "s2"), "{:?}", host.events());
    assert!(report.groups[0].parallel);
    assert!(!report.groups[1].parallel);
    assert_eq!(
        serde_json::Value::Object(report.out),
        json!({"par": {"a": "p1", "b": "p2"}, "ser": {"a": "s1", "b": "s2"}})
    );
}

#[tokio::test(start_paused = true)]
async fn sends_to_one_channel_keep_their_order_while_others_overlap() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![
                group(
                    json!({"name": "mixed"}),
                    &[
                        r#"{"tool":"output_send__chat","args":{"text":"c1","ms":30}}"#,
                        r#"{"tool":"work","args":{"id":"w","ms":10}}"#,
                        r#"{"tool":"output_send__chat","args":{"text":"c2","ms":5}}"#,
                        r#"{"tool":"output_send__log","args":{"text":"l1","ms":5}}"#,
                        r#"{"tool":"output_send__chat","args":{"text":"c3"}}"#,
                    ],
                ),
                group(
                    json!({"name": "one-channel"}),
                    &[
                        r#"{"tool":"output_send__chat","args":{"text":"d1","ms":10}}"#,
                        r#"{"tool":"output_send__chat","args":{"text":"d2"}}"#,
                    ],
                ),
            ],
        ),
    );
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
    assert!(report.ok, "{report:#?}");
    assert!(
        host.before("c1", "c2") && host.before("c2", "c3"),
        "{:?}",
        host.events()
    );
    assert!(host.overlapped("c1", "w") && host.overlapped("c1", "l1"));
    assert!(host.before("d1", "d2"));
    assert!(report.groups[0].parallel);
    // Every item of the second group waits for the one before: nothing ran side by side.
    assert!(!report.groups[1].parallel);
}

#[tokio::test(start_paused = true)]
async fn array_slots_collect_in_item_order_whatever_the_finishing_order() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "out": {"results": "array", "list": "array"}}),
                &[
                    r#"{"tool":"work","args":{"id":"w1","ms":30,"value":"one"},"as":"results"}"#,
                    r#"{"tool":"work","args":{"id":"w2","ms":20,"value":"two"},"as":"results"}"#,
                    r#"{"tool":"work","args":{"id":"w3","ms":10,"value":"three"},"as":"results"}"#,
                    r#"{"tool":"work","args":{"id":"w4","value":[1,2]},"as":"list"}"#,
                ],
            )],
        ),
    );
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
    assert!(report.ok, "{report:#?}");
    let end = |id: &str| host.at(&Event::End(id.into()));
    assert!(
        end("w3") < end("w2") && end("w2") < end("w1"),
        "{:?}",
        host.events()
    );
    assert_eq!(
        report.groups[0].out["results"],
        json!(["one", "two", "three"])
    );
    // An `array` slot collects whatever the number of writers: one writer of a list gives a
    // list holding it, as a second writer would.
    assert_eq!(report.groups[0].out["list"], json!([[1, 2]]));
}

#[tokio::test(start_paused = true)]
async fn values_written_to_slots_are_type_checked() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "in": {"v": "any"}, "out": {"n": "integer"}}),
                &[r#"{"tool":"work","args":{"id":"w","value":$args.v},"as":"n"}"#],
            )],
        ),
    );
    let engine = engine(&host, &source);
    let good = engine.run(&seq, args(json!({"v": 3})), &alice()).await;
    assert_eq!(good.out["g"], json!({"n": 3}));
    let bad = engine
        .run(&seq, args(json!({"v": "three"})), &alice())
        .await;
    assert!(!bad.ok);
    let error = bad.groups[0].items[0].error.clone().unwrap();
    assert_eq!(
        (error.reason, error.field.as_deref()),
        (Reason::Type, Some("n"))
    );
}

fn retry_group(name: &str, retries: u32, items: &[&str]) -> serde_json::Value {
    group(
        json!({"name": name, "in": {"x": "any"}, "on_error": "retry", "retries": retries}),
        items,
    )
}

#[tokio::test(start_paused = true)]
async fn retry_reruns_the_failed_item_up_to_retries_times() {
    let host = ScriptedHost::new();
    host.add_simple("flaky", fails(2, Reason::Failed));
    host.add_simple("flakier", fails(2, Reason::Failed));
    host.add_simple("slow", sleeper());
    let source = MemorySource::new();
    let limits = Limits {
        tool_timeout: Duration::from_millis(50),
        ..Limits::default()
    };
    let engine = engine_with(&host, &source, limits);

    let enough = one(
        &host,
        file(
            "a",
            vec![retry_group(
                "g",
                3,
                &[
                    r#"{"tool":"flaky"}"#,
                    r#"{"tool":"work","args":{"id":"w"}}"#,
                ],
            )],
        ),
    );
    let report = engine.run(&enough, Map::new(), &alice()).await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(report.groups[0].items[0].retries, 2);
    assert_eq!(host.calls("flaky"), 3);
    // The failed item is re-run, not the group.
    assert_eq!(
        (report.groups[0].items[1].retries, host.calls("work")),
        (0, 1)
    );

    let short = one(
        &host,
        file("b", vec![retry_group("g", 1, &[r#"{"tool":"flakier"}"#])]),
    );
    let report = engine.run(&short, Map::new(), &alice()).await;
    assert_eq!(report.groups[0].status, GroupStatus::Failed);
    let item = &report.groups[0].items[0];
    assert_eq!((item.status, item.retries), (ItemStatus::Failed, 1));
    assert_eq!(item.error.as_ref().unwrap().reason, Reason::Failed);
    assert_eq!(host.calls("flakier"), 2);

    // The per-tool timeout is an execution failure: retried.
    let timing_out = one(
        &host,
        file(
            "c",
            vec![retry_group(
                "g",
                2,
                &[r#"{"tool":"slow","args":{"ms":1000}}"#],
            )],
        ),
    );
    let report = engine.run(&timing_out, Map::new(), &alice()).await;
    let item = &report.groups[0].items[0];
    assert_eq!(item.error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!((item.retries, host.calls("slow")), (2, 3));
}

#[tokio::test(start_paused = true)]
async fn retry_never_reruns_not_found_unauthorized_or_argument_errors() {
    let host = ScriptedHost::new();
    host.add_simple("denied", returns(json!(1)));
    host.deny("alice", "denied");
    let source = MemorySource::new();
    let engine = engine(&host, &source);
    let cases = [
        (r#"{"tool":"absent"}"#, Reason::NotFound),
        (r#"{"tool":"denied"}"#, Reason::Unauthorized),
        (r#"{"tool":"work","args":{"id":$args.x}}"#, Reason::Type),
        (
            r#"{"tool":"work","args":{"id":"a","__arg_error":"cut"}}"#,
            Reason::ArgError,
        ),
    ];
    for (item, reason) in cases {
        let seq = one(&host, file("s", vec![retry_group("g", 5, &[item])]));
        let report = engine.run(&seq, args(json!({"x": 7})), &alice()).await;
        let item_report = &report.groups[0].items[0];
        assert_eq!(item_report.status, ItemStatus::Failed, "{item}");
        assert_eq!(item_report.error.as_ref().unwrap().reason, reason, "{item}");
        assert_eq!(item_report.retries, 0, "{item}");
        assert_eq!(report.groups[0].status, GroupStatus::Failed);
    }
    assert_eq!(host.calls("denied") + host.calls("work"), 0);
}

#[tokio::test(start_paused = true)]
async fn group_timeout_cancels_items_in_flight() {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    host.add_simple("hang", hangs(dropped.clone()));
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![
                group(
                    json!({"name": "g", "timeout": "100ms", "out": {"done": "string"}}),
                    &[
                        r#"{"tool":"hang"}"#,
                        r#"{"tool":"work","args":{"id":"quick","ms":10},"as":"done"}"#,
                    ],
                ),
                group(
                    json!({"name": "after"}),
                    &[r#"{"tool":"work","args":{"id":"never"}}"#],
                ),
            ],
        ),
    );
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
    assert!(!report.ok);
    assert_eq!(
        report.groups.len(),
        1,
        "the run stops after the failed group"
    );
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Failed);
    assert_eq!(g.error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(g.items[0].status, ItemStatus::Failed);
    assert_eq!(g.items[0].error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(g.items[1].status, ItemStatus::Ok);
    assert_eq!(g.out["done"], json!("quick"));
    assert_eq!(g.duration_ms, 100);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the hanging call was not dropped"
    );
    assert!(!host.events().contains(&Event::End("hang".into())));
    assert_eq!(host.calls("work"), 1);
}

#[tokio::test(start_paused = true)]
async fn serial_group_timeout_skips_the_items_not_reached() {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    host.add_simple("hang", hangs(dropped.clone()));
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "timeout": "1s", "parallel": false}),
                &[
                    r#"{"tool":"hang"}"#,
                    r#"{"tool":"work","args":{"id":"next"}}"#,
                ],
            )],
        ),
    );
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Failed);
    assert_eq!(g.items[0].error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(g.items[1].status, ItemStatus::Skipped);
    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(host.calls("work"), 0);
}

#[tokio::test(start_paused = true)]
async fn per_tool_timeout_bounds_one_call() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let limits = Limits {
        tool_timeout: Duration::from_millis(50),
        ..Limits::default()
    };
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "timeout": "10s", "on_error": "continue"}),
                &[
                    r#"{"tool":"work","args":{"id":"slow","ms":60}}"#,
                    r#"{"tool":"work","args":{"id":"fast","ms":40}}"#,
                ],
            )],
        ),
    );
    let report = engine_with(&host, &source, limits)
        .run(&seq, Map::new(), &alice())
        .await;
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Partial);
    assert!(
        report.ok,
        "a failure the group tolerates does not fail the run"
    );
    assert_eq!(g.items[0].error.as_ref().unwrap().reason, Reason::Timeout);
    assert_eq!(g.items[1].status, ItemStatus::Ok);
    assert_eq!(g.duration_ms, 50);
}

/// Calls that start late (here behind the earlier sends to their channel) have the whole bound
/// from their own start: before the group has run as long as the bound, at that moment, and
/// after it.
#[tokio::test(start_paused = true)]
async fn per_tool_timeout_counts_from_each_calls_own_start() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let limits = Limits {
        tool_timeout: Duration::from_millis(50),
        ..Limits::default()
    };
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "timeout": "10s", "on_error": "continue"}),
                &[
                    // chat: 0–30, 30–70, 70–120 (cut off at 120).
                    r#"{"tool":"output_send__chat","args":{"text":"a","ms":30}}"#,
                    r#"{"tool":"output_send__chat","args":{"text":"b","ms":40}}"#,
                    r#"{"tool":"output_send__chat","args":{"text":"c","ms":60}}"#,
                    // log: 0–30, 30–80 (cut off at 80).
                    r#"{"tool":"output_send__log","args":{"text":"d","ms":30}}"#,
                    r#"{"tool":"output_send__log","args":{"text":"e","ms":60}}"#,
                ],
            )],
        ),
    );
    let report = engine_with(&host, &source, limits)
        .run(&seq, Map::new(), &alice())
        .await;
    let g = &report.groups[0];
    let reasons: Vec<Option<Reason>> = g
        .items
        .iter()
        .map(|item| item.error.as_ref().map(|e| e.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            None,
            None,
            Some(Reason::Timeout),
            None,
            Some(Reason::Timeout)
        ]
    );
    assert_eq!(g.status, GroupStatus::Partial);
    assert_eq!(g.duration_ms, 120);
}

#[tokio::test(start_paused = true)]
async fn abort_cancels_the_other_items_and_continue_lets_them_finish() {
    let host = ScriptedHost::new();
    let dropped = Arc::new(AtomicBool::new(false));
    host.add_simple("hang", hangs(dropped.clone()));
    host.add_simple("boom", fails(u32::MAX, Reason::Failed));
    let source = MemorySource::new();
    let abort = one(
        &host,
        file(
            "a",
            vec![group(
                json!({"name": "g"}),
                &[
                    r#"{"tool":"hang"}"#,
                    r#"{"tool":"work","args":{"id":"late","ms":10}}"#,
                    r#"{"tool":"boom"}"#,
                ],
            )],
        ),
    );
    let engine = engine(&host, &source);
    let report = engine.run(&abort, Map::new(), &alice()).await;
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Failed);
    assert_eq!(g.error.as_ref().unwrap().reason, Reason::Failed);
    let statuses: Vec<ItemStatus> = g.items.iter().map(|i| i.status).collect();
    assert_eq!(
        statuses,
        [
            ItemStatus::Cancelled,
            ItemStatus::Cancelled,
            ItemStatus::Failed
        ]
    );
    assert_eq!(
        g.items[0].error.as_ref().map(|e| e.reason),
        Some(Reason::Cancelled)
    );
    assert!(dropped.load(Ordering::SeqCst));
    assert!(!host.events().contains(&Event::End("late".into())));

    let cont = one(
        &host,
        file(
            "c",
            vec![
                group(
                    json!({"name": "g", "on_error": "continue"}),
                    &[
                        r#"{"tool":"boom"}"#,
                        r#"{"tool":"work","args":{"id":"fine","ms":10}}"#,
                    ],
                ),
                group(
                    json!({"name": "next"}),
                    &[r#"{"tool":"work","args":{"id":"next"}}"#],
                ),
            ],
        ),
    );
    let report = engine.run(&cont, Map::new(), &alice()).await;
    assert!(report.ok);
    assert_eq!(report.groups[0].status, GroupStatus::Partial);
    assert_eq!(
        report.groups[0].error.as_ref().unwrap().reason,
        Reason::Failed
    );
    assert_eq!(report.groups[0].items[1].status, ItemStatus::Ok);
    assert_eq!(report.groups[1].status, GroupStatus::Ran);
}

#[tokio::test(start_paused = true)]
async fn missing_tools_follow_missing_and_failed_tools_follow_on_error() {
    let host = ScriptedHost::new();
    host.add_simple("broken", fails(u32::MAX, Reason::Failed));
    let source = MemorySource::new();
    let engine = engine(&host, &source);
    let run = |fields: serde_json::Value, items: &[&str]| {
        let seq = one(&host, file("s", vec![group(fields, items)]));
        let engine = &engine;
        async move { engine.run(&seq, Map::new(), &alice()).await }
    };

    // skip: the missing item writes nothing, the group goes on.
    let report = run(
        json!({"name": "g", "missing": "skip", "out": {"x": "string", "y": "string"}}),
        &[
            r#"{"tool":"gone","as":"x"}"#,
            r#"{"tool":"work","args":{"id":"y"},"as":"y"}"#,
        ],
    )
    .await;
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Ran);
    assert_eq!(g.items[0].status, ItemStatus::Skipped);
    assert_eq!(g.items[0].error.as_ref().unwrap().reason, Reason::NotFound);
    assert_eq!(serde_json::Value::Object(g.out.clone()), json!({"y": "y"}));

    // skip does not cover a tool that is there and fails.
    let report = run(
        json!({"name": "g", "missing": "skip"}),
        &[r#"{"tool":"broken"}"#],
    )
    .await;
    assert_eq!(report.groups[0].status, GroupStatus::Failed);
    assert_eq!(
        report.groups[0].items[0].error.as_ref().unwrap().reason,
        Reason::Failed
    );

    // degrade: the fallback stands in for the value.
    let report = run(
        json!({"name": "g", "missing": "degrade", "fallback": {"x": "fb"}, "out": {"x": "string"}}),
        &[r#"{"tool":"gone","as":"x"}"#],
    )
    .await;
    assert_eq!(report.groups[0].items[0].status, ItemStatus::Degraded);
    assert_eq!(report.groups[0].out["x"], json!("fb"));

    // fail: a failure like any other, under on_error.
    let report = run(
        json!({"name": "g", "on_error": "continue"}),
        &[r#"{"tool":"gone"}"#, r#"{"tool":"work","args":{"id":"w"}}"#],
    )
    .await;
    assert_eq!(report.groups[0].status, GroupStatus::Partial);
    assert_eq!(
        report.groups[0].items[0].error.as_ref().unwrap().reason,
        Reason::NotFound
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_removed_after_checking_is_not_found() {
    let host = ScriptedHost::new();
    host.add_simple("plugin", returns(json!("v")));
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "missing": "skip"}),
                &[r#"{"tool":"plugin"}"#],
            )],
        ),
    );
    let engine = engine(&host, &source);
    assert_eq!(
        engine.run(&seq, Map::new(), &alice()).await.groups[0].items[0].status,
        ItemStatus::Ok
    );
    host.remove("plugin");
    assert_eq!(
        engine.run(&seq, Map::new(), &alice()).await.groups[0].items[0].status,
        ItemStatus::Skipped
    );
}

#[tokio::test(start_paused = true)]
async fn pre_validation_reports_the_field() {
    let host = ScriptedHost::new();
    let params = json!({"type": "object", "properties": {
        "path": {"type": "string"}, "force": {"type": "boolean"}
    }, "required": ["path"]});
    host.add(def("fs", params, true), echo_args());
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "in": {"cfg": "object"}, "out": {"r": "object"}}),
                &[
                    r#"{"tool":"fs","args":{"path":$args.cfg.path,"force":$args.cfg.force},"as":"r"}"#,
                ],
            )],
        ),
    );
    let engine = engine(&host, &source);
    let cases = [
        (json!({}), Reason::Required, "path"),
        (json!({"path": 1}), Reason::Type, "path"),
        (json!({"path": "a", "force": "yes"}), Reason::Type, "force"),
    ];
    for (cfg, reason, field) in cases {
        let report = engine.run(&seq, args(json!({"cfg": cfg})), &alice()).await;
        let error = report.groups[0].items[0].error.clone().unwrap();
        assert_eq!(
            (error.reason, error.field.as_deref()),
            (reason, Some(field)),
            "{cfg}"
        );
    }
    assert_eq!(host.calls("fs"), 0);
    // Lenient booleans pass, and the tool receives them as written.
    for force in [json!("TRUE"), json!(0), json!(false)] {
        let report = engine
            .run(
                &seq,
                args(json!({"cfg": {"path": "a", "force": force}})),
                &alice(),
            )
            .await;
        assert!(report.ok, "{force}: {report:#?}");
        assert_eq!(report.out["g"]["r"]["force"], force);
    }
}

#[tokio::test(start_paused = true)]
async fn arg_error_short_circuits_before_the_host_is_asked() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g"}),
                &[r#"{"tool":"work","args":{"id":"a","__arg_error":"truncated at 4096 tokens"}}"#],
            )],
        ),
    );
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
    let error = report.groups[0].items[0].error.clone().unwrap();
    assert_eq!(error.reason, Reason::ArgError);
    assert_eq!(host.calls("work"), 0);
}

#[tokio::test(start_paused = true)]
async fn run_arguments_are_routed_and_checked_before_any_group_runs() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![
                group(
                    json!({"name": "a", "in": {"n": "integer"}, "out": {"r": "any"}}),
                    &[r#"{"tool":"work","args":{"id":"a","value":$args.n},"as":"r"}"#],
                ),
                group(
                    json!({"name": "b", "in": {"verbose": "bool"}, "when": "$args.verbose", "out": {"r": "any"}}),
                    &[r#"{"tool":"work","args":{"id":"b","value":$args.verbose},"as":"r"}"#],
                ),
            ],
        ),
    );
    let engine = engine(&host, &source);
    let undeclared = engine
        .run(&seq, args(json!({"n": 1, "nope": 2})), &alice())
        .await;
    let error = undeclared.error.clone().unwrap();
    assert_eq!(
        (error.reason, error.field.as_deref()),
        (Reason::Type, Some("nope"))
    );
    assert!(!undeclared.ok && undeclared.groups.is_empty());

    let wrong = engine.run(&seq, args(json!({"n": "1"})), &alice()).await;
    let error = wrong.error.clone().unwrap();
    assert_eq!(
        (error.reason, error.field.as_deref()),
        (Reason::Type, Some("n"))
    );
    assert_eq!(host.calls("work"), 0);

    // A lenient boolean input is admitted as a boolean, so conditions read it as one.
    let lenient = engine
        .run(&seq, args(json!({"n": 2.0, "verbose": "TRUE"})), &alice())
        .await;
    assert!(lenient.ok, "{lenient:#?}");
    assert_eq!(
        serde_json::Value::Object(lenient.out),
        json!({"a": {"r": 2.0}, "b": {"r": true}})
    );
}

/// An undeclared argument does not hide a wrongly typed one: the run's answer names them all.
#[tokio::test(start_paused = true)]
async fn every_problem_with_the_run_arguments_comes_at_once() {
    let host = ScriptedHost::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![
                group(
                    json!({"name": "a", "in": {"n": "integer", "hosts": "array"}}),
                    &[r#"{"tool":"work","args":{"id":"a $args.n","value":$args.hosts}}"#],
                ),
                group(
                    json!({"name": "b", "in": {"n": "integer", "verbose": "bool"}}),
                    &[r#"{"tool":"work","args":{"id":"b $args.n $args.verbose"}}"#],
                ),
            ],
        ),
    );
    let report = engine(&host, &MemorySource::new())
        .run(
            &seq,
            args(json!({"nope": 1, "n": "one", "hosts": "h1", "verbose": true})),
            &alice(),
        )
        .await;
    assert!(!report.ok && report.groups.is_empty());
    assert_eq!(host.calls("work"), 0);
    insta::assert_json_snapshot!(
        "run_argument_errors",
        json!({"error": report.error, "argument_errors": report.argument_errors})
    );
}

#[tokio::test(start_paused = true)]
async fn returned_values_shaped_like_errors_are_results() {
    let host = ScriptedHost::new();
    host.add_simple(
        "legacy",
        returns(json!({"reason": "failed", "detail": "disk full"})),
    );
    host.add_simple(
        "chatty",
        returns(json!({"reason": "failed", "status": 200})),
    );
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g", "on_error": "continue", "out": {"c": "object"}}),
                &[r#"{"tool":"legacy"}"#, r#"{"tool":"chatty","as":"c"}"#],
            )],
        ),
    );
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
    let g = &report.groups[0];
    // Only a host's `Err` is a failure (the type, never the shape): a value is data.
    assert_eq!(g.items[0].status, ItemStatus::Ok);
    assert_eq!(g.items[1].status, ItemStatus::Ok);
    assert!(report.ok);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_became_unsafe_never_runs_beside_another() {
    let host = ScriptedHost::new();
    let params = json!({"type": "object", "properties": {"id": {"type": "string"}, "ms": {"type": "integer"}}});
    host.add(def("writer", params.clone(), true), sleeper());
    let source = MemorySource::new();
    let seq = one(
        &host,
        file(
            "s",
            vec![group(
                json!({"name": "g"}),
                &[
                    r#"{"tool":"writer","args":{"id":"w1","ms":10}}"#,
                    r#"{"tool":"writer","args":{"id":"w2","ms":10}}"#,
                    r#"{"tool":"work","args":{"id":"other","ms":5}}"#,
                ],
            )],
        ),
    );
    // Replaced under the same name by an implementation that is not parallel-safe.
    host.add(def("writer", params, false), sleeper());
    let report = engine(&host, &source).run(&seq, Map::new(), &alice()).await;
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
    let seq = one(
        &host,
        file(
            "s",
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
        ),
    );
    let recorder = Arc::new(Recorder::default());
    let engine = engine(&host, &source).with_observer(recorder.clone());
    let report = engine.run(&seq, Map::new(), &Caller::new("alice")).await;
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
