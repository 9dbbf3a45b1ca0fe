//! The call graph itself: one node per group and one per sequence, one edge per call item whose
//! `target` is a literal that resolves, plus the edges by which running a sequence runs its groups.

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
pub(crate) use seq_catalog::calls::{call_target, call_targets};
use seq_syntax::Span;
use seq_syntax::ast::Sequence;
use seq_syntax::names::CallTarget;
use std::collections::HashMap;

/// Name lookup in a batch. When names repeat, the first sequence (or group) wins: the repeat is
/// another rule's error and must not make the graph ambiguous.
#[derive(Debug)]
pub(crate) struct Names<'a> {
    sequences: HashMap<&'a str, usize>,
    groups: Vec<HashMap<&'a str, usize>>,
}

impl<'a> Names<'a> {
    pub(crate) fn new(sequences: &[&'a Sequence]) -> Names<'a> {
        let mut by_name = HashMap::with_capacity(sequences.len());
        let mut groups = Vec::with_capacity(sequences.len());
        for (index, sequence) in sequences.iter().enumerate() {
            by_name.entry(sequence.name.value.as_str()).or_insert(index);
            let mut names = HashMap::with_capacity(sequence.groups.len());
            for (g, group) in sequence.groups.iter().enumerate() {
                names.entry(group.name.value.as_str()).or_insert(g);
            }
            groups.push(names);
        }
        Names {
            sequences: by_name,
            groups,
        }
    }

    pub(crate) fn sequence(&self, name: &str) -> Option<usize> {
        self.sequences.get(name).copied()
    }

    pub(crate) fn group(&self, sequence: usize, name: &str) -> Option<usize> {
        self.groups.get(sequence)?.get(name).copied()
    }

    /// Where a call made from `sequence` lands: `(sequence, Some(group))` for a group call,
    /// `(sequence, None)` for a `#name` call.
    pub(crate) fn resolve(
        &self,
        sequence: usize,
        target: CallTarget<'_>,
    ) -> Option<(usize, Option<usize>)> {
        match target {
            CallTarget::Group(name) => Some((sequence, Some(self.group(sequence, name)?))),
            CallTarget::Sequence(name) => Some((self.sequence(name)?, None)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    Group {
        seq: usize,
        group: usize,
    },
    /// Running the sequence as a whole: what `#name` calls (every top-level group, in order).
    Sequence(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EdgeKind {
    /// `seq_call` of a group of the same sequence: no new frame, does not count towards depth.
    GroupCall,
    /// `seq_call` of `#name`: one more frame on the stack.
    SequenceCall,
    /// From a sequence node to each of its groups.
    Runs,
}

/// The call item an edge comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    pub seq: usize,
    pub group: usize,
    pub item: usize,
    /// The `target` string.
    pub span: Span,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub kind: EdgeKind,
    /// `None` for [`EdgeKind::Runs`].
    pub site: Option<Site>,
}

impl Edge {
    /// Nested `#` calls on the stack: the measure of depth.
    pub(crate) fn weight(&self) -> u32 {
        match self.kind {
            EdgeKind::SequenceCall => 1,
            EdgeKind::GroupCall | EdgeKind::Runs => 0,
        }
    }
}

/// The call graph of a batch.
#[derive(Debug)]
pub(crate) struct CallGraph<'a> {
    pub sequences: &'a [&'a Sequence],
    pub graph: DiGraph<Node, Edge>,
    /// Outgoing edges of each node in file order (petgraph lists them newest first).
    out: Vec<Vec<EdgeIndex>>,
}

impl<'a> CallGraph<'a> {
    pub(crate) fn build(sequences: &'a [&'a Sequence]) -> CallGraph<'a> {
        let names = Names::new(sequences);
        let mut graph = DiGraph::new();
        let mut group_nodes = Vec::with_capacity(sequences.len());
        let mut sequence_nodes = Vec::with_capacity(sequences.len());
        for (seq, sequence) in sequences.iter().enumerate() {
            sequence_nodes.push(graph.add_node(Node::Sequence(seq)));
            group_nodes.push(
                (0..sequence.groups.len())
                    .map(|group| graph.add_node(Node::Group { seq, group }))
                    .collect::<Vec<_>>(),
            );
        }
        for (seq, sequence) in sequences.iter().enumerate() {
            let (Some(&from), Some(groups)) = (sequence_nodes.get(seq), group_nodes.get(seq))
            else {
                continue;
            };
            for &to in groups {
                graph.add_edge(
                    from,
                    to,
                    Edge {
                        kind: EdgeKind::Runs,
                        site: None,
                    },
                );
            }
            for (group, g) in sequence.groups.iter().enumerate() {
                let Some(&from) = groups.get(group) else {
                    continue;
                };
                let targets = g.items.iter().enumerate().flat_map(|(item, it)| {
                    call_targets(it).map(move |(target, span)| (item, target, span))
                });
                for (item, target, span) in targets {
                    let site = Some(Site {
                        seq,
                        group,
                        item,
                        span,
                    });
                    let (kind, to) = match names.resolve(seq, target) {
                        Some((_, Some(callee))) => (EdgeKind::GroupCall, groups.get(callee)),
                        Some((callee, None)) => {
                            (EdgeKind::SequenceCall, sequence_nodes.get(callee))
                        }
                        None => continue,
                    };
                    if let Some(&to) = to {
                        graph.add_edge(from, to, Edge { kind, site });
                    }
                }
            }
        }
        let mut out = vec![Vec::new(); graph.node_count()];
        for edge in graph.edge_indices() {
            if let Some((from, _)) = graph.edge_endpoints(edge)
                && let Some(list) = out.get_mut(from.index())
            {
                list.push(edge);
            }
        }
        CallGraph {
            sequences,
            graph,
            out,
        }
    }

    pub(crate) fn node(&self, index: NodeIndex) -> Option<Node> {
        self.graph.node_weight(index).copied()
    }

    pub(crate) fn edge(&self, index: EdgeIndex) -> Option<(NodeIndex, NodeIndex, Edge)> {
        let (from, to) = self.graph.edge_endpoints(index)?;
        Some((from, to, *self.graph.edge_weight(index)?))
    }

    /// Outgoing edges of `node`, in the order of the call items in the file.
    pub(crate) fn out(&self, node: NodeIndex) -> &[EdgeIndex] {
        self.out.get(node.index()).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn sequence_name(&self, seq: usize) -> &'a str {
        self.sequences
            .get(seq)
            .map_or("", |s| s.name.value.as_str())
    }

    pub(crate) fn group_name(&self, seq: usize, group: usize) -> &'a str {
        self.sequences
            .get(seq)
            .and_then(|s| s.groups.get(group))
            .map_or("", |g| g.name.value.as_str())
    }

    /// How a node reads in a path seen from sequence `from`: `g` for its own groups, `#B/g` for
    /// another's, `#B` for a sequence.
    pub(crate) fn label(&self, node: NodeIndex, from: usize) -> String {
        match self.node(node) {
            Some(Node::Group { seq, group }) if seq == from => {
                self.group_name(seq, group).to_owned()
            }
            Some(Node::Group { seq, group }) => {
                format!(
                    "#{}/{}",
                    self.sequence_name(seq),
                    self.group_name(seq, group)
                )
            }
            Some(Node::Sequence(seq)) => CallTarget::Sequence(self.sequence_name(seq)).to_string(),
            None => String::new(),
        }
    }
}

/// Joins the steps of a path with arrows; a long path keeps its ends and says how much it left
/// out, so that no message grows with the size of the batch.
pub(crate) fn arrow_path(steps: &[String]) -> String {
    const HEAD: usize = 5;
    const TAIL: usize = 3;
    if steps.len() <= HEAD + TAIL + 1 {
        return steps.join(" → ");
    }
    let head = steps.get(..HEAD).unwrap_or_default().join(" → ");
    let tail = steps
        .get(steps.len() - TAIL..)
        .unwrap_or_default()
        .join(" → ");
    let left_out = steps.len() - HEAD - TAIL;
    format!("{head} → … ({left_out} more) … → {tail}")
}
