//! One group: its `when`, its items in parallel or in order, the barrier where
//! slots are written, `on_error`, and the group's timeout.
//!
//! - Parallel: every item starts at once, except that an `output_send__<channel>` item waits
//!   for the previous item of the group sending to the same channel. Slots are written
//!   at the barrier in item order, so an `array` slot that several items write collects their
//!   values in item order whatever the finishing order.
//! - Serial: items run one after another, each seeing the slots the earlier ones wrote (`$out`).
//! - `on_error: abort` (and `retry` once an item's retries are spent): the first failure fails
//!   the group; items still running are stopped (their futures dropped) and reported
//!   `cancelled`, items not reached `skipped`.
//!   `continue`: the group goes on and ends `partial`.
//! - The group's `timeout` bounds its whole duration, retries included. When it runs out, the
//!   items in flight are cancelled and reported failed with reason `timeout`, the items not
//!   started are reported skipped, and the group fails whatever its `on_error` (its time is
//!   spent, so nothing is retried). Slots already written stay in the report.
//! - The run's cancellation stops the group the same way, whatever its `on_error`: items in
//!   flight and not started are reported `cancelled`, and so is the group.

use super::budget::{self, Held};
use super::clock::Mark;
use super::driver::Deadline;
use super::failure::cancelled_error;
use super::group_cx::GroupCx;
use super::item;
use super::item_run::{ItemRun, Write};
use super::report::{GroupReport, GroupStatus, ItemReport, ItemStatus};
use super::stack::Stack;
use super::tool_timeout::ToolTimeout;
use super::values::{Scope, Slots};
use super::{Cx, Observer, eval, format_duration, within};
use crate::error::{Reason, ToolError};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use seq_syntax::ast::{Group, Item, OnError, Sequence, Type};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{RwLock, Semaphore, oneshot};
use tokio::time::Instant;

/// Runs item `i` of the group: once, or per element for an `each` item, each run under
/// the group's `max_parallel`.
pub(crate) async fn run_item(g: &GroupCx<'_>, i: usize, item: &Item, scope: Scope<'_>) -> ItemRun {
    // Boxed: every level of nested calls polls through here, and a future held inline would
    // put its whole state on the stack of that poll (see `Limits::max_nested_groups`).
    match &item.each {
        Some(each) => Box::pin(super::each::run(g, i, item, each, scope, item::boxed)).await,
        None => {
            let _running = match budget::item_runs(g.cx.budget, 1, 1) {
                Ok(running) => running,
                Err(error) => return ItemRun::not_run(item, error),
            };
            let _permit = g.permit().await;
            Box::pin(item::run(g, i, item, scope)).await
        }
    }
}

