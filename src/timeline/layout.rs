//! A run report laid out as rows on one time axis: a band per group in run order, a row per
//! item (so that items side by side stand stacked, their bars overlapping in time), the groups
//! a call ran nested under it, and past a bound an aggregate row instead of slivers. Pure: the
//! SVG is drawn from these rows by `svg`.

use super::words::{counts, duration, error_text, more, plural, reason, span_text};
use seq_exec::RunReport;
use seq_exec::engine::{
    CalledGroup, Descend, EachReport, ElementReport, GroupAt, GroupOf, GroupReport, GroupStatus,
    ItemAt, ItemReport, ItemStatus, ReportVisitor,
};

/// A group with more items than this shows its most telling ones (failures first, then the
/// slowest) and the rest as one aggregate row.
pub const MAX_ITEM_ROWS: usize = 24;
/// How many items such a group shows one per row.
pub const SHOWN_WHEN_AGGREGATED: usize = 12;
/// Groups past this many are drawn only when they tell something (failed, partial, cancelled,
/// or holding a failed or caught item); the others between them fold into aggregate rows.
pub const MAX_GROUP_BANDS: usize = 60;
/// The most failed, cancelled, caught or degraded runs of one list (a group's items, an item's
/// elements) drawn one per row; more are folded and counted by status.
pub const MAX_TELLING_ROWS: usize = 100;
/// The columns of an aggregate row's profile (items in flight over time).
pub const PROFILE_BUCKETS: usize = 200;

/// What a row's bar stands for: its colour comes from the status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Group(GroupStatus),
    Item(ItemStatus),
    /// Items or groups drawn together: how many of them are in flight over time.
    Aggregate,
}

/// A part of a row's bar: an attempt of a retried item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sub {
    pub started_ms: u64,
    pub duration_ms: u64,
    /// An attempt that failed and was tried again, or the last one (with the row's status).
    pub failed: bool,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Nesting: 0 for a run's group, 1 for its items, 2 for a group one of them called, ...
    pub depth: usize,
    pub label: String,
    pub kind: Kind,
    pub started_ms: u64,
    pub duration_ms: u64,
    pub subs: Vec<Sub>,
    /// On the slowest path: the item that ended its group last, down through the calls.
    pub critical: bool,
    /// The row's whole story, for the tooltip.
    pub detail: String,
    /// For an aggregate row: the most items in flight in each column of the axis.
    pub profile: Vec<u32>,
    /// Why the row failed (`reason: detail`), written by its bar.
    pub reason: Option<String>,
}

/// The rows of a report and the span of its axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chart {
    pub rows: Vec<Row>,
    /// Where the axis ends: the last end of anything drawn, at least 1 ms.
    pub end_ms: u64,
    pub title: String,
}

/// The chart of `report`.
pub fn chart(report: &RunReport) -> Chart {
    let mut last_end = LastEnd(0);
    report.walk(&mut last_end);
    let end_ms = last_end.0.max(1);
    let mut layout = Layout {
        rows: Vec::new(),
        folded: Vec::new(),
        open: Vec::new(),
        end_ms,
    };
    report.walk(&mut layout);
    let mut rows = layout.rows;
    fold_groups(&mut rows, &mut layout.folded, end_ms);
    let items: usize = report.groups.iter().map(|g| g.items.len()).sum();
    let outcome = if report.ok {
        "ok"
    } else if report.cancelled {
        "cancelled"
    } else {
        "failed"
    };
    let title = format!(
        "run {outcome} in {} · {} · {}",
        duration(end_ms),
        plural(report.groups.len(), "group"),
        plural(items, "item")
    );
    Chart {
        rows,
        end_ms,
        title,
    }
}

/// Where the axis ends: the last end of a group or an item, at any call depth.
struct LastEnd(u64);

impl<'r> ReportVisitor<'r> for LastEnd {
    fn enter_group(&mut self, at: &GroupAt<'r>) -> Descend {
        self.0 = self
            .0
            .max(end(at.group.started_ms(), at.group.duration_ms()));
        Descend::Into
    }

    fn enter_item(&mut self, at: &ItemAt<'r>) -> Descend {
        self.0 = self.0.max(end(at.item.started_ms, at.item.duration_ms));
        Descend::Into
    }
}

