//! Storage in the engine, end to end: a real Restate server, a `seqc worker` (which serves the
//! `SeqStore` and `SeqIndex` objects besides the runs), and several `seqc mcp --restate`
//! servers driven over stdio, plus the command line's `--restate`.
//!
//! - what one MCP server creates, another lists, runs and may not delete (owners), and
//!   `seqc list --restate` and `seqc run --restate '#name'` see it too;
//! - of two servers creating one name at once, exactly one stores it;
//! - a sequence that would break a stored one (a cycle through it) is refused;
//! - a durable `seq_run` answers the report a local `seq_run` gives;
//! - a cancelled `seq_run` request cancels its durable run;
//! - a request straight to the `SeqStore` object naming another caller's sequence is refused as
//!   the seq tools refuse it.
//! - two callers with tokens share one `seqc mcp --http --restate`: each runs durably and gets
//!   its own report, and neither may replace or delete what the other stored.
//! - a durable `seq_run` over HTTP that asks for progress is told each item and group as it
//!   finishes on the worker, while the run still runs.

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
use restate::{Restate, Setup, evidence_lines, post, query, wait_for};
use serde_json::{Value, json};
use session::Session;
use std::path::Path;
use std::time::Duration;

/// `seqc mcp --restate` on `restate`'s storage for `caller`, with `cmd_run` on.
fn durable(restate: &Restate, caller: &str, root: &Path) -> Session {
    let root = root.to_str().unwrap();
    let options = ["--caller", caller, "--enable", "cmd_run", "--root", root];
    Session::start(&restate.mcp_args(&options), None)
}

/// `seqc mcp` on the data directory `data`, runs in process.
fn local(data: &Path, root: &Path) -> Session {
    Session::start(
        &["--caller", "a", "--root", root.to_str().unwrap()],
        Some(data),
    )
}

/// `seq_create`'s arguments for a sequence of one group running `tools`.
fn one_group(name: &str, tools: &str) -> Value {
    json!({
        "name": name,
        "description": format!("The sequence {name}."),
        "groups": [{"name": "g", "description": "One group.", "in": {"who": "string"},
                    "out": {"v": "any"}, "tools": tools}]
    })
}