/// Runs `group` of `sequence` with `inputs` (already admitted to its `in`). `parent` is the
/// stack of the caller; entering the group may fail with `cycle`. `observe`: report to the
/// engine's observer (the groups of the run itself, not those reached through calls).
/// With the report comes the charge of its slots to the run's budget.
pub(crate) async fn run(
    cx: Cx<'_>,
    sequence: &Sequence,
    group: &Group,
    inputs: Map<String, Value>,
    parent: &Stack,
    observe: bool,
) -> (GroupReport, Held) {
    let mark = cx.clock.mark();
    let started = mark.instant();
    let observer = cx.observer.filter(|_| observe);
    let after = predecessors(group);
    // Whether tool runs really go side by side: a parallel group of several items that do not
    // wait for each other, or with an `each` item (its elements run side by side). A group of
    // one plain item, or whose items all send to one channel, reports false.
    let independent = after.iter().filter(|p| p.is_none()).count();
    // A fan-out (`max_parallel` above 1 on an `each` item) runs side by side in any group.
    let fans_out = group
        .items
        .iter()
        .any(|i| i.fan_out().is_some_and(|n| n > 1));
    let parallel = fans_out
        || group.is_parallel() && (independent > 1 || group.items.iter().any(|i| i.each.is_some()));
    if let Some(observer) = observer {
        observer.group_started(&sequence.name.value, &group.name.value, parallel);
    }
    let mut scope = Slots {
        args: inputs,
        out: Map::new(),
        unwritten: HashMap::new(),
    };
    let entered = parent.enter_group(
        &sequence.name.value,
        &group.name.value,
        cx.limits.max_nested_groups,
    );
    let when = group
        .when
        .as_ref()
        .map(|w| eval::eval(w, Scope::of(&scope)));
    // What each slot holds of the run's budget.
    let mut held = HashMap::new();
    // Admitted with the inputs already; a group entered another way is held to it here.
    let retries = super::retries::allowed(group, &scope.args);
    let report = match (entered, when) {
        // Checked before anything starts: a cancelled run starts no group.
        _ if cx.cancel.is_cancelled() => not_run(
            group,
            GroupStatus::Cancelled,
            Some(cancelled_error()),
            &mark,
        ),
        (Err(error), _) => not_run(group, GroupStatus::Failed, Some(error), &mark),
        (Ok(_), _) if retries.is_err() => {
            let error = retries.err();
            not_run(group, GroupStatus::Failed, error, &mark)
        }
        (Ok(_), Some(Err(error))) => not_run(
            group,
            GroupStatus::Failed,
            Some(within(
                error,
                &format!("`when` of group `{}`", group.name.value),
            )),
            &mark,
        ),
        // A false `when` skips the group and leaves its slots unset.
        (Ok(_), Some(Ok(false))) => not_run(group, GroupStatus::Skipped, None, &mark),
        (Ok(stack), None | Some(Ok(true))) => {
            // The bound of the per-tool timers; the group's own end is the driver's to measure.
            let deadline = started + group.timeout();
            let own = cx.driver.deadline(&group.name.value, group.timeout()).await;
            let cx = Cx {
                deadline: Some(cx.deadline.map_or(own, |outer| outer.min(own))),
                ..cx
            };
            // A driver that cannot have this group's attempts in flight at once runs its items
            // one at a time (`Driver::concurrent`); their slots still wait for the barrier.
            let side_by_side = group.is_parallel() && cx.driver.concurrent(group);
            let g = GroupCx {
                cx,
                sequence,
                group,
                stack,
                lock: RwLock::new(()),
                tool_timeout: ToolTimeout::new(
                    cx.limits.tool_timeout,
                    started,
                    deadline,
                    side_by_side,
                ),
                side_by_side,
                collect: collecting(group),
                progress: group.items.iter().map(|_| Default::default()).collect(),
                permits: group
                    .max_parallel
                    .as_ref()
                    .map(|m| Semaphore::new(usize::try_from(m.value).unwrap_or(usize::MAX))),
                retries: retries.unwrap_or(0),
            };
            let items = if side_by_side {
                parallel_items(&g, &scope, own, deadline, after, observer).await
            } else {
                let visible = !group.is_parallel();
                serial_items(&g, &mut scope, &mut held, visible, own, observer).await
            };
            conclude(&g, items, scope.out, &mut held, parallel, &mark, observer)
        }
    };
    if let Some(observer) = observer {
        observer.group_finished(&report);
    }
    let total = held
        .into_values()
        .fold(Held::none(cx.budget), |mut total, slot| {
            total.absorb(slot);
            total
        });
    (report, total)
}

/// For each item, the earlier item it must wait for: the previous `output_send__<channel>` item
/// of the same channel (sends to one channel keep their order).
fn predecessors(group: &Group) -> Vec<Option<usize>> {
    let mut last: HashMap<&str, usize> = HashMap::new();
    group
        .items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let tool = item.tool.value.as_str();
            seq_catalog::is_output_send(tool)
                .then(|| last.insert(tool, i))
                .flatten()
        })
        .collect()
}

fn collecting(group: &Group) -> HashSet<&str> {
    group
        .slots()
        .filter(|slot| slot.ty.value == Type::Array)
        .map(|slot| slot.name.value.as_str())
        .collect()
}

/// What woke the loop of a parallel group.
enum Wake {
    /// An item finished (`None`: none is left).
    Finished(Option<(usize, ItemRun)>),
    /// The group's timeout.
    Expired,
    /// The group has run as long as the per-tool bound (`ToolTimeout::horizon`).
    Horizon,
    /// The run was cancelled.
    Cancelled,
}

/// Why a group stopped before all its items finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// Item `i` failed under `abort` (or `retry` with its retries spent).
    Abort(usize),
    Timeout,
    /// The run was cancelled.
    Cancelled,
}

struct Items {
    runs: Vec<Option<ItemRun>>,
    /// When each item started (`started_ms`), if it did.
    started: Vec<Option<u64>>,
    stop: Option<Stop>,
}

/// Whether item `i`, finished as `run`, stops the group.
fn stopping(g: &GroupCx<'_>, run: &ItemRun, i: usize) -> Option<Stop> {
    if run.cancelled() {
        Some(Stop::Cancelled)
    } else if run.failed() && g.group.on_error() != OnError::Continue {
        Some(Stop::Abort(i))
    } else {
        None
    }
}

