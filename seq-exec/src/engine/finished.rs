//! Runs that ended, for whoever records them (the traces of `seqc run`, `seqc mcp` and
//! `seqc worker`). The engine calls nothing here: the door that started a run hands its report
//! over once the run ends, so a run with no recorder costs nothing.

use super::report::RunReport;
use crate::host::Caller;
use std::time::SystemTime;

/// A run that ended: its report, who ran it and when it started.
#[derive(Clone, Copy, Debug)]
pub struct FinishedRun<'a> {
    /// The sequence's name.
    pub sequence: &'a str,
    pub caller: &'a Caller,
    /// When the run started on the wall clock: every `started_ms` of the report is an offset
    /// from here.
    pub started: SystemTime,
    pub report: &'a RunReport,
    /// A W3C `traceparent` the run was started under (an MCP request's `_meta.traceparent`).
    pub traceparent: Option<&'a str>,
}

/// Records runs that ended (exports their traces, say).
pub trait RunRecorder: Send + Sync + std::fmt::Debug {
    fn finished(&self, run: &FinishedRun<'_>);
}
