//! The engine's costs on the embedded host, on a multi-thread tokio
//! runtime:
//!
//! - `dispatch`: a serial group of `echo` items run by `Engine::run`, against two baselines in
//!   the same run: the host's `call("echo", ...)` awaited directly as many times, and as many
//!   empty tokio tasks spawned and awaited one after another. Criterion's time per iteration
//!   divided by the item count is the cost per call; a line printed after the group says it
//!   in µs.
//! - `parallel_sleep`: one parallel group of 10,000 `sleep {"ms": 50}` items; its wall time
//!   against the 50 ms floor (target: within 1.5×), printed as a ratio at the end.
//!
//! - `retry_pause`: an item that always fails (`false`, caught by `error_as`), retried 2 times
//!   under `retry_delay: "100ms"`, `retry_backoff: 2`; its wall time against the floor of its
//!   pauses, 100 + 200 = 300 ms (target: within 1.1×), printed as a ratio at the end.
//! - `each_sleep`: one `each` item of `sleep {"ms": 50}` over 10,000 elements in a parallel
//!   group (target: within 1.5× the 50 ms floor), and over 1,000 elements under
//!   `max_parallel: 100` (target: within 1.2× its floor, 10 × 50 ms), printed as ratios.
//!
//! `cargo bench -p seq-exec --bench engine`. Under `cargo test --benches` or `cargo bench --
//! --test` the groups shrink to a quick smoke test.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop there"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::NoSequences;
use seq_exec::engine::RunRequest;
use seq_exec::{Caller, Engine, RunReport, ToolHost};
use seq_gen::bench::flat;
use seq_gen::bench::full_size;
use seq_gen::bench::timed;
use seq_gen::times::Times;
use seq_syntax::ast::Sequence;
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;

const SLEEP_MS: u64 = 50;

/// A sequence of one group holding `count` copies of `item`, checked clean.
fn sequence(parallel: bool, item: &Value, count: usize) -> Sequence {
    let item = item.to_string();
    let tools: String = std::iter::repeat_n(format!("{item} ;"), count)
        .collect::<Vec<_>>()
        .join(" ");
    checked(json!({
        "name": "bench",
        "groups": [{
            "name": "items",
            "parallel": parallel,
            "timeout": "5m",
            "tools": tools,
        }]
    }))
}

/// One parallel group of one `each` item of `sleep {"ms": ms}` over `elements` elements,
/// under `max_parallel` when given.
fn each_sequence(elements: usize, ms: u64, max_parallel: Option<u32>) -> Sequence {
    let list: Vec<usize> = (0..elements).collect();
    let item = format!(
        "{{\"tool\":\"sleep\",\"each\":{},\"args\":{{\"ms\":{ms}}}}} ;",
        serde_json::to_string(&list).unwrap()
    );
    let mut group = json!({"name": "each", "timeout": "5m", "tools": item});
    if let Some(n) = max_parallel {
        group["max_parallel"] = json!(n);
    }
    checked(json!({"name": "bench", "groups": [group]}))
}

