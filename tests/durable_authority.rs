//! Authority on the durable paths, end to end: a real Restate server, `seqc worker`s with
//! policies of their own, runs submitted through `seqc mcp --restate` and straight to the
//! ingress (as anyone who reaches it could).
//!
//! - a worker's own policy bounds every run on it: a command it was not started to allow is
//!   refused in a run submitted straight to the ingress, whatever the run's input says;
//! - a caller denied `files_write` at `seqc mcp --restate` writes nothing through a durable run,
//!   a nested `#name` call included; and a run's travelling policy is enforced by the worker at
//!   every dispatch, also when the run is submitted straight to the ingress;
//! - a durable run's input, as Restate keeps it, carries its caller's rights and no secret.

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
use serde_json::{Value, json};
use session::Session;
use std::path::Path;

/// The checked AST of `sequence`, as `seqc create` stores it: what a run's input carries.
fn ast(sequence: &Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let name = sequence["name"].as_str().unwrap();
    let file = dir.path().join(format!("{name}.json"));
    std::fs::write(&file, sequence.to_string()).unwrap();
    common::create_in(&file, dir.path());
    let stored = dir.path().join("sequences").join(format!("{name}.json"));
    let envelope: Value = serde_json::from_str(&std::fs::read_to_string(stored).unwrap()).unwrap();
    envelope["sequence"].clone()
}

/// A sequence of one group running `tools`.
fn one_group(name: &str, tools: &str) -> Value {
    json!({
        "name": name,
        "description": format!("The sequence {name}."),
        "groups": [{"name": "g", "description": "One group.", "parallel": false, "tools": tools}]
    })
}

/// A `files_write` item writing `path`.
fn write_item(path: &str) -> String {
    json!({"tool": "files_write", "args": {"path": path, "content": "written"},
           "unsafe_serial": true})
    .to_string()
        + " ;"
}

/// A `seq_call` item of the stored `#target`.
fn call_item(target: &str) -> String {
    json!({"tool": "seq_call", "args": {"target": format!("#{target}")}, "unsafe_serial": true})
        .to_string()
        + " ;"
}

/// `input` submitted straight to the ingress as run `id`, awaited: the run's report.
fn run_at_ingress(restate: &Restate, id: &str, input: &Value) -> Value {
    let (status, body) = post(&restate.ingress, &format!("/SeqRun/{id}/run"), Some(input));
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|error| panic!("{error}: {body}"))
}

/// The reasons of the items of `report`'s groups that failed, in order, called groups included.
fn refusals(report: &Value) -> Vec<String> {
    let mut found = Vec::new();
    collect_refusals(report, &mut found);
    found
}

