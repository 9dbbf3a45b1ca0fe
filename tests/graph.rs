//! `seqc graph`: the call graph of the files given, as DOT or JSON, snapshotted over the examples
//! and a small store of three files.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{seqc, stderr, stdout};
use seq_test_support::strings_at;
use serde_json::Value;

const STORE: &str = "tests/fixtures/store";

/// Runs `seqc graph` and snapshots its stdout under `name`; it must succeed silently.
fn snapshot_graph(name: &str, args: &[&str]) -> String {
    let mut all = vec!["graph"];
    all.extend(args);
    let output = seqc(&all);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(output.stderr.is_empty(), "{}", stderr(&output));
    let text = stdout(&output).to_owned();
    insta::with_settings!({ omit_expression => true }, {
        insta::assert_snapshot!(name, format!("$ seqc {}\n{text}", all.join(" ")));
    });
    text
}

#[test]
fn the_examples_as_dot_and_json() {
    let dot = snapshot_graph("examples_dot", &["examples/"]);
    assert!(dot.starts_with("digraph calls {\n") && dot.ends_with("}\n"));
    let default = seqc(&["graph", "--format", "dot", "examples/"]);
    assert_eq!(stdout(&default), dot, "dot is the default");

    let json = snapshot_graph("examples_json", &["--format", "json", "examples/"]);
    let graph: Value = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = strings_at(&graph["sequences"], "name");
    assert_eq!(
        names,
        [
            "failed-checks",
            "hello",
            "巡检三节点",
            "release-gate",
            "system-report"
        ]
    );
}

#[test]
fn a_store_of_three_files_links_calls_across_them() {
    snapshot_graph("store_dot", &[STORE]);
    let json = snapshot_graph("store_json", &["--format", "json", STORE]);
    let graph: Value = serde_json::from_str(&json).unwrap();
    let edges = graph["edges"].as_array().unwrap();
    let edge = |target: &str| {
        edges
            .iter()
            .find(|e| e["target"] == target)
            .unwrap_or_else(|| panic!("no edge to {target}: {edges:#?}"))
    };
    // backup.json's `main` calls notify.json's sequence; nightly.json calls backup.json's.
    assert_eq!(edge("#notify")["from"], "s0g1");
    assert_eq!(edge("#notify")["to"], "s2");
    assert_eq!(edge("#backup")["to"], "s0");
    assert_eq!(edge("dump")["to"], "s0g0");
    assert_eq!(edge("#weekly-report")["to"], Value::Null);
}

/// A file with syntax errors is still drawn from what could be read; its errors go to stderr,
/// one line each, and the status is 1.
#[test]
fn syntax_errors_go_to_stderr_and_the_rest_is_still_drawn() {
    let broken = "tests/fixtures/syntax/err_missing_semicolon.json";
    let notify = format!("{STORE}/notify.json");
    let output = seqc(&["graph", "--format", "json", broken, &notify]);
    assert_eq!(output.status.code(), Some(1));
    let graph: Value = serde_json::from_str(stdout(&output)).unwrap();
    let names: Vec<&str> = strings_at(&graph["sequences"], "name");
    assert_eq!(names, ["check_nodes", "notify"]);

    let check = seqc(&["check", "--format", "json", broken]);
    let report: Value = serde_json::from_str(stdout(&check)).unwrap();
    let expected: String = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}:{}:{}: {}[{}]: {}\n",
                d["file"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["severity"].as_str().unwrap(),
                d["code"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(stderr(&output), expected);
}

#[test]
fn a_file_that_is_not_utf8_is_left_out_with_its_error() {
    let output = seqc(&["graph", "tests/fixtures/syntax/err_not_utf8.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "digraph calls {\n  compound=true;\n  node [shape=box];\n}\n"
    );
    assert!(
        stderr(&output).starts_with("tests/fixtures/syntax/err_not_utf8.json:"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("error[E0007]"));
}

#[test]
fn usage_and_input_problems_exit_with_2() {
    for args in [
        &["graph"][..],
        &["graph", "--format", "svg", "examples/"],
        &["graph", "no/such/file.json"],
    ] {
        let output = seqc(args);
        assert_eq!(output.status.code(), Some(2), "seqc {args:?}");
        assert!(!stderr(&output).is_empty(), "seqc {args:?}");
        assert!(stdout(&output).is_empty(), "seqc {args:?}");
    }
    let help = seqc(&["graph", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("stderr"), "--help documents errors");
}
