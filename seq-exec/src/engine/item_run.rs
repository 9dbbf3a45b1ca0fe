//! What one run of an item gives its group: its report and the slot writes it asks for, and
//! what its retries have done so far.

use super::budget::Held;
use super::report::{ItemReport, ItemStatus};
use crate::error::ToolError;
use seq_syntax::ast::Item;
use serde_json::Value;

/// What an item writes to its `as` slot.
#[derive(Clone, Debug)]
pub(crate) enum Write {
    /// The tool's (or call's) value.
    Value(Value),
    /// The group's `fallback` for the slot (`missing: degrade`). For a slot that collects the
    /// values of several items, its elements stand in for this item's value.
    Fallback(Value),
    /// The values of an `each` item's elements, an array in element order: appended one by one
    /// to a slot that collects, written whole to an `any` slot.
    Elements(Value),
}

#[derive(Debug)]
pub(crate) struct ItemRun {
    /// Boxed: an `ItemRun` is moved through the poll frame of every nested call, whose stack
    /// the bound on nesting (`Limits::max_nested_groups`) is measured against.
    pub report: Box<ItemReport>,
    /// The `as` slot's write: `(slot, what to write, its charge to the run's budget)`.
    pub write: Option<SlotWrite>,
    /// The `error_as` slot's write, when a failure was caught.
    pub caught: Option<SlotWrite>,
}

/// `(slot, what to write, its charge to the run's budget)`.
pub(crate) type SlotWrite = (String, Write, Held);

impl ItemRun {
    /// An item that failed before any attempt: nothing ran, nothing is written.
    pub fn not_run(item: &Item, error: ToolError) -> ItemRun {
        ItemRun {
            report: Box::new(ItemReport::new(
                item.tool.value.as_str(),
                ItemStatus::Failed,
                Some(error),
            )),
            write: None,
            caught: None,
        }
    }

    pub fn failed(&self) -> bool {
        self.report.status == ItemStatus::Failed
    }

    pub fn cancelled(&self) -> bool {
        self.report.status == ItemStatus::Cancelled
    }
}
