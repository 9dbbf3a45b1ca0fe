//! `seq_run` under load, over streamable HTTP against stdio: `CLIENTS` clients (50, or
//! `SEQC_BENCH_CLIENTS`) at once, each making 20 `seq_run`s of a one-item sequence (`echo`) one
//! after another, every answer checked (`ok`, the value the item wrote).
//!
//! - `http`: one server, a process of its own (this binary, started again as `seqc mcp --http`
//!   would serve: `seq_mcp::http::serve` on loopback), every client a session of its own on its
//!   own connections (rmcp's streamable HTTP client);
//! - `stdio`: what each agent has without a shared service, a server process per client (this
//!   binary again, serving stdio as `seqc mcp` does), all on one data directory.
//!
//! Criterion times a round (all clients' runs); the line after both gives runs per second, the
//! ratio HTTP/stdio of the same run, and p50/p99 of one `seq_run`'s latency as the clients saw
//! it. `cargo bench -p seq-mcp --bench load`; under `cargo test --benches`, one small round.

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
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use seq_exec::Caller;
use seq_exec::policy::Policy;
use seq_gen::bench::flat;
use seq_gen::bench::full_size;
use seq_gen::bench::timed;
use seq_gen::times::Times;
use seq_mcp::http::Access;
use serde_json::json;
use std::path::Path;
use std::process::Stdio;

/// Set in a child of this binary: serve `stdio` or `http` on the data directory of
/// [`DATA`].
const SERVE: &str = "SEQ_MCP_LOAD_SERVE";
const DATA: &str = "SEQ_MCP_LOAD_DATA";
const RUNS_PER_CLIENT: usize = 20;

fn clients() -> usize {
    if !full_size() {
        return 4;
    }
    std::env::var("SEQC_BENCH_CLIENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50)
}

/// The child's part: serve until stdin closes (stdio) or the parent kills it (HTTP).
fn serve(how: &str) {
    let data = std::env::var(DATA).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = common::server(Path::new(&data), Policy::allow_all());
        if how == "stdio" {
            server.serve_stdio().await.unwrap();
            return;
        }
        common::serve_http(server, Access::Open(Caller::new("bench"))).await;
    });
}

async fn stdio_clients(data: &Path, count: usize) -> Vec<Client> {
    let started = (0..count).map(|_| async {
        let command = tokio::process::Command::from(common::child(SERVE, "stdio", DATA, data));
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        ().serve(transport).await.unwrap()
    });
    join_all(started).await
}

async fn http_clients(url: &str, count: usize) -> Vec<Client> {
    let started = (0..count).map(|_| async {
        ().serve(StreamableHttpClientTransport::from_uri(url))
            .await
            .unwrap()
    });
    join_all(started).await
}

async fn create(client: &Client) {
    let tools = json!({"tool": "echo", "args": {"value": "$args.n"}, "as": "v"}).to_string() + " ;";
    let sequence = json!({"name": "one", "replace": true, "groups": [
        {"name": "g", "in": {"n": "integer"}, "out": {"v": "any"}, "tools": tools}]});
    common::create(client, sequence).await;
}

/// One round: every client's runs, all clients at once.
async fn round(clients: &[Client], latencies: &Times) {
    join_all(clients.iter().enumerate().map(|(c, client)| async move {
        for r in 0..RUNS_PER_CLIENT {
            let n = c * RUNS_PER_CLIENT + r;
            let args = json!({"name": "one", "args": {"n": n}});
            let report = common::run_ok(client, args, latencies).await;
            // The value written is the run's own argument (as the template renders it).
            let written = report["out"]["g"]["v"].to_string();
            assert_eq!(written.trim_matches('"'), n.to_string(), "{report}");
        }
    }))
    .await;
}

/// What one transport's rounds gave.
#[derive(Default)]
struct Figures {
    rounds: Times,
    latencies: Times,
}

impl Figures {
    /// Runs per second of the median round.
    fn runs_per_second(&self, runs: usize) -> f64 {
        let median = self.rounds.percentile(0.5).unwrap_or_default();
        runs as f64 / median.as_secs_f64()
    }
}

fn main() {
    if let Ok(how) = std::env::var(SERVE) {
        serve(&how);
        return;
    }
    let count = clients();
    let runs = count * RUNS_PER_CLIENT;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let http_data = tempfile::tempdir().unwrap();
    let stdio_data = tempfile::tempdir().unwrap();
    let (_http_server, addr) =
        common::started(&mut common::child(SERVE, "http", DATA, http_data.path()));
    let url = format!("http://{addr}/mcp");
    let (http, stdio) = runtime.block_on(async {
        let http = http_clients(&url, count).await;
        create(&http[0]).await;
        let stdio = stdio_clients(stdio_data.path(), count).await;
        create(&stdio[0]).await;
        (http, stdio)
    });
    let (over_http, over_stdio) = (Figures::default(), Figures::default());

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group(format!("load/{count} clients x {RUNS_PER_CLIENT}"));
    flat(&mut group, 10, 1, 10).throughput(Throughput::Elements(runs as u64));
    for (name, clients, figures) in [("http", &http, &over_http), ("stdio", &stdio, &over_stdio)] {
        timed(&mut group, name, &figures.rounds, || {
            runtime.block_on(round(clients, &figures.latencies));
        });
    }
    group.finish();

    let (h, s) = (
        over_http.runs_per_second(runs),
        over_stdio.runs_per_second(runs),
    );
    println!(
        "load, {count} clients x {RUNS_PER_CLIENT} seq_run: HTTP {h:.0} runs/s, stdio {s:.0} runs/s, \
         ratio HTTP/stdio {:.2}; latency p50/p99: HTTP {:.2}/{:.2} ms, stdio {:.2}/{:.2} ms",
        h / s,
        common::ms(&over_http.latencies, 0.5),
        common::ms(&over_http.latencies, 0.99),
        common::ms(&over_stdio.latencies, 0.5),
        common::ms(&over_stdio.latencies, 0.99),
    );
    runtime.block_on(async {
        for client in http.into_iter().chain(stdio) {
            let _ = client.cancel().await;
        }
    });
    criterion.final_summary();
}
