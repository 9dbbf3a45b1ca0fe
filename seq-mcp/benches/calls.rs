//! Calls per second through seqc's MCP client against a real server (server-everything's
//! `echo`, over stdio), beside the same calls made directly with rmcp's own client to another
//! instance of the same server, in the same run:
//!
//! - `serial`: one call at a time — rmcp's `call_tool` (the baseline), `McpHost::call` (lookup,
//!   arguments, result mapping), and `Engine::run` of a serial group of `ev.echo` items (the
//!   whole path a sequence takes).
//! - `concurrent`: 32 calls in flight at once — `join_all` over rmcp's client and over
//!   `McpHost::call`, and a parallel group of 32 items.
//!
//! Figures are wall time (the server is another process); a line after each group gives
//! calls per second and the ratio to the baseline. `cargo bench -p seq-mcp --bench calls`
//! (needs `npm ci --prefix tests/mcp`). Under `cargo test --benches` the groups shrink to a
//! smoke test.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop there"
)]

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use futures::future::join_all;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use seq_exec::engine::NoSequences;
use seq_exec::engine::RunRequest;
use seq_exec::{Caller, Engine, ToolHost};
use seq_gen::bench::full_size;
use seq_gen::bench::timed;
use seq_gen::times::Times;
use seq_mcp::{McpHost, Options, ServerSpec};
use seq_syntax::ast::Sequence;
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;

const IN_FLIGHT: usize = 32;

fn server_entry() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing: run `npm ci --prefix tests/mcp`",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// One group of `count` `ev.echo` items, checked clean against the host's live catalog.
fn sequence(host: &McpHost, parallel: bool, count: usize) -> Sequence {
    let item = json!({"tool": "ev.echo", "args": {"message": "hi"}}).to_string();
    let tools = vec![format!("{item} ;"); count].join(" ");
    let text = json!({"name": "bench", "groups": [{
        "name": "echo", "parallel": parallel, "timeout": "5m", "tools": tools
    }]})
    .to_string();
    let mut catalog = seq_catalog::Catalog::builtin();
    catalog.merge(host.definitions());
    seq_test_support::checked_one(text, &catalog)
}

struct Setup {
    rt: Runtime,
    direct: RunningService<RoleClient, ClientConfig>,
    host: Arc<McpHost>,
    engine: Engine,
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let entry = server_entry();
    let (direct, host) = rt.block_on(async {
        let mut command = tokio::process::Command::new("node");
        command.args([entry.as_str(), "stdio"]);
        let (child, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The handshake seqc's client makes (the newest version with `initialize`).
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("bench", "1"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let direct = config.serve(child).await.unwrap();
        let spec = ServerSpec::parse(&format!("ev=node '{entry}' stdio")).unwrap();
        let host = McpHost::connect(vec![spec], Options::new()).await.unwrap();
        (direct, Arc::new(host))
    });
    let engine = Engine::new(host.clone(), Arc::new(NoSequences));
    Setup {
        rt,
        direct,
        host,
        engine,
    }
}

fn params() -> CallToolRequestParams {
    let Value::Object(args) = json!({"message": "hi"}) else {
        unreachable!()
    };
    CallToolRequestParams::new("echo").with_arguments(args)
}

fn report(label: &str, calls: usize, baseline: &Times, others: &[(&str, &Times)]) {
    let Some(base) = baseline.mean() else { return };
    let rate = |d: Duration| calls as f64 / d.as_secs_f64();
    let mut line = format!("{label}: rmcp client {:.0} calls/s", rate(base));
    for (name, times) in others {
        if let Some(mean) = times.mean() {
            line.push_str(&format!(
                ", {name} {:.0} calls/s ({:.2}× the baseline's time)",
                rate(mean),
                mean.as_secs_f64() / base.as_secs_f64()
            ));
        }
    }
    println!("{line}");
}

/// The `engine` contender: a run of `sequence`, which must end ok.
fn bench_engine(
    group: &mut BenchmarkGroup<'_, WallTime>,
    s: &Setup,
    sequence: &Sequence,
    caller: &Caller,
    times: &Times,
) {
    timed(group, "engine", times, || {
        let report =
            s.rt.block_on(s.engine.run(sequence, Map::new(), RunRequest::new(caller)));
        assert!(report.ok, "{report:?}");
    });
}

fn serial(c: &mut Criterion) {
    let calls: usize = if full_size() { 200 } else { 3 };
    let s = setup();
    let sequence = sequence(&s.host, false, calls);
    let caller = Caller::new("bench");
    let (direct, host, engine) = (Times::default(), Times::default(), Times::default());
    let mut group = c.benchmark_group("serial");
    group.throughput(Throughput::Elements(calls as u64));
    timed(&mut group, "rmcp_client", &direct, || {
        s.rt.block_on(async {
            for _ in 0..calls {
                black_box(s.direct.call_tool(params()).await.unwrap());
            }
        });
    });
    timed(&mut group, "mcp_host", &host, || {
        s.rt.block_on(async {
            for _ in 0..calls {
                let args = json!({"message": "hi"});
                black_box(
                    s.host
                        .call(&Caller::new("local"), "ev.echo", args)
                        .await
                        .unwrap(),
                );
            }
        });
    });
    bench_engine(&mut group, &s, &sequence, &caller, &engine);
    group.finish();
    report(
        &format!("serial, {calls} calls"),
        calls,
        &direct,
        &[("McpHost::call", &host), ("Engine::run", &engine)],
    );
    s.rt.block_on(s.host.shutdown());
}

fn concurrent(c: &mut Criterion) {
    let s = setup();
    let sequence = sequence(&s.host, true, IN_FLIGHT);
    let caller = Caller::new("bench");
    let (direct, host, engine) = (Times::default(), Times::default(), Times::default());
    let mut group = c.benchmark_group("concurrent");
    group.throughput(Throughput::Elements(IN_FLIGHT as u64));
    timed(&mut group, "rmcp_client", &direct, || {
        let calls = (0..IN_FLIGHT).map(|_| s.direct.call_tool(params()));
        for result in s.rt.block_on(join_all(calls)) {
            black_box(result.unwrap());
        }
    });
    timed(&mut group, "mcp_host", &host, || {
        let caller = Caller::new("local");
        let calls =
            (0..IN_FLIGHT).map(|_| s.host.call(&caller, "ev.echo", json!({"message": "hi"})));
        for result in s.rt.block_on(join_all(calls)) {
            black_box(result.unwrap());
        }
    });
    bench_engine(&mut group, &s, &sequence, &caller, &engine);
    group.finish();
    report(
        &format!("concurrent, {IN_FLIGHT} in flight"),
        IN_FLIGHT,
        &direct,
        &[("McpHost::call", &host), ("Engine::run", &engine)],
    );
    s.rt.block_on(s.host.shutdown());
}

criterion_group!(benches, serial, concurrent);
criterion_main!(benches);
