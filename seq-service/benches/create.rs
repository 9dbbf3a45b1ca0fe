//! The cost of `seq_create` against the size of the store: a small sequence created by a
//! caller on an empty data directory and on one holding 1,000 stored sequences, in the same
//! run. What was read is reused while the files are unchanged and only the sequences joined to
//! the new one by calls are checked with it, so the two should be close: the ratio (target:
//! within 2×) is printed at the end. Each created sequence is deleted again, outside the time.
//!
//! `cargo bench -p seq-service --bench create`. Under `cargo test --benches` or `cargo bench --
//! --test` the store shrinks to a quick smoke test.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop there"
)]

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use seq_exec::Caller;
use seq_service::{SeqConfig, StorageTools};
use seq_store::storage::{Put, SequenceStorage, Storage};
use serde_json::{Value, json};
use std::cell::Cell;
use std::time::{Duration, Instant};

fn full_size() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--test")
}

/// A small stored sequence of two groups; every tenth calls the one before it, so that the
/// store has calls between sequences as real ones do.
fn stored(index: usize) -> seq_syntax::ast::Sequence {
    let call = if index.is_multiple_of(10) {
        r#"{"tool":"echo","args":{"value":"x"}} ;"#.to_owned()
    } else {
        format!(
            r##"{{"tool":"seq_call","args":{{"target":"#stored{}"}}}} ;"##,
            index - 1
        )
    };
    let text = json!({
        "name": format!("stored{index}"),
        "description": "one of many",
        "groups": [
            {"name": "a", "in": {"who": "string"}, "out": {"said": "string"},
             "tools": r#"{"tool":"echo","args":{"value":"hi $args.who"},"as":"said"} ;"#},
            {"name": "b", "tools": call}
        ]
    })
    .to_string();
    seq_syntax::parse(&text).sequence.unwrap()
}

fn create_args(name: &str) -> Value {
    json!({
        "name": name,
        "groups": [{"name": "g", "tools": r#"{"tool":"echo","args":{"value":"hi"}} ;"#}]
    })
}

fn store(c: &mut Criterion) {
    let size: usize = if full_size() { 1_000 } else { 20 };
    let mut group = c.benchmark_group("store_create");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let caller = Caller::new("bench");
    let mut means = Vec::new();
    for count in [0, size] {
        let data = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let storage = Storage::new(data.path());
        for index in 0..count {
            storage.put(Put::new(&stored(index))).unwrap();
        }
        let tools = StorageTools::new(SeqConfig::new(storage.clone(), root.path()));
        let (total, runs) = (Cell::new(Duration::ZERO), Cell::new(0u32));
        group.bench_function(format!("create_among_{count}"), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let args = create_args("fresh");
                    let started = Instant::now();
                    let outcome = tools.call_blocking("seq_create", &args, Some(&caller));
                    spent += started.elapsed();
                    outcome.result.unwrap();
                    storage.delete("fresh", None, false).unwrap();
                }
                total.set(total.get() + spent);
                runs.set(runs.get() + u32::try_from(iters).unwrap_or(u32::MAX));
                spent
            });
        });
        means.push(total.get() / runs.get().max(1));
    }
    group.finish();
    if let [empty, full] = means[..] {
        println!(
            "seq_create of a small sequence: {:.3} ms on an empty store, {:.3} ms among {size} \
             stored sequences = {:.2}× (target: within 2×)",
            empty.as_secs_f64() * 1e3,
            full.as_secs_f64() * 1e3,
            full.as_secs_f64() / empty.as_secs_f64().max(f64::EPSILON)
        );
    }
}

criterion_group!(benches, store);
criterion_main!(benches);
