//! Fairness of `--http`: `CALLERS` callers with tokens (8, or `SEQC_BENCH_CALLERS`), each
//! making 20 `seq_run`s of a one-item sequence one after another, on a quiet server and then on
//! the same server while one more caller, hostile, does all it can to starve them:
//!
//! - half-sent bodies: 200 connections with its token that send a request's headers and half its
//!   body, each opened again a second after the server closes it;
//! - connections without a token: 200 that send nothing, each opened again a second after the
//!   server closes it;
//! - a flood of long calls: 200 tasks starting `seq_run`s that outlive the benchmark, each
//!   starting another a second after one is refused;
//! - many sessions: 64 `initialize`s held open.
//!
//! The second between attempts keeps the attack one of holding the server's slots, not of
//! spending the machine's CPU (which a per-caller rate limit in front would answer).
//!
//! The server is a process of its own (this binary, started again, serving as `seqc mcp --http`
//! does with the default bounds). Criterion times a round (every caller's runs); the line after
//! gives p50/p99 of one `seq_run`'s latency as the callers saw it, quiet and under attack, and
//! the ratio of the p99s, measured in the same run (the target is within 2).
//! `cargo bench -p seq-mcp --bench fair`; under `cargo test --benches`, one small round.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark that cannot set up should stop there, and prints its figures"
)]

mod common;

use common::Client;
use criterion::{Criterion, Throughput};
use futures::future::join_all;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use seq_exec::engine::CancellationToken;
use seq_gen::bench::flat;
use seq_gen::bench::full_size;
use seq_gen::bench::timed;
use seq_gen::times::Times;
use seq_mcp::http::Access;
use seq_mcp::policy_file::PolicyFile;
use seq_mcp::token::{Tokens, sha256_hex};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Set in the child of this binary that serves, on the data directory of [`DATA`].
const SERVE: &str = "SEQ_MCP_FAIR_SERVE";
const DATA: &str = "SEQ_MCP_FAIR_DATA";
const RUNS_PER_CALLER: usize = 20;
const HOSTILE: &str = "hostile";

fn callers() -> usize {
    if !full_size() {
        return 2;
    }
    std::env::var("SEQC_BENCH_CALLERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(8)
}

/// How many of each kind of attack the hostile caller keeps going.
fn attackers() -> usize {
    if full_size() { 200 } else { 8 }
}

fn token(caller: &str) -> String {
    format!("{caller}-token-0123456789abcdef")
}

fn names(count: usize) -> Vec<String> {
    (0..count).map(|c| format!("c{c}")).collect()
}

/// The policy file: every caller and the hostile one, each with its token.
fn policy(count: usize) -> PolicyFile {
    let callers: serde_json::Map<String, serde_json::Value> = names(count)
        .into_iter()
        .chain([HOSTILE.to_owned()])
        .map(|caller| {
            let hash = sha256_hex(&token(&caller));
            (caller, serde_json::json!({"token_sha256": hash}))
        })
        .collect();
    PolicyFile::parse(&serde_json::json!({"callers": callers}).to_string()).unwrap()
}

/// The child's part: serve with tokens until the parent kills it.
fn serve(count: usize) {
    let data = std::env::var(DATA).unwrap();
    let data = Path::new(&data);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let file = policy(count);
    let access = Access::Tokens(Tokens::from_settings(&file.settings).unwrap());
    let server = common::server(data, file.policy);
    runtime.block_on(common::serve_http(server, access));
}

async fn client(url: &str, caller: &str) -> Result<Client, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token(caller));
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .map_err(|error| error.to_string())
}

async fn create(client: &Client, name: &str, group: Value) {
    common::create(
        client,
        json!({"name": name, "replace": true, "groups": [group]}),
    )
    .await;
}

/// One round: every caller's runs, all callers at once.
async fn round(clients: &[(String, Client)], latencies: &Times) {
    join_all(clients.iter().map(|(name, client)| async move {
        for n in 0..RUNS_PER_CALLER {
            let args = json!({"name": format!("quick-{name}"), "args": {"n": n}});
            common::run_ok(client, args, latencies).await;
        }
    }))
    .await;
}

/// How long an attacker waits before trying again (module comment).
const AGAIN: Duration = Duration::from_secs(1);