fn echo(value: &str) -> String {
    format!(r#"{{"tool":"echo","args":{{"value":"{value} $args.who"}},"as":"v"}} ;"#)
}

fn call_of(target: &str) -> String {
    format!(r##"{{"tool":"seq_call","args":{{"target":"#{target}"}},"as":"v"}} ;"##)
}

fn failed(result: &Value) -> bool {
    result["isError"] == true
}

/// The report a `seq_run` answered, durations set to 0.
fn run_report(result: &Value) -> Value {
    let structured = &result["structuredContent"];
    let mut report = if failed(result) {
        structured["report"].clone()
    } else {
        structured.clone()
    };
    assert!(report.is_object(), "no report: {result}");
    common::redact_durations(&mut report);
    report
}

/// What one MCP server stores, another lists, runs (durably, with the report a local run
/// gives) and may not delete; the command line sees it too.
#[test]
fn mcp_servers_and_the_command_line_share_the_storage_in_the_engine() {
    let Setup {
        restate,
        root,
        data,
        worker: _worker,
    } = Setup::start();
    let mut a = durable(&restate, "a", root.path());
    let mut b = durable(&restate, "b", root.path());

    let greet = one_group("greet", &echo("hello"));
    let created = a.call("seq_create", greet.clone());
    assert!(!failed(&created), "{created}");
    let listed = b.call("seq_list", json!({}));
    let rows = &listed["structuredContent"]["result"];
    assert_eq!(rows[0]["name"], "greet", "{listed}");
    assert_eq!(rows[0]["owner"], "a", "{listed}");

    // Runs are durable here: the calls made directly would run in the server, and are not offered.
    let tools = b.tools();
    assert!(tools.contains(&"seq_run".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"seq_call".to_owned()), "{tools:?}");

    let durable = b.call("seq_run", json!({"name": "greet", "args": {"who": "b"}}));
    assert!(!failed(&durable), "{durable}");
    let mut local = local(data.path(), root.path());
    assert!(!failed(&local.call("seq_create", greet)));
    let here = local.call("seq_run", json!({"name": "greet", "args": {"who": "b"}}));
    assert_eq!(run_report(&durable), run_report(&here));
    assert_eq!(run_report(&durable)["out"]["g"]["v"], "hello b");

    let refused = b.call("seq_delete", json!({"name": "greet"}));
    assert!(failed(&refused), "{refused}");
    assert_eq!(
        refused["structuredContent"]["error"]["reason"], "unauthorized",
        "{refused}"
    );

    let ran = common::command()
        .args([
            "run",
            "--restate",
            &restate.ingress,
            "--format",
            "json",
            "#greet",
        ])
        .args(["--args", r#"{"who":"cli"}"#])
        .output()
        .unwrap();
    assert_eq!(status(&ran), 0, "{}", stderr(&ran));
    let report: Value = serde_json::from_str(common::stdout(&ran).lines().last().unwrap()).unwrap();
    assert_eq!(report["out"]["g"]["v"], "hello cli", "{report}");
    let listed = common::command()
        .args(["list", "--restate", &restate.ingress, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(status(&listed), 0, "{}", stderr(&listed));
    assert!(common::stdout(&listed).contains(r#""name":"greet""#));

    let deleted = a.call("seq_delete", json!({"name": "greet"}));
    assert!(!failed(&deleted), "{deleted}");
    let listed = b.call("seq_list", json!({}));
    assert_eq!(listed["structuredContent"]["result"], json!([]), "{listed}");
}

/// Two servers create one name at the same moment, with different sequences: one stores its
/// own, the other is told the name is taken, and the stored one is the winner's.
#[test]
fn of_two_creators_of_one_name_exactly_one_wins() {
    let Setup {
        restate,
        root,
        worker: _worker,
        ..
    } = Setup::start();
    let mut sessions = [
        durable(&restate, "a", root.path()),
        durable(&restate, "b", root.path()),
    ];
    for round in 0..5 {
        let name = format!("race{round}");
        let ids: Vec<u64> = sessions
            .iter_mut()
            .zip(["a", "b"])
            .map(|(session, who)| session.send_call("seq_create", one_group(&name, &echo(who))))
            .collect();
        let results: Vec<Value> = sessions
            .iter_mut()
            .zip(ids)
            .map(|(session, id)| session.answer(id))
            .collect();
        let won: Vec<usize> = (0..2).filter(|&i| !failed(&results[i])).collect();
        assert_eq!(won.len(), 1, "{results:?}");
        let lost = &results[1 - won[0]];
        let error = &lost["structuredContent"]["error"];
        assert_eq!(error["reason"], "arg_error", "{lost}");
        assert!(
            error["detail"].as_str().unwrap().contains("already exists"),
            "{lost}"
        );
        let listed = sessions[0].call("seq_list", json!({}));
        let rows = listed["structuredContent"]["result"]
            .as_array()
            .unwrap()
            .clone();
        let row = rows.iter().find(|r| r["name"] == name.as_str()).unwrap();
        assert_eq!(row["owner"], ["a", "b"][won[0]], "{listed}");
    }
}

/// `a` calls `#b`, which is not stored yet; a `b` calling `#a` back would make both a cycle:
/// it is refused, with the error it would cause in the stored `a` among its findings.
#[test]
fn a_sequence_that_would_break_a_stored_one_is_refused() {
    let Setup {
        restate,
        root,
        worker: _worker,
        ..
    } = Setup::start();
    let mut a = durable(&restate, "a", root.path());
    let created = a.call("seq_create", one_group("a", &call_of("b")));
    assert!(!failed(&created), "{created}");
    let mut other = durable(&restate, "b", root.path());
    let refused = other.call("seq_create", one_group("b", &call_of("a")));
    assert!(failed(&refused), "{refused}");
    let findings = refused["structuredContent"]["diagnostics"]
        .as_array()
        .unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["sequence"] == "a" && f["severity"] == "error"),
        "{refused}"
    );
    let listed = other.call("seq_list", json!({}));
    let names: Vec<&Value> = listed["structuredContent"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row["name"])
        .collect();
    assert_eq!(names, ["a"], "{listed}");
}

/// A `seq_run` request cancelled by the client (`notifications/cancelled`) cancels its durable
/// run: the run and its children end long before their commands' 40 s would, and nothing after
/// them runs.
#[test]
fn a_cancelled_seq_run_request_cancels_the_durable_run() {
    let Setup {
        restate,
        root,
        worker: _worker,
        ..
    } = Setup::start();
    let mut session = durable(&restate, "a", root.path());
    // `file` is read under the server's root.
    std::fs::copy(
        Path::new(common::PACKAGE).join("tests/fixtures/durable/long.json"),
        root.path().join("long.json"),
    )
    .unwrap();
    let created = session.call("seq_create", json!({"name": "long", "file": "long.json"}));
    assert!(!failed(&created), "{created}");
    let dir = root.path().to_str().unwrap();
    let id = session.send_call("seq_run", json!({"name": "long", "args": {"dir": dir}}));
    let lines = || evidence_lines(root.path());
    wait_for(Duration::from_secs(30), "both commands started", || {
        lines() == ["start-0", "start-1"]
    });
    session.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the user changed their mind"}),
    );
    wait_for(
        Duration::from_secs(20),
        "the run and its children ended",
        || {
            let open = "SELECT count(*) AS n FROM sys_invocation \
             WHERE target_service_name IN ('SeqRun', 'SeqItem') AND status != 'completed'";
            query(&restate.admin, open)[0]["n"] == 0
        },
    );
    // Neither command wrote its `end` line, nor did the group after them run.
    assert_eq!(lines(), ["start-0", "start-1"]);
    // MCP: a cancelled request gets no answer; the session goes on.
    let listed = session.call("seq_list", json!({}));
    assert!(!failed(&listed), "{listed}");
}

/// `SeqStore/HANDLER` of the sequence `name`, straight at the ingress: its answer, as JSON.
fn store_request(restate: &Restate, name: &str, handler: &str, body: Option<&Value>) -> Value {
    let (status, answer) = post(
        &restate.ingress,
        &format!("/SeqStore/{name}/{handler}"),
        body,
    );
    assert_eq!(status, 200, "{handler}: {answer}");
    serde_json::from_str(&answer).unwrap_or_else(|error| panic!("{error}: {answer}"))
}

/// Whoever reaches the ingress can ask the `SeqStore` object directly, without the seq tools:
/// a request on behalf of `b` or of no one does not replace or delete `a`'s sequence, nor
/// rewrite it keeping `a` as its owner, and what is stored stays `a`'s; `a`'s own request
/// deletes it.
#[test]
fn the_storage_in_the_engine_refuses_to_change_another_callers_sequence() {
    let Setup {
        restate,
        root,
        worker: _worker,
        ..
    } = Setup::start();
    let mut a = durable(&restate, "a", root.path());
    let created = a.call("seq_create", one_group("mine", &echo("hello")));
    assert!(!failed(&created), "{created}");
    let stored = store_request(&restate, "mine", "get", None);
    let mut envelope: Value = serde_json::from_str(stored.as_str().unwrap()).unwrap();
    assert_eq!(envelope["owner"], "a", "{envelope}");

    envelope["sequence"]["description"]["value"] = json!("Taken over.");
    // Rewritten keeping its owner, by no one, or by `b` in `a`'s name: nobody writes in
    // another's name.
    for caller in [None, Some("b")] {
        let put = json!({"caller": caller, "envelope": envelope.to_string(), "replace": true});
        let answer = store_request(&restate, "mine", "put", Some(&put));
        assert_eq!(answer, json!({"answer": "not_the_caller", "owner": "a"}));
    }
    // Taken over by `b` in its own name.
    envelope["owner"] = json!("b");
    let put = json!({"caller": "b", "envelope": envelope.to_string(), "replace": true});
    let answer = store_request(&restate, "mine", "put", Some(&put));
    assert_eq!(answer, json!({"answer": "not_owner", "owner": "a"}));
    assert_eq!(store_request(&restate, "mine", "get", None), stored);
    // Deleted by no one (the command line's user owns nothing).
    let answer = store_request(&restate, "mine", "delete", Some(&json!({})));
    assert_eq!(answer, json!({"answer": "not_owner", "owner": "a"}));

    let answer = store_request(&restate, "mine", "delete", Some(&json!({"caller": "b"})));
    assert_eq!(answer, json!({"answer": "not_owner", "owner": "a"}));
    assert_eq!(store_request(&restate, "mine", "get", None), stored);

    let answer = store_request(&restate, "mine", "delete", Some(&json!({"caller": "a"})));
    assert_eq!(answer, json!({"answer": "deleted"}));
    let listed = a.call("seq_list", json!({}));
    assert_eq!(listed["structuredContent"]["result"], json!([]), "{listed}");
}

/// Two callers, each with a token, share one `seqc mcp --http --restate`: both store and run
/// sequences durably at once, each run answering its own report; the listing shows every
/// sequence with its owner, and neither may replace or delete the other's.
#[test]
fn two_callers_with_tokens_share_one_durable_service_over_http() {
    let Setup {
        restate,
        root,
        data: _data,
        worker: _worker,
    } = Setup::start();
    let (alice, bob) = ("alice-token-0123456789", "bob-token-9876543210");
    let dir = tempfile::tempdir().unwrap();
    let policy = http::token_policy(dir.path(), [("alice", alice), ("bob", bob)]);
    let (server, url) = http::serve(&restate.mcp_args(&[
        "--policy",
        policy.to_str().unwrap(),
        "--root",
        root.path().to_str().unwrap(),
    ]));
    let mut a = http::Client::connect(&url, Some(alice));
    let mut b = http::Client::connect(&url, Some(bob));
    let created = a.call("seq_create", one_group("mine", &echo("hello")));
    assert!(!failed(&created), "{created}");
    let created = b.call("seq_create", one_group("yours", &echo("hi")));
    assert!(!failed(&created), "{created}");

    // Both run at once, on the Restate server, each answered its own report.
    let (ran_a, ran_b) = std::thread::scope(|threads| {
        let ran_a =
            threads.spawn(|| a.call("seq_run", json!({"name": "mine", "args": {"who": "alice"}})));
        let ran_b =
            threads.spawn(|| b.call("seq_run", json!({"name": "yours", "args": {"who": "bob"}})));
        (ran_a.join().unwrap(), ran_b.join().unwrap())
    });
    assert!(!failed(&ran_a), "{ran_a}");
    assert!(!failed(&ran_b), "{ran_b}");
    assert_eq!(run_report(&ran_a)["out"]["g"]["v"], "hello alice");
    assert_eq!(run_report(&ran_b)["out"]["g"]["v"], "hi bob");
    let durable = "SELECT count(*) AS n FROM sys_invocation \
         WHERE target_service_name = 'SeqRun' AND status = 'completed'";
    assert_eq!(query(&restate.admin, durable)[0]["n"], 2);

    // One store: each lists both, with their owners.
    for client in [&mut a, &mut b] {
        let listed = client.call("seq_list", json!({}));
        let rows = &listed["structuredContent"]["result"];
        assert_eq!(rows[0]["name"], "mine", "{listed}");
        assert_eq!(rows[0]["owner"], "alice", "{listed}");
        assert_eq!(rows[1]["name"], "yours", "{listed}");
        assert_eq!(rows[1]["owner"], "bob", "{listed}");
    }

    // Owners hold between the tokens' callers, both ways.
    let mut replacing = one_group("mine", &echo("bob was here"));
    replacing["replace"] = json!(true);
    for (owner, tool, args) in [
        ("alice", "seq_create", replacing),
        ("alice", "seq_delete", json!({"name": "mine"})),
        ("bob", "seq_delete", json!({"name": "yours"})),
    ] {
        let other = if owner == "alice" { &mut b } else { &mut a };
        let refused = other.call(tool, args);
        assert!(failed(&refused), "{tool}: {refused}");
        let error = &refused["structuredContent"]["error"];
        assert_eq!(error["reason"], "unauthorized", "{tool}: {refused}");
        assert!(error.to_string().contains(owner), "{tool}: {refused}");
    }
    let again = a.call("seq_run", json!({"name": "mine", "args": {"who": "alice"}}));
    assert_eq!(run_report(&again)["out"]["g"]["v"], "hello alice");
    let deleted = b.call("seq_delete", json!({"name": "yours"}));
    assert!(!failed(&deleted), "{deleted}");
    assert_eq!(http::stop(server), Some(143));
}

/// A durable `seq_run` with a `progressToken`: each item and group is told as it finishes on
/// the worker (the first item while the run still waits for the test), the items of a parallel
/// group in item order at its end, progress always growing, every notification before the
/// report.
#[test]
fn a_durable_run_tells_its_progress_as_its_items_and_groups_finish() {
    let Setup {
        restate,
        root,
        data: _data,
        worker: _worker,
    } = Setup::start();
    let (server, url) = http::serve(&restate.mcp_args(&[
        "--enable",
        "cmd_run",
        "--root",
        root.path().to_str().unwrap(),
    ]));
    let mut client = http::Client::connect(&url, None);
    let item = |tool: &str, args: Value| json!({"tool": tool, "args": args}).to_string() + " ;";
    let waits = "while [ ! -e go ]; do sleep 0.05; done";
    let created = client.call(
        "seq_create",
        json!({"name": "steps", "groups": [
            {"name": "first", "parallel": false,
             "tools": item("echo", json!({"value": 1})) + " "
                 + &item("cmd_run", json!({"command": waits}))},
            {"name": "both", "parallel": true,
             "tools": item("echo", json!({"value": 2})) + " " + &item("echo", json!({"value": 3}))},
        ]}),
    );
    assert!(!failed(&created), "{created}");
    let (id, mut stream) = client.request(
        "tools/call",
        json!({"name": "seq_run", "arguments": {"name": "steps"},
               "_meta": {"progressToken": "steps-1"}}),
    );
    assert_eq!(stream.status, 200, "{stream:?}");
    let mut told: Vec<(f64, String)> = Vec::new();
    // The first item is told while the second still waits for `go`.
    let first = "item 1 `echo` of group `first` succeeded";
    while !told.iter().any(|(_, said)| said == first) {
        let event = stream
            .event()
            .expect("the stream ended before the first item was told");
        let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
            continue;
        };
        assert_ne!(
            message["id"], id,
            "answered before the first item was told: {message}"
        );
        told.extend(progress_of(&message));
    }
    std::fs::write(root.path().join("go"), "").unwrap();
    let answer = stream.answer_noting(id, |message| told.extend(progress_of(message)));
    assert!(!failed(&answer), "{answer}");
    let said = seq_test_support::finished(&told);
    assert_eq!(
        said,
        [
            first,
            "item 2 `cmd_run` of group `first` succeeded",
            "group `first` ran",
            "item 1 `echo` of group `both` succeeded",
            "item 2 `echo` of group `both` succeeded",
            "group `both` ran",
        ],
        "{told:?}"
    );
    assert!(
        told.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "progress must grow: {told:?}"
    );
    assert_eq!(told.last().map(|(progress, _)| progress.floor()), Some(4.0));
    assert_eq!(http::stop(server), Some(143));
}

/// A `notifications/progress`'s progress and message.
fn progress_of(message: &Value) -> Option<(f64, String)> {
    if message["method"] != "notifications/progress" {
        return None;
    }
    let params = &message["params"];
    let said = params["message"].as_str().unwrap_or_default().to_owned();
    Some((params["progress"].as_f64()?, said))
}
