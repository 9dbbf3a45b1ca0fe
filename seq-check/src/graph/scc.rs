//! Strongly connected components, with petgraph's Kosaraju: linear like Tarjan, but iterative,
//! so a deep chain of calls in a user's batch cannot overflow the stack (petgraph's Tarjan
//! recurses once per node on a path).

use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};

#[derive(Debug)]
pub(crate) struct Components {
    /// The component of each node, by node index.
    pub of: Vec<usize>,
    /// The members of each component, sorted by node index; components come sinks first
    /// (reverse topological order), as petgraph documents.
    pub members: Vec<Vec<NodeIndex>>,
}

impl Components {
    pub(crate) fn new<N, E>(graph: &DiGraph<N, E>) -> Components {
        let mut members = kosaraju_scc(graph);
        let mut of = vec![0; graph.node_count()];
        for (component, nodes) in members.iter_mut().enumerate() {
            nodes.sort_unstable();
            for node in nodes.iter() {
                if let Some(slot) = of.get_mut(node.index()) {
                    *slot = component;
                }
            }
        }
        Components { of, members }
    }

    pub(crate) fn of(&self, node: NodeIndex) -> usize {
        self.of.get(node.index()).copied().unwrap_or(usize::MAX)
    }
}
