//! The shell text of 1,000 `cmd_run` commands with references (a mix of the shapes models write:
//! pipelines, quoted and unquoted values, `$(...)`, `case`, loops, here-documents, `sh -c`
//! with positional arguments, comments), checked as the checker and the engine check it:
//!
//! - `serde_json_file`: the file of commands read as a `serde_json::Value`, the floor for
//!   reading the text at all;
//! - `scan_words`: the scan of the words alone (quoting, commands that parse their arguments
//!   again), what the checker ran before the shell parser decided the contexts;
//! - `scan`: the parser's reading and the scan together (`seq_syntax::shell::scan`), each round
//!   a file checked for the first time (the thread's kept readings forgotten first), so each of
//!   the 16 shapes is parsed once and read from what was kept 61 or 62 more times;
//! - `scan_words_distinct` / `scan_distinct`: the same with every command in a directory of its
//!   own (`cd /srv/wN && ...`), so that no text repeats and all 1,000 are parsed.
//!
//! `scan / scan_words` is the shell parser's cost; `scan / serde_json_file` sets it beside
//! reading the same bytes. Both are printed from interleaved rounds after criterion's figures.
//!
//! Figures (release, CPU clock, a loaded 2-core machine; medians of 31 interleaved rounds):
//! before the readings were kept per text, `scan / scan_words` was 5.96×. With them, the file
//! of shapes is 1.05× (criterion's means: 4.01 ms against 3.34 ms, 1.20×); the distinct file,
//! where every text is parsed, 5.0× (tree-sitter's parse is most of it, 20–25 µs a command
//! against the scan's 3–4 µs: that is the cost of a shape seen for the first time).
//!
//! Then the scan stopped splitting every word for its basename (`scan_words` 3.9 ms → 1.2 ms
//! for the 1,000), the parsed text got a final newline (tree-sitter reached the end through its
//! error recovery, several times a parse's cost), and plain text (8 of the 16 shapes) stopped
//! being parsed. Same session, CPU clock, criterion's means, before → after: `scan` 4.06 ms →
//! 1.39 ms, `scan_distinct` 18.98 ms → 8.36 ms (the best interleaved rounds 17.5 → 7.8 ms).
//! Against the faster scan the ratios read 1.32× (shapes) and 6.1× (distinct); the 8 shapes
//! still parsed, about 14 µs each, are most of the distinct file's time.
//!
//! Then the plain reader took in what depends on quotes alone: reserved words out of command
//! position (`echo done`), `if`, `while`/`until`, `for NAME in`, `[ ... ]`, `${NAME:-WORD}` and
//! one-line `$(...)`; 14 of the 16 shapes are plain (`case` and the here-document are parsed).
//! Same session, CPU clock, a machine at load 8: criterion's means, before → after,
//! `scan_distinct` 10.28 ms → 3.08 ms (`scan_words_distinct` 1.40 ms, 1.58 ms), `scan` 2.16 ms →
//! 1.78 ms; interleaved medians, `scan / scan_words` 9.36× → 2.32× (distinct; best rounds 8.26 →
//! 2.90 ms) and 1.33× → 1.26× (shapes). The distinct file now costs less than the old hand
//! scanner's 3.9 ms.
//!
//! `cargo bench -p seq-syntax --bench shell_text`; `SEQC_BENCH_CLOCK=cpu` measures CPU time
//! (see `seq_gen::clock`). Under `cargo bench -- --test` it runs once, a smoke test.

use criterion::{Criterion, criterion_group, criterion_main};
use seq_gen::bench::full_size;
use seq_gen::bench::{best_of, flat, median_of, seconds};
use seq_gen::clock::Clock;
use seq_syntax::ast::TemplatePart;
use seq_syntax::escape::OffsetMap;
use seq_syntax::shell;
use seq_syntax::template::parse_template;
use std::hint::black_box;

#[path = "support/shell_shapes.rs"]
mod shell_shapes;
use shell_shapes::SHAPES;

