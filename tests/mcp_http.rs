//! `seqc mcp --http`: the service over streamable HTTP, driven by the TypeScript SDK's client
//! (tests/mcp/http-client.mjs, pinned in tests/mcp/package-lock.json), with bearer tokens
//! naming the callers; and the addresses it refuses to serve without tokens.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::text;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

/// `seqc mcp --http 127.0.0.1:0 ARGS`, started, and the URL it printed once listening.
fn serve(args: &[&str]) -> (Child, String) {
    let mut child = common::command()
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().expect("seqc says where it serves").unwrap();
        if let Some(url) = line.strip_prefix("seqc mcp: serving MCP at ") {
            break url.to_owned();
        }
    };
    // The rest of stderr (the runs' output lines) is read away, so that seqc never blocks on it.
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

/// SIGTERM, then its exit status.
fn stop(mut child: Child) -> Option<i32> {
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    child.wait().unwrap().code()
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
    let root = tempfile::tempdir().unwrap();
    // Writes its pid where the client waits for it, then outlives any test unless stopped.
    std::fs::write(
        root.path().join("slow.sh"),
        "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 977\n",
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let policy = data.path().join("policy.json");
    std::fs::write(
        &policy,
        json!({"callers": {
            "alice": {"token_sha256": seq_mcp::token::sha256_hex(alice)},
            "bob": {"token_sha256": seq_mcp::token::sha256_hex(bob)},
        }})
        .to_string(),
    )
    .unwrap();
    let store = data.path().join("store");
    let (server, url) = serve(&[
        "--root",
        root.path().to_str().unwrap(),
        "--data-dir",
        store.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--enable",
        "cmd_run",
    ]);
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
    assert_eq!(
        seen["tools"],
        json!([
            "seq_create",
            "seq_list",
            "seq_delete",
            "seq_run",
            "seq_call",
            "seq_when_call"
        ])
    );
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
    let policy = data.path().join("policy.json");
    std::fs::write(
        &policy,
        json!({"callers": {"carol": {"token_sha256": seq_mcp::token::sha256_hex(token)}}})
            .to_string(),
    )
    .unwrap();
    let store = data.path().join("store");
    let (server, url) = serve(&[
        "--root",
        root.path().to_str().unwrap(),
        "--data-dir",
        store.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
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
    let (server, url) = serve(&[
        "--root",
        root.path().to_str().unwrap(),
        "--data-dir",
        data.path().to_str().unwrap(),
    ]);
    let output = Command::new("node")
        .arg(mcp_dir().join("progress-client.mjs"))
        .arg(&url)
        .output()
        .unwrap();
    assert_eq!(stop(server), Some(143));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let seen: Value = serde_json::from_str(text(&output.stdout)).unwrap();
    assert_eq!(seen["create_error"], false, "{seen}");
    assert_eq!(seen["with_progress"]["ok"], true, "{seen}");
    assert!(
        seen["with_progress"]["notifications"].as_u64().unwrap() >= 2,
        "{seen}"
    );
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
    let (server, url) = serve(&[
        "--root",
        root.path().to_str().unwrap(),
        "--data-dir",
        data.path().to_str().unwrap(),
    ]);
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
