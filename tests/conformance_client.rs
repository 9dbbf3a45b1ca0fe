//! seqc's MCP client (`--mcp http://…`, `--mcp-config`) against the official conformance
//! suite's client scenarios: initialization, a tool call, an SSE stream closed mid-call that the
//! client must resume (honouring `retry` and sending `Last-Event-ID`), each alone (the retry's
//! timing is judged, so it runs apart from the rest); and every OAuth scenario, suite by suite
//! (`auth`, `backcompat`, `draft`, `extensions`, each suite's scenarios at once), against the
//! baseline in tests/conformance/expected-failures.yml (`client:`), which lists only what seqc
//! does not do, each with why: a scenario failing unlisted fails the test, and so does a listed
//! one that passes. The client under test is tests/conformance/client/seqc-client.sh, which runs
//! `seqc check` or `seqc run` by scenario, signing in with OAuth where the server asks.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use std::path::Path;
use std::process::Command;

/// Runs one scenario alone.
fn scenario(name: &str) {
    client(&["--scenario", name], "OVERALL: PASSED");
}

/// Runs a suite's scenarios at once against the baseline.
fn suite(name: &str) {
    let baseline =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/expected-failures.yml");
    client(
        &[
            "--suite",
            name,
            "--expected-failures",
            baseline.to_str().unwrap(),
        ],
        "Baseline check passed",
    );
}

/// Runs the suite's client command with `how`; its verdict must contain `passed`.
fn client(how: &[&str], passed: &str) {
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
        .arg("client")
        .args(how)
        .arg("--command")
        .arg(format!("sh {}", client.display()))
        .arg("--output-dir")
        .arg(results.path())
        .env("SEQC", env!("CARGO_BIN_EXE_seqc"))
        .env("SEQC_DATA_DIR", data.path())
        // Scenarios run at once, each its own server on its own port: one file holds them all.
        .env("SEQC_OAUTH_TOKENS", data.path().join("oauth-tokens.json"))
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
        output.status.success() && printed.contains(passed),
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

/// Discovery (both well-known forms), client ID metadata documents, dynamic and pre-registered
/// clients, scopes from the challenge and from `scopes_supported`, step-up and its retry limit,
/// every token endpoint authentication method.
#[test]
fn the_client_signs_in_with_oauth_where_the_server_asks() {
    suite("auth");
}

/// The 2025-03-26 specification's fallbacks.
#[test]
fn the_client_signs_in_to_servers_of_the_2025_03_26_specification() {
    suite("backcompat");
}

/// Draft scenarios: a resource that is not the server's, `offline_access`.
#[test]
fn the_client_refuses_a_foreign_resource_and_asks_for_refresh_tokens() {
    suite("draft");
}

/// Extensions: client credentials for machine clients, with a secret and with a private key
/// (`private_key_jwt`); cross-app access (an identity provider's ID token exchanged for an
/// ID-JAG, redeemed for the token).
#[test]
fn the_client_signs_in_as_a_machine_client() {
    suite("extensions");
}
