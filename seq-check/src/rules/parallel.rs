//! Parallel safety: a tool that is not `parallel_safe` is an
//! error in a parallel group and in a fan-out (an `each` item with `max_parallel`, whose
//! elements run side by side), and in a serial group needs `"unsafe_serial": true`. Calls
//! (`seq_call`, `seq_when_call`) are judged through their targets by the call graph.

use super::{Cx, fix};
use seq_catalog::ParallelSafety;
use seq_syntax::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    let group = cx.group;
    // Which rule applies depends on whether the group is parallel.
    if group.hole("parallel") {
        return;
    }
    let parallel = group.is_parallel();
    for item in cx
        .items
        .iter()
        .map(|i| i.item)
        .filter(|i| !i.hole("unsafe_serial") && !i.hole("max_parallel"))
    {
        let tool = &item.tool.value;
        let acknowledged = item.unsafe_serial.as_ref().is_some_and(|u| u.value);
        match cx.catalog.parallel_safety(tool) {
            // Unknown tools are reported by the argument rules; calls by the call graph.
            None | Some(ParallelSafety::ThroughTarget) => {}
            Some(ParallelSafety::Safe) => {
                if let Some(flag) = item.unsafe_serial.as_ref().filter(|u| u.value) {
                    let why = if parallel {
                        format!(
                            "`{tool}` is parallel-safe, and `unsafe_serial` only matters in a serial group"
                        )
                    } else {
                        format!("`{tool}` is parallel-safe")
                    };
                    out.push(
                        Diagnostic::new(
                            Code::PointlessUnsafeSerial,
                            flag.span,
                            format!("`unsafe_serial` has no effect here: {why}"),
                        )
                        .with_help("remove `\"unsafe_serial\": true` from the item"),
                    );
                }
            }
            Some(ParallelSafety::Unsafe) if parallel => {
                let mut d = Diagnostic::new(
                    Code::UnsafeInParallel,
                    item.tool.span,
                    format!(
                        "`{tool}` is not parallel-safe, but group `{}` runs its items in parallel",
                        group.name.value
                    ),
                )
                .with_help(format!(
                    "move `{tool}` to a group with `\"parallel\": false` and mark the item `\"unsafe_serial\": true`"
                ));
                d = match &group.parallel {
                    Some(flag) => d.with_label(flag.span, "the group is parallel here"),
                    None => d.with_label(group.name.span, "this group is parallel by default"),
                };
                if acknowledged {
                    d = d.with_label(
                        item.unsafe_serial.as_ref().map_or(item.span, |u| u.span),
                        "`unsafe_serial` does not make a parallel group serial",
                    );
                }
                let mut edits: Vec<_> = fix::make_serial(group).into_iter().collect();
                if !acknowledged && !edits.is_empty() {
                    edits.push(fix::mark_unsafe_serial(item));
                }
                if !edits.is_empty() {
                    // Running the group serially changes what it does.
                    d = d
                        .with_fix(fix::fix(
                            "run the group serially and mark the item `unsafe_serial`",
                            edits,
                        ))
                        .maybe_incorrect();
                }
                out.push(d);
            }
            Some(ParallelSafety::Unsafe) if item.fan_out().is_some() => {
                out.push(in_fan_out(item, tool));
            }
            Some(ParallelSafety::Unsafe) => {
                if acknowledged {
                    continue;
                }
                let mut d = Diagnostic::new(
                    Code::UnsafeSerialMissing,
                    item.tool.span,
                    format!(
                        "`{tool}` is not parallel-safe; in a serial group it must be marked `\"unsafe_serial\": true`"
                    ),
                )
                .with_help("add `\"unsafe_serial\": true` to the item to acknowledge that it must not run concurrently");
                if let Some(flag) = &item.unsafe_serial {
                    d = d.with_label(flag.span, "set to false here");
                }
                // The acknowledgement is the author's to give.
                out.push(
                    d.with_fix(fix::fix(
                        "mark the item `unsafe_serial`",
                        vec![fix::mark_unsafe_serial(item)],
                    ))
                    .maybe_incorrect(),
                );
            }
        }
    }
}

/// E0504 for an `each` item with `max_parallel` in a serial group: its elements run side by side
/// as a parallel group's items do, so `unsafe_serial` cannot acknowledge the tool.
fn in_fan_out(item: &seq_syntax::ast::Item, tool: &str) -> Diagnostic {
    let d = Diagnostic::new(
        Code::UnsafeInParallel,
        item.tool.span,
        format!("`{tool}` is not parallel-safe, but this item's elements run side by side"),
    )
    .with_help(format!(
        "remove `max_parallel` so that the elements of `{tool}` run one after another, and mark \
         the item `\"unsafe_serial\": true`"
    ));
    match &item.max_parallel {
        Some(bound) => d.with_label(bound.span, "`max_parallel` runs the elements side by side"),
        None => d,
    }
}
