//! Cycles: between groups of one sequence (E0601) and across sequences (E0602).
//!
//! Each strongly connected component with a cycle is reported once, with one cycle through it:
//! the shortest one through its first member (the first group in file order; the sequence with
//! the smallest name), found by a breadth-first search inside the component. A component holding
//! several cycles shows one of them and names the other members in the help; fixing it and
//! checking again shows the next one. Everything is linear in the size of the graph.

use super::model::{CallGraph, EdgeKind, Node, Site, arrow_path};
use super::scc::Components;
use petgraph::graph::{DiGraph, NodeIndex};
use seq_syntax::names::CallTarget;
use seq_syntax::{Code, Diagnostic};
use std::collections::{HashMap, HashSet, VecDeque};

/// A cycle found in one component: `sites[i]` calls from `nodes[i]` to `nodes[i + 1]` (the
/// last one back to `nodes[0]`).
#[derive(Debug)]
struct Cycle {
    nodes: Vec<usize>,
    sites: Vec<Site>,
    /// Members of the component that the reported cycle does not pass through.
    others: Vec<usize>,
}

/// One cycle per strongly connected component of `adjacency` that has one; `first` orders the
/// members to choose where each cycle starts.
fn find_cycles<K: Ord>(adjacency: &[Vec<(usize, Site)>], first: impl Fn(usize) -> K) -> Vec<Cycle> {
    let mut graph = DiGraph::<(), ()>::with_capacity(adjacency.len(), 0);
    for _ in adjacency {
        graph.add_node(());
    }
    for (from, list) in adjacency.iter().enumerate() {
        for &(to, _) in list {
            graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), ());
        }
    }
    let components = Components::new(&graph);
    let mut cycles = Vec::new();
    for (component, members) in components.members.iter().enumerate() {
        let Some(start) = members.iter().map(|n| n.index()).min_by_key(|&n| first(n)) else {
            continue;
        };
        let self_loop = adjacency
            .get(start)
            .is_some_and(|l| l.iter().any(|&(to, _)| to == start));
        if members.len() < 2 && !self_loop {
            continue;
        }
        let inside = |node: usize| components.of(NodeIndex::new(node)) == component;
        if let Some((nodes, sites)) = shortest_cycle(adjacency, start, inside) {
            let on_path: HashSet<usize> = nodes.iter().copied().collect();
            let others = members
                .iter()
                .map(|n| n.index())
                .filter(|n| !on_path.contains(n))
                .collect();
            cycles.push(Cycle {
                nodes,
                sites,
                others,
            });
        }
    }
    cycles
}

/// Breadth-first search from `start` back to itself, staying `inside` its component.
fn shortest_cycle(
    adjacency: &[Vec<(usize, Site)>],
    start: usize,
    inside: impl Fn(usize) -> bool,
) -> Option<(Vec<usize>, Vec<Site>)> {
    let mut parent: HashMap<usize, (usize, Site)> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &(next, site) in adjacency.get(node).map_or(&[][..], Vec::as_slice) {
            if next == start {
                let mut nodes = vec![node];
                let mut sites = vec![site];
                let mut at = node;
                while at != start {
                    let &(prev, site) = parent.get(&at)?;
                    nodes.push(prev);
                    sites.push(site);
                    at = prev;
                }
                nodes.reverse();
                sites.reverse();
                return Some((nodes, sites));
            }
            if inside(next) && !parent.contains_key(&next) {
                parent.insert(next, (node, site));
                queue.push_back(next);
            }
        }
    }
    None
}

/// Up to a few names, then how many more.
fn some_names(names: impl ExactSizeIterator<Item = String>) -> String {
    const SHOWN: usize = 5;
    let total = names.len();
    let mut text = names.take(SHOWN).collect::<Vec<_>>().join(", ");
    if total > SHOWN {
        text.push_str(&format!(" and {} more", total - SHOWN));
    }
    text
}

