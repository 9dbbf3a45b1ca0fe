//! Conditions at run time, as a table of cases, and paths that do not exist. Skipping,
//! rendering, `seq_when_call`'s scope and declared inputs are run fixtures (tests/runs.rs).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::*;
use seq_exec::engine::GroupStatus;
use seq_exec::{Reason, ToolError};
use serde_json::{Map, Value, json};

/// What a condition came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    True,
    False,
    /// An evaluation error: surfaced, never false.
    Error,
}
use Outcome::{Error, False, True};

/// Runs a group guarded by `condition` over inputs `a` and `b` (both `any`; `None` = not
/// passed) and says what the condition came to.
async fn when(condition: &str, a: Option<Value>, b: Option<Value>) -> (Outcome, Option<ToolError>) {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let seq = one_s(
        &host,
        vec![group(
            json!({"name": "g", "in": {"a": "any", "b": "any"}, "when": condition}),
            &[r#"{"tool":"work","args":{"id":"ran"}}"#],
        )],
    );
    let mut passed = Map::new();
    passed.extend(a.map(|v| ("a".to_owned(), v)));
    passed.extend(b.map(|v| ("b".to_owned(), v)));
    let report = run_on(&host, &source, &seq, passed).await;
    let g = &report.groups[0];
    let outcome = match g.status {
        GroupStatus::Ran => True,
        GroupStatus::Skipped => False,
        GroupStatus::Failed | GroupStatus::Partial | GroupStatus::Cancelled => Error,
    };
    assert_eq!(host.calls("work") == 1, outcome == True, "{condition}");
    (outcome, g.error.clone())
}

#[tokio::test(start_paused = true)]
async fn conditions_evaluate_as_d4_says() {
    let none = None::<Value>;
    let v = |value: Value| Some(value);
    let cases: Vec<(&str, Option<Value>, Option<Value>, Outcome)> = vec![
        // == and != : no coercion, numbers by value, containers member by member.
        ("$args.a == $args.b", v(json!(1)), v(json!(1.0)), True),
        ("$args.a == $args.b", v(json!(1)), v(json!("1")), False),
        ("$args.a != $args.b", v(json!(1)), v(json!("1")), True),
        (
            "$args.a == $args.b",
            v(json!(true)),
            v(json!("true")),
            False,
        ),
        (
            "$args.a == $args.b",
            v(json!({"x": [1, 2]})),
            v(json!({"x": [1.0, 2]})),
            True,
        ),
        (
            "$args.a == $args.b",
            v(json!([1, 2])),
            v(json!([2, 1])),
            False,
        ),
        ("$args.a == $args.b", v(json!(-3)), v(json!(-3.0)), True),
        (
            "$args.a == $args.b",
            v(json!(u64::MAX)),
            v(json!(u64::MAX)),
            True,
        ),
        ("$args.a == \"x\"", v(json!("x")), none.clone(), True),
        ("1 == 1.0", none.clone(), none.clone(), True),
        // Unset inputs read as null; so does null passed (not given).
        ("$args.a == null", none.clone(), none.clone(), True),
        ("$args.a == null", v(Value::Null), none.clone(), True),
        ("$args.a != null", none.clone(), none.clone(), False),
        ("$args.a == $args.b", none.clone(), none.clone(), True),
        ("$args.a == \"\"", none.clone(), none.clone(), False),
        // Ordering needs two numbers.
        ("$args.a < $args.b", v(json!(1)), v(json!(2)), True),
        ("$args.a < $args.b", v(json!(2.5)), v(json!(2)), False),
        ("$args.a >= $args.b", v(json!(3)), v(json!(3.0)), True),
        ("$args.a <= $args.b", v(json!(-1)), v(json!(u64::MAX)), True),
        ("$args.a > 0", v(json!(0.5)), none.clone(), True),
        ("$args.a < $args.b", v(json!("a")), v(json!("b")), Error),
        ("$args.a < $args.b", v(json!(1)), none.clone(), Error),
        ("$args.a > 0", v(json!("5")), none.clone(), Error),
        // contains: substring on strings, membership on arrays.
        (
            "$args.a contains $args.b",
            v(json!("error: disk")),
            v(json!("err")),
            True,
        ),
        (
            "$args.a contains \"err\"",
            v(json!("ok")),
            none.clone(),
            False,
        ),
        (
            "$args.a contains $args.b",
            v(json!(["x", "y"])),
            v(json!("y")),
            True,
        ),
        (
            "$args.a contains $args.b",
            v(json!([1, 2])),
            v(json!(1.0)),
            True,
        ),
        (
            "$args.a contains $args.b",
            v(json!([[1]])),
            v(json!([1])),
            True,
        ),
        (
            "$args.a contains $args.b",
            v(json!([])),
            none.clone(),
            False,
        ),
        (
            "$args.a contains $args.b",
            v(json!("abc")),
            v(json!(1)),
            Error,
        ),
        ("$args.a contains $args.b", v(json!(5)), v(json!(5)), Error),
        (
            "$args.a contains \"k\"",
            v(json!({"k": 1})),
            none.clone(),
            Error,
        ),
        ("$args.a contains \"x\"", none.clone(), none.clone(), Error),
        // A bare operand must be a bool; null counts as false.
        ("$args.a", v(json!(true)), none.clone(), True),
        ("$args.a", v(json!(false)), none.clone(), False),
        ("$args.a", none.clone(), none.clone(), False),
        ("$args.a", v(json!("true")), none.clone(), Error),
        ("$args.a", v(json!(1)), none.clone(), Error),
        ("$args.a", v(json!({})), none.clone(), Error),
        // Paths: a missing field reads null; a field of a non-object is an error.
        ("$args.a.x == 1", v(json!({"x": 1})), none.clone(), True),
        ("$args.a.x == null", v(json!({})), none.clone(), True),
        (
            "$args.a.x.y == null",
            v(json!({"x": {}})),
            none.clone(),
            True,
        ),
        ("$args.a.x == null", v(json!(5)), none.clone(), Error),
        ("$args.a.x == null", v(json!([1])), none.clone(), Error),
        ("$args.a.x == null", none.clone(), none.clone(), Error),
        (
            "$args.a.x.y == null",
            v(json!({"x": "s"})),
            none.clone(),
            Error,
        ),
        // Indexes: into arrays only; past the end reads null.
        ("$args.a[1] == 2", v(json!([1, 2])), none.clone(), True),
        ("$args.a[5] == null", v(json!([1])), none.clone(), True),
        ("$args.a[0].n > 1", v(json!([{"n": 2}])), none.clone(), True),
        ("$args.a[0] == \"a\"", v(json!("ab")), none.clone(), Error),
        ("$args.a[0] == 1", v(json!({"0": 1})), none.clone(), Error),
    ];
    let mut wrong = Vec::new();
    for (condition, a, b, expected) in cases {
        let (outcome, error) = when(condition, a.clone(), b.clone()).await;
        if outcome != expected {
            wrong.push(format!(
                "{condition} with a={a:?} b={b:?}: {outcome:?}, expected {expected:?}"
            ));
        }
        if outcome == Error {
            let error = error.unwrap();
            assert_eq!(error.reason, Reason::Type, "{condition}: {error}");
            assert!(
                error.detail.is_some_and(|d| d.contains("when")),
                "{condition}"
            );
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A path that does not exist is never text: an index past the end, a missing field or an unset
/// input fails the item with reason `required`, naming the reference and the missing step; a
/// condition reads the same paths as `null`.
#[tokio::test(start_paused = true)]
async fn a_path_that_does_not_exist_is_never_text() {
    let host = ScriptedHost::new();
    let source = MemorySource::new();
    let cases = [
        (
            r#"{"tool":"work","args":{"id":"a","value":"checking $args.hosts[2]"}}"#,
            "$args.hosts[2]",
            "index [2] is past the end of `$args.hosts`, which has 2 elements",
        ),
        (
            r#"{"tool":"work","args":{"id":"b","value":$args.o.none}}"#,
            "$args.o.none",
            "`$args.o` has no field `none`",
        ),
        (
            r#"{"tool":"work","args":{"id":"c","value":"${args.unset}"}}"#,
            "$args.unset",
            "input `unset` was not passed",
        ),
    ];
    for (item, field, detail) in cases {
        let seq = one_s(
            &host,
            vec![group(
                json!({"name": "g", "in": {"hosts": "array", "o": "object", "unset": "string"},
                           "when": "$args.hosts[2] == null && $args.o.none == null"}),
                &[item],
            )],
        );
        let passed = json!({"hosts": ["a", "b"], "o": {"k": 1}});
        let report = run_on(&host, &source, &seq, args(passed)).await;
        assert!(!report.ok, "{report:#?}");
        let error = report.groups[0].items[0].error.clone().unwrap();
        assert_eq!(error.reason, Reason::Required, "{error:?}");
        assert_eq!(error.field.as_deref(), Some(field));
        assert!(error.detail.unwrap().contains(detail), "{item}");
    }
    assert_eq!(host.calls("work"), 0);
}

/// `!`, `&&` and `||` evaluate left to right and short-circuit: a right side that would fail is
/// not evaluated when the left side decides, and is an error (never false) when it is.
#[tokio::test(start_paused = true)]
async fn compound_conditions_short_circuit_and_errors_stay_errors() {
    let none = None::<Value>;
    let v = |value: Value| Some(value);
    let cases: Vec<(&str, Option<Value>, Option<Value>, Outcome)> = vec![
        ("$args.a && $args.b", v(json!(true)), v(json!(true)), True),
        ("$args.a && $args.b", v(json!(true)), v(json!(false)), False),
        ("$args.a || $args.b", v(json!(false)), v(json!(true)), True),
        ("!$args.a", v(json!(false)), none.clone(), True),
        ("!$args.a", none.clone(), none.clone(), True),
        (
            "!($args.a == 1 || $args.b == 2)",
            v(json!(1)),
            v(json!(3)),
            False,
        ),
        (
            "$args.a || $args.b && false",
            v(json!(true)),
            v(json!(true)),
            True,
        ),
        (
            "($args.a || $args.b) && false",
            v(json!(true)),
            v(json!(true)),
            False,
        ),
        // Guarded by the left side: `.x` of an unset input is never read.
        (
            "$args.a != null && $args.a.x > 0",
            none.clone(),
            none.clone(),
            False,
        ),
        (
            "$args.a == null || $args.a.x > 0",
            none.clone(),
            none.clone(),
            True,
        ),
        (
            "$args.a != null && $args.a.x > 0",
            v(json!({"x": 2})),
            none.clone(),
            True,
        ),
        // Evaluated, the same read is an error, never false.
        (
            "$args.b || $args.a.x > 0",
            none.clone(),
            v(json!(false)),
            Error,
        ),
        ("$args.a && $args.b", v(json!(true)), v(json!("yes")), Error),
        (
            "$args.a && $args.b",
            v(json!(false)),
            v(json!("yes")),
            False,
        ),
        // Both sides references, and a path past the end reads `null` here.
        (
            "$args.a[5] == null && $args.a[0] == $args.b",
            v(json!([1])),
            v(json!(1)),
            True,
        ),
    ];
    for (condition, a, b, expected) in cases {
        let (outcome, error) = when(condition, a.clone(), b.clone()).await;
        assert_eq!(
            outcome, expected,
            "{condition} with a={a:?} b={b:?}: {error:?}"
        );
    }
}
