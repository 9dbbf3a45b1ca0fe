//! What every benchmark asks of the command line it runs under.

/// Whether to run at full size: under `cargo bench`, which passes `--bench`, but not with
/// `--test` (`cargo bench -- --test`) nor under `cargo test --benches`, which are smoke tests.
pub fn full_size() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--test")
}

/// Sets `group` to take `samples` equal-sized samples (criterion's linear ramp would repeat
/// iterations that take a second or more), after `warm_up` seconds, over `measure` seconds.
#[cfg(feature = "clock")]
pub fn flat<'g, 'a, M: criterion::measurement::Measurement>(
    group: &'g mut criterion::BenchmarkGroup<'a, M>,
    samples: usize,
    warm_up: u64,
    measure: u64,
) -> &'g mut criterion::BenchmarkGroup<'a, M> {
    group
        .sample_size(samples)
        .sampling_mode(criterion::SamplingMode::Flat)
        .warm_up_time(std::time::Duration::from_secs(warm_up))
        .measurement_time(std::time::Duration::from_secs(measure))
}

/// `once` benchmarked in `group` as `name`, each iteration's wall time kept in `times` as well,
/// for the figure a benchmark prints beside criterion's.
#[cfg(feature = "clock")]
pub fn timed(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    times: &crate::times::Times,
    mut once: impl FnMut(),
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| times.measure(iters, &mut once))
    });
}

/// The median of `ratio` over interleaved `rounds` (NaN for none): a same-run ratio that one
/// slow round cannot move.
pub fn median_of<R>(rounds: &[R], ratio: impl Fn(&R) -> f64) -> f64 {
    let mut ratios: Vec<f64> = rounds.iter().map(ratio).collect();
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The least of `pick` over `rounds` (infinity for none): the best time of each contender.
pub fn best_of<R>(rounds: &[R], pick: impl Fn(&R) -> f64) -> f64 {
    rounds.iter().map(pick).fold(f64::INFINITY, f64::min)
}

/// How long `f` takes once, in seconds of wall time: one contender of an interleaved round.
pub fn seconds(f: &mut dyn FnMut()) -> f64 {
    let started = std::time::Instant::now();
    f();
    started.elapsed().as_secs_f64()
}
