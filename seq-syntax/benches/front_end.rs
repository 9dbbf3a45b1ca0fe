//! The front end against serde_json on a generated 10 MB sequence file:
//!
//! - `serde_json_floor`: the file parsed as a `serde_json::Value`, the floor for any front end;
//! - `serde_json_same_work`: serde_json doing the front end's logical work: the file, then every
//!   `tools` string split into items and each item parsed (see `seq_gen::baseline`);
//! - `seq_syntax_parse`: the whole front end, spans and typed AST included.
//!
//! After criterion's figures it prints the same ratios from rounds that run the three one after
//! the other (`interleaved_ratios`), which a machine shared with other work disturbs less.
//!
//! `cargo bench -p seq-syntax --bench front_end`; `SEQC_BENCH_CLOCK=cpu` measures CPU time
//! instead of wall time, for a machine busy with other work (see `seq_gen::clock`). Under
//! `cargo test --benches` or `cargo bench -- --test` the input shrinks to 256 KB, a quick smoke
//! test.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use seq_gen::bench::full_size;
use seq_gen::bench::{best_of, flat, median_of, seconds};
use seq_gen::clock::Clock;
use std::hint::black_box;

fn front_end(c: &mut Criterion<Clock>) {
    let benchmarking = full_size();
    let size = if benchmarking { 10 << 20 } else { 256 << 10 };
    let text = seq_gen::sequence_file(size);
    let bytes = text.as_bytes();

    // Both sides must do all their work on valid input, or the comparison means nothing.
    let work = seq_gen::baseline::same_work(bytes);
    assert_eq!(
        work.failed, 0,
        "serde_json rejected generated items: {work:?}"
    );
    let parse = seq_syntax::parse(&text);
    assert!(!parse.has_errors(), "the generated file has errors");
    eprintln!(
        "front_end input: {} bytes, {} groups, {} items ({} with bare references)",
        bytes.len(),
        work.groups,
        work.items,
        work.quoted
    );

    let mut group = c.benchmark_group("front_end");
    // Each iteration takes 0.1–2 s: equal-sized samples, not criterion's linear ramp.
    flat(&mut group, 10, 2, 8).throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("serde_json_floor", |b| {
        b.iter(|| seq_gen::baseline::file_level(black_box(bytes)))
    });
    group.bench_function("serde_json_same_work", |b| {
        b.iter(|| seq_gen::baseline::same_work(black_box(bytes)))
    });
    group.bench_function("seq_syntax_parse", |b| {
        b.iter(|| seq_syntax::parse(black_box(&text)))
    });
    group.finish();
    if benchmarking {
        interleaved_ratios(&text);
    }
}

/// The ratios again, from rounds that run the three one after the other: a machine shared with
/// other work slows whole stretches of a run, and criterion measures each benchmark in a
/// stretch of its own. Each round's ratios compare runs made seconds apart; the median of the
/// rounds and the ratio of the best times are both printed.
fn interleaved_ratios(text: &str) {
    const ROUNDS: usize = 15;
    let bytes = text.as_bytes();
    let time = seconds;
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let floor = time(&mut || drop(black_box(seq_gen::baseline::file_level(black_box(bytes)))));
        let same = time(&mut || {
            black_box(seq_gen::baseline::same_work(black_box(bytes)));
        });
        let parse = time(&mut || drop(black_box(seq_syntax::parse(black_box(text)))));
        rounds.push((floor, same, parse));
    }
    let median = |ratio: &dyn Fn(&(f64, f64, f64)) -> f64| median_of(&rounds, ratio);
    let best = |pick: &dyn Fn(&(f64, f64, f64)) -> f64| best_of(&rounds, pick);
    let (floor, same, parse) = (best(&|r| r.0), best(&|r| r.1), best(&|r| r.2));
    println!(
        "front_end interleaved, {ROUNDS} rounds: seq_syntax_parse / serde_json_floor = {:.2}× \
         (median of rounds; best times {:.2}×), / serde_json_same_work = {:.2}× (best {:.2}×)",
        median(&|r| r.2 / r.0),
        parse / floor,
        median(&|r| r.2 / r.1),
        parse / same,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = front_end
}
criterion_main!(benches);