/// The rows, as the walk meets the report's groups and items.
struct Layout<'r> {
    rows: Vec<Row>,
    /// Past the bound, the run's groups that tell nothing wait here to be folded into one row.
    folded: Vec<&'r GroupReport>,
    /// What the walk is in, innermost last.
    open: Vec<Open>,
    end_ms: u64,
}

/// A group or an item the walk is in, as the layout drew it.
enum Open {
    /// A group folded, or an item left out for an aggregate row: nothing under it is drawn.
    Hidden,
    Group {
        /// The items drawn one a row (the rest are one aggregate row, after them).
        shown: Vec<usize>,
        /// The item on the slowest path.
        critical: Option<usize>,
        /// The depth of its items' rows.
        depth: usize,
    },
    Item {
        /// Which of the groups it called is on the slowest path.
        critical: Option<usize>,
        depth: usize,
    },
}

impl<'r> ReportVisitor<'r> for Layout<'r> {
    fn enter_group(&mut self, at: &GroupAt<'r>) -> Descend {
        let items = at.group.items();
        let (depth, critical) = match (at.group, self.open.last()) {
            (GroupOf::Run(group), _) => {
                if at.index >= MAX_GROUP_BANDS && !telling_group(group) {
                    self.folded.push(group);
                    self.open.push(Open::Hidden);
                    return Descend::Over;
                }
                fold_groups(&mut self.rows, &mut self.folded, self.end_ms);
                self.rows.push(group_row(group));
                (0, critical_item(items))
            }
            (GroupOf::Called(called), Some(Open::Item { critical, depth })) => {
                let depth = depth + 1;
                self.rows
                    .push(called_row(called, depth, &at.group.qualified_name()));
                let on_path = *critical == Some(at.index);
                (depth, on_path.then(|| critical_item(items)).flatten())
            }
            // A called group is walked only under its item.
            (GroupOf::Called(_), Some(Open::Hidden | Open::Group { .. }) | None) => {
                self.open.push(Open::Hidden);
                return Descend::Over;
            }
        };
        let shown = shown(items.iter().map(|i| (i.status, i.duration_ms)), critical);
        self.open.push(Open::Group {
            shown,
            critical,
            depth: depth + 1,
        });
        Descend::Into
    }

    fn enter_item(&mut self, at: &ItemAt<'r>) -> Descend {
        let Some(Open::Group {
            shown,
            critical,
            depth,
        }) = self.open.last()
        else {
            self.open.push(Open::Hidden);
            return Descend::Over;
        };
        if !shown.contains(&at.index) {
            self.open.push(Open::Hidden);
            return Descend::Over;
        }
        let (item, depth) = (at.item, *depth);
        let on_path = *critical == Some(at.index);
        self.rows.push(item_row(item, at.index, depth, on_path));
        if let Some(each) = &item.each {
            element_rows(&mut self.rows, each, depth + 1, on_path, self.end_ms);
        }
        self.open.push(Open::Item {
            critical: on_path.then(|| critical_called(&item.called)).flatten(),
            depth,
        });
        Descend::Into
    }

    fn leave_item(&mut self, _at: &ItemAt<'r>) {
        self.open.pop();
    }

    fn leave_group(&mut self, at: &GroupAt<'r>) {
        let Some(Open::Group { shown, depth, .. }) = self.open.pop() else {
            return;
        };
        let items = at.group.items();
        if shown.len() < items.len() {
            let rest: Vec<&ItemReport> = items
                .iter()
                .enumerate()
                .filter(|(i, _)| !shown.contains(i))
                .map(|(_, item)| item)
                .collect();
            let spans: Vec<(u64, u64)> = rest
                .iter()
                .map(|item| (item.started_ms, item.duration_ms))
                .collect();
            let statuses = counts(rest.iter().map(|item| item.status.as_str()));
            self.rows.push(aggregate(
                depth,
                format!("{} ({statuses})", more(rest.len(), "item")),
                &spans,
                self.end_ms,
            ));
        }
    }
}

/// A group that must be seen whatever the bound: it failed, ran in part or was cancelled, or
/// an item of it failed or was caught.
fn telling_group(group: &GroupReport) -> bool {
    let status = match group.status {
        GroupStatus::Failed | GroupStatus::Partial | GroupStatus::Cancelled => true,
        GroupStatus::Ran | GroupStatus::Skipped => false,
    };
    status || group.items.iter().any(|item| telling(item.status))
}

