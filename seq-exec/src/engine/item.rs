//! One item of a group: its attempts under `on_error: retry`, the `missing` policy, and the type
//! check of the value it writes.

use super::budget::Held;
use super::dispatch::{self, Failure};
use super::driver::Step;
use super::group::GroupCx;
use super::report::{CalledGroup, ItemReport, ItemStatus};
use super::values::{self, Scope, describe};
use super::{call, render, size, within};
use crate::error::{Reason, ToolError};
use seq_check::catalog::{Catalog, SEQ_RUN};
use seq_syntax::ast::{Item, Missing, OnError, Type};
use serde_json::{Map, Value};

/// The embedded tool whose `command` is shell text (docs/reference.md, "Shell text").
const CMD_RUN: &str = "cmd_run";

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
    pub report: ItemReport,
    /// `(slot, what to write, its charge to the run's budget)`.
    pub write: Option<(String, Write, Held)>,
}

impl ItemRun {
    pub fn failed(&self) -> bool {
        self.report.status == ItemStatus::Failed
    }

    pub fn cancelled(&self) -> bool {
        self.report.status == ItemStatus::Cancelled
    }
}

/// Runs item `item` of the group, retrying execution failures as `on_error: retry` allows
/// (never not-found, unauthorized or argument errors; `Reason::is_retryable`).
/// `index`: the item's place in its group (it names the item's attempts). The report keeps the
/// errors of the attempts retried and, for a call, the groups its last attempt ran.
pub(crate) async fn run(g: &GroupCx<'_>, index: usize, item: &Item, scope: Scope<'_>) -> ItemRun {
    let group = g.group;
    let allowed = match group.on_error() {
        OnError::Retry => group.retries(),
        OnError::Abort | OnError::Continue => 0,
    };
    let mut retries = 0;
    let mut failed_attempts = Vec::new();
    let mut called = Vec::new();
    // One async function, no helper around the loop: every nested call adds a frame per
    // level to the stack of the poll (see `Limits::max_nested_groups`).
    let mut run = loop {
        if g.cx.cancel.is_cancelled() {
            break finish(
                item,
                ItemStatus::Cancelled,
                Some(call::cancelled_error()),
                retries,
                None,
            );
        }
        // What an earlier attempt called is not what this one did.
        called.clear();
        let outcome = attempt(g, index, retries, item, scope, &mut called).await;
        let failure = match outcome {
            Ok(Some((value, held))) => break written(g, item, value, held, retries),
            Ok(None) => break finish(item, ItemStatus::Skipped, None, retries, None),
            Err(failure) => failure,
        };
        // Cancellation is never retried and never handled by `missing` or `on_error`.
        if failure.error.reason == Reason::Cancelled {
            break finish(
                item,
                ItemStatus::Cancelled,
                Some(failure.error),
                retries,
                None,
            );
        }
        if failure.missing {
            break missing(g, item, scope, failure.error, retries);
        }
        if failure.error.reason.is_retryable() && retries < allowed {
            retries += 1;
            failed_attempts.push(failure.error);
            continue;
        }
        break finish(item, ItemStatus::Failed, Some(failure.error), retries, None);
    };
    run.report.failed_attempts = failed_attempts;
    run.report.called = called;
    run
}

/// One attempt: `Ok(None)` when the item ran nothing and writes nothing (a `seq_when_call`
/// whose `when` is false, a call to a group whose `when` is false). The value comes with its
/// charge to the run's budget.
async fn attempt(
    g: &GroupCx<'_>,
    index: usize,
    retries: u32,
    item: &Item,
    scope: Scope<'_>,
    called: &mut Vec<CalledGroup>,
) -> Result<Option<(Value, Held)>, Failure> {
    let tool = item.tool.value.as_str();
    let step = Step {
        stack: &g.stack,
        index,
        element: scope.each.map(|e| e.index),
        attempt: retries,
        tool,
        beside: g.side_by_side,
        deadline: g.cx.deadline,
    };
    if let Some(error) = dispatch::arg_error(item) {
        return Err(failed_early(g, step, error).await);
    }
    if Catalog::is_call(tool) || tool == SEQ_RUN {
        return call::item(g, step, item, scope, called).await;
    }
    let mut budget = render::Budget::new(g.cx.limits.max_argument_bytes, g.cx.budget);
    let args = match arguments(item, scope, &mut budget) {
        Ok(args) => args,
        Err(error) => return Err(failed_early(g, step, error).await),
    };
    let value = dispatch::host_tool(g.cx, step, args, &g.lock, &g.tool_timeout).await?;
    // The arguments are let go with the call; the result is held from now on.
    drop(budget);
    let mut held = Held::none(g.cx.budget);
    let bytes = size::json_size_within(&value, g.cx.limits.max_output_bytes)
        .unwrap_or(g.cx.limits.max_output_bytes);
    held.take(bytes)
        .map_err(|error| within(error, &format!("keeping the result of `{tool}`")))?;
    Ok(Some((value, held)))
}