/// The hostile caller's attack (module comment), until `stop`; `ready` is told once it is all
/// under way.
async fn attack(
    addr: SocketAddr,
    url: String,
    stop: CancellationToken,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let mut tasks = Vec::new();
    let head = |length: usize, auth: bool| {
        let auth = if auth {
            format!("Authorization: Bearer {}\r\n", token(HOSTILE))
        } else {
            String::new()
        };
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n{auth}\r\n"
        )
    };
    // Half-sent bodies, and connections that send nothing: held until the server closes them,
    // then opened again.
    for auth in [true, false] {
        for _ in 0..attackers() {
            let (stop, head) = (stop.clone(), head(1000, auth));
            tasks.push(tokio::spawn(async move {
                while !stop.is_cancelled() {
                    let Ok(mut socket) = tokio::net::TcpStream::connect(addr).await else {
                        tokio::time::sleep(AGAIN).await;
                        continue;
                    };
                    if auth {
                        let _ = socket.write_all(head.as_bytes()).await;
                        let _ = socket.write_all(&[b' '; 500]).await;
                    }
                    let mut sink = Vec::new();
                    tokio::select! {
                        _ = socket.read_to_end(&mut sink) => tokio::time::sleep(AGAIN).await,
                        () = stop.cancelled() => {}
                    }
                }
            }));
        }
    }
    // Sessions held open, and a flood of long calls on the first of them.
    let mut sessions = Vec::new();
    for _ in 0..64 {
        if let Ok(session) = client(&url, HOSTILE).await {
            sessions.push(session);
        }
    }
    if let Some(first) = sessions.first() {
        let slow = json!({"tool": "cmd_run", "args": {"command": "sleep 600"}}).to_string();
        create(first, "slow", json!({"name": "g", "tools": slow + " ;"})).await;
    }
    let sessions = Arc::new(sessions);
    for k in 0..attackers() {
        let (stop, sessions) = (stop.clone(), Arc::clone(&sessions));
        tasks.push(tokio::spawn(async move {
            let Some(session) = sessions.get(k % sessions.len().max(1)) else {
                return;
            };
            while !stop.is_cancelled() {
                let call = common::call(session, "seq_run", json!({"name": "slow"}));
                tokio::select! {
                    _ = call => tokio::time::sleep(AGAIN).await,
                    () = stop.cancelled() => {}
                }
            }
        }));
    }
    let _ = ready.send(());
    stop.cancelled().await;
    for task in tasks {
        let _ = task.await;
    }
    let sessions = Arc::try_unwrap(sessions).unwrap_or_default();
    for session in sessions {
        let _ = session.cancel().await;
    }
}

fn main() {
    let count = callers();
    if std::env::var(SERVE).is_ok() {
        serve(count);
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (_server, line) = common::started(&mut common::child(SERVE, "1", DATA, data.path()));
    let addr: SocketAddr = line.parse().unwrap();
    let url = format!("http://{addr}/mcp");
    let clients: Vec<(String, Client)> = runtime.block_on(async {
        let clients = join_all(names(count).into_iter().map(|name| {
            let url = url.clone();
            async move {
                let client = client(&url, &name).await.unwrap();
                let echo = json!({"tool": "echo", "args": {"value": "$args.n"}, "as": "v"})
                    .to_string()
                    + " ;";
                create(
                    &client,
                    &format!("quick-{name}"),
                    json!({"name": "g", "in": {"n": "integer"}, "out": {"v": "any"},
                           "tools": echo}),
                )
                .await;
                (name, client)
            }
        }));
        clients.await
    });
    // Each phase's latencies, and its rounds' wall times for criterion.
    let (quiet, attacked) = (Times::default(), Times::default());
    let rounds = Times::default();

    let runs = count * RUNS_PER_CALLER;
    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group(format!("fair/{count} callers x {RUNS_PER_CALLER}"));
    flat(&mut group, 10, 1, 10).throughput(Throughput::Elements(runs as u64));
    let mut bench = |name: &str, latencies: &Times| {
        timed(&mut group, name, &rounds, || {
            runtime.block_on(round(&clients, latencies))
        });
    };
    bench("quiet", &quiet);
    let stop = CancellationToken::new();
    let (ready, under_way) = tokio::sync::oneshot::channel();
    let attacker = runtime.spawn(attack(addr, url.clone(), stop.clone(), ready));
    runtime.block_on(under_way).unwrap();
    bench("hostile", &attacked);
    stop.cancel();
    group.finish();
    let _ = runtime.block_on(attacker);

    let (q50, q99) = (common::ms(&quiet, 0.5), common::ms(&quiet, 0.99));
    let (h50, h99) = (common::ms(&attacked, 0.5), common::ms(&attacked, 0.99));
    println!(
        "fair, {count} callers x {RUNS_PER_CALLER} seq_run, one hostile caller ({} half-sent \
         bodies, {} connections without a token, {} flooding long calls, 64 sessions): latency \
         p50/p99 quiet {:.2}/{:.2} ms, under attack {:.2}/{:.2} ms; p99 ratio {:.2} (target \
         within 2)",
        attackers(),
        attackers(),
        attackers(),
        q50,
        q99,
        h50,
        h99,
        h99 / q99,
    );
    runtime.block_on(async {
        for (_, client) in clients {
            let _ = client.cancel().await;
        }
    });
    criterion.final_summary();
}
