//! The summary after a human-format run: how it ended, then every failure with its reason and
//! hint (also the failures a group tolerated with `on_error: continue` or `error_as`, in a run's
//! group or in one that an item called).
//!
//! ```text
//! ✗ deploy failed in 1204 ms: 1 group ran, 1 failed, 1 not reached
//!   group `push`, item 2 `cmd_run`: failed: the command exited with status 2
//!     hint: read its stderr in the report
//! ```

use seq_exec::engine::{GroupStatus, ItemStatus, Placed};
use seq_exec::{RunReport, ToolError};
use seq_syntax::ast::Sequence;
use seq_syntax::printable::{Lines, printable};
use std::io::{self, Write};
use std::time::Duration;

pub fn render(
    out: &mut dyn Write,
    sequence: &Sequence,
    report: &RunReport,
    elapsed: Duration,
) -> io::Result<()> {
    let name = &sequence.name.value;
    if let Some(error) = &report.error {
        writeln!(out, "✗ {name} could not start")?;
        return failure(out, "the run", error);
    }
    let ms = elapsed.as_millis();
    let outcome = if report.ok {
        format!("✓ {name} succeeded in {ms} ms")
    } else {
        format!("✗ {name} failed in {ms} ms")
    };
    writeln!(out, "{outcome}: {}", counts(sequence, report))?;
    for placed in report.placed_groups() {
        let group = placed.at.group;
        let items = group.items();
        let failed_items = items
            .iter()
            .any(|item| item.status == ItemStatus::Failed && item.error.is_some());
        // A group's error repeats its first failed item's; it is news only without one (its
        // `when` could not be evaluated, a cycle, a timeout before any item failed). A called
        // group's is its call item's error, said there.
        if let (Some(error), false, 0) = (group.error(), failed_items, placed.at.depth) {
            failure(out, &placed.described(), error)?;
        }
        for (index, item) in items.iter().enumerate() {
            let caught = match item.status {
                ItemStatus::Failed => None,
                ItemStatus::Caught => Some(caught_in(sequence, &placed, index)),
                ItemStatus::Ok
                | ItemStatus::Skipped
                | ItemStatus::Degraded
                | ItemStatus::Cancelled => continue,
            };
            let Some(error) = item.error.as_ref().filter(|_| placed.tells(item)) else {
                continue;
            };
            let retried = match item.retries {
                0 => String::new(),
                1 => " (after 1 retry)".to_owned(),
                n => format!(" (after {n} retries)"),
            };
            // Counted from 1, as the engine's own messages count items.
            let place = format!(
                "{}, item {} `{}`{retried}{}",
                placed.described(),
                index + 1,
                item.tool,
                caught.unwrap_or_default()
            );
            failure(out, &place, error)?;
        }
    }
    Ok(())
}

/// ` (caught in `slot`)`: where a caught item's error went; ` (caught)` for an item of a
/// stored sequence the run called, whose text is not at hand.
fn caught_in(sequence: &Sequence, placed: &Placed<'_>, index: usize) -> String {
    let group = placed.at.group.name();
    sequence
        .groups
        .iter()
        .filter(|_| placed.sequence.is_none())
        .find(|g| g.name.value == group)
        .and_then(|g| g.items.get(index))
        .and_then(|item| item.error_as.as_ref())
        .map_or_else(
            || " (caught)".to_owned(),
            |slot| format!(" (caught in `{}`)", slot.value),
        )
}

/// `2 groups ran, 1 skipped, 1 not reached`: only the counts that are not zero.
fn counts(sequence: &Sequence, report: &RunReport) -> String {
    let of = |status: GroupStatus| report.groups.iter().filter(|g| g.status == status).count();
    // A group that runs only when called is not the run's to reach: its run is in its call's
    // report, whether it ran or not.
    let not_reached = seq_catalog::calls::entry_groups(sequence)
        .count()
        .saturating_sub(report.groups.len());
    let parts = [
        GroupStatus::Ran,
        GroupStatus::Skipped,
        GroupStatus::Partial,
        GroupStatus::Failed,
        GroupStatus::Cancelled,
    ]
    .map(|status| (of(status), status.words()))
    .into_iter()
    .chain([(not_reached, "not reached")]);
    let mut said: Vec<String> = Vec::new();
    for (n, what) in parts.filter(|(n, _)| *n > 0) {
        // `1 group ran, 1 skipped`: the noun once, with the first count.
        if said.is_empty() {
            let noun = if n == 1 { "group" } else { "groups" };
            said.push(format!("{n} {noun} {what}"));
        } else {
            said.push(format!("{n} {what}"));
        }
    }
    if said.is_empty() {
        "no groups".to_owned()
    } else {
        said.join(", ")
    }
}

