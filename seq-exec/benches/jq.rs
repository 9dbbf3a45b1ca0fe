//! The `jq` tool's costs on the embedded host, each against a baseline of the same run:
//!
//! - `dispatch`: a call of `jq` with a small filter (`.a + 1`) against a call of `echo`, both
//!   through the host's `call` awaited one after another: what a filter's thread, compile and
//!   evaluation add to a call. The ratio of their times per call is printed at the end.
//! - `one_mb`: a filter (`map(select(.ok)) | length`) over a 1 MB array of objects, given as the
//!   call's `input` (cloned into the call's arguments, as a run does), against `serde_json`
//!   parsing the same bytes into a `Value`: the cost of reading the input into jq's values and
//!   filtering it, as a multiple of reading JSON at all.
//!
//! `cargo bench -p seq-exec --bench jq`. Under `cargo test --benches` or `cargo bench --
//! --test` the calls shrink to a quick smoke test.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop there"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use seq_exec::Caller;
use seq_exec::ToolHost;
use seq_exec::builtin::BuiltinHost;
use seq_gen::bench::full_size;
use seq_gen::bench::timed;
use seq_gen::times::Times;
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Duration;
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `a / b` of two measures' means and best iterations, printed as `name: …`.
fn print_ratio(name: &str, what: &Times, against: &Times, per: f64) {
    match (what.mean_and_best(), against.mean_and_best()) {
        (Some((mean, best)), Some((base_mean, base_best))) => {
            let us = |d: Duration| d.as_secs_f64() * 1e6 / per;
            println!(
                "{name}: {:.1} µs against {:.1} µs = {:.2}× (best {:.2}×)",
                us(mean),
                us(base_mean),
                mean.as_secs_f64() / base_mean.as_secs_f64(),
                best.as_secs_f64() / base_best.as_secs_f64()
            );
        }
        _ => println!("{name}: not run"),
    }
}

fn dispatch(c: &mut Criterion) {
    let calls: usize = if full_size() { 200 } else { 5 };
    let rt = runtime();
    let root = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(root.path());
    let jq_times = Times::default();
    let echo_times = Times::default();
    let mut group = c.benchmark_group("jq_dispatch");
    timed(&mut group, "jq_small_filter", &jq_times, || {
        rt.block_on(async {
            for _ in 0..calls {
                let args = json!({"filter": ".a + 1", "input": {"a": 1}});
                black_box(host.call(&Caller::new("local"), "jq", args).await.unwrap());
            }
        });
    });
    timed(&mut group, "echo", &echo_times, || {
        rt.block_on(async {
            for _ in 0..calls {
                black_box(
                    host.call(&Caller::new("local"), "echo", json!({"value": 2}))
                        .await
                        .unwrap(),
                );
            }
        });
    });
    group.finish();
    print_ratio(
        "jq_dispatch, per call, jq `.a + 1` against echo",
        &jq_times,
        &echo_times,
        calls as f64,
    );
}

/// An array of objects of about `bytes` bytes as JSON text.
fn input(bytes: usize) -> String {
    let mut items = Vec::new();
    let mut size = 2;
    let mut i = 0u64;
    while size < bytes {
        let item = json!({"id": i, "name": format!("item-{i}"), "ok": !i.is_multiple_of(3), "tags": ["a", "b"]});
        size += item.to_string().len() + 1;
        items.push(item);
        i += 1;
    }
    Value::Array(items).to_string()
}

fn one_mb(c: &mut Criterion) {
    let bytes = if full_size() { 1 << 20 } else { 16 << 10 };
    let text = input(bytes);
    let value: Value = serde_json::from_str(&text).unwrap();
    let rt = runtime();
    let root = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(root.path());
    let jq_times = Times::default();
    let serde_times = Times::default();
    let mut group = c.benchmark_group("jq_one_mb");
    group.sample_size(20);
    timed(&mut group, "jq_select_length", &jq_times, || {
        let args = json!({"filter": "map(select(.ok)) | length", "input": value.clone()});
        black_box(
            rt.block_on(host.call(&Caller::new("local"), "jq", args))
                .unwrap(),
        );
    });
    timed(&mut group, "serde_json_parse", &serde_times, || {
        black_box(serde_json::from_str::<Value>(black_box(&text)).unwrap());
    });
    group.finish();
    print_ratio(
        &format!(
            "jq_one_mb, {} KB: jq `map(select(.ok)) | length` against serde_json's parse",
            text.len() >> 10
        ),
        &jq_times,
        &serde_times,
        1.0,
    );
}

criterion_group!(benches, dispatch, one_mb);
criterion_main!(benches);
