//! Every phase of `seq_check::check` on the generated 10 MB file, beside serde_json on the same
//! bytes, in rounds that run them one after the other:
//!
//! - `tree`: the front end's file-level parse alone (`seq_syntax::json::parse`, the
//!   spanned tree), against serde_json's `Value` of the file (the floor);
//! - `parse`: the whole front end (`seq_syntax::parse`: the tree, the `tools` strings unescaped
//!   and split, every item parsed, the typed AST), against serde_json doing the same work
//!   (`seq_gen::baseline::same_work`);
//! - `rules`: the checker's rules and graphs over the parsed sequence (`check_batch`), against
//!   the same serde_json work;
//! - `check`: the two together, as the command line calls them, with the per-file merging.
//!
//! Rendering the report is measured with the whole process (`cargo bench --bench
//! check_process` at the workspace's root). Figures are the calling thread's CPU time; each
//! ratio is the median over rounds of that round's ratio.
//!
//! `cargo bench -p seq-check --bench phases`; `-- --rounds N` (default 11), `--size BYTES`,
//! `--only PHASE` (one phase alone, for a profiler). Under `cargo test
//! --benches` or `cargo bench -- --test` the file is 256 KB and one round runs.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark that cannot set up should stop there, and prints its figures"
)]

use seq_catalog::Catalog;
use seq_check::Source;
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test");
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1))
    };
    let size = arg("--size")
        .and_then(|n| n.parse().ok())
        .unwrap_or(if full { 10 << 20 } else { 256 << 10 });
    // `--only NAME` runs one phase alone, for a profiler.
    let only = arg("--only");
    let text = seq_gen::sequence_file(size);
    let bytes = text.as_bytes();
    let catalog = Catalog::builtin();
    let sources = [Source::new("big.json", text.clone())];

    // Both sides must do all their work on valid input.
    assert_eq!(seq_gen::baseline::same_work(bytes).failed, 0);
    let checked = seq_check::check(&sources, &catalog);
    assert!(
        checked.files[0].diagnostics.is_empty(),
        "the file has findings"
    );
    let sequence = seq_syntax::parse(&text).sequence.unwrap();

    let phases: [(&str, &dyn Fn()); 6] = [
        ("serde_json floor", &|| {
            drop(black_box(seq_gen::baseline::file_level(black_box(bytes))));
        }),
        ("serde_json same work", &|| {
            black_box(seq_gen::baseline::same_work(black_box(bytes)));
        }),
        ("tree", &|| {
            drop(black_box(seq_syntax::json::parse(
                black_box(&text),
                seq_syntax::json::Mode::File,
            )));
        }),
        ("parse", &|| {
            drop(black_box(seq_syntax::parse(black_box(&text))))
        }),
        ("rules", &|| {
            drop(black_box(seq_check::check_batch(
                black_box(&[&sequence]),
                &catalog,
            )));
        }),
        ("check", &|| {
            drop(black_box(seq_check::check(black_box(&sources), &catalog)));
        }),
    ];
    let rounds: usize = arg("--rounds")
        .and_then(|n| n.parse().ok())
        .unwrap_or(if full { 11 } else { 1 });
    if let Some(only) = only {
        let (_, phase) = phases.iter().find(|(name, _)| name == only).unwrap();
        for _ in 0..rounds {
            phase();
        }
        return;
    }
    // One unmeasured round warms caches and the allocator.
    for (_, phase) in &phases {
        phase();
    }
    let mut times = vec![Vec::with_capacity(rounds); phases.len()];
    for _ in 0..rounds {
        for ((_, phase), times) in phases.iter().zip(&mut times) {
            let started = cpu_ns();
            phase();
            times.push((cpu_ns() - started) as f64 / 1e6);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let ratio =
        |a: usize, b: usize| median(times[a].iter().zip(&times[b]).map(|(x, y)| x / y).collect());
    println!(
        "phases of seq_check::check on {:.1} MB, {rounds} rounds, thread CPU time (median ms; ratio \
         within rounds):",
        bytes.len() as f64 / 1e6
    );
    for (at, (name, _)) in phases.iter().enumerate() {
        println!(
            "  {name:<22} {:>8.1} ms   / floor {:>5.2}x   / same work {:>5.2}x",
            median(times[at].clone()),
            ratio(at, 0),
            ratio(at, 1),
        );
    }
}

/// The calling thread's CPU time in nanoseconds (Linux schedstat's first field), falling back
/// to wall time where the system cannot tell it.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| {
            use std::sync::OnceLock;
            static ORIGIN: OnceLock<std::time::Instant> = OnceLock::new();
            let origin = ORIGIN.get_or_init(std::time::Instant::now);
            u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
        })
}