/// The groups in `folded`, if any, as one aggregate row counting them by status.
fn fold_groups(rows: &mut Vec<Row>, folded: &mut Vec<&GroupReport>, end_ms: u64) {
    if folded.is_empty() {
        return;
    }
    let spans: Vec<(u64, u64)> = folded
        .iter()
        .map(|g| (g.started_ms, g.duration_ms))
        .collect();
    let statuses = counts(folded.iter().map(|g| g.status.as_str()));
    rows.push(aggregate(
        0,
        format!("{} ({statuses})", more(folded.len(), "group")),
        &spans,
        end_ms,
    ));
    folded.clear();
}

fn group_row(group: &GroupReport) -> Row {
    let mode = if group.parallel {
        "items side by side"
    } else {
        "items in order"
    };
    Row {
        depth: 0,
        label: group.name.clone(),
        kind: Kind::Group(group.status),
        started_ms: group.started_ms,
        duration_ms: group.duration_ms,
        subs: Vec::new(),
        critical: false,
        detail: format!(
            "group {} · {} · {} · {}{}",
            group.name,
            group.status.as_str(),
            mode,
            span_text(group.started_ms, group.duration_ms),
            error_text(group.error.as_ref())
        ),
        profile: Vec::new(),
        reason: reason(group.error.as_ref()),
    }
}

/// The row of a group a call ran, named `name` (`#lib/notify` for a `#name` call's).
fn called_row(called: &CalledGroup, depth: usize, name: &str) -> Row {
    let omitted = if called.items_omitted > 0 {
        format!(" · {} items not reported", called.items_omitted)
    } else {
        String::new()
    };
    Row {
        depth,
        label: format!("↳ {name}"),
        kind: Kind::Group(called.status),
        started_ms: called.started_ms,
        duration_ms: called.duration_ms,
        subs: Vec::new(),
        critical: false,
        detail: format!(
            "called group {name} · {} · {}{omitted}{}",
            called.status.as_str(),
            span_text(called.started_ms, called.duration_ms),
            error_text(called.error.as_ref())
        ),
        profile: Vec::new(),
        reason: reason(called.error.as_ref()),
    }
}

fn item_row(item: &ItemReport, index: usize, depth: usize, critical: bool) -> Row {
    let last = item.attempts.len().saturating_sub(1);
    let subs = item
        .attempts
        .iter()
        .enumerate()
        .map(|(n, attempt)| Sub {
            started_ms: attempt.started_ms,
            duration_ms: attempt.duration_ms,
            failed: n < last,
            label: format!(
                "attempt {} · {}{}",
                n + 1,
                span_text(attempt.started_ms, attempt.duration_ms),
                item.failed_attempts
                    .get(n)
                    .map(|e| error_text(Some(e)))
                    .unwrap_or_default()
            ),
        })
        .collect();
    let retries = match item.retries {
        0 => String::new(),
        1 => " · 1 retry".to_owned(),
        n => format!(" · {n} retries"),
    };
    let each = match &item.each {
        Some(each) => format!(
            " · each over {}: {} ok{}",
            plural(each.count, "element"),
            each.ok,
            [
                (each.failed, "failed"),
                (each.skipped, "skipped"),
                (each.cancelled, "cancelled")
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, word)| format!(", {n} {word}"))
            .collect::<String>()
        ),
        None => String::new(),
    };
    let times = match &item.each {
        Some(each) => format!(" ×{}", each.count),
        None => String::new(),
    };
    Row {
        depth,
        label: format!("{} {}{times}", index + 1, item.tool),
        kind: Kind::Item(item.status),
        started_ms: item.started_ms,
        duration_ms: item.duration_ms,
        subs,
        critical,
        detail: format!(
            "item {} {} · {} · {}{retries}{each}{}",
            index + 1,
            item.tool,
            item.status.as_str(),
            span_text(item.started_ms, item.duration_ms),
            error_text(item.error.as_ref())
        ),
        profile: Vec::new(),
        reason: reason(item.error.as_ref()),
    }
}

