//! One item of a group: its attempts under `on_error: retry`, the `missing` policy, and the type
//! check of the value it writes.

use super::budget::Held;
use super::dispatch;
use super::driver::Step;
use super::failure::{Failure, cancelled_error};
use super::group_cx::GroupCx;
use super::item_run::{ItemRun, Write};
use super::report::{AttemptTime, CalledGroup, ItemReport, ItemStatus};
use super::values::{self, Scope, describe};
use super::{call, fill, size, within};
use crate::error::{Reason, ToolError};
use futures::future::BoxFuture;
use seq_catalog::{Catalog, SEQ_RUN};
use seq_syntax::ast::{Item, Missing, OnError, Type};
use serde_json::{Map, Value};

/// The embedded tool whose `command` is shell text (docs/reference.md, "Shell text").
use seq_catalog::CMD_RUN;

/// [`run`] boxed, as an `each` item runs it for each element.
pub(crate) fn boxed<'a>(
    g: &'a GroupCx<'_>,
    index: usize,
    item: &'a Item,
    scope: Scope<'a>,
) -> BoxFuture<'a, ItemRun> {
    Box::pin(run(g, index, item, scope))
}

/// Runs item `item` of the group, retrying execution failures as `on_error: retry` allows
/// (never not-found, unauthorized or argument errors; `Reason::is_retryable`).
/// `index`: the item's place in its group (it names the item's attempts). The report keeps the
/// errors of the attempts retried and, for a call, the groups its last attempt ran.
pub(crate) async fn run(g: &GroupCx<'_>, index: usize, item: &Item, scope: Scope<'_>) -> ItemRun {
    let group = g.group;
    let allowed = match group.on_error() {
        OnError::Retry => g.retries,
        OnError::Abort | OnError::Continue => 0,
    };
    let element = scope.each.map(|e| e.index);
    let mark = g.cx.clock.mark();
    let mut retries = 0;
    let mut attempts = Vec::new();
    let mut called = Vec::new();
    let mut shown = None;
    // One async function, no helper around the loop: every nested call adds a frame per
    // level to the stack of the poll (see `Limits::max_nested_groups`).
    let mut run = loop {
        if g.cx.cancel.is_cancelled() {
            break finish(
                item,
                ItemStatus::Cancelled,
                Some(cancelled_error()),
                retries,
                None,
            );
        }
        // What an earlier attempt called is not what this one did.
        called.clear();
        let this = g.cx.clock.mark();
        let mut began = None;
        let outcome = attempt(
            g,
            index,
            retries,
            item,
            scope,
            &mut called,
            &mut began,
            &mut shown,
        )
        .await;
        // A durable driver's journaled start: a replay reports when the attempt first ran, and
        // that it ended when its outcome reached this run.
        let ended_ms = this.started_ms.saturating_add(this.duration_ms());
        let started_ms = began
            .and_then(|at| g.cx.clock.offset_of(at))
            .unwrap_or(this.started_ms)
            .min(ended_ms);
        attempts.push(AttemptTime {
            started_ms,
            duration_ms: ended_ms - started_ms,
        });
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
            g.progress(index, |p| {
                let p = p.of(element);
                p.retries = retries;
                p.failed_attempts.push(failure.error);
            });
            let pause = group.retry_pause(retries);
            if !pause.is_zero() {
                pause_before(g, index, element, retries, item, pause).await;
            }
            continue;
        }
        break finish(item, ItemStatus::Failed, Some(failure.error), retries, None);
    };
    run.report.failed_attempts = g.progress(index, |p| {
        std::mem::take(&mut p.of(element).failed_attempts)
    });
    run.report.called = called;
    run.report.command = shown;
    let first = attempts.first().map_or(mark.started_ms, |a| a.started_ms);
    let last_end = attempts
        .iter()
        .map(|a| a.started_ms.saturating_add(a.duration_ms))
        .max()
        .unwrap_or(0);
    // One attempt's time is the item's own.
    if attempts.len() > 1 {
        run.report.attempts = attempts;
    }
    // Set in place: a report moved whole would take stack in every nested call's poll. The
    // item began no later than its first attempt (on a replay, earlier than the replay).
    run.report.started_ms = mark.started_ms.min(first);
    // ... and ended no sooner than its last attempt (whose start a replay may take from the
    // journal).
    run.report.duration_ms = (mark.duration_ms()
        + mark.started_ms.saturating_sub(run.report.started_ms))
    .max(last_end.saturating_sub(run.report.started_ms));
    // An element of an `each` item is caught alone: its item collects the errors.
    if run.failed() {
        caught(g, item, &mut run);
    }
    run
}

/// The pause before retry `retries` of item `index`: beside the run's cancellation here,
/// beside the group's deadline in the group (which drops the item when it passes). Boxed, so
/// that the item's future, nested once per level of calls, does not grow by it.
fn pause_before<'a>(
    g: &'a GroupCx<'_>,
    index: usize,
    element: Option<usize>,
    retries: u32,
    item: &'a Item,
    pause: std::time::Duration,
) -> crate::host::BoxFuture<'a, ()> {
    let step = Step {
        stack: &g.stack,
        index,
        element,
        attempt: retries,
        tool: item.tool.value.as_str(),
        beside: g.beside(item),
        deadline: g.cx.deadline,
    };
    Box::pin(async move {
        tokio::select! {
            biased;
            () = g.cx.cancel.cancelled() => {}
            () = g.cx.driver.pause(step, pause) => {}
        }
    })
}

