//! What a durable run is given: everything it needs, so that its replays never look anything up.

use seq_exec::SequenceSource;
use seq_exec::engine::Stack;
use seq_exec::policy::Policy;
use seq_service::Submission;
use seq_syntax::ast::Sequence;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The input of a `SeqRun` workflow.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInput {
    /// The sequence to run, checked where it was submitted, and again by the worker.
    pub sequence: Sequence,
    /// Who stored it (absent: ownerless, or not a stored sequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The sequences its `#name` calls may reach, as they were when the run was submitted.
    #[serde(default)]
    pub sequences: Vec<Sequence>,
    /// The run's arguments.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// The owners of `sequences`, by name (the ownerless ones left out).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub owners: BTreeMap<String, String>,
    /// The calling identity, carried into every tool call at every depth.
    pub caller: String,
    /// The submitting server's policy for the caller and the owners (absent: the worker's own
    /// bound alone). The worker holds every dispatch to it *and* to its own policy, for the
    /// caller and for every owner on the stack.
    #[serde(default)]
    pub policy: Policy,
    /// The W3C `traceparent` the run was asked for under (an MCP request's
    /// `_meta.traceparent`): the worker exports the run's spans in that trace, under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// What the run was submitted with (caller, sequence, digest of the arguments), kept in the
    /// workflow's state for a later submission under the same run id to compare (absent: a
    /// called run, or one submitted before run ids were compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<Submission>,
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
    /// The item's stack: the owners on it bound the attempt as the caller does.
    #[serde(default)]
    pub stack: Stack,
    /// The run's travelling policy ([`RunInput::policy`]).
    #[serde(default)]
    pub policy: Policy,
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
    owners: BTreeMap<String, String>,
}

impl Snapshot {
    pub fn of(input: &RunInput) -> Snapshot {
        let own = std::iter::once(&input.sequence);
        let others = input
            .sequences
            .iter()
            .filter(|s| s.name.value != input.sequence.name.value);
        let mut owners = input.owners.clone();
        if let Some(owner) = &input.owner {
            owners.insert(input.sequence.name.value.to_string(), owner.clone());
        }
        Snapshot {
            sequences: own.chain(others).cloned().map(Arc::new).collect(),
            owners,
        }
    }
}

impl Snapshot {
    /// Its sequences, for a called run to take with it.
    pub fn all(&self) -> Vec<Sequence> {
        self.sequences.iter().map(|s| Sequence::clone(s)).collect()
    }

    /// Their owners, by name.
    pub fn owners(&self) -> &BTreeMap<String, String> {
        &self.owners
    }

    /// No sequences: an attempt on its own calls none.
    pub fn empty() -> Snapshot {
        Snapshot {
            sequences: Vec::new(),
            owners: BTreeMap::new(),
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

    fn owned(&self, name: &str) -> Option<(Arc<Sequence>, Option<String>)> {
        let sequence = self.sequence(name)?;
        Some((sequence, self.owners.get(name).cloned()))
    }
}
