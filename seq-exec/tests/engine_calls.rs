//! Calls where a run fixture (tests/runs.rs) cannot say it: the run-time depth and cycle bounds
//! against sequences that changed after the check, and direct calls from a model. What
//! `seq_call` writes, `#sequence` calls and the caller's identity behind them are run fixtures.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::Reason;
use seq_exec::engine::RunRequest;
use seq_test_support::{assert_field, parsed};
use serde_json::{Map, Value, json};

/// A sequence whose one group calls `target` (and writes the result to `r`).
fn caller_of(name: &str, target: &str) -> String {
    let item = format!(r#"{{"tool":"seq_call","args":{{"target":"{target}"}},"as":"r"}}"#);
    file(
        name,
        vec![group(
            json!({"name": "g", "out": {"r": "object"}}),
            &[&item],
        )],
    )
}

/// A sequence whose one group runs `work`.
fn leaf(name: &str) -> String {
    file(
        name,
        vec![group(
            json!({"name": "g", "out": {"v": "string"}}),
            &[r#"{"tool":"work","args":{"id":"leaf"},"as":"v"}"#],
        )],
    )
}

#[tokio::test(start_paused = true)]
async fn four_nested_sequence_calls_run_and_a_fifth_fails_with_depth() {
    let host = ScriptedHost::new();
    // c1 → c2 → c3 → c4 → c5: four calls, the deepest legal chain, checked as one batch.
    let chain: Vec<String> = (1..=5)
        .map(|i| {
            if i < 5 {
                caller_of(&format!("c{i}"), &format!("#c{}", i + 1))
            } else {
                leaf("c5")
            }
        })
        .collect();
    let mut sequences = checked(&host, &chain);
    // c0 was checked on its own, before c1 had grown its chain (an unknown `#name` is a warning).
    let c0 = one(&host, caller_of("c0", "#c1"));
    sequences.push(c0.clone());
    let c1 = sequences[0].clone();
    let source = source_of(sequences);
    let engine = engine(&host, &source);

    let report = engine.run(&c1, Map::new(), RunRequest::new(&alice())).await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(
        report.out["g"],
        json!({"r": {"g": {"r": {"g": {"r": {"g": {"r": {"g": {"v": "leaf"}}}}}}}}})
    );
    assert_eq!(host.calls("work"), 1);

    let report = engine.run(&c0, Map::new(), RunRequest::new(&alice())).await;
    assert!(!report.ok);
    let error = report.groups[0].error.clone().unwrap();
    assert_eq!(error.reason, Reason::Depth, "{error}");
    assert!(error.detail.unwrap().contains("#c0 → g → #c1"));
    assert_eq!(host.calls("work"), 1, "nothing ran past the bound");
}

#[tokio::test(start_paused = true)]
async fn a_cycle_made_after_checking_fails_with_cycle() {
    let host = ScriptedHost::new();
    let a = one(&host, caller_of("a", "#b"));
    let b = one(&host, leaf("b"));
    let source = source_of(vec![a.clone(), b]);
    let engine = engine(&host, &source);
    assert!(
        engine
            .run(&a, Map::new(), RunRequest::new(&alice()))
            .await
            .ok
    );

    // `b` is replaced by a version that calls back into `a`; each was fine on its own.
    source.put(one(&host, caller_of("b", "#a")));
    let report = engine.run(&a, Map::new(), RunRequest::new(&alice())).await;
    let error = report.groups[0].error.clone().unwrap();
    assert_eq!(error.reason, Reason::Cycle, "{error}");
    assert_eq!(host.calls("work"), 1);
}

#[tokio::test(start_paused = true)]
async fn a_group_cycle_in_a_stored_sequence_ends_with_cycle() {
    let host = ScriptedHost::new();
    // The checker refuses this (E0601); storage edited behind its back must still not loop.
    let text = file(
        "loop",
        vec![
            group(
                json!({"name": "ping", "out": {"r": "object"}}),
                &[r#"{"tool":"seq_call","args":{"target":"pong"},"as":"r"}"#],
            ),
            group(
                json!({"name": "pong", "out": {"r": "object"}}),
                &[r#"{"tool":"seq_call","args":{"target":"ping"},"as":"r"}"#],
            ),
        ],
    );
    let seq = parsed(&text);
    let source = MemorySource::new();
    // Every group is called by another: there is no group to start from.
    let report = run_on(&host, &source, &seq, Map::new()).await;
    let error = report.error.clone().unwrap();
    assert_eq!(error.reason, Reason::Cycle, "{error}");
    assert!(
        error.detail.unwrap().contains("ping → pong → ping"),
        "{report:#?}"
    );
    // Called by a model, the cycle ends as soon as it comes round.
    let called = engine(&host, &source)
        .call(Some(&seq), "ping", Map::new(), RunRequest::new(&alice()))
        .await;
    let error = called.unwrap_err();
    assert_eq!(error.reason, Reason::Cycle, "{error}");
}

#[tokio::test(start_paused = true)]
async fn a_call_with_an_argument_its_target_no_longer_declares_fails_with_type() {
    let host = ScriptedHost::new();
    let lib = file(
        "lib",
        vec![group(
            json!({"name": "g", "in": {"x": "integer"}, "out": {"v": "any"}}),
            &[r#"{"tool":"work","args":{"id":"w","value":$args.x},"as":"v"}"#],
        )],
    );
    let main = file(
        "main",
        vec![group(
            json!({"name": "g", "out": {"r": "object"}}),
            &[r##"{"tool":"seq_call","args":{"target":"#lib","args":{"x":1}},"as":"r"}"##],
        )],
    );
    let sequences = checked(&host, &[lib, main]);
    let main = sequences[1].clone();
    let source = source_of(sequences);
    source.put(one(&host, leaf("lib")));
    let report = run_on(&host, &source, &main, Map::new()).await;
    let error = report.groups[0].error.clone().unwrap();
    assert_field(&error, Reason::Type, "x");
}

#[tokio::test(start_paused = true)]
async fn direct_calls_from_a_model() {
    let host = ScriptedHost::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "probe", "in": {"host": "string"}, "out": {"up": "string"}}),
            &[r#"{"tool":"work","args":{"id":"up $args.host"},"as":"up"}"#],
        )],
    );
    let source = source_of(vec![seq.clone()]);
    let engine = engine(&host, &source);
    let host_args = || args(json!({"host": "h"}));

    let value = engine
        .call(Some(&seq), "probe", host_args(), RunRequest::new(&alice()))
        .await
        .unwrap();
    assert_eq!(value, json!({"up": "up h"}));
    let value = engine
        .call(None, "#s", host_args(), RunRequest::new(&alice()))
        .await
        .unwrap();
    assert_eq!(value, json!({"probe": {"up": "up h"}}));
    let missing = engine
        .call(None, "#nope", Map::new(), RunRequest::new(&alice()))
        .await
        .unwrap_err();
    assert_eq!(missing.reason, Reason::NotFound);
    let no_group = engine
        .call(Some(&seq), "nope", Map::new(), RunRequest::new(&alice()))
        .await
        .unwrap_err();
    assert_eq!(no_group.reason, Reason::NotFound);
    let wrong = engine
        .call(
            Some(&seq),
            "probe",
            args(json!({"host": 1})),
            RunRequest::new(&alice()),
        )
        .await
        .unwrap_err();
    assert_field(&wrong, Reason::Type, "host");

    let when = |condition: &'static str| {
        let engine = &engine;
        let seq = &seq;
        async move {
            engine
                .when_call(
                    Some(seq),
                    "probe",
                    args(json!({"host": "h"})),
                    condition,
                    None,
                    RunRequest::new(&alice()),
                )
                .await
        }
    };
    assert_eq!(
        when("$args.host == \"h\"").await.unwrap(),
        json!({"up": "up h"})
    );
    assert_eq!(when("$args.host == \"x\"").await.unwrap(), Value::Null);
    assert_eq!(
        when("$args.host ==").await.unwrap_err().reason,
        Reason::ArgError
    );
    assert_eq!(
        when("$args.host and true").await.unwrap_err().reason,
        Reason::ArgError
    );
    assert_eq!(
        when("$args.host > 1").await.unwrap_err().reason,
        Reason::Type
    );

    let engine = engine.with_authorizer(seq_exec::Authorizer::new(
        seq_exec::policy::Policy::allow_all()
            .for_caller("alice", seq_exec::policy::Rules::default().deny("work")),
    ));
    let denied = engine
        .call(Some(&seq), "probe", host_args(), RunRequest::new(&alice()))
        .await
        .unwrap_err();
    assert_eq!(denied.reason, Reason::Unauthorized);
}

#[tokio::test(start_paused = true)]
async fn an_undeclared_run_argument_lists_each_input_once() {
    let host = ScriptedHost::new();
    let seq = one(
        &host,
        file(
            "build",
            vec![
                group(
                    json!({"name": "compile", "in": {"version": "string", "target": "string"}}),
                    &[r#"{"tool":"work","args":{"id":"c $args.version $args.target"}}"#],
                ),
                group(
                    json!({"name": "pack", "in": {"version": "string"}}),
                    &[r#"{"tool":"work","args":{"id":"p $args.version"}}"#],
                ),
            ],
        ),
    );
    let source = source_of(vec![seq.clone()]);
    let error = engine(&host, &source)
        .call(
            None,
            "#build",
            args(json!({"verison": "1"})),
            RunRequest::new(&alice()),
        )
        .await
        .unwrap_err();
    assert_eq!(error.reason, Reason::Type);
    assert_eq!(
        error.hint.as_deref(),
        Some("did you mean `version`? `#build` takes `target` and `version`"),
        "{error}"
    );
}
