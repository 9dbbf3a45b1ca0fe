//! What the items of one running group share: a leaf, so that an item, an `each` and the
//! group read it without importing one another.

use super::Cx;
use super::stack::Stack;
use super::tool_timeout::ToolTimeout;
use crate::error::ToolError;
use seq_syntax::ast::{Group, Item, Sequence};
use std::collections::{HashMap, HashSet};
use tokio::sync::{RwLock, Semaphore, SemaphorePermit};

/// What the items of one running group share.
pub(crate) struct GroupCx<'a> {
    pub cx: Cx<'a>,
    pub sequence: &'a Sequence,
    pub group: &'a Group,
    /// The stack with this group on top.
    pub stack: Stack,
    /// Taken exclusively by a tool that is not parallel-safe (see `dispatch::host_tool`).
    pub lock: RwLock<()>,
    /// The per-tool timeout of the group's host calls.
    pub tool_timeout: ToolTimeout,
    /// The items are in flight at once (a parallel group, on a driver that lets them be).
    pub side_by_side: bool,
    /// The `array` slots: every value written to one is appended, in item order.
    pub(super) collect: HashSet<&'a str>,
    /// Each item's retries so far, read for an item the group stops before it finishes.
    pub(super) progress: Vec<std::sync::Mutex<Progress>>,
    /// `max_parallel`: a permit for every run of a tool in flight, an item's or an element's.
    pub(super) permits: Option<Semaphore>,
    /// How many more attempts `on_error: retry` gives a failed item (`retries`, or the input
    /// it names).
    pub retries: u32,
}

impl GroupCx<'_> {
    /// Whether `slot` collects the values written to it. Every `array` slot does, whatever the
    /// number of writers, so that adding a second writer never changes what the first one
    /// means, and no tool result can fail an `array` slot's type check at run time.
    pub fn collects(&self, slot: &str) -> bool {
        self.collect.contains(slot)
    }

    /// `f` on the retries of item `index` so far.
    pub fn progress<T>(&self, index: usize, f: impl FnOnce(&mut Progress) -> T) -> T {
        let mut none = Progress::default();
        match self.progress.get(index) {
            Some(progress) => f(&mut progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)),
            None => f(&mut none),
        }
    }

    /// Whether the runs of `item` go side by side with others: every item of a parallel group
    /// the driver lets be in flight at once, and the elements of a fan-out (an `each` item with
    /// `max_parallel`) the driver lets be.
    pub fn beside(&self, item: &Item) -> bool {
        self.side_by_side || (item.fan_out().is_some() && self.cx.driver.fans_out(item))
    }

    /// Waits for room under the group's `max_parallel`; the run holds the permit while it is in
    /// flight. `None` when the group has no bound.
    pub async fn permit(&self) -> Option<SemaphorePermit<'_>> {
        match &self.permits {
            // The semaphore is never closed, so acquiring fails never.
            Some(permits) => permits.acquire().await.ok(),
            None => None,
        }
    }
}

/// What an item's retries have done so far: kept beside the group, so that an item its group's
/// timeout stops is still reported with the attempts it made. The elements of an `each` item
/// retry one by one, side by side: each has a record of its own.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    pub retries: u32,
    pub failed_attempts: Vec<ToolError>,
    elements: HashMap<usize, Progress>,
}

impl Progress {
    /// The record of the item itself (`None`) or of one of its elements.
    pub fn of(&mut self, element: Option<usize>) -> &mut Progress {
        match element {
            Some(i) => self.elements.entry(i).or_default(),
            None => self,
        }
    }
}