async fn parallel_items(
    g: &GroupCx<'_>,
    scope: &Slots,
    own: Deadline,
    deadline: Instant,
    after: Vec<Option<usize>>,
    observer: Option<&dyn Observer>,
) -> Items {
    let n = g.group.items.len();
    // `NOT_STARTED` until the item starts, then its `started_ms`.
    let started: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(NOT_STARTED)).collect();
    let mut waits: Vec<Option<oneshot::Receiver<()>>> = (0..n).map(|_| None).collect();
    let mut signals: Vec<Option<oneshot::Sender<()>>> = (0..n).map(|_| None).collect();
    for (i, before) in after.into_iter().enumerate() {
        let Some(before) = before else { continue };
        let (signal, wait) = oneshot::channel();
        if let (Some(s), Some(w)) = (signals.get_mut(before), waits.get_mut(i)) {
            *s = Some(signal);
            *w = Some(wait);
        }
    }
    let group_name = g.group.name.value.as_str();
    let mut pending = FuturesUnordered::new();
    for (((i, item), wait), signal) in g.group.items.iter().enumerate().zip(waits).zip(signals) {
        let started = &started;
        pending.push(async move {
            if let Some(wait) = wait {
                // An error means the item before was dropped: nothing left to wait for.
                let _ = wait.await;
            }
            if let Some(flag) = started.get(i) {
                flag.store(g.cx.clock.offset_ms(), Ordering::Relaxed);
            }
            if let Some(observer) = observer {
                observer.item_started(group_name, i, &item.tool.value);
            }
            let run = run_item(g, i, item, Scope::of(scope)).await;
            if let Some(signal) = signal {
                let _ = signal.send(());
            }
            (i, run)
        });
    }
    let mut runs: Vec<Option<ItemRun>> = (0..n).map(|_| None).collect();
    let mut stop = None;
    // One timer for the whole group, not one per finished item; and one standing in for the
    // per-tool timeouts of its calls until they can matter (`tool_timeout`).
    let mut expired = g.cx.driver.expired(own);
    let horizon = tokio::time::sleep_until(g.tool_timeout.horizon().unwrap_or(deadline));
    tokio::pin!(horizon);
    loop {
        let wake = tokio::select! {
            biased;
            next = pending.next() => Wake::Finished(next),
            () = &mut expired => Wake::Expired,
            () = &mut horizon, if g.tool_timeout.horizon().is_some() => Wake::Horizon,
            () = g.cx.cancel.cancelled() => Wake::Cancelled,
        };
        match wake {
            Wake::Finished(Some((i, run))) => {
                if let Some(observer) = observer {
                    observer.item_finished(group_name, i, &run.report);
                }
                let stopping = stopping(g, &run, i);
                if let Some(slot) = runs.get_mut(i) {
                    *slot = Some(run);
                }
                if stopping.is_some() {
                    stop = stopping;
                    break;
                }
            }
            Wake::Finished(None) => break,
            Wake::Cancelled => {
                stop = Some(Stop::Cancelled);
                break;
            }
            Wake::Expired => {
                stop = Some(Stop::Timeout);
                break;
            }
            Wake::Horizon => g.tool_timeout.pass(),
        }
    }
    // Cancels whatever still runs: dropping a future drops the tool call inside it.
    drop(pending);
    Items {
        runs,
        started: started
            .into_iter()
            .map(|at| Some(at.into_inner()).filter(|&at| at != NOT_STARTED))
            .collect(),
        stop,
    }
}

