//! What a durable run is given: everything it needs, so that its replays never look anything up.

use seq_exec::SequenceSource;
use seq_exec::engine::Stack;
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

/// What a `SeqRun` workflow is given: a run, and, for a `#name` call that another run made as
/// a run of its own, where it sits in that run. What `seqc run --restate` submits is a
/// [`RunInput`] alone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkflowInput {
    #[serde(flatten)]
    pub run: RunInput,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called: Option<CalledFrom>,
}

/// Where a called run sits in the run that called it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CalledFrom {
    /// The id of the run at the bottom: the callee's idempotency keys start with it, as its
    /// caller's do, so that they are the keys a run made in one invocation would give.
    pub root: String,
    /// The stack with the callee on top: its own calls are bounded by the whole of it.
    pub stack: Stack,
    /// The earliest deadline of the caller's groups (milliseconds since the Unix epoch): the
    /// callee's attempts stop there, and it answers that its caller's time ran out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    /// When the run at the bottom started (milliseconds since the Unix epoch, its journaled
    /// clock): the callee's `started_ms` are measured from it, on its caller's axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<u64>,
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
    /// Where the attempt stops (milliseconds since the Unix epoch): the deadline of the groups
    /// around its item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
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
    /// Its sequences, for a called run to take with it.
    pub fn all(&self) -> Vec<Sequence> {
        self.sequences.iter().map(|s| Sequence::clone(s)).collect()
    }

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
