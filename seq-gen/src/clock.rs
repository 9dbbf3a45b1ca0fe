//! The benchmarks' clock: wall time by default, or the benchmark thread's CPU time with
//! `SEQC_BENCH_CLOCK=cpu`. On a shared machine (2 cores, other builds running) wall time
//! counts the time the thread waited for a core; CPU time does not, so figures and their ratios
//! stay comparable between runs. Both are reported in nanoseconds, printed like durations.
//! The kernel updates a thread's CPU time at scheduler ticks (up to 4 ms apart here), which is
//! noise below 1% for the benchmarks' samples of about a second each.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use std::time::Instant;

/// A criterion measurement that reads wall time or thread CPU time.
#[derive(Debug)]
pub struct Clock {
    origin: Instant,
    cpu: bool,
}

impl Clock {
    /// CPU time if `SEQC_BENCH_CLOCK=cpu` and the system can tell it (Linux), else wall time.
    pub fn from_env() -> Clock {
        let cpu = std::env::var("SEQC_BENCH_CLOCK").is_ok_and(|v| v == "cpu")
            && thread_cpu_ns().is_some();
        eprintln!(
            "clock: {}",
            if cpu { "thread CPU time" } else { "wall time" }
        );
        Clock {
            origin: Instant::now(),
            cpu,
        }
    }

    fn now(&self) -> u64 {
        if self.cpu {
            thread_cpu_ns().unwrap_or(0)
        } else {
            u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
        }
    }
}

/// The calling thread's time on a CPU, in nanoseconds (Linux schedstat's first field).
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Criterion's own duration formatter (values are nanoseconds either way).
static WALL: WallTime = WallTime;

impl Measurement for Clock {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.now()
    }

    fn end(&self, start: u64) -> u64 {
        self.now().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a.saturating_add(*b)
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}

#[cfg(test)]
mod tests {
    use super::{Clock, thread_cpu_ns};
    use criterion::measurement::Measurement;

    #[test]
    fn both_clocks_advance_while_working() {
        for cpu in [false, true] {
            if cpu && thread_cpu_ns().is_none() {
                continue;
            }
            let clock = Clock {
                origin: std::time::Instant::now(),
                cpu,
            };
            let start = clock.start();
            let sum: u64 = (0..2_000_000u64).map(std::hint::black_box).sum();
            assert!(sum > 0);
            assert!(clock.end(start) > 0, "cpu clock: {cpu}");
        }
    }
}
