//! The checker on a generated batch: 1,000 sequences × 10 groups with
//! cross-sequence calls four deep and diamonds, and the same batch four times over, to show that
//! checking grows linearly. In the same run serde_json parses the same bytes: every file as a
//! `Value` (the floor), and the front end's logical work (`seq_gen::baseline::same_work`).
//!
//! `cargo bench -p seq-check --bench check_store`; `SEQC_BENCH_CLOCK=cpu` measures CPU time
//! instead of wall time, for a machine busy with other work (see `seq_gen::clock`). Under
//! `cargo test --benches` or `cargo bench -- --test` the batches shrink to 50 and 200
//! sequences, a quick smoke test.

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use seq_catalog::Catalog;
use seq_check::Source;
use seq_gen::bench::flat;
use seq_gen::bench::full_size;
use seq_gen::clock::Clock;
use std::hint::black_box;

const GROUPS: usize = 10;

fn check_store(c: &mut Criterion<Clock>) {
    let benchmarking = full_size();
    let base = if benchmarking { 1_000 } else { 50 };
    let catalog = Catalog::builtin();

    let mut group = c.benchmark_group("check_store");
    // Each iteration takes 0.1–2 s: equal-sized samples, not criterion's linear ramp.
    flat(&mut group, 10, 2, 10);
    for scale in [1, 4] {
        bench_store(&mut group, &catalog, base * scale, scale);
    }
    group.finish();
}

fn bench_store(
    group: &mut BenchmarkGroup<'_, Clock>,
    catalog: &Catalog,
    sequences: usize,
    scale: usize,
) {
    let sources: Vec<Source> = seq_gen::batch(sequences, GROUPS)
        .into_iter()
        .map(|(path, text)| Source { path, text })
        .collect();
    let bytes: usize = sources.iter().map(|s| s.text.len()).sum();

    // A store with diagnostics would measure error paths; a baseline that rejects items would
    // skip work. Neither may happen.
    let check = seq_check::check(&sources, catalog);
    let noisy = check
        .files
        .iter()
        .filter(|f| !f.diagnostics.is_empty())
        .count();
    assert_eq!(noisy, 0, "{noisy} generated files have diagnostics");
    let failed: usize = sources
        .iter()
        .map(|s| seq_gen::baseline::same_work(s.text.as_bytes()).failed)
        .sum();
    assert_eq!(failed, 0, "serde_json rejected generated items");
    eprintln!("check_store {scale}x: {sequences} sequences × {GROUPS} groups, {bytes} bytes");

    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(format!("seq_check_{scale}x"), |b| {
        b.iter(|| seq_check::check(black_box(&sources), catalog))
    });
    group.bench_function(format!("serde_json_floor_{scale}x"), |b| {
        b.iter(|| {
            for source in &sources {
                black_box(seq_gen::baseline::file_level(black_box(
                    source.text.as_bytes(),
                )));
            }
        })
    });
    group.bench_function(format!("serde_json_same_work_{scale}x"), |b| {
        b.iter(|| {
            for source in &sources {
                black_box(seq_gen::baseline::same_work(black_box(
                    source.text.as_bytes(),
                )));
            }
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = check_store
}
criterion_main!(benches);