/// The file of 1,000 commands: the shapes in turn, each with names of its own. With `distinct`,
/// each command also works in a directory of its own (`cd /srv/wN && ...`), so that no two
/// texts the parser reads are the same and none is parsed once for many.
fn commands(distinct: bool) -> String {
    let mut items = Vec::with_capacity(1000);
    for n in 0..1000 {
        let shape = SHAPES.get(n % SHAPES.len()).copied().unwrap_or_default();
        let mut command = shape.replace("{}", &n.to_string());
        if distinct {
            command = format!("cd /srv/w{n} && {command}");
        }
        items.push(serde_json::json!({"tool": "cmd_run", "args": {"command": command}}));
    }
    serde_json::Value::Array(items).to_string()
}

fn templates(file: &str) -> Vec<Vec<TemplatePart>> {
    let value: serde_json::Value = serde_json::from_str(file).expect("the generated file is JSON");
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|item| {
            let command = item["args"]["command"].as_str().expect("a command");
            parse_template(command, &OffsetMap::default()).0.parts
        })
        .collect()
}

fn scan_all(all: &[Vec<TemplatePart>], scan: fn(&[TemplatePart]) -> shell::Scanned) -> usize {
    all.iter()
        .map(|parts| scan(black_box(parts)).refs.len())
        .sum()
}

/// The check of a file as if its texts were new: the parser's readings are forgotten first.
fn scan_cold(all: &[Vec<TemplatePart>]) -> usize {
    shell::forget_parses();
    scan_all(all, shell::scan)
}

fn shell_text(c: &mut Criterion<Clock>) {
    let file = commands(false);
    let all = templates(&file);
    let distinct = templates(&commands(true));
    // Every command must be one the checker accepts, or the work is not the same.
    for parts in all.iter().chain(&distinct) {
        let scanned = shell::scan(parts);
        assert!(
            scanned.unclosed.is_none() && scanned.refs.iter().all(|r| r.expansion().is_ok()),
            "a generated command is refused: {parts:?}"
        );
    }
    eprintln!(
        "shell_text input: {} bytes, {} commands, {} references",
        file.len(),
        all.len(),
        scan_all(&all, shell::scan)
    );
    let mut group = c.benchmark_group("shell_text");
    flat(&mut group, 20, 1, 5);
    group.bench_function("serde_json_file", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&file)))
    });
    group.bench_function("scan_words", |b| {
        b.iter(|| scan_all(&all, shell::scan_words))
    });
    group.bench_function("scan", |b| b.iter(|| scan_cold(&all)));
    group.bench_function("scan_words_distinct", |b| {
        b.iter(|| scan_all(&distinct, shell::scan_words))
    });
    group.bench_function("scan_distinct", |b| b.iter(|| scan_cold(&distinct)));
    group.finish();
    if full_size() {
        interleaved_ratios(&file, &all, "shapes");
        interleaved_ratios(&file, &distinct, "distinct");
    }
}

/// The ratios from rounds that run the three one after the other, which a machine shared with
/// other work disturbs less than criterion's separate stretches (as in `front_end`).
fn interleaved_ratios(file: &str, all: &[Vec<TemplatePart>], name: &str) {
    const ROUNDS: usize = 31;
    let time = seconds;
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let json = time(&mut || {
            black_box(serde_json::from_str::<serde_json::Value>(black_box(file)).ok());
        });
        let words = time(&mut || {
            black_box(scan_all(all, shell::scan_words));
        });
        let full = time(&mut || {
            black_box(scan_cold(all));
        });
        rounds.push((json, words, full));
    }
    let median = |ratio: &dyn Fn(&(f64, f64, f64)) -> f64| median_of(&rounds, ratio);
    let best = |pick: &dyn Fn(&(f64, f64, f64)) -> f64| best_of(&rounds, pick);
    let (json, words, full) = (best(&|r| r.0), best(&|r| r.1), best(&|r| r.2));
    println!(
        "shell_text interleaved ({name}), {ROUNDS} rounds: scan / scan_words = {:.2}× (median of rounds; \
         best times {:.2}×), scan / serde_json_file = {:.2}× (best {:.2}×); best scan {:.2} ms \
         for {} commands",
        median(&|r| r.2 / r.1),
        full / words,
        median(&|r| r.2 / r.0),
        full / json,
        full * 1e3,
        all.len(),
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = shell_text
}
criterion_main!(benches);
