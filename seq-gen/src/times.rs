//! Wall times of the iterations criterion asks for (`iter_custom`), kept so that a benchmark can
//! print a figure of its own beside criterion's: a ratio against a floor, a mean of several runs.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct Times(Mutex<Vec<Duration>>);

impl Times {
    /// Runs `once` `iters` times, keeping each wall time; returns their sum for criterion.
    pub fn measure(&self, iters: u64, mut once: impl FnMut()) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let started = Instant::now();
            once();
            let wall = started.elapsed();
            total += wall;
            if let Ok(mut times) = self.0.lock() {
                times.push(wall);
            }
        }
        total
    }

    /// The mean and the best iteration; `None` when nothing was measured (a filtered-out
    /// benchmark).
    pub fn mean_and_best(&self) -> Option<(Duration, Duration)> {
        let times = self.0.lock().ok()?;
        let best = times.iter().min().copied()?;
        let total: Duration = times.iter().sum();
        let count = u32::try_from(times.len()).ok()?;
        Some((total / count, best))
    }

    pub fn mean(&self) -> Option<Duration> {
        self.mean_and_best().map(|(mean, _)| mean)
    }

    /// Keeps `wall`, measured elsewhere (one call's latency within a round).
    pub fn push(&self, wall: Duration) {
        if let Ok(mut times) = self.0.lock() {
            times.push(wall);
        }
    }

    /// The time at the fraction `p` of those kept, sorted (`0.5`: the median; the nearest
    /// rank); `None` when nothing was kept.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        let mut times = self.0.lock().ok()?.clone();
        times.sort();
        let last = times.len().checked_sub(1)?;
        let rank = ((last as f64) * p.clamp(0.0, 1.0)).round() as usize;
        times.get(rank).copied()
    }
}
