//! The built-in `jq` tool (docs/reference.md, "The `jq` tool"): its one output is the result,
//! none or several are failures that say to collect, it knows only pure names, and a filter
//! that never ends stops computing when its call is dropped.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::Caller;
use seq_exec::builtin::{BuiltinHost, jq_running};
use seq_exec::{Reason, ToolHost};
use serde_json::{Value, json};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};

async fn jq(filter: &str, input: Value) -> Result<Value, seq_exec::ToolError> {
    let dir = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(dir.path());
    host.call(
        &Caller::new("local"),
        "jq",
        json!({"filter": filter, "input": input}),
    )
    .await
}

#[tokio::test]
async fn the_tasks_agents_needed() {
    let cases = [
        ("trim | tonumber", json!(" 42\n"), json!(42)),
        (
            "split(\"\\n\") | map(select(length > 0)) | length",
            json!("a\n\nb\n"),
            json!(2),
        ),
        ("map(tonumber) | add", json!(["1", "2", "3.5"]), json!(6.5)),
        (
            "fromjson | .items | map(select(.ok)) | length",
            json!("{\"items\":[{\"ok\":true},{\"ok\":false}]}"),
            json!(1),
        ),
        (
            "\"\\(.name): \\(.n)\"",
            json!({"name": "a", "n": 3}),
            json!("a: 3"),
        ),
        (
            "[.[] | ascii_upcase] | join(\",\")",
            json!(["a", "b"]),
            json!("A,B"),
        ),
        ("{count: length}", json!([1, 2]), json!({"count": 2})),
        ("[.[] | select(. > 1)]", json!([1, 2, 3]), json!([2, 3])),
        (".", Value::Null, Value::Null),
    ];
    for (filter, input, expected) in cases {
        assert_eq!(jq(filter, input).await.unwrap(), expected, "{filter}");
    }
    // `input` defaults to null.
    let dir = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(dir.path());
    assert_eq!(
        host.call(&Caller::new("local"), "jq", json!({"filter": ". == null"}))
            .await
            .unwrap(),
        json!(true)
    );
}

/// `range` means what it means in jq: every `$from` with every `$upto`, steps down and by
/// fractions, nothing for a step of 0, and bounds that are not numbers fail.
#[tokio::test]
async fn range_is_jqs() {
    let cases = [
        ("[range(5)]", json!([0, 1, 2, 3, 4])),
        ("[range(-1)]", json!([])),
        ("[range(2.5)]", json!([0, 1, 2])),
        ("[range(3; 1)]", json!([])),
        ("[range(0.5; 3)]", json!([0.5, 1.5, 2.5])),
        (
            "[range(0, 1; 3, 4)]",
            json!([0, 1, 2, 0, 1, 2, 3, 1, 2, 1, 2, 3]),
        ),
        ("[range(0; 10; 3)]", json!([0, 3, 6, 9])),
        ("[range(0; 10; -1)]", json!([])),
        ("[range(5; 0; -2)]", json!([5, 3, 1])),
        ("[range(0; 1; 0.25)]", json!([0, 0.25, 0.5, 0.75])),
        ("[range(0; 10; 0)]", json!([])),
        ("[range(1; 3, 5; 1, 2)]", json!([1, 2, 1, 1, 2, 3, 4, 1, 3])),
        ("[limit(3; range(1e18))]", json!([0, 1, 2])),
        ("[.[] | [range(.)] | length]", json!([0, 1, 3])),
    ];
    for (filter, expected) in cases {
        let input = if filter.starts_with("[.[]") {
            json!([0, 1, 3])
        } else {
            Value::Null
        };
        assert_eq!(jq(filter, input).await.unwrap(), expected, "{filter}");
    }
    for filter in ["[range(\"a\"; \"c\")]", "[range(null)]"] {
        let error = jq(filter, Value::Null).await.unwrap_err();
        assert!(
            error
                .detail
                .as_deref()
                .unwrap_or("")
                .contains("Range bounds must be numeric"),
            "{filter}: {error:?}"
        );
    }
}