/// The rows of an `each` item's elements, under it: each element's run as an item's is drawn,
/// bounded as items are; elements the report only counts are counted, by status, in the last
/// row.
fn element_rows(rows: &mut Vec<Row>, each: &EachReport, depth: usize, on_path: bool, end: u64) {
    let elements = &each.elements;
    let critical = on_path.then(|| last_to_end(elements)).flatten();
    let shown = shown(elements.iter().map(|e| (e.status, e.duration_ms)), critical);
    for &at in &shown {
        let element = &elements[at];
        rows.push(element_row(
            element,
            element.index(at),
            each.count,
            depth,
            critical == Some(at),
        ));
    }
    let unreported = if each.elements_omitted > 0 {
        format!(
            " · {} more not reported ({})",
            each.elements_omitted,
            unreported_counts(each)
        )
    } else {
        String::new()
    };
    if shown.len() < elements.len() {
        let rest: Vec<&ElementReport> = elements
            .iter()
            .enumerate()
            .filter(|(i, _)| !shown.contains(i))
            .map(|(_, e)| e)
            .collect();
        let spans: Vec<(u64, u64)> = rest.iter().map(|e| (e.started_ms, e.duration_ms)).collect();
        let statuses = counts(rest.iter().map(|e| e.status.as_str()));
        rows.push(aggregate(
            depth,
            format!("{} ({statuses}){unreported}", more(rest.len(), "element")),
            &spans,
            end,
        ));
    } else if each.elements_omitted > 0 {
        rows.push(Row {
            depth,
            label: format!(
                "{} not reported ({})",
                plural(each.elements_omitted, "element"),
                unreported_counts(each)
            ),
            kind: Kind::Aggregate,
            started_ms: 0,
            duration_ms: 0,
            subs: Vec::new(),
            critical: false,
            detail: format!(
                "{} are counted in the item, not reported one by one",
                plural(each.elements_omitted, "element")
            ),
            profile: Vec::new(),
            reason: None,
        });
    }
}

/// The statuses of the elements an `each` report only counts: its counts less the reported
/// elements'.
fn unreported_counts(each: &EachReport) -> String {
    let reported = |word: &str| {
        each.elements
            .iter()
            .filter(|e| each_word(e.status) == word)
            .count()
    };
    let words = [
        (each.ok, "ok"),
        (each.failed, "failed"),
        (each.skipped, "skipped"),
        (each.cancelled, "cancelled"),
    ];
    let parts: Vec<String> = words
        .iter()
        .map(|&(n, word)| (n.saturating_sub(reported(word)), word))
        .filter(|&(n, _)| n > 0)
        .map(|(n, word)| format!("{n} {word}"))
        .collect();
    parts.join(", ")
}

/// The count an `each` report adds an element to, by its status.
fn each_word(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::Ok => "ok",
        ItemStatus::Failed | ItemStatus::Caught => "failed",
        ItemStatus::Skipped | ItemStatus::Degraded => "skipped",
        ItemStatus::Cancelled => "cancelled",
    }
}

fn element_row(
    element: &ElementReport,
    index: usize,
    count: usize,
    depth: usize,
    critical: bool,
) -> Row {
    let retries = match element.retries {
        0 => String::new(),
        1 => " · 1 retry".to_owned(),
        n => format!(" · {n} retries"),
    };
    Row {
        depth,
        label: format!("[{index}]"),
        kind: Kind::Item(element.status),
        started_ms: element.started_ms,
        duration_ms: element.duration_ms,
        subs: Vec::new(),
        critical,
        detail: format!(
            "element {index} of {count} ($each_index {index}) · {} · {}{retries}{}",
            element.status.as_str(),
            span_text(element.started_ms, element.duration_ms),
            error_text(element.error.as_ref())
        ),
        profile: Vec::new(),
        reason: reason(element.error.as_ref()),
    }
}

