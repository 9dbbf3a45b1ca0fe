//! The call graph of a batch: groups and sequences as nodes, `seq_call` and
//! `seq_when_call` items with a literal target as edges. Checked here:
//!
//! - cycles between groups of one sequence (E0601) and across sequences (E0602);
//! - the depth bound on nested cross-sequence calls (E0603, [`MAX_CALL_DEPTH`](seq_syntax::limits::MAX_CALL_DEPTH));
//! - the bound on groups nested through calls of any kind (E0606, [`MAX_NESTED_GROUPS`](seq_syntax::limits::MAX_NESTED_GROUPS));
//! - parallel safety through calls (E0604, E0605);
//! - the worst case of a fan-out through calls against the run's byte budget (W0555).
//!
//! Targets that are not literal or do not resolve are left out of the graph: they are other
//! rules' findings. Every pass is linear in the size of the batch.

mod cycles;
mod depth;
mod fanout;
pub(crate) mod model;
mod nesting;
mod render;
mod safety;
mod scc;

pub use render::{to_dot, to_json};

use model::CallGraph;
use scc::Components;
use seq_catalog::Catalog;
use seq_syntax::Diagnostic;
use seq_syntax::ast::Sequence;

/// Checks the call graph of `sequences`, checked together as one batch. Returns one list of
/// diagnostics per sequence, in the order given (unsorted).
pub fn check_graph(sequences: &[&Sequence], catalog: &Catalog) -> Vec<Vec<Diagnostic>> {
    let mut out = vec![Vec::new(); sequences.len()];
    let graph = CallGraph::build(sequences);
    cycles::group_cycles(&graph, &mut out);
    cycles::sequence_cycles(&graph, &mut out);
    let components = Components::new(&graph.graph);
    depth::depth(&graph, &components, &mut out);
    nesting::nesting(&graph, &components, &mut out);
    safety::parallel_safety(&graph, &components, catalog, &mut out);
    fanout::fanout(&graph, &components, &mut out);
    out
}
