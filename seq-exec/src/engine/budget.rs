//! The run's budget of bytes (`Limits::max_run_bytes`): what the values held in slots and in
//! flight may come to together, across every group and call of one run.
//!
//! Every value that comes into the run is charged when it arrives — a tool's result, a filled-in
//! argument (byte by byte, as it is built), a `fallback` — and the charge ([`Held`]) travels with
//! the value: into its slot, into the value of the call that returns the slot, into the caller's
//! slot. A charge is released when its value is let go: a slot overwritten, a result dropped
//! (its type did not fit, the item was cancelled), a call's arguments once the call returns.
//! So a value is counted once wherever it moves, and an `array` slot holds the sum of what it
//! collected. Slots of groups that ended stay charged to the end of the run: the run's report
//! holds them.
//!
//! Item runs are charged too, since a fan-out holds far more in them than in its values (an
//! `each` calling a group with an `each` of its own runs a million elements): each while it
//! runs ([`ITEM_RUN_BYTES`]), and its report to the end of the run ([`ITEM_REPORT_BYTES`]);
//! an `each` item's elements all at once before the first one starts ([`item_runs`]), those
//! that run side by side all in flight (their futures are made at once).

use super::size::format_bytes;
use crate::error::{Reason, ToolError};
use seq_syntax::limits::{ITEM_REPORT_BYTES, ITEM_RUN_BYTES};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

tokio::task_local! {
    /// The budget of the run a host call belongs to, while the engine makes it: the built-in
    /// tools charge what they read into memory to it before they read.
    static CURRENT: Arc<RunBudget>;
}

/// Runs `call` (a host call of the run) with `budget` as [`current`].
pub(crate) async fn scoped<F: std::future::Future>(budget: &Arc<RunBudget>, call: F) -> F::Output {
    CURRENT.scope(Arc::clone(budget), call).await
}

/// The budget of the run this host call belongs to; `None` outside a run (a tool called
/// directly).
pub(crate) fn current() -> Option<Arc<RunBudget>> {
    CURRENT.try_with(Arc::clone).ok()
}

/// What one run holds, and its bound.
#[derive(Debug)]
pub(crate) struct RunBudget {
    held: AtomicUsize,
    bound: usize,
}

impl RunBudget {
    pub fn new(bound: usize) -> Arc<RunBudget> {
        Arc::new(RunBudget {
            held: AtomicUsize::new(0),
            bound,
        })
    }

    fn release(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Bytes charged to a run's budget, released when dropped.
pub(crate) struct Held {
    budget: Arc<RunBudget>,
    bytes: usize,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Held({})", self.bytes)
    }
}

impl Held {
    /// Nothing charged yet.
    pub fn none(budget: &Arc<RunBudget>) -> Held {
        Held {
            budget: Arc::clone(budget),
            bytes: 0,
        }
    }

    /// Charges `bytes` more, unless the run would then hold more than its budget: then nothing
    /// is charged and the error says what the run holds.
    pub fn take(&mut self, bytes: usize) -> Result<(), ToolError> {
        let budget = &self.budget;
        let taken = budget
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes)
                    .filter(|&after| after <= budget.bound)
            });
        match taken {
            Ok(_) => {
                self.bytes += bytes;
                Ok(())
            }
            Err(held) => Err(past_budget(held, bytes, budget.bound)),
        }
    }

    /// Leaves the charge to the end of the run: what it stands for is kept that long (a report).
    pub fn keep(mut self) {
        self.bytes = 0;
    }

    /// Takes over `other`'s charge: the values it stands for are now held as part of this one's.
    pub fn absorb(&mut self, mut other: Held) {
        self.bytes += std::mem::take(&mut other.bytes);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// Charges `count` item runs about to start, `running` of them at once: their reports to the end
/// of the run, and what the ones at once hold while they run to the charge returned, which the
/// caller drops once they have ended.
pub(crate) fn item_runs(
    budget: &Arc<RunBudget>,
    count: usize,
    running: usize,
) -> Result<Held, ToolError> {
    let mut kept = Held::none(budget);
    kept.take(count.saturating_mul(ITEM_REPORT_BYTES))?;
    let mut held = Held::none(budget);
    held.take(running.saturating_mul(ITEM_RUN_BYTES))?;
    kept.keep();
    Ok(held)
}

fn past_budget(held: usize, more: usize, bound: usize) -> ToolError {
    ToolError::new(
        Reason::Budget,
        format!(
            "the run holds {} in slots and in flight, and {} more would pass its budget of {}",
            approximate(held),
            approximate(more),
            approximate(bound)
        ),
    )
    .with_hint(
        "hold less at once: pass large data by file (its path, not its contents), read files \
         in parts, run fewer large items side by side, fan out over fewer elements at a time \
         (an `each` inside a called `each` multiplies them), or raise the run's byte budget",
    )
}

/// `3.2 MiB`, `256 MiB`, `100 bytes`: sizes as measured are rarely round, bounds usually are.
fn approximate(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    if bytes < KIB || bytes.is_multiple_of(KIB) {
        return format_bytes(bytes);
    }
    // One decimal of a size shown to a person: the float's precision is plenty.
    let tenths = |unit: usize| format!("{:.1}", bytes as f64 / unit as f64);
    if bytes >= MIB {
        format!("{} MiB", tenths(MIB))
    } else if bytes >= KIB {
        format!("{} KiB", tenths(KIB))
    } else {
        format!("{bytes} bytes")
    }
}