/// The arguments of host tool call `item`, rendered in `scope`.
fn arguments(
    item: &Item,
    scope: Scope<'_>,
    budget: &mut render::Budget,
) -> Result<Map<String, Value>, ToolError> {
    let members = item.args.as_ref().map_or(&[][..], |a| a.value.as_slice());
    if item.tool.value != CMD_RUN {
        return render::object(members, scope, None, budget);
    }
    // Shell text: values are escaped for the quoting they land in.
    let mut args = render::object(members, scope, Some("command"), budget)?;
    if let Some(command) = members.iter().find(|m| m.key.value == "command") {
        args.insert(
            "command".to_owned(),
            render::shell_command(&command.value, scope, budget)?,
        );
    }
    Ok(args)
}

/// An attempt that failed before reaching the driver, observed when the driver says (in its
/// turn, for an item side by side with others: [`super::driver::Driver::failed_early`]).
async fn failed_early(g: &GroupCx<'_>, step: Step<'_>, error: ToolError) -> Failure {
    if step.beside {
        g.cx.driver.failed_early(step).await;
    }
    error.into()
}

/// The item succeeded with `value`: checked against its slot's type (values written to slots
/// are checked at run time). A value not written lets its charge go.
fn written(g: &GroupCx<'_>, item: &Item, value: Value, held: Held, retries: u32) -> ItemRun {
    let Some(slot) = &item.output else {
        return finish(item, ItemStatus::Ok, None, retries, None);
    };
    let slot = slot.value.as_str();
    if g.collects(slot) {
        return finish(
            item,
            ItemStatus::Ok,
            None,
            retries,
            Some((slot, Write::Value(value), held)),
        );
    }
    let ty = g.group.output(slot).map_or(Type::Any, |s| s.ty.value);
    let found = describe(&value);
    match values::admit(ty, value) {
        Some(value) => finish(
            item,
            ItemStatus::Ok,
            None,
            retries,
            Some((slot, Write::Value(value), held)),
        ),
        None => {
            let error = ToolError::new(
                Reason::Type,
                format!(
                    "`{}` returned {found}, but slot `{slot}` is declared `{}`",
                    item.tool.value,
                    ty.as_str()
                ),
            )
            .with_field(slot)
            .with_hint(format!(
                "declare `{slot}` with the type the tool returns, or `any`"
            ));
            finish(item, ItemStatus::Failed, Some(error), retries, None)
        }
    }
}

/// The item's tool (or call target) is not there: `missing` decides. The report
/// keeps the `not_found` error, so what was missing is said even when the group goes on.
fn missing(
    g: &GroupCx<'_>,
    item: &Item,
    scope: Scope<'_>,
    error: ToolError,
    retries: u32,
) -> ItemRun {
    match g.group.missing() {
        Missing::Fail => finish(item, ItemStatus::Failed, Some(error), retries, None),
        Missing::Skip => finish(item, ItemStatus::Skipped, Some(error), retries, None),
        Missing::Degrade => {
            let Some(slot) = &item.output else {
                return finish(item, ItemStatus::Degraded, Some(error), retries, None);
            };
            let slot = slot.value.as_str();
            let fallback = g
                .group
                .fallback
                .as_ref()
                .and_then(|f| f.value.iter().find(|m| m.key.value == slot));
            // No fallback for this slot: it stays unset, as the checker warns (W0601).
            let Some(fallback) = fallback else {
                return finish(item, ItemStatus::Degraded, Some(error), retries, None);
            };
            let mut budget = render::Budget::new(g.cx.limits.max_argument_bytes, g.cx.budget);
            match render::value(&fallback.value, scope, &mut budget) {
                Ok(value) => finish(
                    item,
                    ItemStatus::Degraded,
                    Some(error),
                    retries,
                    Some((slot, Write::Fallback(value), budget.into_held())),
                ),
                Err(fallback_error) => finish(
                    item,
                    ItemStatus::Failed,
                    Some(fallback_error),
                    retries,
                    None,
                ),
            }
        }
    }
}

fn finish(
    item: &Item,
    status: ItemStatus,
    error: Option<ToolError>,
    retries: u32,
    write: Option<(&str, Write, Held)>,
) -> ItemRun {
    ItemRun {
        report: ItemReport {
            retries,
            ..ItemReport::new(item.tool.value.as_str(), status, error)
        },
        write: write.map(|(slot, write, held)| (slot.to_owned(), write, held)),
    }
}
