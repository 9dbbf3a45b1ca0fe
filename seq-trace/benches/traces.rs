//! What traces cost a run of the embedded host's `echo` items, N to a group.
//!
//! - `run`: `Engine::run` alone. This is also the run with no exporter configured: the engine
//!   has no tracing path at all (the spans are built from the report once the run has ended,
//!   and with no endpoint nothing is installed), so there is nothing else to measure.
//! - `run_and_record`: the same run, then its spans recorded through [`Traces`] (built, queued
//!   to the batch processor, whose thread hands them to an exporter that drops them: the HTTP
//!   export happens on that thread, off the run's).
//! - `record`: the recording alone, of the same report.
//!
//! The per-item overhead of a configured exporter is `record`'s time over N, printed after the
//! groups in µs. `cargo bench -p seq-trace --bench traces`; under `cargo test --benches` the
//! groups shrink to a quick smoke test.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop there"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::NoSequences;
use seq_exec::engine::RunRequest;
use seq_exec::engine::{FinishedRun, RunRecorder as _};
use seq_exec::{Caller, Engine};
use seq_syntax::ast::Sequence;
use seq_trace::Traces;
use serde_json::{Map, json};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// Drops what it is given: the cost measured is the run's, not the network's.
#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        black_box(batch);
        Ok(())
    }
}

/// One parallel group of `count` `echo` items, checked clean.
fn sequence(count: usize) -> Sequence {
    let tools = std::iter::repeat_n(r#"{"tool":"echo","args":{"value":1}} ;"#, count)
        .collect::<Vec<_>>()
        .join(" ");
    let text = json!({"name": "bench", "groups": [
        {"name": "items", "parallel": true, "timeout": "5m", "tools": tools}
    ]})
    .to_string();
    let check = seq_check::check(
        &[seq_check::Source::new("bench.json", text)],
        &seq_catalog::Catalog::builtin(),
    );
    check.files.into_iter().next().unwrap().sequence.unwrap()
}

fn traces(c: &mut Criterion) {
    let items = if std::env::args().any(|arg| arg == "--test") {
        10
    } else {
        1_000
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let host = Arc::new(BuiltinHost::new(std::env::temp_dir()));
    let engine = Engine::new(host, Arc::new(NoSequences));
    let sequence = sequence(items);
    let caller = Caller::new("bench");
    let traces = Traces::with_exporter(Discard);
    let run = || runtime.block_on(engine.run(&sequence, Map::new(), RunRequest::new(&caller)));
    let record = |report: &seq_exec::RunReport| {
        traces.finished(&FinishedRun {
            sequence: "bench",
            caller: &caller,
            started: SystemTime::now(),
            report,
            traceparent: None,
        });
    };

    let mut group = c.benchmark_group("traces");
    group.throughput(Throughput::Elements(items as u64));
    group.bench_function("run", |b| b.iter(|| black_box(run())));
    group.bench_function("run_and_record", |b| {
        b.iter(|| {
            let report = run();
            record(&report);
            black_box(report)
        });
    });
    let report = run();
    assert!(report.ok);
    group.bench_function("record", |b| b.iter(|| record(black_box(&report))));
    group.finish();

    // The per-item figure, measured on its own.
    let rounds = 50;
    let started = Instant::now();
    for _ in 0..rounds {
        record(&report);
    }
    let per_item = started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds) / items as f64;
    println!("traces: recording a run costs {per_item:.3} µs per item ({items} items a run)");
    traces.shutdown().unwrap();
}

criterion_group!(benches, traces);
criterion_main!(benches);
