//! The live view of `seqc run --format human`, on stderr, driven by the engine's [`Observer`]:
//!
//! ```text
//! ▶ group fetch (parallel, 3 items)
//!   ✓ cmd_run → summary
//!   ✗ files_read: not_found `path`: ...
//! ■ group fetch ran in 12 ms
//! ```
//!
//! On a terminal each running group also gets an indicatif spinner with its progress, drawn
//! below the finished lines; `output_send__stdout` lines are then printed with the spinners
//! suspended, so that the two never tear each other. Elsewhere (a pipe, a file, CI) only the
//! plain lines are written.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use seq_exec::Observer;
use seq_exec::builtin::{OutputSink, Stdout};
use seq_exec::engine::{
    Descend, GroupAt, GroupReport, GroupStatus, ItemAt, ItemReport, ItemStatus, ReportVisitor,
};
use seq_syntax::ast::{Group, Sequence};
use seq_syntax::printable::{Lines, printable};
use std::collections::{BTreeMap, HashMap};
use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The observer of a run of `sequence`, and where its `output_send__stdout` lines go.
pub fn start(sequence: Arc<Sequence>) -> (Arc<dyn Observer>, Arc<dyn OutputSink>) {
    if io::stderr().is_terminal() {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let output = Arc::new(Suspended(multi.clone()));
        let observer = Arc::new(Spinners {
            sequence,
            multi,
            groups: Mutex::new(HashMap::new()),
        });
        (observer, output)
    } else {
        (Arc::new(Plain { sequence }), Arc::new(Stdout))
    }
}

/// Plain lines on stderr.
struct Plain {
    sequence: Arc<Sequence>,
}

impl Plain {
    fn line(&self, line: &str) {
        // A live view that cannot be written is not worth stopping the run for.
        let _ = writeln!(io::stderr().lock(), "{}", printable(line, Lines::Kept));
    }
}

impl Observer for Plain {
    fn group_started(&self, _sequence: &str, group: &str, parallel: bool) {
        self.line(&group_started(&self.sequence, group, parallel));
    }

    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        self.line(&item_finished(&self.sequence, group, index, report));
    }

    fn group_finished(&self, report: &GroupReport) {
        self.line(&group_finished(report));
    }
}

/// The plain lines, above one spinner per running group.
struct Spinners {
    sequence: Arc<Sequence>,
    multi: MultiProgress,
    groups: Mutex<HashMap<String, Running>>,
}

/// A running group's spinner and the items in flight, by index.
struct Running {
    bar: ProgressBar,
    items: BTreeMap<usize, String>,
}

impl Running {
    /// `running cmd_run, sleep and 3 more`.
    fn show(&self) {
        const SHOWN: usize = 3;
        let mut message = String::new();
        for (n, tool) in self.items.values().take(SHOWN).enumerate() {
            message.push_str(if n == 0 { "running " } else { ", " });
            message.push_str(tool);
        }
        if self.items.len() > SHOWN {
            message.push_str(&format!(" and {} more", self.items.len() - SHOWN));
        }
        self.bar.set_message(message);
    }
}

impl Spinners {
    fn line(&self, line: &str) {
        let _ = self.multi.println(printable(line, Lines::Kept));
    }

    fn with_group(&self, group: &str, f: impl FnOnce(&mut Running)) {
        let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(running) = groups.get_mut(group) {
            f(running);
        }
    }
}

impl Observer for Spinners {
    fn group_started(&self, _sequence: &str, group: &str, parallel: bool) {
        self.line(&group_started(&self.sequence, group, parallel));
        let items = find(&self.sequence, group).map_or(0, |g| g.items.len());
        let style = ProgressStyle::with_template("{spinner} {prefix} {pos}/{len} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = self.multi.add(
            ProgressBar::new(u64::try_from(items).unwrap_or(u64::MAX))
                .with_style(style)
                .with_prefix(format!("group {group}")),
        );
        bar.enable_steady_tick(Duration::from_millis(100));
        let running = Running {
            bar,
            items: BTreeMap::new(),
        };
        self.groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(group.to_owned(), running);
    }

    fn item_started(&self, group: &str, index: usize, tool: &str) {
        self.with_group(group, |running| {
            running.items.insert(index, tool.to_owned());
            running.show();
        });
    }

    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        self.line(&item_finished(&self.sequence, group, index, report));
        self.with_group(group, |running| {
            running.items.remove(&index);
            running.bar.inc(1);
            running.show();
        });
    }

    fn group_finished(&self, report: &GroupReport) {
        let running = self
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&report.name);
        if let Some(running) = running {
            running.bar.finish_and_clear();
            self.multi.remove(&running.bar);
        }
        self.line(&group_finished(report));
    }
}

