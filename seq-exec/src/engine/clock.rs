//! The run's clock: every `started_ms` of a report is an offset from the run's start on it, so
//! that groups, items, attempts and called groups share one time axis.

use tokio::time::Instant;

/// Where a run's time starts. In process it is this process's monotonic clock (tokio's, which
/// paused time in tests moves); a durable run reads the wall clock once, journals the reading
/// and measures from it, so that a replay, and a `#name` call run elsewhere, keep the axis.
#[derive(Clone, Copy, Debug)]
pub struct RunClock {
    origin: Origin,
}

#[derive(Clone, Copy, Debug)]
enum Origin {
    Instant(Instant),
    /// Milliseconds since the Unix epoch.
    Wall(u64),
}

impl RunClock {
    /// A run starting now, on this process's clock.
    pub fn start() -> RunClock {
        RunClock {
            origin: Origin::Instant(Instant::now()),
        }
    }

    /// A run that started at `epoch_ms` (milliseconds since the Unix epoch), a journaled
    /// reading of the wall clock.
    pub fn since_wall(epoch_ms: u64) -> RunClock {
        RunClock {
            origin: Origin::Wall(epoch_ms),
        }
    }

    /// Milliseconds from the run's start to now.
    pub fn offset_ms(&self) -> u64 {
        match self.origin {
            Origin::Instant(at) => millis(at.elapsed()),
            Origin::Wall(at) => wall_now().saturating_sub(at),
        }
    }

    /// The offset of `epoch_ms` (milliseconds since the Unix epoch, a journaled reading) on a
    /// durable run's axis; `None` on this process's clock, which has no such readings.
    pub fn offset_of(&self, epoch_ms: u64) -> Option<u64> {
        match self.origin {
            Origin::Instant(_) => None,
            Origin::Wall(at) => Some(epoch_ms.saturating_sub(at)),
        }
    }

    /// Something starting now: its `started_ms`, and a stopwatch for its `duration_ms`.
    pub fn mark(&self) -> Mark {
        Mark {
            started_ms: self.offset_ms(),
            at: Instant::now(),
        }
    }
}

/// When something in a run started: what its report says as `started_ms` and `duration_ms`.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    pub started_ms: u64,
    at: Instant,
}

impl Mark {
    /// Milliseconds since the mark, on the monotonic clock.
    pub fn duration_ms(&self) -> u64 {
        millis(self.at.elapsed())
    }

    /// The mark's instant, for timers measured from it.
    pub(crate) fn instant(&self) -> Instant {
        self.at
    }
}

fn millis(elapsed: std::time::Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// Milliseconds since the Unix epoch, on this machine's clock.
pub fn wall_now() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    millis(since)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets and durations move with tokio's clock, so paused time gives exact figures.
    #[tokio::test(start_paused = true)]
    async fn offsets_are_measured_from_the_start() {
        let clock = RunClock::start();
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
        let mark = clock.mark();
        assert_eq!(mark.started_ms, 40);
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        assert_eq!(mark.duration_ms(), 25);
        assert_eq!(clock.offset_ms(), 65);
    }

    #[test]
    fn a_wall_clock_origin_measures_from_its_reading() {
        let clock = RunClock::since_wall(wall_now().saturating_sub(5_000));
        assert!(clock.offset_ms() >= 5_000);
    }

    /// A journaled reading lands on a durable run's axis; this process's clock has none.
    #[test]
    fn a_reading_is_placed_on_a_durable_axis_only() {
        assert_eq!(RunClock::since_wall(1_000).offset_of(4_500), Some(3_500));
        assert_eq!(RunClock::since_wall(1_000).offset_of(500), Some(0));
        assert_eq!(RunClock::start().offset_of(4_500), None);
    }
}
