//! The depth bound: at most [`MAX_CALL_DEPTH`] cross-sequence calls nested on the stack.
//!
//! Depth is measured on the group-level graph, where a `#name` call weighs 1 and a call between
//! groups of one sequence weighs 0 (they do not count), and a `#name` call reaches every
//! group of the callee (it runs them all). The longest weighted path ending at each node is
//! computed once, by dynamic programming over the components in topological order: linear, no
//! path enumeration. Components that hold a cross-sequence cycle are already errors (E0602) and
//! their depth is unbounded; paths through them are not measured again.
//!
//! A chain too deep is reported where it first goes past the bound: at each `#name` call that is
//! the fifth on its longest chain, and, so that every file involved shows it, at the other calls
//! of that chain (each call site once). The chain in the message therefore always has exactly
//! five calls.

use super::model::{CallGraph, EdgeKind, Node, Site};
use super::scc::Components;
use petgraph::graph::EdgeIndex;
use seq_syntax::names::CallTarget;
use seq_syntax::{Code, Diagnostic};
use std::collections::HashSet;

use seq_syntax::limits::MAX_CALL_DEPTH;

pub(super) fn depth(graph: &CallGraph<'_>, components: &Components, out: &mut [Vec<Diagnostic>]) {
    let count = components.members.len();
    let mut poisoned = vec![false; count];
    for edge in graph.graph.edge_indices() {
        if let Some((from, to, e)) = graph.edge(edge)
            && e.kind == EdgeKind::SequenceCall
            && components.of(from) == components.of(to)
            && let Some(flag) = poisoned.get_mut(components.of(from))
        {
            *flag = true;
        }
    }

    // dist[c]: the most `#` calls on a path ending in component c; calls[c]: the last of them
    // (at most MAX_CALL_DEPTH, which is all of them where dist is MAX_CALL_DEPTH: the only place they are
    // read). Keeping them, rather than walking predecessors back, keeps reporting linear.
    let mut dist = vec![0u32; count];
    let mut calls: Vec<Vec<EdgeIndex>> = vec![Vec::new(); count];
    for (component, members) in components.members.iter().enumerate().rev() {
        if poisoned.get(component).copied().unwrap_or(true) {
            continue;
        }
        let here = dist.get(component).copied().unwrap_or(0);
        for &node in members {
            for &edge in graph.out(node) {
                let Some((_, to, e)) = graph.edge(edge) else {
                    continue;
                };
                let target = components.of(to);
                let candidate = here.saturating_add(e.weight());
                if target == component || dist.get(target).is_none_or(|&d| candidate <= d) {
                    continue;
                }
                let mut chain = calls.get(component).cloned().unwrap_or_default();
                if e.kind == EdgeKind::SequenceCall {
                    chain.push(edge);
                }
                if chain.len() > MAX_CALL_DEPTH as usize {
                    chain.remove(0);
                }
                if let (Some(d), Some(c)) = (dist.get_mut(target), calls.get_mut(target)) {
                    *d = candidate;
                    *c = chain;
                }
            }
        }
    }

    let mut reported = HashSet::new();
    for edge in graph.graph.edge_indices() {
        let Some((from, to, e)) = graph.edge(edge) else {
            continue;
        };
        let component = components.of(from);
        if e.kind != EdgeKind::SequenceCall
            || component == components.of(to)
            || poisoned.get(component).copied().unwrap_or(true)
            || dist.get(component).copied() != Some(MAX_CALL_DEPTH)
        {
            continue;
        }
        let mut chain = calls.get(component).cloned().unwrap_or_default();
        chain.push(edge);
        report(graph, &chain, &mut reported, out);
    }
}

fn report(
    graph: &CallGraph<'_>,
    chain: &[EdgeIndex],
    reported: &mut HashSet<(usize, usize, usize)>,
    out: &mut [Vec<Diagnostic>],
) {
    let calls: Vec<(Site, usize)> = chain
        .iter()
        .filter_map(|&edge| {
            let (_, to, e) = graph.edge(edge)?;
            let Some(Node::Sequence(callee)) = graph.node(to) else {
                return None;
            };
            Some((e.site?, callee))
        })
        .collect();
    let Some(&(first, _)) = calls.first() else {
        return;
    };
    let mut steps = vec![CallTarget::Sequence(graph.sequence_name(first.seq)).to_string()];
    steps.extend(
        calls
            .iter()
            .map(|&(_, callee)| CallTarget::Sequence(graph.sequence_name(callee)).to_string()),
    );
    let path = steps.join(" → ");
    let nested = calls.len();
    for (position, &(site, callee)) in calls.iter().enumerate() {
        if !reported.insert((site.seq, site.group, site.item)) {
            continue;
        }
        let callee = graph.sequence_name(callee);
        let message = format!(
            "this call to `#{callee}` is call {} of {nested} nested across sequences, more than \
             the bound of {MAX_CALL_DEPTH}: {path}",
            position + 1
        );
        let diagnostic = Diagnostic::new(Code::CallChainTooDeep, site.span, message).with_help(format!(
            "shorten the chain to at most {MAX_CALL_DEPTH} nested `#name` calls, for instance by moving \
             a callee's groups into its caller (calls between groups of one sequence do not count)"
        ));
        if let Some(list) = out.get_mut(site.seq) {
            list.push(diagnostic);
        }
    }
}
