//! The nesting bound: at most [`MAX_NESTED_GROUPS`] groups running one inside another through
//! calls, group and `#name` calls alike. Each nesting is a frame of the engine's future, so the
//! engine refuses a deeper chain at run time (reason `depth`); the checker says so first.
//!
//! Nesting is the number of groups on a path of the call graph: a group node weighs 1, a
//! sequence node 0 (a `#name` call enters one of the callee's groups next). As for depth, the
//! longest path ending at each component is computed once in topological order, and components
//! that hold a cycle (E0601, E0602) are not measured again. Each component keeps the edge its
//! longest path came by, so the chain of a finding is walked back only when it is reported.

use super::model::{CallGraph, EdgeKind, Node, arrow_path};
use super::scc::Components;
use petgraph::graph::{EdgeIndex, NodeIndex};
use seq_syntax::{Code, Diagnostic};

use seq_syntax::limits::MAX_NESTED_GROUPS;

pub(super) fn nesting(graph: &CallGraph<'_>, components: &Components, out: &mut [Vec<Diagnostic>]) {
    let count = components.members.len();
    let mut cyclic = vec![false; count];
    for edge in graph.graph.edge_indices() {
        if let Some((from, to, _)) = graph.edge(edge)
            && components.of(from) == components.of(to)
            && let Some(flag) = cyclic.get_mut(components.of(from))
        {
            *flag = true;
        }
    }
    let weight = |node: NodeIndex| match graph.node(node) {
        Some(Node::Group { .. }) => 1,
        Some(Node::Sequence(_)) | None => 0,
    };

    // dist[c]: the most groups on a path ending in component c (c itself included); came[c]:
    // the edge that path arrived by.
    let mut dist = vec![0u32; count];
    let mut came: Vec<Option<EdgeIndex>> = vec![None; count];
    for (component, members) in components.members.iter().enumerate().rev() {
        if cyclic.get(component).copied().unwrap_or(true) {
            continue;
        }
        // Acyclic components are single nodes.
        let Some(&node) = members.first() else {
            continue;
        };
        let Some(d) = dist.get_mut(component) else {
            continue;
        };
        *d = d.saturating_add(weight(node));
        let here = *d;
        for &edge in graph.out(node) {
            let Some((_, to, _)) = graph.edge(edge) else {
                continue;
            };
            let target = components.of(to);
            if let (Some(d), Some(c)) = (dist.get_mut(target), came.get_mut(target))
                && here > *d
            {
                *d = here;
                *c = Some(edge);
            }
        }
    }

    for edge in graph.graph.edge_indices() {
        let Some((from, to, e)) = graph.edge(edge) else {
            continue;
        };
        let component = components.of(from);
        let enters_a_group = match graph.node(to) {
            Some(Node::Group { .. }) => true,
            Some(Node::Sequence(seq)) => graph
                .sequences
                .get(seq)
                .is_some_and(|s| !s.groups.is_empty()),
            None => false,
        };
        if e.kind == EdgeKind::Runs
            || !enters_a_group
            || cyclic.get(component).copied().unwrap_or(true)
            || dist.get(component).copied() != Some(MAX_NESTED_GROUPS)
        {
            continue;
        }
        let Some(site) = e.site else {
            continue;
        };
        let diagnostic = Diagnostic::new(
            Code::GroupNestingTooDeep,
            site.span,
            format!(
                "this call runs a group {} deep inside other groups, more than the bound of \
                 {MAX_NESTED_GROUPS}: {}",
                MAX_NESTED_GROUPS + 1,
                chain(graph, components, &came, from, to, site.seq)
            ),
        )
        .with_help(format!(
            "the engine would fail this call with reason `depth`; make the chain at most \
             {MAX_NESTED_GROUPS} groups long, for instance by calling groups one after another \
             from one group instead of each from the one before"
        ));
        if let Some(list) = out.get_mut(site.seq) {
            list.push(diagnostic);
        }
    }
}

/// The groups of the longest path to `from`, then `to`, as a path read from sequence `seq`.
fn chain(
    graph: &CallGraph<'_>,
    components: &Components,
    came: &[Option<EdgeIndex>],
    from: NodeIndex,
    to: NodeIndex,
    seq: usize,
) -> String {
    let mut nodes = vec![to, from];
    let mut at = from;
    // The walk follows strictly growing lengths backwards, so it ends; the bound is a backstop.
    for _ in 0..2 * MAX_NESTED_GROUPS + 2 {
        let Some(Some(edge)) = came.get(components.of(at)) else {
            break;
        };
        let Some((previous, _, _)) = graph.edge(*edge) else {
            break;
        };
        nodes.push(previous);
        at = previous;
    }
    let steps: Vec<String> = nodes
        .iter()
        .rev()
        .filter(|&&n| matches!(graph.node(n), Some(Node::Group { .. })) || n == to)
        .map(|&n| graph.label(n, seq))
        .collect();
    arrow_path(&steps)
}
