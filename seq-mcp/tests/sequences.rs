//! Sequences checked against live catalogs and run on real MCP servers.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod support;

use seq_exec::engine::{GroupStatus, ItemStatus};
use seq_exec::policy::Policy;
use seq_exec::{Reason, ToolHost};
use seq_mcp::{Combined, Notice};
use serde_json::json;
use std::sync::Arc;
use support::{Killer, check, connect, errors, everything, filesystem, fixture, run};

fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta").unwrap();
    dir
}

/// The canonical path: server-filesystem resolves symbolic links (macOS's /tmp, say).
fn dir_arg(dir: &tempfile::TempDir) -> String {
    dir.path()
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parallel_group_lists_and_reads_through_server_filesystem() {
    let dir = files();
    let mcp = connect(vec![filesystem(dir.path(), None)]).await;
    let text = fixture("fs-read-parallel.json");
    // The live catalog says the three tools are read-only: the parallel group is accepted.
    assert_eq!(errors(&check(&text, &mcp)), Vec::<&str>::new());

    let report = run(mcp.clone(), &text, json!({"dir": dir_arg(&dir)})).await;
    assert!(report.ok, "{report:#?}");
    let group = &report.groups[0];
    assert_eq!(group.status, GroupStatus::Ran);
    assert!(group.parallel, "the three items ran side by side");
    // server-filesystem answers with structured content `{"content": text}`.
    assert_eq!(group.out["a"], json!({"content": "alpha"}));
    assert_eq!(group.out["b"], json!({"content": "beta"}));
    assert_eq!(
        group.out["listing"],
        json!({"content": "[FILE] a.txt\n[FILE] b.txt"})
    );
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn write_file_in_a_parallel_group_is_refused_by_the_live_catalog() {
    let dir = files();
    let mcp = connect(vec![filesystem(dir.path(), None)]).await;
    let text = fixture("fs-write-parallel.json");
    assert_eq!(errors(&check(&text, &mcp)), ["E0504"]);
    // Without the live catalog the checker cannot know: an unknown tool is only a warning.
    let offline = seq_check::check(
        &[seq_check::Source::new("t.json", text.as_str())],
        &seq_catalog::Catalog::builtin(),
    );
    assert_eq!(errors(&offline.files[0].diagnostics), Vec::<&str>::new());
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_is_error_result_is_a_failure_that_on_error_handles() {
    let dir = files();
    let mcp = connect(vec![filesystem(dir.path(), None)]).await;
    let builtin = Arc::new(seq_exec::builtin::BuiltinHost::new(dir.path()));
    let host = Arc::new(Combined::new(vec![builtin, mcp.clone()]));
    let text = fixture("fs-is-error.json");
    assert_eq!(errors(&check(&text, &mcp)), Vec::<&str>::new());

    let report = run(host, &text, json!({"dir": dir_arg(&dir)})).await;
    assert!(
        report.ok,
        "`on_error: continue` tolerates the failure: {report:#?}"
    );
    let read = &report.groups[0];
    assert_eq!(read.status, GroupStatus::Partial);
    assert_eq!(read.out["a"], json!({"content": "alpha"}));
    assert!(read.out.get("gone").is_none());
    let failed = &read.items[1];
    assert_eq!(failed.status, ItemStatus::Failed);
    let error = failed.error.as_ref().unwrap();
    assert_eq!(error.reason, Reason::Failed);
    // The detail is the server's own text.
    assert!(
        error.detail.as_deref().unwrap().contains("ENOENT"),
        "{error:?}"
    );
    assert_eq!(report.groups[1].out["said"], "still running");
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_run_makes_its_tools_not_found_and_is_reported() {
    let mcp = connect(vec![everything(Some("ev"))]).await;
    let killer: Arc<dyn ToolHost> = Arc::new(Killer { mcp: mcp.clone() });
    let builtin = Arc::new(seq_exec::builtin::BuiltinHost::new("."));
    let host = Arc::new(Combined::new(vec![builtin, killer, mcp.clone()]));
    let text = fixture("killed-mid-run.json");

    let report = run(host, &text, json!({})).await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(report.groups[0].out["echoed"], "Echo: alive");

    // The call in flight when the server died fails at once, as `not_found`.
    let race = &report.groups[1];
    assert_eq!(race.status, GroupStatus::Partial);
    let in_flight = race.items[0].error.as_ref().unwrap();
    assert_eq!(in_flight.reason, Reason::NotFound, "{in_flight:?}");
    assert_eq!(race.items[1].status, ItemStatus::Ok);

    // Afterwards its tools are not found, and `missing: skip` skips them.
    let gone = &report.groups[2];
    assert_eq!(gone.status, GroupStatus::Ran);
    assert_eq!(gone.items[0].status, ItemStatus::Skipped);
    assert_eq!(
        gone.items[0].error.as_ref().map(|e| e.reason),
        Some(Reason::NotFound)
    );
    assert_eq!(report.groups[3].out["said"], "the run goes on");

    let stops: Vec<Notice> = mcp
        .notices()
        .into_iter()
        .filter(|n| matches!(n, Notice::Stopped { .. }))
        .collect();
    assert_eq!(stops.len(), 1, "reported once: {stops:?}");
    assert!(matches!(&stops[0], Notice::Stopped { server, .. } if server == "ev"));
    assert!(mcp.lookup("ev.echo").is_none());
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_policy_applies_to_mcp_tools() {
    let dir = files();
    let authorizer = seq_exec::Authorizer::new(Policy::allow_all().deny("read_*"));
    let mcp =
        seq_mcp::McpHost::connect(vec![filesystem(dir.path(), None)], seq_mcp::Options::new())
            .await
            .unwrap();
    let caller = seq_exec::Caller::new("test");
    assert!(!authorizer.allows(&caller, "read_text_file"));
    assert!(authorizer.allows(&caller, "list_directory"));
    let mcp = Arc::new(mcp);
    let report = support::run_under(
        mcp.clone(),
        authorizer,
        &fixture("fs-read-parallel.json"),
        json!({"dir": dir_arg(&dir)}),
    )
    .await;
    assert!(!report.ok);
    let reasons: Vec<Option<Reason>> = report.groups[0]
        .items
        .iter()
        .map(|item| item.error.as_ref().map(|e| e.reason))
        .collect();
    assert!(reasons.contains(&Some(Reason::Unauthorized)), "{reasons:?}");
    mcp.shutdown().await;
}