/// The sequence `file`, checked clean.
fn checked(file: Value) -> Sequence {
    seq_test_support::checked_one(file.to_string(), &seq_catalog::Catalog::builtin())
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn engine(host: Arc<BuiltinHost>) -> Engine {
    Engine::new(host, Arc::new(NoSequences))
}

fn run(rt: &Runtime, engine: &Engine, sequence: &Sequence) -> RunReport {
    let report =
        rt.block_on(engine.run(sequence, Map::new(), RunRequest::new(&Caller::new("bench"))));
    assert!(report.ok, "{report:?}");
    report
}

fn dispatch(c: &mut Criterion) {
    let calls: usize = if full_size() { 1_000 } else { 10 };
    let rt = runtime();
    let root = tempfile::tempdir().unwrap();
    let host = Arc::new(BuiltinHost::new(root.path()));
    let engine = engine(Arc::clone(&host));
    let echo = json!({"tool": "echo", "args": {"value": 1}});
    let serial = sequence(false, &echo, calls);

    let engine_times = Times::default();
    let host_times = Times::default();
    let spawn_times = Times::default();
    let mut group = c.benchmark_group("dispatch");
    group.throughput(Throughput::Elements(calls as u64));
    timed(&mut group, "engine_serial_echo", &engine_times, || {
        black_box(run(&rt, &engine, &serial));
    });
    timed(&mut group, "host_call_echo", &host_times, || {
        rt.block_on(async {
            let caller = Caller::new("bench");
            for _ in 0..calls {
                black_box(
                    host.call(&caller, "echo", json!({"value": 1}))
                        .await
                        .unwrap(),
                );
            }
        });
    });
    timed(&mut group, "tokio_spawn_empty", &spawn_times, || {
        rt.block_on(async {
            for _ in 0..calls {
                tokio::spawn(async {}).await.unwrap();
            }
        });
    });
    group.finish();
    let per_call = |times: &Times| {
        let per = |d: Duration| d.as_secs_f64() * 1e6 / calls as f64;
        times.mean_and_best().map_or_else(
            || "not run".to_owned(),
            |(mean, best)| format!("{:.2} µs (best {:.2} µs)", per(mean), per(best)),
        )
    };
    println!(
        "dispatch per call, {calls} calls: engine {}, host call {}, empty task {}",
        per_call(&engine_times),
        per_call(&host_times),
        per_call(&spawn_times)
    );
}

fn parallel_sleep(c: &mut Criterion) {
    let items: usize = if full_size() { 10_000 } else { 100 };
    let rt = runtime();
    let root = tempfile::tempdir().unwrap();
    let engine = engine(Arc::new(BuiltinHost::new(root.path())));
    let mut group = c.benchmark_group("parallel_sleep");
    flat(&mut group, 10, 1, 5);
    // 0 ms: what the group costs the engine itself, the part of the wall time above the floor.
    for ms in [SLEEP_MS, 0] {
        let sleep = json!({"tool": "sleep", "args": {"ms": ms}});
        let wide = sequence(true, &sleep, items);
        let times = Times::default();
        timed(
            &mut group,
            &format!("{items}_items_of_{ms}ms"),
            &times,
            || {
                let report = run(&rt, &engine, &wide);
                assert_eq!(report.groups.first().map(|g| g.parallel), Some(true));
            },
        );
        let Some((mean, best)) = times.mean_and_best() else {
            continue;
        };
        let ms_of = |d: Duration| d.as_secs_f64() * 1e3;
        let floor = Duration::from_millis(ms).as_secs_f64();
        let ratio = |d: Duration| {
            if floor > 0.0 {
                format!(" = {:.2}× the floor", d.as_secs_f64() / floor)
            } else {
                String::new()
            }
        };
        println!(
            "parallel_sleep, {items} items of {ms} ms: wall {:.1} ms{} (best {:.1} ms{})",
            ms_of(mean),
            ratio(mean),
            ms_of(best),
            ratio(best)
        );
    }
    group.finish();
}

fn retry_pause(c: &mut Criterion) {
    let rt = runtime();
    let root = tempfile::tempdir().unwrap();
    let engine = engine(Arc::new(BuiltinHost::new(root.path())));
    let text = json!({
        "name": "bench",
        "groups": [{
            "name": "retried",
            "on_error": "retry",
            "retries": 2,
            "retry_delay": "100ms",
            "retry_backoff": 2,
            "out": {"e": "object"},
            "tools": r#"{"tool":"cmd_run","args":{"argv":["false"]},"error_as":"e"} ;"#,
        }]
    })
    .to_string();
    let check = seq_check::check(
        &[seq_check::Source::new("bench.json", text)],
        &seq_catalog::Catalog::builtin(),
    );
    let sequence = check.files.into_iter().next().unwrap().sequence.unwrap();
    let floor = Duration::from_millis(300);
    let times = Times::default();
    let mut group = c.benchmark_group("retry_pause");
    flat(&mut group, 10, 1, 4);
    timed(&mut group, "3_attempts_100ms_backoff_2", &times, || {
        let report = run(&rt, &engine, &sequence);
        assert_eq!(report.groups.first().map(|g| g.items[0].retries), Some(2));
    });
    group.finish();
    if let Some((mean, best)) = times.mean_and_best() {
        let ratio = |d: Duration| d.as_secs_f64() / floor.as_secs_f64();
        println!(
            "retry_pause, 3 attempts, pauses 100 + 200 ms: wall {:.1} ms = {:.3}× the floor \
             (best {:.1} ms = {:.3}×)",
            mean.as_secs_f64() * 1e3,
            ratio(mean),
            best.as_secs_f64() * 1e3,
            ratio(best)
        );
    }
}

fn each_sleep(c: &mut Criterion) {
    let full = full_size();
    let rt = runtime();
    let root = tempfile::tempdir().unwrap();
    let engine = engine(Arc::new(BuiltinHost::new(root.path())));
    let mut group = c.benchmark_group("each_sleep");
    flat(&mut group, 10, 1, 8);
    // (elements, max_parallel): the floor is the number of waves times the sleep.
    let cases: [(usize, Option<u32>); 2] = if full {
        [(10_000, None), (1_000, Some(100))]
    } else {
        [(100, None), (100, Some(10))]
    };
    for (elements, bound) in cases {
        let sequence = each_sequence(elements, SLEEP_MS, bound);
        let waves = bound.map_or(1, |n| elements.div_ceil(n as usize)) as u64;
        let floor = Duration::from_millis(SLEEP_MS * waves);
        let times = Times::default();
        let name = match bound {
            Some(n) => format!("{elements}_elements_max_parallel_{n}"),
            None => format!("{elements}_elements"),
        };
        timed(&mut group, &name, &times, || {
            black_box(run(&rt, &engine, &sequence));
        });
        if let Some((mean, best)) = times.mean_and_best() {
            let ratio = |d: Duration| d.as_secs_f64() / floor.as_secs_f64();
            println!(
                "each_sleep, {name} of {SLEEP_MS} ms: wall {:.1} ms = {:.2}× the {} ms floor (best {:.2}×)",
                mean.as_secs_f64() * 1e3,
                ratio(mean),
                floor.as_millis(),
                ratio(best)
            );
        }
    }
    group.finish();
}

criterion_group!(benches, dispatch, parallel_sleep, retry_pause, each_sleep);
criterion_main!(benches);