/// The element that ended last: the one its item waited for.
fn last_to_end(elements: &[ElementReport]) -> Option<usize> {
    elements
        .iter()
        .enumerate()
        .filter(|(_, e)| e.duration_ms > 0)
        .max_by_key(|(i, e)| (end(e.started_ms, e.duration_ms), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// A run that must be seen: it failed, was caught, cancelled or degraded.
fn telling(status: ItemStatus) -> bool {
    match status {
        ItemStatus::Failed | ItemStatus::Caught | ItemStatus::Cancelled | ItemStatus::Degraded => {
            true
        }
        ItemStatus::Ok | ItemStatus::Skipped => false,
    }
}

/// The rows drawn one each, of runs given as `(status, duration_ms)`: all of them up to the
/// bound; past it the one on the slowest path, every telling one (up to `MAX_TELLING_ROWS`),
/// then the skipped and the slowest up to `SHOWN_WHEN_AGGREGATED`, in order.
fn shown(runs: impl Iterator<Item = (ItemStatus, u64)>, critical: Option<usize>) -> Vec<usize> {
    let runs: Vec<(ItemStatus, u64)> = runs.collect();
    if runs.len() <= MAX_ITEM_ROWS {
        return (0..runs.len()).collect();
    }
    let mut ranked: Vec<usize> = (0..runs.len()).collect();
    ranked.sort_by_key(|&i| {
        let (status, duration_ms) = runs[i];
        (
            std::cmp::Reverse(critical == Some(i)),
            std::cmp::Reverse(telling(status)),
            std::cmp::Reverse(!matches!(status, ItemStatus::Ok)),
            std::cmp::Reverse(duration_ms),
            i,
        )
    });
    let must = runs.iter().filter(|(status, _)| telling(*status)).count();
    let must = must.min(MAX_TELLING_ROWS) + usize::from(critical.is_some());
    ranked.truncate(must.max(SHOWN_WHEN_AGGREGATED));
    ranked.sort_unstable();
    ranked
}

/// A row standing for `spans` (`(started_ms, duration_ms)`), each in flight from its start
/// up to, not including, its end (one that ends as another starts does not overlap it; a 0 ms
/// one is in flight at its instant): the most in flight in each column of the axis, and at
/// once over the whole row.
fn aggregate(depth: usize, label: String, spans: &[(u64, u64)], end_ms: u64) -> Row {
    let mut profile = vec![0u32; PROFILE_BUCKETS];
    let bucket = |ms: u64| {
        let at = u128::from(ms) * PROFILE_BUCKETS as u128 / u128::from(end_ms.max(1));
        usize::try_from(at)
            .unwrap_or(usize::MAX)
            .min(PROFILE_BUCKETS - 1)
    };
    // At one instant, the ends come first, then the starts; a 0 ms span is a start and an end
    // after them (so it counts with whatever else holds that instant).
    let mut events: Vec<(u64, u8)> = Vec::with_capacity(spans.len() * 2);
    for &(started, duration) in spans {
        if duration == 0 {
            events.push((started, 1));
            events.push((started, 2));
        } else {
            events.push((started, 1));
            events.push((end(started, duration), 0));
        }
    }
    events.sort_unstable();
    let mut in_flight: u32 = 0;
    let mut peak: u32 = 0;
    for (n, &(at, kind)) in events.iter().enumerate() {
        match kind {
            1 => in_flight += 1,
            _ => in_flight = in_flight.saturating_sub(1),
        }
        peak = peak.max(in_flight);
        // What holds from this event to the next marks every column in between.
        let next = events.get(n + 1).map_or(at, |&(next, _)| next);
        let last = if next > at {
            bucket(next - 1)
        } else {
            bucket(at)
        };
        for most in &mut profile[bucket(at)..=last.max(bucket(at))] {
            *most = (*most).max(in_flight);
        }
    }
    let started_ms = spans.iter().map(|s| s.0).min().unwrap_or(0);
    let last = spans.iter().map(|&(s, d)| end(s, d)).max().unwrap_or(0);
    Row {
        depth,
        detail: format!(
            "{label} · {} · at most {peak} in flight",
            span_text(started_ms, last - started_ms)
        ),
        label,
        kind: Kind::Aggregate,
        started_ms,
        duration_ms: last - started_ms,
        subs: Vec::new(),
        critical: false,
        profile,
        reason: None,
    }
}

/// The item that ended last: the one its group waited for.
fn critical_item(items: &[ItemReport]) -> Option<usize> {
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.duration_ms > 0)
        .max_by_key(|(i, item)| {
            (
                end(item.started_ms, item.duration_ms),
                std::cmp::Reverse(*i),
            )
        })
        .map(|(i, _)| i)
}

fn critical_called(called: &[CalledGroup]) -> Option<usize> {
    called
        .iter()
        .enumerate()
        .max_by_key(|(i, g)| (end(g.started_ms, g.duration_ms), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

fn end(started_ms: u64, duration_ms: u64) -> u64 {
    started_ms.saturating_add(duration_ms)
}