fn collect_refusals(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(reason) = map
                .get("error")
                .and_then(|error| error.get("reason"))
                .and_then(Value::as_str)
            {
                found.push(reason.to_owned());
            }
            map.values().for_each(|v| collect_refusals(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refusals(v, found)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn exists(root: &Path, name: &str) -> bool {
    root.join(name).exists()
}

/// Whoever reaches the ingress can submit any input; a worker started without `--enable
/// cmd_run` runs no command for it, and still runs what it allows.
#[test]
fn a_worker_runs_no_command_it_was_not_started_to_allow_whoever_submits() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let _worker = restate.worker_with(localhost(free_port()), root.path(), &[], &[]);
    let shell = ast(&one_group(
        "shell",
        &(json!({"tool": "echo", "args": {"value": "before"}}).to_string()
            + " ; "
            + &json!({"tool": "cmd_run", "args": {"command": "touch pwned"}}).to_string()
            + " ;"),
    ));
    // The input claims everything it can: any caller, a policy allowing all.
    let input = json!({"sequence": shell, "caller": "mallory", "policy": {"allow": ["*"]}});
    let report = run_at_ingress(&restate, "direct-shell", &input);
    assert_eq!(report["ok"], false, "{report}");
    let items = &report["groups"][0]["items"];
    assert_eq!(items[0]["status"], "ok", "{report}");
    assert_eq!(items[1]["error"]["reason"], "unauthorized", "{report}");
    assert!(!exists(root.path(), "pwned"), "the command ran: {report}");
}

/// A policy file that turns `files_write` on, and denies it to `bob`.
fn bob_may_not_write(dir: &Path) -> String {
    let path = dir.join("policy.json");
    let policy = json!({"enable": ["files_write"], "callers": {"bob": {"deny": ["files_write"]}}});
    std::fs::write(&path, policy.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn durable_session(restate: &Restate, caller: &str, policy: &str, root: &Path) -> Session {
    let root = root.to_str().unwrap();
    let options = ["--caller", caller, "--policy", policy, "--root", root];
    Session::start(&restate.mcp_args(&options), None)
}

/// `bob` is denied `files_write` at the MCP server; the worker allows writes. Neither alice's
/// `helper` (which writes) nor her `outer` (which calls it) writes anything when bob runs
/// them; run by alice, `helper` writes.
#[test]
fn a_caller_denied_writes_at_the_mcp_server_writes_nothing_through_a_durable_run() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let _worker = restate.worker(localhost(free_port()), root.path());
    let policy = bob_may_not_write(root.path());
    let mut alice = durable_session(&restate, "alice", &policy, root.path());
    let mut bob = durable_session(&restate, "bob", &policy, root.path());
    for (name, tools) in [
        ("helper", write_item("written")),
        ("outer", call_item("helper")),
    ] {
        let created = alice.call("seq_create", one_group(name, &tools));
        assert_eq!(created["isError"], false, "{created}");
    }
    for name in ["helper", "outer"] {
        let ran = bob.call("seq_run", json!({"name": name}));
        assert_eq!(ran["isError"], true, "{name}: {ran}");
        assert_eq!(
            ran["structuredContent"]["error"]["reason"], "unauthorized",
            "{name}: {ran}"
        );
        assert!(!exists(root.path(), "written"), "{name} wrote: {ran}");
    }
    let ran = alice.call("seq_run", json!({"name": "outer"}));
    assert_eq!(ran["isError"], false, "{ran}");
    assert!(exists(root.path(), "written"), "{ran}");
}

/// The same runs submitted straight to the ingress, with the policy the MCP server would send
/// for bob: the worker holds every dispatch to it, in the called run too.
#[test]
fn the_worker_enforces_the_travelling_policy_at_every_dispatch() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let _worker = restate.worker(localhost(free_port()), root.path());
    let helper = ast(&one_group("helper", &write_item("written")));
    let outer = ast(&one_group("outer", &call_item("helper")));
    let input = |caller: &str, sequence: &Value| {
        json!({
            "sequence": sequence,
            "owner": "alice",
            "sequences": [helper],
            "owners": {"helper": "alice"},
            "caller": caller,
            "policy": {"callers": {"bob": {"deny": ["files_write"]}}},
        })
    };
    for (id, sequence) in [("bob-helper", &helper), ("bob-outer", &outer)] {
        let report = run_at_ingress(&restate, id, &input("bob", sequence));
        assert_eq!(report["ok"], false, "{id}: {report}");
        assert!(
            refusals(&report).contains(&"unauthorized".to_owned()),
            "{id}: {report}"
        );
        assert!(!exists(root.path(), "written"), "{id} wrote: {report}");
    }
    let report = run_at_ingress(&restate, "alice-outer", &input("alice", &outer));
    assert_eq!(report["ok"], true, "{report}");
    assert!(exists(root.path(), "written"), "{report}");
}

/// The text of every journaled input of the invocations of `service`, as Restate stores it
/// (the admin API's SQL over `sys_journal`: the input command's payload, as bytes).
fn stored_inputs(restate: &Restate, service: &str) -> Vec<String> {
    let sql = format!(
        "SELECT j.entry_json FROM sys_journal j JOIN sys_invocation i ON j.id = i.id \
         WHERE i.target_service_name = '{service}' AND j.entry_type = 'Command: Input'"
    );
    restate::query(&restate.admin, &sql)
        .iter()
        .map(|row| {
            let entry: Value = serde_json::from_str(row["entry_json"].as_str().unwrap()).unwrap();
            let payload = entry["Command"]["Input"]["payload"].as_array().unwrap();
            let bytes: Vec<u8> = payload
                .iter()
                .map(|b| u8::try_from(b.as_u64().unwrap()).unwrap())
                .collect();
            String::from_utf8(bytes).unwrap()
        })
        .collect()
}

/// A policy whose callers have token hashes and OAuth scopes (the secrets of `seqc mcp
/// --http`): a durable run of bob's, its input and its item's as Restate keeps them, carries
/// bob's rights (his denial of `files_write`) and none of them, nor the OAuth settings.
#[test]
fn a_durable_runs_journal_holds_rights_and_no_secrets() {
    const HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let _worker = restate.worker(localhost(free_port()), root.path());
    let policy = root.path().join("policy.json");
    let rules = json!({
        "enable": ["files_write"],
        "callers": {
            "alice": {"token_sha256": HASH.replace('9', "8"), "scope": "alice-scope"},
            "bob": {"deny": ["files_write"], "token_sha256": HASH, "scope": "bob-scope"}
        },
        "oauth": {"issuer": "https://issuer.invalid", "resource": "https://seqc.invalid"}
    });
    std::fs::write(&policy, rules.to_string()).unwrap();
    let policy = policy.to_str().unwrap();
    let mut alice = durable_session(&restate, "alice", policy, root.path());
    let mut bob = durable_session(&restate, "bob", policy, root.path());
    let echo = json!({"tool": "echo", "args": {"value": "hi"}}).to_string() + " ;";
    let created = alice.call("seq_create", one_group("greet", &echo));
    assert_eq!(created["isError"], false, "{created}");
    let ran = bob.call("seq_run", json!({"name": "greet"}));
    assert_eq!(ran["isError"], false, "{ran}");
    let runs = stored_inputs(&restate, "SeqRun");
    let items = stored_inputs(&restate, "SeqItem");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(!items.is_empty());
    for input in runs.iter().chain(&items) {
        assert!(input.contains(r#""caller":"bob""#), "{input}");
        assert!(
            input.contains(r#""bob":{"deny":["files_write"]}"#),
            "{input}"
        );
        for secret in [
            "token_sha256",
            "8f86d",
            HASH,
            "scope",
            "oauth",
            "issuer.invalid",
        ] {
            assert!(!input.contains(secret), "{secret} in {input}");
        }
    }
}
