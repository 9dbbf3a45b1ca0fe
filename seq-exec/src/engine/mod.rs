//! The interpreter of checked sequences (D-7).

mod report;

pub use report::{GroupReport, GroupStatus, ItemReport, ItemStatus, RunReport};

use crate::error::ToolError;
use crate::host::{Caller, ToolHost};
use seq_syntax::ast::Sequence;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Where `#name` calls find sequences: looked up afresh at every call, since stored sequences
/// can change between calls (D-6: run-time bounds are enforced again).
pub trait SequenceSource: Send + Sync {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>>;
}

/// Bounds the engine enforces at run time.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Cross-sequence calls nested on the stack (D-6): 4.
    pub max_depth: u32,
    /// Per tool call (D-7): 60 s.
    pub tool_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: seq_check::graph::MAX_DEPTH,
            tool_timeout: Duration::from_secs(60),
        }
    }
}

/// What the engine tells an observer while it runs (for a live view); called in order per group.
pub trait Observer: Send + Sync {
    fn group_started(&self, _sequence: &str, _group: &str, _parallel: bool) {}
    fn item_started(&self, _group: &str, _index: usize, _tool: &str) {}
    fn item_finished(&self, _group: &str, _index: usize, _report: &ItemReport) {}
    fn group_finished(&self, _report: &GroupReport) {}
}

/// Runs sequences against a host.
pub struct Engine {
    host: Arc<dyn ToolHost>,
    sequences: Arc<dyn SequenceSource>,
    limits: Limits,
    observer: Option<Arc<dyn Observer>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Engine {
    pub fn new(host: Arc<dyn ToolHost>, sequences: Arc<dyn SequenceSource>) -> Engine {
        Engine {
            host,
            sequences,
            limits: Limits::default(),
            observer: None,
        }
    }

    pub fn with_limits(mut self, limits: Limits) -> Engine {
        self.limits = limits;
        self
    }

    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Engine {
        self.observer = Some(observer);
        self
    }

    /// Runs `sequence` (already checked: no error diagnostics) with the run's arguments, on
    /// behalf of `caller`: `seq_run`.
    pub async fn run(
        &self,
        sequence: &Sequence,
        args: Map<String, Value>,
        caller: &Caller,
    ) -> RunReport {
        let _ = (
            sequence,
            args,
            caller,
            &self.host,
            &self.sequences,
            &self.observer,
        );
        todo!("engine helper")
    }

    /// Calls one target from outside any sequence: `seq_call` / `seq_when_call` made directly
    /// by a model. `target` is a group of `sequence` or `#name`.
    pub async fn call(
        &self,
        sequence: Option<&Sequence>,
        target: &str,
        args: Map<String, Value>,
        caller: &Caller,
    ) -> Result<Value, ToolError> {
        let _ = (sequence, target, args, caller);
        todo!("engine helper")
    }
}
