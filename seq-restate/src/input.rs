//! What a durable run is given: everything it needs, so that its replays never look anything up.

use seq_exec::SequenceSource;
use seq_syntax::ast::Sequence;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The input of a `SeqRun` workflow.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInput {
    /// The sequence to run, already checked (no error diagnostics).
    pub sequence: Sequence,
    /// The sequences its `#name` calls may reach, as they were when the run was submitted.
    #[serde(default)]
    pub sequences: Vec<Sequence>,
    /// The run's arguments.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// The calling identity, carried into every tool call at every depth.
    pub caller: String,
}

/// The input of a `SeqItem` attempt: one attempt at a host tool call of a parallel group.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AttemptInput {
    pub tool: String,
    /// Rendered.
    pub args: Map<String, Value>,
    /// The run's calling identity.
    pub caller: String,
    /// The attempt's idempotency key, `RUN/PATH/INDEX/ATTEMPT`.
    pub key: String,
}

/// `#name` calls of a durable run: the sequences of its input, never a store.
pub(crate) struct Snapshot {
    sequences: Vec<Arc<Sequence>>,
}

impl Snapshot {
    pub fn of(input: &RunInput) -> Snapshot {
        let own = std::iter::once(&input.sequence);
        let others = input
            .sequences
            .iter()
            .filter(|s| s.name.value != input.sequence.name.value);
        Snapshot {
            sequences: own.chain(others).cloned().map(Arc::new).collect(),
        }
    }
}

impl Snapshot {
    /// No sequences: an attempt on its own calls none.
    pub fn empty() -> Snapshot {
        Snapshot {
            sequences: Vec::new(),
        }
    }
}

impl SequenceSource for Snapshot {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        self.sequences
            .iter()
            .find(|s| s.name.value == name)
            .map(Arc::clone)
    }
}