/// The items one after another. `visible`: each item's slot is written at once, for the items
/// after it to read as `$out` (a serial group); otherwise at the barrier (a parallel group run
/// one item at a time).
async fn serial_items(
    g: &GroupCx<'_>,
    scope: &mut Slots,
    held: &mut HashMap<String, Held>,
    visible: bool,
    own: Deadline,
    observer: Option<&dyn Observer>,
) -> Items {
    let mut expired = g.cx.driver.expired(own);
    let n = g.group.items.len();
    let mut runs: Vec<Option<ItemRun>> = (0..n).map(|_| None).collect();
    let mut started = vec![None; n];
    let mut stop = None;
    let group_name = g.group.name.value.as_str();
    for (i, item) in g.group.items.iter().enumerate() {
        if let Some(flag) = started.get_mut(i) {
            *flag = Some(g.cx.clock.offset_ms());
        }
        if let Some(observer) = observer {
            observer.item_started(group_name, i, &item.tool.value);
        }
        let result = tokio::select! {
            biased;
            run = run_item(g, i, item, Scope::of(scope)) => Some(run),
            () = &mut expired => None,
            () = g.cx.cancel.cancelled() => {
                stop = Some(Stop::Cancelled);
                break;
            }
        };
        let Some(mut run) = result else {
            stop = Some(Stop::Timeout);
            break;
        };
        if let Some(observer) = observer {
            observer.item_finished(group_name, i, &run.report);
        }
        // Written at once, so that later items read it as `$out`.
        if visible {
            if let Some((slot, write, charge)) = run.write.take() {
                apply(g, &mut scope.out, held, slot, write, charge);
            } else if let Some(slot) = &item.as_slot {
                scope
                    .unwritten
                    .insert(slot.value.to_string(), not_written(i, &run.report));
            }
            if let Some((slot, write, charge)) = run.caught.take() {
                apply(g, &mut scope.out, held, slot, write, charge);
            }
        }
        let stopping = stopping(g, &run, i);
        if let Some(slot) = runs.get_mut(i) {
            *slot = Some(run);
        }
        if stopping.is_some() {
            stop = stopping;
            break;
        }
    }
    Items {
        runs,
        started,
        stop,
    }
}

/// Why item `i` (from 0) left its slot unset, for a later read of it: "item 2 `files_read` failed:
/// reading `a.txt`: …".
fn not_written(i: usize, report: &ItemReport) -> String {
    let status = match report.status {
        ItemStatus::Failed => "failed",
        ItemStatus::Skipped => "was skipped",
        ItemStatus::Caught => "failed (caught by `error_as`)",
        ItemStatus::Cancelled => "was cancelled",
        // Ok and degraded items write their slot; an `array` slot they wrote is set.
        ItemStatus::Ok | ItemStatus::Degraded => "wrote nothing",
    };
    let tool = &report.tool;
    let n = i + 1;
    match report
        .error
        .as_ref()
        .map(|e| (e.detail.as_deref(), e.reason))
    {
        Some((Some(detail), _)) => format!("item {n} `{tool}` {status}: {detail}"),
        Some((None, reason)) => format!("item {n} `{tool}` {status} ({reason})"),
        None => format!("item {n} `{tool}` {status}"),
    }
}

/// Writes one item's value to its slot, with its charge to the run's budget: a slot
/// overwritten lets the old value's charge go, an `array` slot adds them up.
fn apply(
    g: &GroupCx<'_>,
    out: &mut Map<String, Value>,
    held: &mut HashMap<String, Held>,
    slot: String,
    write: Write,
    charge: Held,
) {
    if !g.collects(&slot) {
        let (Write::Value(value) | Write::Fallback(value) | Write::Elements(value)) = write;
        held.insert(slot.clone(), charge);
        out.insert(slot, value);
        return;
    }
    match held.get_mut(&slot) {
        Some(total) => total.absorb(charge),
        None => {
            held.insert(slot.clone(), charge);
        }
    }
    let entry = out.entry(slot).or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(values) = entry {
        match write {
            Write::Fallback(Value::Array(items)) | Write::Elements(Value::Array(items)) => {
                values.extend(items);
            }
            Write::Value(value) | Write::Fallback(value) | Write::Elements(value) => {
                values.push(value);
            }
        }
    }
}

