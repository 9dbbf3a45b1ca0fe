//! What a durable run has finished, as it goes: the workflow records each item and group of
//! the submitted run that finishes in its state ([`Recorder`], the engine's observer), where
//! the workflow's shared handler `finished` reads it for whoever waits for the report
//! ([`crate::submit_observed`]), to tell its client.
//!
//! The records are state writes of the run's journal: a worker that dies leaves them, and the
//! next one replays them at the same points of the journal. So each record is what a replay
//! gives again, in the same order: an item's tool and status, a group's name and status, never
//! a timing; and the items of a parallel group, which finish in any order, are recorded at the
//! group's end, in item order.

use restate_sdk::prelude::*;
use seq_exec::engine::{GroupReport, GroupStatus, ItemReport, ItemStatus, Observer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Mutex;

/// How many records one read of `finished` gives at most.
pub const BATCH: u32 = 64;

/// The state key of the `n`th record.
pub fn key(n: u32) -> String {
    format!("finished.{n}")
}

/// Something of the run that finished.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Finished {
    Item {
        group: String,
        /// From 0, as the engine counts.
        index: usize,
        tool: String,
        status: ItemStatus,
    },
    Group {
        name: String,
        status: GroupStatus,
    },
}

impl Finished {
    /// Tells `observer`, as the engine would have in process.
    pub fn tell(&self, observer: &dyn Observer) {
        match self {
            Finished::Item {
                group,
                index,
                tool,
                status,
            } => observer.item_finished(group, *index, &ItemReport::new(tool, *status, None)),
            Finished::Group { name, status } => observer.group_finished_elsewhere(name, *status),
        }
    }
}

/// Records the run's finished items and groups in its workflow state.
pub(crate) struct Recorder<'ctx> {
    ctx: &'ctx WorkflowContext<'ctx>,
    state: Mutex<Recorded>,
}

#[derive(Default)]
struct Recorded {
    /// How many records were written.
    written: u32,
    /// The parallel groups running now, whose items are held until the group ends.
    parallel: BTreeSet<String>,
    held: Vec<(String, usize, Finished)>,
}

impl<'ctx> Recorder<'ctx> {
    pub(crate) fn new(ctx: &'ctx WorkflowContext<'ctx>) -> Recorder<'ctx> {
        Recorder {
            ctx,
            state: Mutex::new(Recorded::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, state: &mut Recorded, finished: Finished) {
        self.ctx.set(&key(state.written), Json(finished));
        state.written += 1;
    }
}

impl Observer for Recorder<'_> {
    fn group_started(&self, _sequence: &str, group: &str, parallel: bool) {
        if parallel {
            self.state().parallel.insert(group.to_owned());
        }
    }

    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        let finished = Finished::Item {
            group: group.to_owned(),
            index,
            tool: report.tool.clone(),
            status: report.status,
        };
        let mut state = self.state();
        if state.parallel.contains(group) {
            state.held.push((group.to_owned(), index, finished));
        } else {
            self.record(&mut state, finished);
        }
    }

    fn group_finished(&self, report: &GroupReport) {
        let mut state = self.state();
        state.parallel.remove(&report.name);
        let (mut own, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut state.held)
            .into_iter()
            .partition(|(group, _, _)| *group == report.name);
        state.held = rest;
        own.sort_by_key(|(_, index, _)| *index);
        for (_, _, finished) in own {
            self.record(&mut state, finished);
        }
        self.record(
            &mut state,
            Finished::Group {
                name: report.name.clone(),
                status: report.status,
            },
        );
    }
}