/// E0601: cycles of `seq_call`s between groups of one sequence.
pub(super) fn group_cycles(graph: &CallGraph<'_>, out: &mut [Vec<Diagnostic>]) {
    let mut adjacency = vec![Vec::new(); graph.graph.node_count()];
    for (from, list) in adjacency.iter_mut().enumerate() {
        for &edge in graph.out(NodeIndex::new(from)) {
            if let Some((_, to, e)) = graph.edge(edge)
                && e.kind == EdgeKind::GroupCall
                && let Some(site) = e.site
            {
                list.push((to.index(), site));
            }
        }
    }
    for cycle in find_cycles(&adjacency, |node| node) {
        let (Some(&closing), Some(&first)) = (cycle.sites.last(), cycle.nodes.first()) else {
            continue;
        };
        let seq = closing.seq;
        let name = |node: usize| graph.label(NodeIndex::new(node), seq);
        let mut steps: Vec<String> = cycle.nodes.iter().map(|&n| name(n)).collect();
        steps.push(name(first));
        let path = arrow_path(&steps);
        let mut diagnostic = Diagnostic::new(
            Code::GroupCallCycle,
            closing.span,
            format!("calls between groups form a cycle: {path}"),
        );
        // The closing call is the primary span; the others are labels.
        for (site, pair) in cycle.sites.iter().zip(cycle.nodes.windows(2)) {
            if let [caller, callee] = *pair {
                let text = format!("`{}` calls `{}`", name(caller), name(callee));
                diagnostic = diagnostic.with_label(site.span, text);
            }
        }
        let mut help = String::from(
            "remove one of the calls in the cycle; calls inside a sequence do not count towards the \
             depth bound, so a loop between groups would never end",
        );
        if !cycle.others.is_empty() {
            help.push_str(&format!(
                " (also on cycles with these groups: {})",
                some_names(cycle.others.iter().map(|&n| format!("`{}`", name(n))))
            ));
        }
        if let Some(list) = out.get_mut(seq) {
            list.push(diagnostic.with_help(help));
        }
    }
}

/// E0602: cycles of `#name` calls across sequences, reported at the call site in each file on
/// the cycle (so that each file shows it) with the same path.
pub(super) fn sequence_cycles(graph: &CallGraph<'_>, out: &mut [Vec<Diagnostic>]) {
    // One edge per pair of sequences: the first call in file order stands for the others.
    let mut adjacency = vec![Vec::new(); graph.sequences.len()];
    let mut seen = HashSet::new();
    for edge in graph.graph.edge_indices() {
        let Some((_, to, e)) = graph.edge(edge) else {
            continue;
        };
        let (EdgeKind::SequenceCall, Some(site), Some(Node::Sequence(callee))) =
            (e.kind, e.site, graph.node(to))
        else {
            continue;
        };
        if seen.insert((site.seq, callee))
            && let Some(list) = adjacency.get_mut(site.seq)
        {
            list.push((callee, site));
        }
    }
    let by_name = |seq: usize| (graph.sequence_name(seq), seq);
    for cycle in find_cycles(&adjacency, by_name) {
        let Some(&first) = cycle.nodes.first() else {
            continue;
        };
        let name = |seq: usize| CallTarget::Sequence(graph.sequence_name(seq)).to_string();
        let mut steps: Vec<String> = cycle.nodes.iter().map(|&s| name(s)).collect();
        steps.push(name(first));
        let path = arrow_path(&steps);
        let others = if cycle.others.is_empty() {
            String::new()
        } else {
            format!(
                " (also on cycles with these sequences: {})",
                some_names(cycle.others.iter().map(|&s| format!("`{}`", name(s))))
            )
        };
        let callees = cycle.nodes.iter().skip(1).chain(cycle.nodes.first());
        for (site, &callee) in cycle.sites.iter().zip(callees) {
            let diagnostic = Diagnostic::new(
                Code::SequenceCallCycle,
                site.span,
                format!("calls across sequences form a cycle: {path}"),
            )
            .with_help(format!(
                "remove one of the calls on the cycle, such as this call to `{}`: a sequence may \
                 not call itself, directly or through other sequences{others}",
                name(callee)
            ));
            if let Some(list) = out.get_mut(site.seq) {
                list.push(diagnostic);
            }
        }
    }
}
