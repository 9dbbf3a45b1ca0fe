//! The front end against serde_json on a generated 10 MB sequence file (issue 2, "Performance"):
//!
//! - `serde_json_floor`: the file parsed as a `serde_json::Value`, the floor for any front end;
//! - `serde_json_same_work`: serde_json doing the front end's logical work: the file, then every
//!   `tools` string split into items and each item parsed (see `seq_gen::baseline`);
//! - `seq_syntax_parse`: the whole front end, spans and typed AST included.
//!
//! `cargo bench -p seq-syntax --bench front_end`; `SEQC_BENCH_CLOCK=cpu` measures CPU time
//! instead of wall time, for a machine busy with other work (see `seq_gen::clock`). Under
//! `cargo test --benches` or `cargo bench -- --test` the input shrinks to 256 KB, a quick smoke
//! test.

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use seq_gen::clock::Clock;
use std::hint::black_box;
use std::time::Duration;

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
    group
        .sample_size(10)
        // Each iteration takes 0.1–2 s: equal-sized samples, not criterion's linear ramp.
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Bytes(bytes.len() as u64));
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
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = front_end
}
criterion_main!(benches);

/// Whether to run at full size: under `cargo bench`, which passes `--bench`, but not with
/// `--test` (`cargo bench -- --test`) nor under `cargo test --benches`, which are smoke tests.
fn full_size() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--test")
}
