//! One line against pretty-printed: the same sequence with 10,000 and 100,000 unknown fields
//! (one diagnostic each), checked and every diagnostic given its line and column, as every output
//! format does. Models write JSON on one line; a column counted from the line's start made that
//! quadratic. Printed beside criterion's figures: the ratio one-line / pretty from rounds that
//! run the two one after the other (the target is within 2×).
//!
//! `cargo bench -p seq-check --bench layout`; under `cargo test --benches` or `cargo bench --
//! --test` the files shrink to 1,000 fields, a quick smoke test.

use criterion::{Criterion, criterion_group, criterion_main};
use seq_catalog::Catalog;
use seq_check::Source;
use seq_gen::bench::flat;
use seq_gen::bench::full_size;
use seq_gen::clock::Clock;
use seq_syntax::LineIndex;
use std::hint::black_box;
use std::time::Instant;

/// A sequence whose one group has `fields` unknown fields, on one line or pretty-printed.
fn sequence(fields: usize, one_line: bool) -> String {
    let (sep, indent) = if one_line { (" ", "") } else { ("\n", "    ") };
    let mut text = format!(
        "{{{sep}\"name\": \"many\",{sep}\"groups\": [{{{sep}{indent}\"name\": \"g\",{sep}{indent}\"tools\": \"{{\\\"tool\\\":\\\"echo\\\",\\\"args\\\":{{\\\"value\\\":\\\"hi\\\"}}}} ;\""
    );
    for i in 0..fields {
        text.push_str(&format!(",{sep}{indent}\"unknown_field_{i}\": {i}"));
    }
    text.push_str(&format!("{sep}}}]{sep}}}\n"));
    text
}

/// The checker's work and the positions of what it found: the part of `seqc check` that does
/// not depend on the output format.
fn check_and_place(text: &str, catalog: &Catalog) -> usize {
    let checked = seq_check::check(&[Source::new("many.json", text)], catalog);
    let index = LineIndex::new(text);
    let mut columns = 0usize;
    for diagnostic in checked.files.iter().flat_map(|f| &f.diagnostics) {
        columns += index.line_col(text, diagnostic.span.start).column as usize;
        columns += index.line_col_utf16(text, diagnostic.span.end).1 as usize;
    }
    columns
}

fn layout(c: &mut Criterion<Clock>) {
    let sizes: &[usize] = if full_size() {
        &[10_000, 100_000]
    } else {
        &[1_000]
    };
    let catalog = Catalog::builtin();
    let mut group = c.benchmark_group("layout");
    flat(&mut group, 10, 1, 5);
    for &fields in sizes {
        let one_line = sequence(fields, true);
        let pretty = sequence(fields, false);
        assert_eq!(one_line.lines().count(), 1);
        for text in [&one_line, &pretty] {
            let checked = seq_check::check(&[Source::new("many.json", text.as_str())], &catalog);
            assert_eq!(checked.files[0].diagnostics.len(), fields);
        }
        group.bench_function(format!("one_line_{fields}"), |b| {
            b.iter(|| check_and_place(black_box(&one_line), &catalog))
        });
        group.bench_function(format!("pretty_{fields}"), |b| {
            b.iter(|| check_and_place(black_box(&pretty), &catalog))
        });
        interleaved_ratio(fields, &one_line, &pretty, &catalog);
    }
    group.finish();
}

/// one-line / pretty, the median of rounds that time the two back to back.
fn interleaved_ratio(fields: usize, one_line: &str, pretty: &str, catalog: &Catalog) {
    const ROUNDS: usize = 7;
    let time = |text: &str| {
        let started = Instant::now();
        black_box(check_and_place(text, catalog));
        started.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..ROUNDS).map(|_| time(one_line) / time(pretty)).collect();
    ratios.sort_by(f64::total_cmp);
    eprintln!(
        "layout {fields} fields: one line / pretty-printed = {:.2}× (median of {ROUNDS} interleaved rounds)",
        ratios[ROUNDS / 2]
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = layout
}
criterion_main!(benches);