/// Standard output with the spinners out of the way while a line is written.
struct Suspended(MultiProgress);

impl OutputSink for Suspended {
    fn send(&self, text: &str) -> io::Result<()> {
        self.0.suspend(|| Stdout.send(text))
    }
}

fn find<'a>(sequence: &'a Sequence, group: &str) -> Option<&'a Group> {
    sequence.groups.iter().find(|g| g.name.value == group)
}

/// `▶ group fetch (parallel, 3 items)`.
fn group_started(sequence: &Sequence, group: &str, parallel: bool) -> String {
    let items = find(sequence, group).map_or(0, |g| g.items.len());
    if items == 1 {
        return format!("▶ group {group} (1 item)");
    }
    let how = if parallel { "parallel" } else { "serial" };
    format!("▶ group {group} ({how}, {items} items)")
}

/// `  ✓ cmd_run → summary`, `  ✗ files_read: not_found ...`; a call item's line is followed by
/// the groups it called, each with its items, indented by depth.
fn item_finished(sequence: &Sequence, group: &str, index: usize, report: &ItemReport) -> String {
    // A caught item wrote its `error_as` slot, not its `as`.
    let slot = find(sequence, group)
        .and_then(|g| g.items.get(index))
        .and_then(|item| match report.status {
            ItemStatus::Caught => item.error_as.as_ref(),
            ItemStatus::Ok
            | ItemStatus::Failed
            | ItemStatus::Skipped
            | ItemStatus::Degraded
            | ItemStatus::Cancelled => item.as_slot.as_ref(),
        })
        .map(|slot| format!(" → {}", slot.value))
        .unwrap_or_default();
    let mut lines = ItemLines {
        slot,
        text: String::new(),
    };
    report.walk(index, 0, &mut lines);
    lines.text
}

/// The lines of a finished item and of the groups it called, with their items: a group at
/// call depth `d` is indented by `2d` steps of two spaces, its items by one step more.
struct ItemLines {
    /// ` → slot`: the slot the finished item wrote, said on its own line only.
    slot: String,
    text: String,
}

impl ItemLines {
    fn push(&mut self, line: &str) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
    }
}

impl<'r> ReportVisitor<'r> for ItemLines {
    fn enter_group(&mut self, at: &GroupAt<'r>) -> Descend {
        let group = at.group;
        let indent = "  ".repeat(2 * at.depth);
        let name = group.qualified_name();
        let mut line = format!(
            "{indent}▷ group {name} {}",
            ended(group.status(), group.duration_ms())
        );
        if group.parallel() {
            line.push_str(", items side by side");
        }
        if group.items_omitted() > 0 {
            line.push_str(&format!(" ({} items not shown)", group.items_omitted()));
        }
        self.push(&line);
        if group.status() == GroupStatus::Skipped {
            Descend::Over
        } else {
            Descend::Into
        }
    }

    fn enter_item(&mut self, at: &ItemAt<'r>) -> Descend {
        let slot = if at.depth == 0 {
            self.slot.as_str()
        } else {
            ""
        };
        let line = item_line(at.item, slot, 2 * at.depth + 1);
        self.push(&line);
        Descend::Into
    }
}

/// One item's line at `depth` (two spaces each).
fn item_line(report: &ItemReport, slot: &str, depth: usize) -> String {
    let indent = "  ".repeat(depth);
    let tool = &report.tool;
    let error = report
        .error
        .as_ref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    let words = report.status.words();
    let mut line = match report.status {
        ItemStatus::Ok => format!("{indent}✓ {tool}{slot}"),
        ItemStatus::Failed => format!("{indent}✗ {tool}{error}"),
        ItemStatus::Skipped => format!("{indent}○ {tool} {words}{error}"),
        ItemStatus::Degraded => format!("{indent}~ {tool}{slot} {words}{error}"),
        ItemStatus::Cancelled => format!("{indent}⊘ {tool} {words}"),
        ItemStatus::Caught => format!("{indent}↪ {tool}{slot} {words}{error}"),
    };
    match report.retries {
        0 => {}
        1 => line.push_str(" (after 1 retry)"),
        n => line.push_str(&format!(" (after {n} retries)")),
    }
    line
}

