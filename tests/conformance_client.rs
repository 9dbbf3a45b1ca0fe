//! seqc's MCP client (`--mcp http://…`) against the official conformance suite's client
//! scenarios: initialization, a tool call, and an SSE stream closed mid-call that the client must
//! resume (honouring `retry` and sending `Last-Event-ID`). The client under test is
//! tests/conformance/client/seqc-client.sh, which runs `seqc check` or `seqc run` by scenario.
//! The auth and elicitation scenarios do not apply: seqc's client does no OAuth and answers no
//! elicitation.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use std::path::Path;
use std::process::Command;

fn scenario(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let node = dir.join("node_modules/.bin/node");
    assert!(
        node.is_file(),
        "run `npm ci --prefix tests/conformance` (.ci/run does)"
    );
    let data = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let client = dir.join("client/seqc-client.sh");
    let output = Command::new(&node)
        .arg(dir.join("node_modules/.bin/conformance"))
        .args(["client", "--scenario", name, "--command"])
        .arg(format!("sh {}", client.display()))
        .arg("--output-dir")
        .arg(results.path())
        .env("SEQC", env!("CARGO_BIN_EXE_seqc"))
        .env("SEQC_DATA_DIR", data.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    // The suite prints its verdict on stderr.
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && printed.contains("OVERALL: PASSED"),
        "{}: {printed}",
        output.status
    );
}

#[test]
fn the_client_initializes() {
    scenario("initialize");
}

#[test]
fn the_client_calls_a_tool() {
    scenario("tools_call");
}

#[test]
fn the_client_resumes_a_closed_stream_with_last_event_id() {
    scenario("sse-retry");
}