/// The barrier: slots written in item order, the group's status and error.
fn conclude(
    g: &GroupCx<'_>,
    items: Items,
    mut out: Map<String, Value>,
    held: &mut HashMap<String, Held>,
    parallel: bool,
    mark: &Mark,
    observer: Option<&dyn Observer>,
) -> GroupReport {
    let Items {
        runs,
        started: began,
        stop,
    } = items;
    let group = g.group;
    let mut reports = Vec::with_capacity(runs.len());
    let mut first_failure: Option<ToolError> = None;
    let mut abort_error: Option<ToolError> = None;
    for (i, (run, began)) in runs.into_iter().zip(began).enumerate() {
        let tool = group
            .items
            .get(i)
            .map_or("", |item| item.tool.value.as_str());
        let report = match run {
            Some(mut run) => {
                for (slot, write, charge) in run.write.take().into_iter().chain(run.caught.take()) {
                    apply(g, &mut out, held, slot, write, charge);
                }
                if let (true, Some(error)) = (run.failed(), &run.report.error) {
                    let error = within(error.clone(), &format!("item {} `{tool}`", i + 1));
                    if stop == Some(Stop::Abort(i)) {
                        abort_error = Some(error.clone());
                    }
                    first_failure.get_or_insert(error);
                }
                *run.report
            }
            None => {
                let mut report = unfinished(group, tool, began, stop, g.cx.clock.offset_ms());
                // Stopped between or during its retries: the attempts it made stay reported.
                g.progress(i, |p| {
                    report.retries = p.retries;
                    report.failed_attempts = std::mem::take(&mut p.failed_attempts);
                });
                if let Some(observer) = observer {
                    observer.item_finished(&group.name.value, i, &report);
                }
                report
            }
        };
        reports.push(report);
    }
    let (status, error) = match stop {
        Some(Stop::Timeout) => (GroupStatus::Failed, Some(group_timeout(group))),
        Some(Stop::Abort(_)) => (GroupStatus::Failed, abort_error.or(first_failure)),
        Some(Stop::Cancelled) => (GroupStatus::Cancelled, Some(cancelled_error())),
        None if first_failure.is_some() => (GroupStatus::Partial, first_failure),
        None => (GroupStatus::Ran, None),
    };
    // Local slots were read like outputs; they leave the group's result here.
    let local: Map<String, Value> = group
        .locals
        .iter()
        .filter_map(|decl| {
            let name = decl.name.value.as_str();
            out.remove(name).map(|value| (name.to_owned(), value))
        })
        .collect();
    GroupReport {
        name: group.name.value.clone(),
        status,
        parallel,
        duration_ms: mark.duration_ms(),
        started_ms: mark.started_ms,
        out,
        local,
        items: reports,
        error,
    }
}

/// An item that never finished: in flight when the group timed out (failed); stopped by the
/// run's cancellation, or in flight when another item failed under `abort` (cancelled); or
/// never reached (skipped). `began`: when it started, if it did; `now`: when the group gave up
/// on it, where its bar ends (or, never started, stands).
fn unfinished(
    group: &Group,
    tool: &str,
    began: Option<u64>,
    stop: Option<Stop>,
    now: u64,
) -> ItemReport {
    let started_ms = began.unwrap_or(now);
    let timed = |report: ItemReport| ItemReport {
        started_ms,
        duration_ms: now.saturating_sub(started_ms),
        ..report
    };
    let began = began.is_some();
    let (status, error) = if stop == Some(Stop::Cancelled) {
        (ItemStatus::Cancelled, Some(cancelled_error()))
    } else if began && matches!(stop, Some(Stop::Abort(_))) {
        let error = ToolError::new(
            Reason::Cancelled,
            format!(
                "stopped when another item of group `{}` failed under `on_error: abort`",
                group.name.value
            ),
        );
        (ItemStatus::Cancelled, Some(error))
    } else if began && stop == Some(Stop::Timeout) {
        let error = ToolError::new(
            Reason::Timeout,
            format!(
                "cancelled when group `{}` ran past its timeout of {}",
                group.name.value,
                format_duration(group.timeout())
            ),
        );
        (ItemStatus::Failed, Some(error))
    } else {
        (ItemStatus::Skipped, None)
    };
    timed(ItemReport::new(tool, status, error))
}

fn group_timeout(group: &Group) -> ToolError {
    ToolError::new(
        Reason::Timeout,
        format!(
            "group `{}` ran past its timeout of {}",
            group.name.value,
            format_duration(group.timeout())
        ),
    )
    .with_field("timeout")
    .with_hint("raise the group's `timeout`, or make its items faster")
}

/// A group whose items did not run: its `when` was false or could not be evaluated, or it
/// could not be entered. Nothing ran side by side, so `parallel` is false.
fn not_run(
    group: &Group,
    status: GroupStatus,
    error: Option<ToolError>,
    mark: &Mark,
) -> GroupReport {
    GroupReport {
        name: group.name.value.clone(),
        status,
        parallel: false,
        duration_ms: mark.duration_ms(),
        started_ms: mark.started_ms,
        out: Map::new(),
        local: Map::new(),
        items: group
            .items
            .iter()
            .map(|item| {
                let status = if status == GroupStatus::Cancelled {
                    ItemStatus::Cancelled
                } else {
                    ItemStatus::Skipped
                };
                ItemReport {
                    started_ms: mark.started_ms,
                    ..ItemReport::new(item.tool.value.as_str(), status, None)
                }
            })
            .collect(),
        error,
    }
}

/// What `started` says of an item that has not started.
const NOT_STARTED: u64 = u64::MAX;