/// How a group ended, after its name: `ran in 12 ms`, `skipped: its `when` is false`.
fn ended(status: GroupStatus, ms: u64) -> String {
    let words = status.words();
    match status {
        GroupStatus::Skipped => format!("{words}: its `when` is false"),
        GroupStatus::Cancelled => format!("{words} after {ms} ms"),
        GroupStatus::Ran | GroupStatus::Failed | GroupStatus::Partial => {
            format!("{words} in {ms} ms")
        }
    }
}

/// `■ group fetch ran in 12 ms`.
fn group_finished(report: &GroupReport) -> String {
    let mut line = format!(
        "■ group {} {}",
        report.name,
        ended(report.status, report.duration_ms)
    );
    if let Some(error) = &report.error {
        line.push_str(&format!(": {error}"));
    }
    line
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use seq_exec::engine::CalledGroup;
    use seq_exec::{Reason, ToolError};
    use serde_json::Map;

    fn sequence() -> Sequence {
        let text = r#"{"name": "s", "groups": [
            {"name": "fetch", "out": {"summary": "object"},
             "tools": "{\"tool\":\"cmd_run\",\"args\":{\"command\":\"uptime\"},\"as\":\"summary\"} ; {\"tool\":\"files_read\",\"args\":{\"path\":\"x\"}} ;"},
            {"name": "one", "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}} ;"}
        ]}"#;
        seq_syntax::parse(text).sequence.unwrap()
    }

    fn item(tool: &str, status: ItemStatus, error: Option<ToolError>, retries: u32) -> ItemReport {
        ItemReport {
            retries,
            ..ItemReport::new(tool, status, error)
        }
    }

    #[test]
    fn group_lines_say_how_items_run() {
        let s = sequence();
        assert_eq!(
            group_started(&s, "fetch", true),
            "▶ group fetch (parallel, 2 items)"
        );
        assert_eq!(
            group_started(&s, "fetch", false),
            "▶ group fetch (serial, 2 items)"
        );
        assert_eq!(group_started(&s, "one", false), "▶ group one (1 item)");
    }

    #[test]
    fn item_lines_name_the_slot_or_the_error() {
        let s = sequence();
        let ok = item("cmd_run", ItemStatus::Ok, None, 0);
        assert_eq!(item_finished(&s, "fetch", 0, &ok), "  ✓ cmd_run → summary");
        let missing = ToolError::new(Reason::NotFound, "no such file").with_field("path");
        let failed = item("files_read", ItemStatus::Failed, Some(missing), 2);
        assert_eq!(
            item_finished(&s, "fetch", 1, &failed),
            "  ✗ files_read: not_found `path`: no such file (after 2 retries)"
        );
        let skipped = item("cmd_run", ItemStatus::Skipped, None, 0);
        assert_eq!(
            item_finished(&s, "fetch", 0, &skipped),
            "  ○ cmd_run skipped"
        );
    }

    #[test]
    fn a_call_item_shows_the_groups_it_ran_and_their_items() {
        let s = sequence();
        let inner = ItemReport::new("cmd_run", ItemStatus::Ok, None);
        let mut call = ItemReport::new("seq_call", ItemStatus::Ok, None);
        call.called = vec![CalledGroup {
            name: "probe".to_owned(),
            sequence: Some("lib".to_owned()),
            status: GroupStatus::Ran,
            parallel: true,
            duration_ms: 20,
            started_ms: 0,
            items: vec![inner.clone(), inner],
            items_omitted: 0,
            error: None,
        }];
        assert_eq!(
            item_finished(&s, "one", 0, &call),
            "  ✓ seq_call\n    ▷ group #lib/probe ran in 20 ms, items side by side\n      \
             ✓ cmd_run\n      ✓ cmd_run"
        );
    }

    #[test]
    fn finished_groups_say_how_they_ended() {
        let mut report = GroupReport {
            name: "fetch".to_owned(),
            status: GroupStatus::Ran,
            parallel: true,
            duration_ms: 12,
            started_ms: 0,
            out: Map::new(),
            local: Map::new(),
            items: Vec::new(),
            error: None,
        };
        assert_eq!(group_finished(&report), "■ group fetch ran in 12 ms");
        report.status = GroupStatus::Failed;
        report.error = Some(ToolError::new(Reason::Timeout, "the group ran past 1s"));
        assert_eq!(
            group_finished(&report),
            "■ group fetch failed in 12 ms: timeout: the group ran past 1s"
        );
    }
}
