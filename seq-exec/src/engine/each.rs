//! An `each` item: one run of the item per element of its array, as an item's run (its
//! authorization, timeouts and retries are the element's), side by side in a parallel group
//! and in element order in a serial one, each under the group's `max_parallel`. An item's own
//! `max_parallel` runs its elements side by side, at most that many at once, in either group
//! (a fan-out); the elements start in element order as others end.
//!
//! The results go to the item's slot in element order whatever the finishing order, `null`
//! for an element whose failure the group tolerates (`on_error: continue`), so that they stay
//! aligned with the elements. An empty array runs nothing and writes `[]`. Under `abort` the
//! first failed element stops the others and fails the item. With `error_as`, an element's
//! failure is caught: its error goes to its place in the `error_as` slot (`null` for the
//! others, the slot left unset when none failed), and the others run on. An array longer than
//! [`MAX_EACH`] fails the item before any element runs.

use super::budget::{self, Held};
use super::failure::cancelled_error;
use super::group_cx::GroupCx;
use super::item_run::{ItemRun, Write};
use super::report::{EachReport, ItemReport, ItemStatus};
use super::values::{self, Element, Scope, describe};
use super::{fill, within};
use crate::error::{Reason, ToolError};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use seq_syntax::ast::{Item, OnError, Value as Arg, ValueKind};
use seq_syntax::limits::MAX_EACH;
use serde_json::Value;
use std::borrow::Cow;
use tokio::time::Instant;

/// One run of an item, as an element runs it: given by the group, so that an `each` never
/// imports the item that may call back into a group.
pub(crate) type RunItem =
    for<'a, 'g> fn(&'a GroupCx<'g>, usize, &'a Item, Scope<'a>) -> BoxFuture<'a, ItemRun>;

/// Runs item `index` of the group once per element of `each`, each with `run_item`.
pub(crate) async fn run(
    g: &GroupCx<'_>,
    index: usize,
    item: &Item,
    each: &Arg,
    scope: Scope<'_>,
    run_item: RunItem,
) -> ItemRun {
    let mark = g.cx.clock.mark();
    let mut run = run_elements(g, index, item, each, scope, run_item).await;
    // The item's time is its elements' together, from the first start to the last end.
    run.report.started_ms = mark.started_ms;
    run.report.duration_ms = mark.duration_ms();
    run
}

async fn run_elements(
    g: &GroupCx<'_>,
    index: usize,
    item: &Item,
    each: &Arg,
    scope: Scope<'_>,
    run_item: RunItem,
) -> ItemRun {
    let array = match elements(g, each, scope) {
        Ok(array) => array,
        Err(error) => return ItemRun::not_run(item, error),
    };
    let Value::Array(elements) = array.as_ref() else {
        return ItemRun::not_run(item, not_an_array(each, &array));
    };
    if elements.len() > MAX_EACH as usize {
        let error = ToolError::new(
            Reason::ArgError,
            format!(
                "`each` has {} elements; an item runs at most {MAX_EACH}, so none ran",
                elements.len()
            ),
        )
        .with_field("each")
        .with_hint("split the array over several items, or let one tool go through it");
        return ItemRun::not_run(item, error);
    }
    // Every element's run is charged before the first starts; side by side, their futures are
    // made at once, up to the item's bound.
    let beside = g.beside(item);
    let bound = item
        .fan_out()
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX))
        .max(1);
    let at_once = if beside { elements.len().min(bound) } else { 1 };
    let _running = match budget::item_runs(g.cx.budget, elements.len(), at_once) {
        Ok(running) => running,
        Err(error) => return ItemRun::not_run(item, within(error, "`each`")),
    };
    let stop_on_failure = g.group.on_error() != OnError::Continue;
    let mut runs: Vec<Option<(ItemRun, u64)>> = (0..elements.len()).map(|_| None).collect();
    let one = |i: usize, value| element(g, index, item, scope, value, i, run_item);
    if beside {
        // Started in element order, the next as one ends: a durable driver's replay meets the
        // calls where the first run made them.
        let mut next = elements.iter().enumerate();
        let mut pending: FuturesUnordered<_> = next
            .by_ref()
            .take(at_once)
            .map(|(i, v)| one(i, v))
            .collect();
        while let Some((i, run, ms)) = pending.next().await {
            let stop = run.cancelled() || (stop_on_failure && run.failed());
            if let Some(slot) = runs.get_mut(i) {
                *slot = Some((run, ms));
            }
            if stop {
                break;
            }
            if let Some((i, v)) = next.next() {
                pending.push(one(i, v));
            }
        }
        // Dropping the elements still in flight cancels their tool calls.
    } else {
        for (i, value) in elements.iter().enumerate() {
            let (i, run, ms) = one(i, value).await;
            let stop = run.cancelled() || (stop_on_failure && run.failed());
            if let Some(slot) = runs.get_mut(i) {
                *slot = Some((run, ms));
            }
            if stop {
                break;
            }
        }
    }
    conclude(g, item, runs)
}

/// The run of element `i`, `value`, under the group's `max_parallel`, with its duration.
async fn element(
    g: &GroupCx<'_>,
    index: usize,
    item: &Item,
    scope: Scope<'_>,
    value: &Value,
    i: usize,
    run_item: RunItem,
) -> (usize, ItemRun, u64) {
    let scope = Scope {
        slots: scope.slots,
        each: Some(Element { value, index: i }),
    };
    let _permit = g.permit().await;
    let started = Instant::now();
    let run = run_item(g, index, item, scope).await;
    (i, run, millis(started))
}

