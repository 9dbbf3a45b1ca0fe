//! One policy at every door: for each case of `tests/fixtures/policy_doors/cases.json` (a tool
//! or right denied, an item that needs it), the item is refused at each door — the engine in
//! process, `seqc run`, `seqc mcp` over stdio, and a `seqc worker` given a run straight at the
//! Restate ingress — with the same reason and the same words.
//!
//! The worker's case is the one a host could not answer: the worker's own `--deny seq_call` or
//! `--deny seq_run` bounds every run it executes, whatever policy the run's input claims.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/restate.rs"]
mod restate;
#[path = "common/session.rs"]
mod session;

use restate::{Restate, free_port, localhost, post};
use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::RunRequest;
use seq_exec::policy::Policy;
use seq_exec::{Authorizer, Caller, Engine, ToolHost};
use seq_syntax::ast::Sequence;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use session::Session;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The caller of every door.
const CALLER: &str = "alice";

#[derive(Debug, Deserialize)]
struct Case {
    case: String,
    /// The pattern the door is started to deny.
    deny: String,
    /// The item of the sequence's first group, which needs what is denied.
    item: Value,
    /// The tool or right the refusal names.
    refused: String,
}

fn fixtures() -> PathBuf {
    Path::new(common::PACKAGE).join("tests/fixtures/policy_doors")
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(fixtures().join("cases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn helper() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("helper.json")).unwrap()).unwrap()
}

/// The sequence of a case: its item, then a group its calls may target.
fn outer(case: &Case) -> Value {
    json!({
        "name": "outer",
        "description": "Needs what the case denies.",
        "groups": [
            {"name": "main", "description": "The item.", "parallel": false,
             "tools": case.item.to_string() + " ;"},
            {"name": "g2", "description": "A group to call.", "parallel": false,
             "tools": json!({"tool": "echo", "args": {"value": "called"}}).to_string() + " ;"}
        ]
    })
}

fn parsed(sequence: &Value) -> Sequence {
    let parse = seq_syntax::parse(&sequence.to_string());
    assert!(!parse.has_errors(), "{:?}", parse.diagnostics);
    parse.sequence.unwrap()
}

/// The refusal every door must give.
fn expected(case: &Case) -> (String, String) {
    (
        "unauthorized".to_owned(),
        format!("caller `{CALLER}` may not use `{}`", case.refused),
    )
}

/// Every `(reason, detail)` of an error anywhere in `value` (a report, an MCP answer).
fn errors(value: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    collect(value, &mut found);
    found
}

fn collect(value: &Value, found: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            if let (Some(reason), Some(detail)) = (
                map.get("reason").and_then(Value::as_str),
                map.get("detail").and_then(Value::as_str),
            ) {
                found.push((reason.to_owned(), detail.to_owned()));
            }
            map.values().for_each(|v| collect(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, found)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn assert_refused(door: &str, case: &Case, answer: &Value) {
    assert!(
        errors(answer).contains(&expected(case)),
        "{door}, {}: expected {:?} in {answer}",
        case.case,
        expected(case)
    );
}

/// The engine in process, its authorizer denying what the case denies.
#[test]
fn the_engine_in_process_refuses_each_case() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    let helper = Arc::new(parsed(&helper()));
    for case in cases() {
        let host: Arc<dyn ToolHost> = Arc::new(BuiltinHost::new(root.path()));
        let stored: HashMap<String, Arc<Sequence>> =
            HashMap::from([("helper".to_owned(), Arc::clone(&helper))]);
        let engine = Engine::new(host, Arc::new(stored))
            .with_authorizer(Authorizer::new(Policy::allow_all().deny(&case.deny)));
        let report = runtime.block_on(engine.run(
            &parsed(&outer(&case)),
            Map::new(),
            RunRequest::new(&Caller::new(CALLER)),
        ));
        assert_refused("in process", &case, &serde_json::to_value(&report).unwrap());
    }
}

/// `seqc run FILE --deny PATTERN`, the helper stored in its data directory.
#[test]
fn seqc_run_refuses_each_case() {
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let helper_file = dir.path().join("helper.json");
        std::fs::write(&helper_file, helper().to_string()).unwrap();
        common::create_in(&helper_file, &data);
        let file = dir.path().join("outer.json");
        std::fs::write(&file, outer(&case).to_string()).unwrap();
        let ran = common::command()
            .arg("run")
            .arg(&file)
            .args(["--format", "json", "--caller", CALLER, "--deny", &case.deny])
            .arg("--root")
            .arg(dir.path())
            .arg("--data-dir")
            .arg(&data)
            .output()
            .unwrap();
        let report: Value = serde_json::from_str(common::stdout(&ran))
            .unwrap_or_else(|error| panic!("{error}: {}", common::stderr(&ran)));
        assert_refused("seqc run", &case, &report);
    }
}

/// `seqc mcp --deny PATTERN` over stdio: the sequences stored by the same caller at a door
/// that denies nothing, run at the one that denies the case's.
#[test]
fn seqc_mcp_refuses_each_case() {
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let data = data.path();
        let root = dir.path().to_str().unwrap();
        let mut open = Session::start(&["--caller", CALLER, "--root", root], Some(data));
        for sequence in [helper(), outer(&case)] {
            let created = open.call("seq_create", sequence);
            assert_eq!(created["isError"], false, "{created}");
        }
        open.close();
        let mut denied = Session::start(
            &["--caller", CALLER, "--root", root, "--deny", &case.deny],
            Some(data),
        );
        let ran = denied.call("seq_run", json!({"name": "outer"}));
        assert_eq!(ran["isError"], true, "{ran}");
        assert_refused("seqc mcp", &case, &ran);
        denied.close();
    }
}

/// A worker started with `--deny PATTERN`, given the run straight at the ingress with a
/// travelling policy that allows everything: the worker's own bound refuses it.
#[test]
fn a_worker_refuses_each_case_whatever_the_run_claims() {
    for (n, case) in cases().iter().enumerate() {
        let restate = Restate::start();
        let root = tempfile::tempdir().unwrap();
        let _worker = restate.worker_with(
            localhost(free_port()),
            root.path(),
            &["--deny", &case.deny],
            &[],
        );
        let input = json!({
            "sequence": parsed(&outer(case)),
            "sequences": [parsed(&helper())],
            "caller": CALLER,
            "policy": {"allow": ["*"]},
        });
        let (status, body) = post(
            &restate.ingress,
            &format!("/SeqRun/doors-{n}/run"),
            Some(&input),
        );
        assert_eq!(status, 200, "{body}");
        let report: Value = serde_json::from_str(&body).unwrap();
        assert_refused("seqc worker", case, &report);
    }
}