/// A failed item (or element of an `each` item) with `error_as`: its error goes to that slot as
/// an object `{reason, detail, field, hint}` (each present, `null` when the error has none),
/// and the item is `caught`. Its `as` slot stays unset. An element's error is held here for
/// its item, which writes the errors of all its elements together.
fn caught(g: &GroupCx<'_>, item: &Item, run: &mut ItemRun) {
    let (Some(slot), Some(error)) = (&item.error_as, &run.report.error) else {
        return;
    };
    let text = |s: &Option<String>| s.as_ref().map_or(Value::Null, |s| Value::from(s.as_str()));
    let value = serde_json::json!({
        "reason": error.reason.as_str(),
        "detail": text(&error.detail),
        "field": text(&error.field),
        "hint": text(&error.hint),
    });
    let mut held = Held::none(g.cx.budget);
    let bytes = size::json_size_within(&value, g.cx.limits.max_result_bytes)
        .unwrap_or(g.cx.limits.max_result_bytes);
    if let Err(budget) = held.take(bytes) {
        // The run's budget cannot hold even the error: the item fails as it would have.
        run.report.error = Some(within(budget, "keeping the error of a caught item"));
        return;
    }
    let slot = slot.value.as_str();
    let write = if g.collects(slot) || item.each.is_some() {
        Write::Value(value)
    } else {
        match values::admit(g.group.slot(slot).map_or(Type::Any, |s| s.ty.value), value) {
            Some(value) => Write::Value(value),
            None => return,
        }
    };
    run.report.status = ItemStatus::Caught;
    run.caught = Some((slot.to_owned(), write, held));
}

/// One attempt: `Ok(None)` when the item ran nothing and writes nothing (a `seq_when_call`
/// whose `when` is false, a call to a group whose `when` is false). The value comes with its
/// charge to the run's budget. `shown`: a `cmd_run` command with its values in place, for the
/// report.
#[allow(
    clippy::too_many_arguments,
    reason = "each is one thing the attempt reads or reports, as `called` is"
)]
async fn attempt(
    g: &GroupCx<'_>,
    index: usize,
    retries: u32,
    item: &Item,
    scope: Scope<'_>,
    called: &mut Vec<CalledGroup>,
    began: &mut Option<u64>,
    shown: &mut Option<String>,
) -> Result<Option<(Value, Held)>, Failure> {
    let tool = item.tool.value.as_str();
    let step = Step {
        stack: &g.stack,
        index,
        element: scope.each.map(|e| e.index),
        attempt: retries,
        tool,
        beside: g.beside(item),
        deadline: g.cx.deadline,
    };
    if let Some(error) = dispatch::arg_error(item) {
        return Err(failed_early(g, step, error).await);
    }
    if Catalog::is_call(tool) || tool == SEQ_RUN {
        return call::item(g, step, item, scope, called).await;
    }
    let mut budget = fill::Budget::new(g.cx.limits.max_argument_bytes, g.cx.budget);
    let args = match arguments(item, scope, &mut budget, shown) {
        Ok(args) => args,
        Err(error) => return Err(failed_early(g, step, error).await),
    };
    let value = dispatch::host_tool(g.cx, step, args, &g.lock, &g.tool_timeout, began).await?;
    // The arguments are let go with the call; the result is held from now on.
    drop(budget);
    let mut held = Held::none(g.cx.budget);
    let bytes = size::json_size_within(&value, g.cx.limits.max_result_bytes)
        .unwrap_or(g.cx.limits.max_result_bytes);
    held.take(bytes)
        .map_err(|error| within(error, &format!("keeping the result of `{tool}`")))?;
    Ok(Some((value, held)))
}

/// The arguments of host tool call `item`, filled in from `scope`.
fn arguments(
    item: &Item,
    scope: Scope<'_>,
    budget: &mut fill::Budget,
    shown: &mut Option<String>,
) -> Result<Map<String, Value>, ToolError> {
    let members = item.args.as_ref().map_or(&[][..], |a| a.value.as_slice());
    if item.tool.value != CMD_RUN {
        return fill::object(members, scope, &[], budget);
    }
    // Shell text: values reach the shell through its environment, never as text.
    let mut args = fill::object(members, scope, &["command"], budget)?;
    if let Some(command) = members.iter().find(|m| m.key.value == "command") {
        let (text, variables, display) = fill::shell_command(&command.value, scope, budget)?;
        *shown = display;
        args.insert("command".to_owned(), text);
        fill::pass_variables(&mut args, variables)?;
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
    let Some(slot) = &item.as_slot else {
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
    let ty = g.group.slot(slot).map_or(Type::Any, |s| s.ty.value);
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
            let Some(slot) = &item.as_slot else {
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
            let mut budget = fill::Budget::new(g.cx.limits.max_argument_bytes, g.cx.budget);
            match fill::value(&fallback.value, scope, &mut budget) {
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
        report: Box::new(ItemReport {
            retries,
            ..ItemReport::new(item.tool.value.as_str(), status, error)
        }),
        write: write.map(|(slot, write, held)| (slot.to_owned(), write, held)),
        caught: None,
    }
}