/// The array `each` reads: a bare reference's value where it stands, a literal filled in.
fn elements<'s>(
    g: &GroupCx<'_>,
    each: &Arg,
    scope: Scope<'s>,
) -> Result<Cow<'s, Value>, ToolError> {
    let context = |e| within(e, "`each`");
    match &each.kind {
        ValueKind::Ref(reference) => {
            let value = values::read(scope, reference).map_err(context)?;
            Ok(Cow::Borrowed(value))
        }
        ValueKind::Null
        | ValueKind::Bool(_)
        | ValueKind::Number(_)
        | ValueKind::String(_)
        | ValueKind::Array(_)
        | ValueKind::Object(_) => {
            let mut budget = fill::Budget::new(g.cx.limits.max_argument_bytes, g.cx.budget);
            fill::value(each, scope, &mut budget)
                .map(Cow::Owned)
                .map_err(context)
        }
    }
}

fn not_an_array(each: &Arg, found: &Value) -> ToolError {
    let what = match &each.kind {
        ValueKind::Ref(reference) => format!("`{}`", values::text(reference)),
        ValueKind::Null
        | ValueKind::Bool(_)
        | ValueKind::Number(_)
        | ValueKind::String(_)
        | ValueKind::Array(_)
        | ValueKind::Object(_) => "the value".to_owned(),
    };
    ToolError::new(
        Reason::Type,
        format!("`each` needs an array, but {what} is {}", describe(found)),
    )
    .with_field("each")
    .with_hint("point `each` at an array, or test the value with a `when` first")
}

/// The item's report and writes from its elements' runs (`None`: not finished, stopped by a
/// failure under `abort` or the run's cancellation).
fn conclude(g: &GroupCx<'_>, item: &Item, runs: Vec<Option<(ItemRun, u64)>>) -> ItemRun {
    let count = runs.len();
    let mut each = EachReport::new(count);
    let mut values = Vec::with_capacity(count);
    let mut held: Option<Held> = None;
    // The caught elements' errors, at their places (`None` while no element was caught).
    let mut errors: Option<(Vec<Value>, Held)> = None;
    let mut first_caught: Option<ToolError> = None;
    let mut failure: Option<ToolError> = None;
    let mut cancelled = false;
    let mut unfinished = false;
    for (i, run) in runs.into_iter().enumerate() {
        let Some((mut run, ms)) = run else {
            unfinished = true;
            values.push(Value::Null);
            each.push(stopped(item), 0);
            continue;
        };
        match run.write.take() {
            Some((
                _,
                Write::Value(value) | Write::Fallback(value) | Write::Elements(value),
                charge,
            )) => {
                values.push(value);
                absorb(&mut held, charge);
            }
            None => values.push(Value::Null),
        }
        if let Some((
            _,
            Write::Value(error) | Write::Fallback(error) | Write::Elements(error),
            charge,
        )) = run.caught.take()
        {
            let (list, total) =
                errors.get_or_insert_with(|| (Vec::with_capacity(count), Held::none(g.cx.budget)));
            list.resize(i, Value::Null);
            list.push(error);
            total.absorb(charge);
            if first_caught.is_none() {
                first_caught = run
                    .report
                    .error
                    .clone()
                    .map(|e| within(e, &format!("element {i}")));
            }
        }
        cancelled |= run.cancelled();
        if run.failed() && failure.is_none() {
            failure = run
                .report
                .error
                .clone()
                .map(|e| within(e, &format!("element {i}")));
        }
        each.push(*run.report, ms);
    }
    let status = if cancelled {
        ItemStatus::Cancelled
    } else if failure.is_some() {
        ItemStatus::Failed
    } else if unfinished {
        ItemStatus::Cancelled
    } else if errors.is_some() {
        ItemStatus::Caught
    } else {
        ItemStatus::Ok
    };
    let error = match status {
        ItemStatus::Cancelled if failure.is_none() => Some(cancelled_error()),
        ItemStatus::Caught => first_caught,
        ItemStatus::Ok
        | ItemStatus::Failed
        | ItemStatus::Skipped
        | ItemStatus::Degraded
        | ItemStatus::Cancelled => failure,
    };
    // Under `continue` the results stay aligned: a failed element is `null`. Under `abort` a
    // failure fails the item, which writes nothing; a caught one does not.
    let tolerated = matches!(status, ItemStatus::Ok | ItemStatus::Caught)
        || (status == ItemStatus::Failed && g.group.on_error() == OnError::Continue);
    let write = match (&item.as_slot, tolerated) {
        (Some(slot), true) => Some((
            slot.value.to_string(),
            Write::Elements(Value::Array(values)),
            held.unwrap_or_else(|| Held::none(g.cx.budget)),
        )),
        (Some(_) | None, false) | (None, true) => None,
    };
    let caught = match (&item.error_as, errors, tolerated) {
        (Some(slot), Some((mut list, charge)), true) => {
            list.resize(count, Value::Null);
            Some((
                slot.value.to_string(),
                Write::Elements(Value::Array(list)),
                charge,
            ))
        }
        (Some(_) | None, Some(_) | None, true | false) => None,
    };
    let mut report = ItemReport::new(item.tool.value.as_str(), status, error);
    report.each = Some(each);
    ItemRun {
        report: Box::new(report),
        write,
        caught,
    }
}

fn absorb(total: &mut Option<Held>, charge: Held) {
    match total {
        Some(total) => total.absorb(charge),
        None => *total = Some(charge),
    }
}

/// An element that never finished: the item stopped before it (a failure under `abort`, or
/// the run's cancellation).
fn stopped(item: &Item) -> ItemReport {
    ItemReport::new(item.tool.value.as_str(), ItemStatus::Cancelled, None)
}

fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
