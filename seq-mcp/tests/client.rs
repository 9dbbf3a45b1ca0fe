//! The MCP client side against real servers: name clashes, `tools/list_changed`, `isError`,
//! cancellation passed on, streamable HTTP, servers that do not start.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod support;

use seq_catalog::ParallelSafety;
use seq_exec::Caller;
use seq_exec::{Reason, ToolHost};
use seq_mcp::{ConnectError, McpHost, Options, ServerSpec};
use seq_test_support::{assert_refused, call_local};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::{changing, connect, eventually, everything, everything_entry, filesystem};

fn options() -> Options {
    Options::new()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_offered_twice_is_an_error_naming_both_unless_prefixed() {
    let dir = tempfile::tempdir().unwrap();
    let twice = vec![filesystem(dir.path(), None), filesystem(dir.path(), None)];
    let mut renamed = twice.clone();
    renamed[1].name = "second".to_owned();
    match McpHost::connect(renamed, options()).await {
        Err(ConnectError::Conflict {
            tool,
            first,
            second,
        }) => {
            assert_eq!(tool, "create_directory", "the first name in order");
            assert!(first.starts_with("MCP server `node "), "{first}");
            assert!(
                second.starts_with("MCP server `second` (`node "),
                "{second}"
            );
        }
        other => panic!("{other:?}"),
    }

    // server-everything's `echo` clashes with the embedded host's.
    match McpHost::connect(vec![everything(None)], options().beside_builtin()).await {
        Err(error @ ConnectError::Conflict { .. }) => {
            let text = error.to_string();
            assert!(
                text.starts_with(
                    "tool `echo` is offered by the embedded host and by MCP server `node "
                ),
                "{text}"
            );
            assert!(text.ends_with("give one of the servers a prefix (`--mcp 'NAME=COMMAND'`, or `prefix` in the config file)"), "{text}");
        }
        other => panic!("{other:?}"),
    }

    let prefixed = vec![
        filesystem(dir.path(), Some("a")),
        filesystem(dir.path(), Some("b")),
    ];
    let host = McpHost::connect(prefixed, options().beside_builtin())
        .await
        .unwrap();
    assert!(host.lookup("a.read_file").is_some());
    assert!(host.lookup("b.read_file").is_some());
    assert!(host.lookup("read_file").is_none());
    let servers = host.servers();
    assert_eq!(servers.len(), 2);
    assert!(servers.iter().all(|s| s.alive && s.tools.len() > 10));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_list_changed_refreshes_the_catalog() {
    let host = connect(vec![changing(None)]).await;
    assert!(host.lookup("extra").is_none());
    assert_eq!(
        call_local(&*host, "grow", json!({})).await.unwrap(),
        json!("grown")
    );
    let seen = Arc::clone(&host);
    eventually("`extra` to appear", move || seen.lookup("extra").is_some()).await;
    let extra = host.lookup("extra").unwrap();
    assert_eq!(extra.parallel_safe, ParallelSafety::Safe);
    assert_eq!(extra.parameters.required, ["word"]);
    assert_eq!(
        call_local(&*host, "extra", json!({"word": "hi"}))
            .await
            .unwrap(),
        json!("extra hi")
    );
    assert!(host.definitions().iter().any(|d| d.name == "extra"));
    host.shutdown().await;
}

/// A call made within an attempt that has an idempotency key (a durable run's) passes it on in
/// the request's `_meta`; a call without one sends none.
#[tokio::test(flavor = "multi_thread")]
async fn the_idempotency_key_goes_with_the_request() {
    let host = connect(vec![changing(None)]).await;
    let key = "run-1/#main/fetch/2/1".to_owned();
    let caller = Caller::new("local");
    let keyed = seq_exec::engine::with_idempotency_key(key, host.call(&caller, "meta", json!({})));
    let meta: serde_json::Value =
        serde_json::from_str(keyed.await.unwrap().as_str().unwrap()).unwrap();
    assert_eq!(
        meta["seqc/idempotencyKey"], "run-1/#main/fetch/2/1",
        "{meta}"
    );
    let plain = call_local(&*host, "meta", json!({})).await.unwrap();
    let meta: serde_json::Value = serde_json::from_str(plain.as_str().unwrap()).unwrap();
    assert!(meta.get("seqc/idempotencyKey").is_none(), "{meta}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn is_error_is_a_failed_tool_error_with_the_server_text() {
    let host = connect(vec![changing(Some("ch"))]).await;
    let error = call_local(&*host, "ch.fail", json!({"why": "on purpose"}))
        .await
        .unwrap_err();
    assert_eq!(error.reason, Reason::Failed);
    assert_eq!(error.detail.as_deref(), Some("failed: on purpose"));
    assert_eq!(
        error.hint.as_deref(),
        Some("the error comes from MCP server `ch`")
    );
    // Arguments the server's own validation refuses: the TypeScript SDK says so as a tool
    // error, and its text is the detail.
    let refused = call_local(&*host, "ch.fail", json!({"why": 3}))
        .await
        .unwrap_err();
    assert_refused(&refused, Reason::Failed, "Invalid arguments for tool fail");
    host.shutdown().await;
}

/// An answer past the 16 MiB line bound fails its call at once, saying why, where rmcp alone
/// dropped it and left the call to its timeout; the connection serves on.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_past_the_bound_fails_the_call_at_once() {
    let host = connect(vec![changing(None)]).await;
    let started = std::time::Instant::now();
    let caller = Caller::new("local");
    let call = host.call(&caller, "big", json!({"bytes": 17_000_000}));
    let error = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("an answer, not a wait for the timeout")
        .unwrap_err();
    assert_eq!(error.reason, Reason::Failed);
    let detail = error.detail.unwrap();
    assert!(
        detail.contains("more than the 16 MiB a message may have"),
        "{detail}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    let small = call_local(&*host, "big", json!({"bytes": 3}))
        .await
        .unwrap();
    assert_eq!(small, json!("xxx"));
    host.shutdown().await;
}

/// A call in flight that the run drops (a cancelled run, a timed-out group) is cancelled on the
/// server too: it receives `notifications/cancelled` and stops, rather than finishing unseen.
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_call_is_cancelled_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let host = connect(vec![changing(None)]).await;
    let caller = Caller::new("local");
    let call = host.call(
        &caller,
        "wait",
        json!({"ms": 5000, "marker": marker.to_string_lossy()}),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(500), call)
            .await
            .is_err()
    );
    let seen = marker.clone();
    eventually("the server to see the cancellation", move || seen.exists()).await;
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "cancelled");
    // The connection goes on serving calls.
    assert_eq!(
        call_local(&*host, "grow", json!({})).await.unwrap(),
        json!("grown")
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_url_reaches_a_server_over_streamable_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new("node")
        .args([everything_entry(), "streamableHttp".to_owned()])
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // It says on stderr when it listens.
    let stderr = server.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let listening = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("listening on port") {
                return;
            }
        }
        panic!("server-everything ended before listening");
    });
    listening.await.expect("server-everything did not listen");

    let spec = ServerSpec::parse(&format!("ev=http://127.0.0.1:{port}/mcp")).unwrap();
    let host = connect(vec![spec]).await;
    assert_eq!(
        call_local(&*host, "ev.echo", json!({"message": "over http"}))
            .await
            .unwrap(),
        json!("Echo: over http")
    );
    // structuredContent is the value.
    let weather = call_local(
        &*host,
        "ev.get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await
    .unwrap();
    assert!(weather["temperature"].is_number(), "{weather}");
    host.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_does_not_start_is_an_error_with_its_last_words() {
    match McpHost::connect(
        vec![ServerSpec::parse("seqc-test-no-such-program --x").unwrap()],
        options(),
    )
    .await
    {
        Err(ConnectError::Spawn { server, .. }) => {
            assert_eq!(server, "seqc-test-no-such-program --x");
        }
        other => panic!("{other:?}"),
    }
    let dies = ServerSpec::parse("sh -c 'echo no MCP here >&2; exit 3'").unwrap();
    match McpHost::connect(vec![dies], options()).await {
        Err(ConnectError::Initialize { stderr, .. }) => {
            assert_eq!(stderr, ["no MCP here"]);
        }
        other => panic!("{other:?}"),
    }
    let silent = ServerSpec::parse("sleep 30").unwrap();
    match McpHost::connect(
        vec![silent],
        options().connect_timeout(Duration::from_millis(300)),
    )
    .await
    {
        Err(ConnectError::Timeout { server, .. }) => assert_eq!(server, "sleep 30"),
        other => panic!("{other:?}"),
    }
}
