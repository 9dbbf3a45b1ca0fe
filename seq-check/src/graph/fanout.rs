//! The worst case of a fan-out (W0555): an `each` item that calls a group or a sequence runs the
//! callee once per element, and what the callee runs (its items, its own `each` elements, its
//! calls) once more each time, so the runs multiply down the call graph. The engine charges
//! every item run to the run's byte budget ([`ITEM_RUN_BYTES`] while it runs side by side,
//! [`ITEM_REPORT_BYTES`] for its report to the end) and ends a run past it with reason
//! `budget`; the checker says so first when the worst case passes the default budget.
//!
//! The worst case of a node is counted once, callees first (components come sinks first):
//! a group's items, each item times its elements (a literal array's length, or [`MAX_EACH`]),
//! each call item plus what its callee runs. Components that hold a cycle (E0601, E0602) count
//! nothing.

use super::model::{CallGraph, Node};
use super::scc::Components;
use petgraph::graph::NodeIndex;
use seq_syntax::ast::Item;
use seq_syntax::limits::{ITEM_REPORT_BYTES, ITEM_RUN_BYTES, MAX_EACH, RUN_BYTES};
use seq_syntax::{Code, Diagnostic};

pub(super) fn fanout(graph: &CallGraph<'_>, components: &Components, out: &mut [Vec<Diagnostic>]) {
    // runs[node]: the most item runs entering the node may start, at every depth.
    let mut runs = vec![0u64; graph.graph.node_count()];
    for members in &components.members {
        let [node] = members.as_slice() else {
            continue;
        };
        let node = *node;
        if graph
            .out(node)
            .iter()
            .any(|&e| graph.edge(e).is_some_and(|(_, to, _)| to == node))
        {
            continue;
        }
        let total = match graph.node(node) {
            Some(Node::Group { seq, group }) => group_runs(graph, node, seq, group, &runs, out),
            Some(Node::Sequence(_)) => graph
                .out(node)
                .iter()
                .filter_map(|&e| graph.edge(e))
                .map(|(_, to, _)| runs.get(to.index()).copied().unwrap_or(0))
                .fold(0u64, u64::saturating_add),
            None => 0,
        };
        if let Some(slot) = runs.get_mut(node.index()) {
            *slot = total;
        }
    }
}

/// The worst case of group `group` of sequence `seq`, with a warning at each `each` call item
/// whose share alone passes the budget.
fn group_runs(
    graph: &CallGraph<'_>,
    node: NodeIndex,
    seq: usize,
    group: usize,
    runs: &[u64],
    out: &mut [Vec<Diagnostic>],
) -> u64 {
    let Some(g) = graph.sequences.get(seq).and_then(|s| s.groups.get(group)) else {
        return 0;
    };
    let mut total = 0u64;
    for (index, item) in g.items.iter().enumerate() {
        let callee = graph.out(node).iter().find_map(|&e| {
            let (_, to, edge) = graph.edge(e)?;
            (edge.site?.item == index).then_some(to)
        });
        let called = callee.map_or(0, |to| runs.get(to.index()).copied().unwrap_or(0));
        let (elements, known) = elements(item);
        let share = elements.saturating_mul(called.saturating_add(1));
        total = total.saturating_add(share);
        if let (Some(to), Some(each)) = (callee, &item.each) {
            let each_run = if g.is_parallel() {
                ITEM_RUN_BYTES + ITEM_REPORT_BYTES
            } else {
                ITEM_REPORT_BYTES
            };
            let bytes = share.saturating_mul(each_run as u64);
            if bytes > RUN_BYTES as u64
                && let Some(list) = out.get_mut(seq)
            {
                let f = FanOut {
                    span: each.span,
                    elements,
                    known,
                    called,
                    share,
                };
                list.push(past_budget(graph, to, seq, f));
            }
        }
    }
    total
}

/// How many elements an item runs at most, and whether that is known (a literal array).
fn elements(item: &Item) -> (u64, bool) {
    let Some(each) = &item.each else {
        return (1, true);
    };
    match each.kind.as_array() {
        Some(elements) => (elements.len() as u64, true),
        // A reference (or a value the checker reports): as long as an `each` may be.
        None => (u64::from(MAX_EACH), false),
    }
}

/// What one fan-out past the budget is: where, how many runs, and through which callee.
struct FanOut {
    span: seq_syntax::Span,
    elements: u64,
    known: bool,
    called: u64,
    share: u64,
}

fn past_budget(graph: &CallGraph<'_>, callee: NodeIndex, seq: usize, f: FanOut) -> Diagnostic {
    let elements = if f.known {
        format!("its {} elements", f.elements)
    } else {
        format!("up to {MAX_EACH} elements (the array's length is known only when it runs)")
    };
    Diagnostic::new(
        Code::FanOutPastBudget,
        f.span,
        format!(
            "at worst this `each` starts {} item runs: {elements}, each calling `{}`, which \
             runs up to {} more; past {} MiB of item runs the run ends with reason `budget`",
            f.share,
            graph.label(callee, seq),
            f.called,
            RUN_BYTES / (1024 * 1024),
        ),
    )
    .with_help(
        "fan out once, not twice: let the called group go through its list in one tool call \
         (such as `jq`) instead of an `each`, or give this `each` fewer elements per run",
    )
}
