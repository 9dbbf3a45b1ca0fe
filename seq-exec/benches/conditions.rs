//! Evaluating conditions: a compound condition (`!`, `&&`, `||`, parentheses over four tests,
//! every one evaluated) against a single comparison, over the same inputs in the same run. The
//! ratio of their times per evaluation is printed at the end: what combining tests costs beyond
//! the tests themselves.
//!
//! `cargo bench -p seq-exec --bench conditions`. Under `cargo test --benches` or `cargo bench --
//! --test` each runs once, as a smoke test.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop there"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use seq_exec::engine::ConditionScope;
use seq_syntax::ast::Condition;
use seq_syntax::condition::parse_condition;
use seq_syntax::escape::OffsetMap;
use serde_json::{Map, json};
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SINGLE: &str = r#"$args.branch == "main""#;
/// Four tests, all evaluated (no side short-circuits): the most work a four-test condition does.
const COMPOUND: &str =
    r#"$args.branch == "main" && !$args.dry_run && ($args.count > 3 || $args.tags contains "x")"#;

fn parsed(text: &str) -> Condition {
    let (condition, diagnostics) = parse_condition(text, &OffsetMap::identity(0));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    condition.unwrap()
}

fn conditions(c: &mut Criterion) {
    let args: Map<_, _> =
        json!({"branch": "main", "dry_run": false, "count": 2, "tags": ["a", "x"]})
            .as_object()
            .unwrap()
            .clone();
    let scope = ConditionScope::new(args, Map::new());
    let mut group = c.benchmark_group("conditions");
    // The best time per evaluation of each, over criterion's samples, for the ratio.
    let best: Mutex<Vec<(&str, f64)>> = Mutex::new(Vec::new());
    for (name, text) in [("single", SINGLE), ("compound", COMPOUND)] {
        let condition = parsed(text);
        assert!(scope.holds(&condition).unwrap(), "{text}");
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    black_box(scope.holds(black_box(&condition)).unwrap());
                }
                let wall = started.elapsed();
                let per = wall.as_secs_f64() * 1e9 / iters.max(1) as f64;
                if let Ok(mut best) = best.lock() {
                    best.push((name, per));
                }
                wall.max(Duration::from_nanos(1))
            });
        });
    }
    group.finish();
    let best = best.into_inner().unwrap();
    let min = |name: &str| {
        best.iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .fold(f64::INFINITY, f64::min)
    };
    let (single, compound) = (min("single"), min("compound"));
    println!(
        "conditions: compound (4 tests) {compound:.1} ns, single comparison {single:.1} ns per evaluation: {:.2}x",
        compound / single
    );
}

criterion_group!(benches, conditions);
criterion_main!(benches);
