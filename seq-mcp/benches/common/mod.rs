//! What the benchmarks over a served `seq_run` share (fair.rs, load.rs): the server as a child
//! of the benchmark's own binary, rmcp clients, and `seq_create` and `seq_run` through them.

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use seq_exec::Caller;
use seq_exec::builtin::Captured;
use seq_exec::engine::CancellationToken;
use seq_exec::policy::Policy;
use seq_gen::times::Times;
use seq_mcp::http::{Access, HttpOptions};
use seq_mcp::{McpHost, SeqServer};
use seq_store::storage::Storage;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

/// The server `seqc mcp` assembles on `data` (its root beside the store) under `policy`.
pub fn server(data: &Path, policy: Policy) -> SeqServer {
    let root = data.join("root");
    std::fs::create_dir_all(&root).unwrap();
    SeqServer::assemble(
        Storage::new(data.join("store")),
        root,
        Caller::new("bench"),
        Arc::new(policy),
        Arc::new(McpHost::none()),
        Arc::new(Captured::new()),
    )
}

/// Serves `server` over streamable HTTP with `access` on a free loopback port, once it has
/// printed the port's address, until the process is killed.
pub async fn serve_http(server: SeqServer, access: Access) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    println!("{addr}");
    let options = HttpOptions::new(access, addr, &[], &[]);
    seq_mcp::http::serve(server, listener, options, CancellationToken::new())
        .await
        .unwrap();
}

/// A child killed when dropped (its runs' commands die with it).
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub type Client = RunningService<RoleClient, ()>;

/// This binary again, with `serve` set to `how` and `data` to the data directory `dir`: the
/// child serves instead of benchmarking.
pub fn child(serve: &str, how: &str, data: &str, dir: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .env(serve, how)
        .env(data, dir)
        .args(std::env::args().skip(1))
        .stderr(Stdio::null());
    command
}

/// `command` started, and the first line it printed (where it serves), trimmed.
pub fn started(command: &mut Command) -> (Killed, String) {
    let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Killed(child), line.trim().to_owned())
}

/// `tool` called through `client` with the object `args`.
pub async fn call(client: &Client, tool: &'static str, args: Value) -> rmcp::model::CallToolResult {
    let Value::Object(args) = args else {
        panic!("the arguments of {tool} are an object: {args}")
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
        .await
        .unwrap()
}

/// `seq_create` through `client`, which must store the sequence.
pub async fn create(client: &Client, sequence: Value) {
    let created = call(client, "seq_create", sequence).await;
    assert_ne!(created.is_error, Some(true), "{created:?}");
}

/// `seq_run` through `client`, which must end ok: its report; its latency kept in `latencies`.
pub async fn run_ok(client: &Client, args: Value, latencies: &Times) -> Value {
    let started = Instant::now();
    let answer = call(client, "seq_run", args).await;
    latencies.push(started.elapsed());
    let report = answer.structured_content.unwrap_or_default();
    assert_eq!(report["ok"], true, "{report}");
    report
}

/// The latency at `p` in milliseconds (0 when none was kept).
pub fn ms(latencies: &Times, p: f64) -> f64 {
    latencies.percentile(p).unwrap_or_default().as_secs_f64() * 1e3
}