#[tokio::test]
async fn none_or_several_outputs_fail_with_a_hint_to_collect() {
    for filter in ["empty", ".[]", "1, 2", "repeat(1)"] {
        let input = if filter == ".[]" {
            json!([1, 2])
        } else {
            Value::Null
        };
        let error = jq(filter, input).await.unwrap_err();
        assert_eq!(error.reason, Reason::Failed, "{filter}");
        assert!(
            error.hint.as_deref().unwrap().contains("[...]"),
            "{filter}: {error:?}"
        );
    }
    let error = jq("error(\"boom\")", Value::Null).await.unwrap_err();
    assert!(
        error.detail.as_deref().unwrap_or("").contains("boom"),
        "{error:?}"
    );
    let error = jq("{(1): 2} | keys | .[0] as $k | {} | .[$k] = 1", Value::Null).await;
    assert!(error.is_err());
}

#[tokio::test]
async fn a_filters_own_error_reads_as_written() {
    let cases = [
        (
            r#"error("key \"nope\" is missing")"#,
            r#"key "nope" is missing"#,
        ),
        (r#"error({code: 7})"#, r#"{"code":7}"#),
        (".a.b", r#"cannot index 1 with "b""#),
    ];
    for (filter, said) in cases {
        let error = jq(filter, json!({"a": 1})).await.unwrap_err();
        assert_eq!(error.reason, Reason::Failed, "{filter}");
        let detail = error.detail.unwrap();
        assert_eq!(detail, format!("the filter failed: {said}"), "{filter}");
    }
}

#[tokio::test]
async fn impure_names_fail_before_anything_runs() {
    for filter in ["env", "$ENV", "now", "input", "debug", "halt"] {
        let error = jq(filter, Value::Null).await.unwrap_err();
        assert_eq!(error.field.as_deref(), Some("filter"), "{filter}");
        assert!(
            error.detail.as_deref().unwrap_or("").contains("unknown"),
            "{filter}: {error:?}"
        );
    }
}

#[tokio::test]
async fn recursion_without_end_is_a_failure_not_a_crash() {
    let error = jq("def f: 1 + f; f", Value::Null).await.unwrap_err();
    assert_eq!(error.reason, Reason::Failed);
    assert!(
        error.detail.as_deref().unwrap_or("").contains("too deep"),
        "{error:?}"
    );
}

/// The process's CPU time (user and system) in clock ticks, from `/proc/self/stat`.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// A filter that never ends stops computing once its call is dropped: the process's CPU time
/// grows while it runs and stops growing after. The sleeps are observation windows, during which
/// this thread does nothing, not synchronisation: the filter's start and end are waited for by
/// their evidence (the count of filters evaluating).
#[test]
fn a_dropped_call_leaves_nothing_computing() {
    let dir = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(dir.path());
    let window = std::time::Duration::from_millis(300);
    for filter in ["def f: f; f", "[repeat(1)] | length", "last(range(1e18))"] {
        let mut cx = Context::from_waker(Waker::noop());
        {
            let caller = Caller::new("local");
            let mut call = pin!(host.call(&caller, "jq", json!({"filter": filter})));
            assert!(call.as_mut().poll(&mut cx).is_pending(), "{filter}");
            while jq_running() == 0 {
                std::thread::yield_now();
            }
            // Evidence that it computes: the process's CPU time grows while this thread sleeps.
            let start = cpu_ticks();
            while cpu_ticks() < start + 5 {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            assert!(call.as_mut().poll(&mut cx).is_pending(), "{filter}");
        } // the call is dropped here, as a timeout or a cancellation drops it
        while jq_running() > 0 {
            std::thread::yield_now();
        }
        let stopped = cpu_ticks();
        std::thread::sleep(window);
        let after = cpu_ticks() - stopped;
        assert!(after <= 3, "{filter}: {after} ticks after the stop");
    }
}
