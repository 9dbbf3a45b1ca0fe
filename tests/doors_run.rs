//! One run at every door: the runnable sequences of `tests/fixtures/doors_run/` (builtin tools
//! only: a group calling another, a `#name` call of a stored sequence, `when` and `else`, an
//! `each`, a tolerated failure and one nothing tolerates) are stored once, then each is run by
//! name through the four doors that run a stored sequence:
//!
//! - `seqc run '#name'` (the command line);
//! - `seq_run` over `seqc mcp` on stdio;
//! - `seq_run` over `seqc mcp --http`;
//! - `seqc run --restate '#name'` on a `seqc worker` registered with a real Restate server.
//!
//! Each door's outcomes become one normalized record (per sequence: whether the door said it
//! succeeded, the report's status, outputs and errors, each group's status, called groups too,
//! and every failed item's reason and detail); the four must be equal, and the one record is a
//! snapshot. One Restate server and one worker serve the whole file; every process the test
//! starts is stopped before it ends.
//!
//! The first three doors read the sequences from one data directory; the durable door from the
//! Restate server's storage (a durable run carries the sequences it reaches, read there), so
//! the corpus is stored once in each storage, by `seqc create`.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/http.rs"]
mod http;
#[path = "common/restate.rs"]
mod restate;
#[path = "common/session.rs"]
mod session;

use common::{status, stderr};
use restate::{Restate, free_port, localhost};
use serde_json::{Map, Value, json};
use session::Session;
use std::path::Path;

/// The corpus: every file of `tests/fixtures/doors_run/` (relative to the package), sorted,
/// with the name of the sequence it holds. `lib.json` holds the sequence the others call by
/// `#name`; it is run like the rest.
fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(common::PACKAGE).join("tests/fixtures/doors_run");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let sequence: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let file = path.strip_prefix(common::PACKAGE).unwrap();
            (
                file.to_str().unwrap().to_owned(),
                sequence["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    files.sort();
    files
}

/// `seqc create FILE STORAGE…` for every file of the corpus.
fn store(storage: &[&str]) {
    for (file, _) in corpus() {
        let created = common::command()
            .arg("create")
            .arg(&file)
            .args(storage)
            .output()
            .unwrap();
        assert_eq!(status(&created), 0, "{file}: {}", stderr(&created));
    }
}

/// A run's outcome in the words every door shares: whether the door said it succeeded (exit
/// status 0, or an MCP answer that is no error), the report's status, outputs (`out`) and error,
/// each group's status and error (called groups too, named by the path of calls to them) and each
/// failed item's reason and detail, in report order. Timings are left out.
fn normalized(succeeded: bool, report: &Value) -> Value {
    let mut groups = Vec::new();
    let mut failed = Vec::new();
    for group in report["groups"].as_array().into_iter().flatten() {
        walk(group, "", &mut groups, &mut failed);
    }
    json!({
        "succeeded": succeeded,
        "ok": report["ok"],
        "error": error(&report["error"]),
        "out": report["out"],
        "groups": groups,
        "failed": failed,
    })
}

/// An error's reason and detail (its hint is the reason's, and says nothing a door could change).
fn error(error: &Value) -> Value {
    if error.is_null() {
        return Value::Null;
    }
    json!({"reason": error["reason"], "detail": error["detail"]})
}

/// A group's report and those of the groups its items called, `within` the path of calls to it.
fn walk(group: &Value, within: &str, groups: &mut Vec<Value>, failed: &mut Vec<Value>) {
    let name = group["name"].as_str().unwrap_or_default();
    let path = match group["sequence"].as_str() {
        Some(sequence) => format!("{within}#{sequence}/{name}"),
        None => format!("{within}{name}"),
    };
    let mut entry = json!({"group": path, "status": group["status"]});
    if !group["error"].is_null() {
        entry["error"] = error(&group["error"]);
    }
    groups.push(entry);
    for (index, item) in group["items"].as_array().into_iter().flatten().enumerate() {
        if !item["error"].is_null() {
            failed.push(
                json!({"group": path, "item": index + 1, "tool": item["tool"],
                               "error": error(&item["error"])}),
            );
        }
        for called in item["called"].as_array().into_iter().flatten() {
            walk(called, &format!("{path} → "), groups, failed);
        }
    }
}

/// Every sequence run by `run` (whether the door said it succeeded, and the report), keyed by
/// name: one door's record.
fn record(mut run: impl FnMut(&str) -> (bool, Value)) -> Value {
    let mut record = Map::new();
    for (_, name) in corpus() {
        let (succeeded, report) = run(&name);
        record.insert(name, normalized(succeeded, &report));
    }
    Value::Object(record)
}

/// The report of a `seq_run` answer: the structured content when the run succeeded, its
/// `report` beside the error when not.
fn mcp_report(answer: &Value) -> (bool, Value) {
    let structured = &answer["structuredContent"];
    let failed = answer["isError"] == true;
    let mut report = if failed {
        structured["report"].clone()
    } else {
        structured.clone()
    };
    assert!(report.is_object(), "no report in {answer}");
    common::redact_durations(&mut report);
    (!failed, report)
}

/// What `seqc run` said: its exit status 0, and its report.
fn exited(output: &std::process::Output) -> (bool, Value) {
    (status(output) == 0, restate::report(output))
}

#[test]
fn every_door_runs_the_corpus_to_the_same_outcome() {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let root_dir = root.path().to_str().unwrap();
    store(&["--data-dir", data_dir]);

    let cli = record(|name| {
        exited(&restate::local(
            data.path(),
            &[&format!("#{name}"), "--root", root_dir],
        ))
    });

    let mut stdio = Session::start(&["--root", root_dir], Some(data.path()));
    let mcp_stdio = record(|name| mcp_report(&stdio.call("seq_run", json!({"name": name}))));
    drop(stdio);

    // Killed when dropped: here, or on the way out of a failed assertion.
    let (server, url) = http::serve(&["--root", root_dir, "--data-dir", data_dir]);
    let server = restate::Process(server);
    let mut client = http::Client::connect(&url, None);
    let mcp_http = record(|name| mcp_report(&client.call("seq_run", json!({"name": name}))));
    drop(server);

    let restate = Restate::start();
    let worker_root = tempfile::tempdir().unwrap();
    let worker = restate.worker_with(localhost(free_port()), worker_root.path(), &[], &[]);
    store(&["--restate", &restate.ingress]);
    let durable = record(|name| exited(&restate.run(data.path(), &[&format!("#{name}")])));
    drop(worker);
    drop(restate);

    for (door, outcome) in [
        ("seq_run over seqc mcp (stdio)", &mcp_stdio),
        ("seq_run over seqc mcp --http", &mcp_http),
        ("seqc run --restate on a worker", &durable),
    ] {
        assert_eq!(outcome, &cli, "{door} differs from seqc run");
    }
    insta::assert_json_snapshot!("doors_run", cli);
}
