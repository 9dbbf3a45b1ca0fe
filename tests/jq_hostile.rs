//! Hostile `jq` filters against seqc's isolated evaluation (docs/robustness.md, "jq filters"):
//! deep values handed to natives that recurse, allocations sized by a value, literal filters
//! nested past jaq's parser, and natives that never return. Each call ends (failed, or for a
//! few, answered), the process asking goes on, and a dropped call leaves nothing computing. The filters are data
//! (tests/fixtures/jq_hostile/filters.json); what each call says is a snapshot.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/http.rs"]
mod http;

use seq_exec::builtin::{BuiltinHost, JqRunner};
use seq_exec::{Caller, Reason, ToolHost};
use serde::Deserialize;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};

#[derive(Deserialize)]
struct Case {
    name: String,
    filter: String,
}

fn cases() -> Vec<Case> {
    let path = std::path::Path::new(common::PACKAGE).join("tests/fixtures/jq_hostile/filters.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A runtime with one worker thread: the test's own thread stays free to poll and observe.
fn one_worker_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// A host whose filters run in children of the seqc under test, as seqc's commands run them.
fn isolated_host(root: &std::path::Path) -> BuiltinHost {
    BuiltinHost::new(root).with_jq(JqRunner::isolated(common::SEQC, ["__jq"]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_filter_ends_its_call_and_the_host_goes_on() {
    let root = tempfile::tempdir().unwrap();
    let host = isolated_host(root.path());
    let caller = Caller::new("local");
    let mut outcomes = serde_json::Map::new();
    for case in cases() {
        let result = host
            .call(&caller, "jq", json!({"filter": case.filter}))
            .await;
        // Most fail; a few natives are cheap enough on the child's stack to answer (`==` on
        // two values 200,000 deep): either way the call ends and the host goes on.
        let outcome = match result {
            Ok(value) => json!({"answer": value}),
            Err(error) => {
                assert_eq!(error.reason, Reason::Failed, "{}: {error:?}", case.name);
                json!({"detail": error.detail, "hint": error.hint, "field": error.field})
            }
        };
        outcomes.insert(case.name, outcome);
        // The next call is answered as if nothing happened.
        let next = host
            .call(&caller, "jq", json!({"filter": ". + 1", "input": 1}))
            .await;
        assert_eq!(next.unwrap(), json!(2));
    }
    insta::assert_json_snapshot!("jq_hostile", Value::Object(outcomes));
}

/// Ordinary filters give the same answers isolated as in this process.
#[tokio::test]
async fn isolated_answers_are_in_process_answers() {
    let root = tempfile::tempdir().unwrap();
    let isolated = isolated_host(root.path());
    let in_process = BuiltinHost::new(root.path());
    let caller = Caller::new("local");
    for (filter, input) in [
        ("map(tonumber) | add", json!(["1", "2", "3.5"])),
        ("{count: length}", json!([1, 2])),
        ("error(\"boom\")", Value::Null),
        ("1, 2", Value::Null),
        ("env", Value::Null),
        ("def f: 1 + f; f", Value::Null),
        (".", json!({"a": [1, {"b": null}], "c": "d"})),
    ] {
        let args = json!({"filter": filter, "input": input});
        let there = isolated.call(&caller, "jq", args.clone()).await;
        let here = in_process.call(&caller, "jq", args).await;
        assert_eq!(there, here, "{filter}");
    }
}

/// The CPU time (user and system) of process `pid`, in clock ticks, from `/proc/PID/stat`;
/// `None` once it is gone.
fn cpu_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// A native that never returns (multiplying integers of millions of digits) and a filter that
/// never ends: while the call is pending its child burns CPU; once the call is dropped, as a
/// timeout or a cancellation drops it, the child is killed and reaped (its CPU time cannot
/// grow: it is gone), and this process's CPU time does not grow either. The sleeps are
/// observation windows, not synchronisation: start and end are waited for by their evidence.
#[test]
fn a_dropped_call_kills_its_child_and_leaves_nothing_computing() {
    let runtime = one_worker_runtime();
    let _entered = runtime.enter();
    let root = tempfile::tempdir().unwrap();
    let host = isolated_host(root.path());
    let window = std::time::Duration::from_millis(300);
    for filter in [
        "reduce range(40) as $i (3; . * .) | tostring | length",
        "def f: f; f",
    ] {
        let mut cx = Context::from_waker(Waker::noop());
        let child = {
            let caller = Caller::new("local");
            let mut call = pin!(host.call(&caller, "jq", json!({"filter": filter})));
            let child = loop {
                assert!(call.as_mut().poll(&mut cx).is_pending(), "{filter}");
                if let Some(pid) = host.jq_runner().children().first() {
                    break pid.to_string();
                }
                std::thread::yield_now();
            };
            // Evidence that it computes: the child's CPU time grows.
            let start = cpu_ticks(&child).unwrap();
            while cpu_ticks(&child).unwrap_or(0) < start + 5 {
                assert!(call.as_mut().poll(&mut cx).is_pending(), "{filter}");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            child
        }; // the call is dropped here
        while !host.jq_runner().children().is_empty() {
            std::thread::yield_now();
        }
        assert_eq!(cpu_ticks(&child), None, "{filter}: the child is reaped");
        let stopped = cpu_ticks("self").unwrap();
        std::thread::sleep(window);
        let after = cpu_ticks("self").unwrap() - stopped;
        assert!(after <= 3, "{filter}: {after} ticks after the stop");
    }
}

/// `seqc mcp --http` is shared: stored sequences whose `jq` steps crash (run with `seq_run`)
/// and literal filters nested past the parser (sent with `seq_create`) fail their caller's
/// call, and the next caller is answered.
#[test]
fn the_service_outlives_hostile_filters_from_its_callers() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (server, url) = http::serve_in(root.path(), data.path(), &[]);
    let mut client = http::Client::connect(&url, None);
    for case in cases() {
        let tools =
            json!({"tool": "jq", "args": {"filter": case.filter}, "as": "out"}).to_string() + " ;";
        let created = client.call(
            "seq_create",
            json!({"name": "hostile", "replace": true,
                   "groups": [{"name": "g", "out": {"out": "any"}, "tools": tools}]}),
        );
        let text = created.to_string();
        if case.name.starts_with("deep_filter") || case.name.starts_with("long_filter") {
            assert_eq!(created["isError"], true, "{}: {created}", case.name);
            assert!(text.contains("E1004"), "{}: {created}", case.name);
        } else {
            assert_ne!(created["isError"], true, "{}: {created}", case.name);
            // The run ends, failed or (for a few natives) answered.
            let ran = client.call("seq_run", json!({"name": "hostile"}));
            let report = if ran["isError"] == true {
                &ran["structuredContent"]["report"]
            } else {
                &ran["structuredContent"]
            };
            let status = &report["groups"][0]["status"];
            assert!(
                status == "failed" || status == "ran",
                "{}: {ran}",
                case.name
            );
        }
        // Another caller, on a session of its own, is answered.
        let mut other = http::Client::connect(&url, None);
        let listed = other.call("seq_list", json!({}));
        assert_ne!(listed["isError"], true, "{}: {listed}", case.name);
    }
    assert_eq!(http::stop(server), Some(143));
}

/// The children are shared by every caller, each with a share of its own: one caller's filters
/// that never end (each holding its child to the tool's timeout) hold at most its share, and
/// another caller's filter is answered meanwhile.
#[test]
fn one_callers_endless_filters_leave_the_others_a_child() {
    let runtime = one_worker_runtime();
    let _entered = runtime.enter();
    let root = tempfile::tempdir().unwrap();
    let host = isolated_host(root.path());
    let alice = Caller::new("alice");
    let mut cx = Context::from_waker(Waker::noop());
    let mut endless: Vec<_> = (0..20)
        .map(|_| Box::pin(host.call(&alice, "jq", json!({"filter": "def f: f; f"}))))
        .collect();
    // Alice's calls take her share of children, and wait for it past that.
    while host.jq_runner().children().len() < seq_exec::builtin::JQ_MAX_PER_CALLER {
        for call in &mut endless {
            assert!(call.as_mut().poll(&mut cx).is_pending());
        }
        std::thread::yield_now();
    }
    for call in &mut endless {
        assert!(call.as_mut().poll(&mut cx).is_pending());
    }
    assert_eq!(
        host.jq_runner().children().len(),
        seq_exec::builtin::JQ_MAX_PER_CALLER
    );
    let bob = Caller::new("bob");
    let answer = runtime.block_on(host.call(&bob, "jq", json!({"filter": ". + 1", "input": 1})));
    assert_eq!(answer.unwrap(), json!(2));
    drop(endless);
}