fn failure(out: &mut dyn Write, place: &str, error: &ToolError) -> io::Result<()> {
    // A tool's error quotes what the tool said (a command's stderr): escaped.
    writeln!(
        out,
        "  {place}: {}",
        printable(&error.to_string(), Lines::Kept)
    )?;
    if let Some(hint) = &error.hint {
        writeln!(out, "    hint: {}", printable(hint, Lines::Kept))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use seq_exec::Reason;
    use seq_exec::engine::{GroupReport, ItemReport};
    use serde_json::Map;

    fn sequence(groups: usize) -> Sequence {
        let group = |i: usize| {
            format!(
                r#"{{"name": "g{i}", "tools": "{{\"tool\":\"echo\",\"args\":{{\"value\":1}}}} ;"}}"#
            )
        };
        let groups: Vec<String> = (0..groups).map(group).collect();
        let text = format!(r#"{{"name": "s", "groups": [{}]}}"#, groups.join(","));
        seq_syntax::parse(&text).sequence.unwrap()
    }

    fn group(name: &str, status: GroupStatus, items: Vec<ItemReport>) -> GroupReport {
        GroupReport {
            name: name.to_owned(),
            status,
            parallel: false,
            duration_ms: 3,
            started_ms: 0,
            out: Map::new(),
            local: Map::new(),
            items,
            error: None,
        }
    }

    /// A run's report: how it ended, the groups it ran and, for one that could not start, why.
    fn run(ok: bool, groups: Vec<GroupReport>, error: Option<ToolError>) -> RunReport {
        RunReport {
            ok,
            groups,
            error,
            // The other fields empty, as the report's one constructor leaves them.
            ..RunReport::failed(ToolError::new(Reason::Failed, "replaced"))
        }
    }

    fn rendered(sequence: &Sequence, report: &RunReport) -> String {
        let mut out = Vec::new();
        render(&mut out, sequence, report, Duration::from_millis(7)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_failed_run_lists_each_failure_with_its_hint() {
        let error = ToolError::new(Reason::Failed, "exit status 2").with_hint("read stderr");
        let failed = ItemReport {
            retries: 1,
            ..ItemReport::new("cmd_run", ItemStatus::Failed, Some(error))
        };
        let report = run(
            false,
            vec![
                group("g0", GroupStatus::Ran, Vec::new()),
                group("g1", GroupStatus::Failed, vec![failed]),
            ],
            None,
        );
        assert_eq!(
            rendered(&sequence(3), &report),
            "✗ s failed in 7 ms: 1 group ran, 1 failed, 1 not reached\n  \
             group `g1`, item 1 `cmd_run` (after 1 retry): failed: exit status 2\n    \
             hint: read stderr\n"
        );
    }

    #[test]
    fn a_group_that_runs_only_when_called_is_never_not_reached() {
        let text = r#"{"name": "s", "groups": [
            {"name": "main", "out": {"r": "object"},
             "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"helper\"},\"as\":\"r\"} ;"},
            {"name": "helper", "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}} ;"}]}"#;
        let sequence = seq_syntax::parse(text).sequence.unwrap();
        let report = run(
            true,
            vec![group("main", GroupStatus::Ran, Vec::new())],
            None,
        );
        assert_eq!(
            rendered(&sequence, &report),
            "✓ s succeeded in 7 ms: 1 group ran\n"
        );
    }

    #[test]
    fn a_group_error_is_shown_when_no_item_failed() {
        let mut timed_out = group("g0", GroupStatus::Failed, Vec::new());
        timed_out.error = Some(ToolError::new(Reason::Timeout, "the group ran past 1s"));
        let report = run(false, vec![timed_out], None);
        assert_eq!(
            rendered(&sequence(1), &report),
            "✗ s failed in 7 ms: 1 group failed\n  group `g0`: timeout: the group ran past 1s\n"
        );
    }

    #[test]
    fn a_run_that_could_not_start_says_why() {
        let error = ToolError::new(Reason::Type, "`who` is not declared")
            .with_field("who")
            .with_hint("pass only declared arguments");
        let report = run(false, Vec::new(), Some(error));
        assert_eq!(
            rendered(&sequence(1), &report),
            "✗ s could not start\n  the run: type `who`: `who` is not declared\n    \
             hint: pass only declared arguments\n"
        );
    }

    #[test]
    fn a_clean_run_is_one_line() {
        let report = run(
            true,
            vec![
                group("g0", GroupStatus::Ran, Vec::new()),
                group("g1", GroupStatus::Skipped, Vec::new()),
            ],
            None,
        );
        assert_eq!(
            rendered(&sequence(2), &report),
            "✓ s succeeded in 7 ms: 1 group ran, 1 skipped\n"
        );
    }
}
