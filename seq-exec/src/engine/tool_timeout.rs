//! The per-tool timeout of one group's host calls, with as few timers as the group allows.
//!
//! Every call of a group starts after the group does, so no call can reach the bound before the
//! group has run that long: the group's *horizon*. Until then a call needs no timer of its own,
//! and a group whose own timeout comes before its horizon needs none at all: that timeout
//! cancels every call first. A parallel group waits for its horizon with one timer; when it
//! passes, the calls in flight are woken and take timers for their own deadlines, and so do the
//! calls that start later. Ten thousand calls in flight thus register no timer besides the ones
//! their tools use. A serial group runs one call at a time: each takes its own timer.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

pub(crate) struct ToolTimeout {
    bound: Duration,
    mode: Mode,
    /// The horizon has passed (`Mode::Shared`).
    passed: AtomicBool,
    /// Wakes the calls in flight when it does.
    passing: Notify,
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    /// No call can reach the bound before the group's timeout cancels it.
    Never,
    /// Calls take timers of their own once the group's loop has seen this horizon pass.
    Shared(Instant),
    /// Every call takes a timer of its own.
    PerCall,
}

impl ToolTimeout {
    /// For the calls of a group that started at `started` and is cut off at `deadline`.
    /// `shared`: the group's loop waits for [`ToolTimeout::horizon`] and then calls
    /// [`ToolTimeout::pass`].
    pub fn new(bound: Duration, started: Instant, deadline: Instant, shared: bool) -> ToolTimeout {
        let mode = match started.checked_add(bound) {
            Some(horizon) if horizon < deadline => {
                if shared {
                    Mode::Shared(horizon)
                } else {
                    Mode::PerCall
                }
            }
            // A bound past the end of the clock never cuts a call off either.
            Some(_) | None => Mode::Never,
        };
        ToolTimeout {
            bound,
            mode,
            passed: AtomicBool::new(false),
            passing: Notify::new(),
        }
    }

    /// For one call made on its own, outside any group: a timer of its own.
    pub fn per_call(bound: Duration) -> ToolTimeout {
        ToolTimeout {
            bound,
            mode: Mode::PerCall,
            passed: AtomicBool::new(false),
            passing: Notify::new(),
        }
    }

    /// When the group's loop should call [`ToolTimeout::pass`]; `None` once it has, or when
    /// calls do not share the group's horizon.
    pub fn horizon(&self) -> Option<Instant> {
        match self.mode {
            Mode::Shared(horizon) if !self.passed.load(Ordering::Acquire) => Some(horizon),
            Mode::Shared(_) | Mode::Never | Mode::PerCall => None,
        }
    }

    /// The horizon has passed: the calls in flight take timers for their own deadlines.
    pub fn pass(&self) {
        self.passed.store(true, Ordering::Release);
        self.passing.notify_waiters();
    }

    /// The output of `call`, or `None` when it ran past the bound; then it has been dropped,
    /// which cancels it.
    pub async fn run<F: Future>(&self, call: F) -> Option<F::Output> {
        // Pinned once for every mode: a future per mode would each hold a copy of the call in
        // the state of every item in flight.
        let mut call = std::pin::pin!(call);
        let deadline = match self.mode {
            Mode::Never => None,
            Mode::PerCall => Instant::now().checked_add(self.bound),
            Mode::Shared(_) => {
                let started = Instant::now();
                // Made before the flag is read, so that a `pass` after the read still wakes it.
                let passing = self.passing.notified();
                if !self.passed.load(Ordering::Acquire) {
                    tokio::select! {
                        biased;
                        output = &mut call => return Some(output),
                        () = passing => {}
                    }
                }
                started.checked_add(self.bound)
            }
        };
        match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, call).await.ok(),
            // A bound past the end of the clock.
            None => Some(call.await),
        }
    }
}
