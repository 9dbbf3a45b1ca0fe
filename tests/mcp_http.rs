//! `seqc mcp --http`: the service over streamable HTTP, driven by the TypeScript SDK's client
//! (tests/mcp/http-client.mjs, pinned in tests/mcp/package-lock.json), with bearer tokens
//! naming the callers; and the addresses it refuses to serve without tokens. Faults over a raw
//! connection: a dropped connection, a deleted session, a client coming back with
//! `Last-Event-ID`.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/http.rs"]
mod http;

use common::text;
use http::{eventually, serve_in, stop, token_policy};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

#[test]
fn typescript_clients_with_two_tokens_are_two_callers() {
    let client = mcp_dir().join("http-client.mjs");
    assert!(
        mcp_dir()
            .join("node_modules/@modelcontextprotocol/sdk/package.json")
            .is_file(),
        "run `npm ci --prefix tests/mcp` (.ci/run does)"
    );
    let (alice, bob) = ("alice-token-0123456789", "bob-token-9876543210");
    let root = slow_root();
    let data = tempfile::tempdir().unwrap();
    let policy = token_policy(data.path(), [("alice", alice), ("bob", bob)]);
    let store = data.path().join("store");
    let (server, url) = serve_in(
        root.path(),
        &store,
        &["--policy", policy.to_str().unwrap(), "--enable", "cmd_run"],
    );
    let output = Command::new("node")
        .arg(&client)
        .args([&url, alice, bob, root.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    // Ending the session stopped its run's command, while the server still serves.
    let pid = std::fs::read_to_string(root.path().join("pid")).unwrap();
    let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
    let gone = (0..500).any(|_| {
        let running =
            std::fs::read_to_string(proc.join("stat")).is_ok_and(|stat| !stat.contains(") Z "));
        if running {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        !running
    });
    assert!(gone, "the command of a run whose session ended still runs");
    assert_eq!(stop(server), Some(143));
    let seen: Value = serde_json::from_str(text(&output.stdout)).unwrap();
    assert_eq!(seen["server"], "seqc");
    assert_eq!(seen["tools"], json!(seq_catalog::SEQ_TOOLS));
    assert_eq!(seen["create"]["is_error"], false, "{seen}");
    assert_eq!(seen["run"]["is_error"], false, "{seen}");
    assert_eq!(
        seen["run"]["structured"]["out"]["greet"]["said"],
        json!({"text": "hi"})
    );
    // Bob's token is Bob: Alice's sequence is not his to replace.
    assert_eq!(seen["bob_replace"]["is_error"], true);
    let refusal = seen["bob_replace"]["structured"]["error"].to_string();
    assert!(refusal.contains("alice"), "{refusal}");
    assert_eq!(seen["bob_on_alice_session"]["status"], 404);
    let challenge = |key: &str| seen[key]["www_authenticate"].as_str().unwrap().to_owned();
    assert_eq!(seen["no_token"]["status"], 401);
    assert!(challenge("no_token").starts_with("Bearer"));
    assert_eq!(seen["wrong_token"]["status"], 401);
    assert!(challenge("wrong_token").contains("invalid_token"));
    assert_eq!(seen["foreign_origin"]["status"], 403);
    assert_eq!(seen["create_slow"]["is_error"], false, "{seen}");
}

#[test]
fn a_python_client_with_a_token_creates_and_runs() {
    let python = mcp_dir().join(".venv/bin/python");
    assert!(
        python.is_file(),
        "create it with `python3 -m venv tests/mcp/.venv && tests/mcp/.venv/bin/pip install \
         --require-hashes -r tests/mcp/requirements.txt` (.ci/run does)"
    );
    let token = "carol-token-0123456789";
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let policy = token_policy(data.path(), [("carol", token)]);
    let store = data.path().join("store");
    let (server, url) = serve_in(root.path(), &store, &["--policy", policy.to_str().unwrap()]);
    let output = Command::new(python)
        .arg(mcp_dir().join("http_client.py"))
        .args([&url, token])
        .output()
        .unwrap();
    assert_eq!(stop(server), Some(143));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let seen: Value = serde_json::from_str(text(&output.stdout)).unwrap();
    assert_eq!(seen["server"], "seqc");
    assert_eq!(seen["tools"].as_array().unwrap().len(), 6, "{seen}");
    assert_eq!(seen["create"]["is_error"], false, "{seen}");
    assert_eq!(seen["run"]["is_error"], false, "{seen}");
    assert_eq!(
        seen["run"]["structured"]["out"]["greet"]["said"],
        json!({"text": "hi"})
    );
    // The store records the token's caller as the owner.
    let stored = std::fs::read_dir(store.join("sequences"))
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
        .any(|text| text.contains(r#""owner":"carol""#));
    assert!(stored, "no stored sequence names its owner `carol`");
}

#[test]
fn progress_keeps_a_long_run_alive_for_a_client_with_a_short_timeout() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // Loopback without a policy file: no tokens.
    let (server, url) = serve_in(root.path(), data.path(), &[]);
    let output = Command::new("node")
        .arg(mcp_dir().join("progress-client.mjs"))
        .arg(&url)
        .output()
        .unwrap();
    assert_eq!(stop(server), Some(143));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let seen: Value = serde_json::from_str(text(&output.stdout)).unwrap();
    assert_eq!(seen["create_error"], false, "{seen}");
    let with = &seen["with_progress"];
    assert_eq!(with["ok"], true, "{seen}");
    // Ten items of 2 s each: the client waited four times its timeout for the report.
    assert!(with["elapsed_ms"].as_u64().unwrap() >= 20_000, "{seen}");
    let messages: Vec<&str> = with["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for (group, index) in [("first", 1), ("first", 5), ("second", 1), ("second", 5)] {
        let said = format!("item {index} `sleep` of group `{group}` succeeded");
        assert!(messages.contains(&said.as_str()), "{said}: {seen}");
    }
    for group in ["first", "second"] {
        let said = format!("group `{group}` ran in ");
        assert!(
            messages.iter().any(|m| m.starts_with(&said)),
            "{said}: {seen}"
        );
    }
    assert!(
        seen["without_progress"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{seen}"
    );
}

/// The official conformance suite's server scenarios (initialize, ping, tools/list, SSE
/// streams, resources/prompts lists, DNS rebinding) pass; those that need the suite's own test
/// tools are listed in tests/conformance/expected-failures.yml with why.
#[test]
fn the_conformance_suite_server_scenarios_pass() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let node = dir.join("node_modules/.bin/node");
    assert!(
        node.is_file(),
        "run `npm ci --prefix tests/conformance` (.ci/run does)"
    );
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (server, url) = serve_in(root.path(), data.path(), &[]);
    let results = tempfile::tempdir().unwrap();
    let output = Command::new(&node)
        .arg(dir.join("node_modules/.bin/conformance"))
        .args(["server", "--url", &url, "--expected-failures"])
        .arg(dir.join("expected-failures.yml"))
        .arg("--output-dir")
        .arg(results.path())
        .output()
        .unwrap();
    assert_eq!(stop(server), Some(143));
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// A JSON body that does not parse is JSON-RPC's parse error (400, `id` null), as over stdio,
/// not rmcp's 415 (which says the media type was wrong).
#[test]
fn a_body_that_is_not_json_gets_a_json_rpc_parse_error() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (server, url) = serve_in(root.path(), data.path(), &[]);
    let client = http::Client::connect(&url, None);
    let answer = client.send_text("POST", r#"{"jsonrpc": "2.0", "id": 1, "method": "#, &[]);
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&answer.text()).unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert_eq!(body["id"], Value::Null, "{body}");
    assert_eq!(stop(server), Some(143));
}

#[test]
fn an_address_beyond_loopback_needs_tokens() {
    let root = tempfile::tempdir().unwrap();
    let output = common::seqc(&[
        "mcp",
        "--http",
        "0.0.0.0:0",
        "--root",
        root.path().to_str().unwrap(),
    ]);
    assert_eq!(common::status(&output), 2);
    let stderr = text(&output.stderr);
    assert!(stderr.contains("needs callers with tokens"), "{stderr}");
    assert!(stderr.contains("seqc token"), "{stderr}");
}

#[test]
fn seqc_token_prints_a_token_and_its_hash() {
    let output = common::seqc(&["token"]);
    assert_eq!(common::status(&output), 0);
    let printed = common::stdout(&output);
    let mut lines = printed.lines();
    let token = lines.next().unwrap();
    let hash_line = lines.next().unwrap();
    assert_eq!(token.len(), 64);
    assert_eq!(
        hash_line,
        format!(
            "\"token_sha256\": \"{}\"",
            seq_mcp::token::sha256_hex(token)
        )
    );
}

/// Whether process `pid` is gone (or a zombie, its parent not having waited yet).
fn gone(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .map_or(true, |stat| stat.contains(") Z "))
}

/// A root whose `slow.sh` writes its pid where the client waits for it (`pid`), then outlives
/// any test unless stopped.
fn slow_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("slow.sh"),
        "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 977\n",
    )
    .unwrap();
    root
}

/// A server without tokens, `cmd_run` on, in a root whose `slow.sh` writes its pid to `pid`
/// and then outlives any test unless stopped; `seq_create`d as `slow`.
struct Slow {
    server: std::process::Child,
    url: String,
    root: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Slow {
    fn start(extra: &[&str]) -> Slow {
        let root = slow_root();
        let data = tempfile::tempdir().unwrap();
        let options = [&["--enable", "cmd_run"], extra].concat();
        let (server, url) = serve_in(root.path(), data.path(), &options);
        Slow {
            server,
            url,
            root,
            _data: data,
        }
    }

    fn client(&self) -> http::Client {
        let mut client = http::Client::connect(&self.url, None);
        for (name, command) in [
            ("slow", "sh slow.sh"),
            (
                "waits",
                "while [ ! -e go ]; do sleep 0.05; done; echo done > done.tmp && mv done.tmp done",
            ),
        ] {
            let tools = json!({"tool": "cmd_run", "args": {"command": command}}).to_string() + " ;";
            let created = client.call(
                "seq_create",
                json!({"name": name, "replace": true, "groups": [{"name": "g", "tools": tools}]}),
            );
            assert_ne!(created["isError"], true, "{created}");
        }
        client
    }

    /// The pid `slow.sh` wrote, once it did.
    fn pid(&self) -> String {
        let file = self.root.path().join("pid");
        eventually("slow.sh started", || file.is_file());
        std::fs::read_to_string(file).unwrap()
    }
}

#[test]
fn a_dropped_connection_stops_the_run_when_its_client_does_not_come_back() {
    let slow = Slow::start(&["--resume-window", "1"]);
    let mut client = slow.client();
    let (id, mut stream) = client.start_call("seq_run", json!({"name": "slow"}));
    assert_eq!(stream.status, 200, "{stream:?}");
    let first = stream.event().unwrap().id.unwrap();
    let pid = slow.pid();
    // The socket closes mid-run, without DELETE; nobody comes back within the window.
    drop(stream);
    eventually("the run's command stopped", || gone(&pid));
    // The answer was kept: coming back now gives the report of the cancelled run.
    client.resume_cancelled(&first, id);
    // The server serves on.
    let listed = client.call("seq_list", json!({}));
    assert_ne!(listed["isError"], true, "{listed}");
    assert_eq!(stop(slow.server), Some(143));
}

#[test]
fn a_deleted_session_stops_its_runs() {
    let slow = Slow::start(&[]);
    let mut client = slow.client();
    let (_, stream) = client.start_call("seq_run", json!({"name": "slow"}));
    assert_eq!(stream.status, 200, "{stream:?}");
    let pid = slow.pid();
    // The run's own connection stays open: ending the session alone stops it.
    let deleted = client.delete();
    assert!((200..300).contains(&deleted.status), "{deleted:?}");
    eventually("the run's command stopped", || gone(&pid));
    drop(stream);
    let mut other = http::Client::connect(&slow.url, None);
    let listed = other.call("seq_list", json!({}));
    assert_ne!(listed["isError"], true, "{listed}");
    assert_eq!(stop(slow.server), Some(143));
}

#[test]
fn a_client_coming_back_with_last_event_id_gets_the_answer_of_a_run_that_finished_meanwhile() {
    let slow = Slow::start(&["--resume-window", "600"]);
    let mut client = slow.client();
    let (id, mut stream) = client.start_call("seq_run", json!({"name": "waits"}));
    assert_eq!(stream.status, 200, "{stream:?}");
    let first = stream.event().unwrap().id.unwrap();
    // The connection drops while the run waits; then the run finishes, nobody listening.
    drop(stream);
    std::fs::write(slow.root.path().join("go"), "").unwrap();
    let done = slow.root.path().join("done");
    eventually("the run finished", || done.is_file());
    // Another session cannot read the stream.
    let mut stranger = http::Client::connect(&slow.url, None);
    assert_eq!(stranger.resume(&first).status, 404);
    // Its own client comes back and gets the answer.
    let mut resumed = client.resume(&first);
    assert_eq!(resumed.status, 200, "{resumed:?}");
    let answer = resumed.answer(id);
    assert_ne!(answer["isError"], true, "{answer}");
    assert_eq!(answer["structuredContent"]["ok"], true, "{answer}");
    assert_eq!(
        answer["structuredContent"]["groups"][0]["status"], "ran",
        "{answer}"
    );
    assert_eq!(stop(slow.server), Some(143));
}

/// One caller cannot take every session: past its bound its `initialize` is 503, naming the
/// bound, while another caller still opens sessions; ending one of its own makes room again.
#[test]
fn one_caller_cannot_open_more_than_its_share_of_sessions() {
    let (alice, bob) = ("alice-token-0123456789", "bob-token-9876543210");
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let policy = token_policy(data.path(), [("alice", alice), ("bob", bob)]);
    let (server, url) = serve_in(
        root.path(),
        &data.path().join("store"),
        &["--policy", policy.to_str().unwrap()],
    );
    let bound = seq_mcp::http::MAX_SESSIONS_PER_CALLER;
    let mut hers: Vec<http::Client> = (0..bound)
        .map(|_| http::Client::connect(&url, Some(alice)))
        .collect();
    let refused = http::Client::open(&url, Some(alice)).unwrap_err();
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.header("retry-after").is_some(), "{refused:?}");
    let why = refused.text();
    assert!(why.contains("`alice`"), "{why}");
    assert!(why.contains(&format!("({bound})")), "{why}");
    // Another caller is not held to Alice's sessions.
    let mut his = http::Client::connect(&url, Some(bob));
    let listed = his.call("seq_list", json!({}));
    assert_ne!(listed["isError"], true, "{listed}");
    // Her sessions still serve; ending one makes room for another.
    let listed = hers[0].call("seq_list", json!({}));
    assert_ne!(listed["isError"], true, "{listed}");
    let deleted = hers.pop().unwrap().delete();
    assert!((200..300).contains(&deleted.status), "{deleted:?}");
    let mut again = http::Client::connect(&url, Some(alice));
    let listed = again.call("seq_list", json!({}));
    assert_ne!(listed["isError"], true, "{listed}");
    assert_eq!(stop(server), Some(143));
}

/// seqc as a client of a server that wants a token: without one the error says so in words (no
/// Rust type names) and what to do; with the token in the environment, named by `${VAR}` in the
/// config file's headers, the server's tools are there.
#[test]
fn a_token_for_a_url_server_comes_from_the_environment() {
    let token = "dora-token-0123456789";
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let policy = token_policy(data.path(), [("dora", token)]);
    let (server, url) = serve_in(
        root.path(),
        &data.path().join("store"),
        &["--policy", policy.to_str().unwrap()],
    );
    let sequence = data.path().join("list.json");
    std::fs::write(
        &sequence,
        json!({"name": "list", "groups": [{"name": "g", "out": {"l": "any"},
            "tools": "{\"tool\":\"up.seq_list\",\"args\":{},\"as\":\"l\"} ;"}]})
        .to_string(),
    )
    .unwrap();
    let config = data.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"up": {"url": url, "prefix": "up",
            "headers": {"Authorization": "Bearer ${UP_TOKEN}"}}}})
        .to_string(),
    )
    .unwrap();
    let check = |token: Option<&str>| {
        let mut command = common::command();
        command.args(["check", sequence.to_str().unwrap(), "--mcp-config"]);
        command.arg(&config);
        match token {
            Some(token) => command.env("UP_TOKEN", token),
            None => command.env_remove("UP_TOKEN"),
        };
        command.output().unwrap()
    };
    let unset = check(None);
    assert_eq!(unset.status.code(), Some(2));
    let said = text(&unset.stderr);
    assert!(
        said.contains("the environment variable `UP_TOKEN` is not set"),
        "{said}"
    );
    let wrong = check(Some("not-the-token"));
    assert_eq!(wrong.status.code(), Some(2));
    let said = text(&wrong.stderr);
    assert!(
        said.contains("refused the token in the `Authorization` header"),
        "{said}"
    );
    assert!(
        !said.contains("rmcp::") && !said.contains("WorkerTransport"),
        "{said}"
    );
    let right = check(Some(token));
    assert_eq!(right.status.code(), Some(0), "{}", text(&right.stderr));
    assert_eq!(stop(server), Some(143));
}
