//! `seqc run` end to end on the repository's examples: what reaches stdout (the sequence's own
//! output, then the JSON report as the last line), the live view on stderr, the exit status,
//! and the reports themselves as snapshots (durations redacted).

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{status, stderr};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// Runs `seqc` in the package directory with the data directory `data`.
fn seqc(data: &Path, args: &[&str]) -> Output {
    common::command()
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout_lines(output: &Output) -> Vec<&str> {
    std::str::from_utf8(&output.stdout)
        .unwrap()
        .lines()
        .collect()
}

/// The report: the last line of stdout, with every `duration_ms` set to 0.
fn report(output: &Output) -> Value {
    let last = stdout_lines(output).last().copied().unwrap_or_default();
    let mut report: Value = serde_json::from_str(last).unwrap();
    common::redact_durations(&mut report);
    report
}

#[test]
fn hello_prints_its_greeting_then_the_report() {
    let data = tempfile::tempdir().unwrap();
    let output = seqc(data.path(), &common::HELLO_WORLD);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let lines = stdout_lines(&output);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], "Hello, world!");
    // One compact line: the same object `seq_run` returns.
    assert!(lines[1].starts_with(r#"{"ok":true,"#), "{}", lines[1]);
    insta::assert_json_snapshot!("hello", report(&output));
}

#[test]
fn the_human_view_goes_to_stderr_and_leaves_stdout_to_the_sequence() {
    let data = tempfile::tempdir().unwrap();
    let output = seqc(
        data.path(),
        &["run", "examples/hello.json", "--args", r#"{"who":"you"}"#],
    );
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout_lines(&output), ["Hello, you!"]);
    // stderr is a pipe here: plain lines, no spinners.
    let view: Vec<&str> = stderr(&output).lines().collect();
    assert_eq!(view.len(), 5, "{view:?}");
    assert_eq!(view[0], "▶ group greet (serial, 2 items)");
    assert_eq!(view[1], "  ✓ echo → greeting");
    assert_eq!(view[2], "  ✓ output_send__stdout");
    assert!(view[3].starts_with("■ group greet ran in "), "{}", view[3]);
    assert!(
        view[4].starts_with("✓ hello succeeded in ") && view[4].ends_with(": 1 group ran"),
        "{}",
        view[4]
    );
}

#[test]
fn system_report_writes_its_file_under_the_root() {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let output = seqc(
        data.path(),
        &[
            "run",
            "examples/system-report.json",
            "--root",
            root.path().to_str().unwrap(),
            "--args",
            r#"{"path":"reports/system.txt"}"#,
            "--format",
            "json",
        ],
    );
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let lines = stdout_lines(&output);
    assert_eq!(lines[0], "report written to reports/system.txt");
    let written = std::fs::read_to_string(root.path().join("reports/system.txt")).unwrap();
    assert!(written.contains("cores: "), "{written}");
    let report = report(&output);
    assert_eq!(report["ok"], true);
    let group = &report["groups"][0];
    assert_eq!(group["status"], "ran");
    assert_eq!(group["parallel"], false);
    let statuses: Vec<&Value> = group["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["status"])
        .collect();
    assert_eq!(statuses, ["ok", "ok", "ok", "ok"]);
    // Two commands appended to the one `array` slot, in item order.
    let facts = report["out"]["report"]["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 2);
    assert!(facts[1]["stdout"].as_str().unwrap().starts_with("cores: "));
}

/// `#hello` is created in the data directory first; `release-gate` reaches it through
/// `seq_when_call`, which calls it only when `announce` is true.
#[test]
fn release_gate_calls_the_stored_hello_only_when_asked() {
    let data = tempfile::tempdir().unwrap();
    let created = seqc(data.path(), &["create", "examples/hello.json"]);
    assert_eq!(status(&created), 0, "{}", stderr(&created));

    let run = |announce: bool| {
        let args = format!(r#"{{"announce":{announce},"version":"1.2"}}"#);
        let run = [
            "run",
            "examples/release-gate.json",
            "--args",
            &args,
            "--format",
            "json",
        ];
        seqc(data.path(), &run)
    };
    let announced = run(true);
    assert_eq!(status(&announced), 0, "{}", stderr(&announced));
    // `#hello` printed its greeting before the report.
    assert_eq!(stdout_lines(&announced)[0], "Hello, release 1.2!");
    let report = report(&announced);
    assert_eq!(
        report["out"]["checks"]["greeting"]["greet"]["greeting"],
        "Hello, release 1.2!"
    );
    insta::assert_json_snapshot!("release_gate_announced", report);

    let quiet = run(false);
    assert_eq!(status(&quiet), 0, "{}", stderr(&quiet));
    assert_eq!(stdout_lines(&quiet).len(), 1, "only the report");
    let report = self::report(&quiet);
    assert_eq!(report["groups"][0]["items"][2]["status"], "skipped");
    insta::assert_json_snapshot!("release_gate_quiet", report);

    // The live view shows what the call ran, below the call's line (the call's lines only: the
    // group's items finish in any order).
    let human = seqc(
        data.path(),
        &[
            "run",
            "examples/release-gate.json",
            "--args",
            r#"{"announce":true,"version":"1.2"}"#,
        ],
    );
    assert_eq!(status(&human), 0, "{}", stderr(&human));
    let view = without_durations(stderr(&human));
    let call: Vec<&str> = view
        .lines()
        .skip_while(|line| !line.contains("seq_when_call"))
        .take_while(|line| line.contains("seq_when_call") || line.starts_with("    "))
        .collect();
    insta::assert_snapshot!("release_gate_human", call.join("\n"));
}

/// The live view with every `N ms` as `_ ms`.
fn without_durations(text: &str) -> String {
    let parts: Vec<&str> = text.split(" ms").collect();
    let last = parts.len() - 1;
    let mut out = String::new();
    for (i, part) in parts.into_iter().enumerate() {
        if i < last {
            out.push_str(part.trim_end_matches(|c: char| c.is_ascii_digit()));
            out.push_str("_ ms");
        } else {
            out.push_str(part);
        }
    }
    out
}
