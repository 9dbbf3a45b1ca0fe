//! Traces of `seqc run`, `seqc mcp` and `seqc worker`, when the OpenTelemetry environment names
//! an OTLP endpoint: installed before the command runs, flushed before the process exits.

use crate::status::{Status, warn};
use seq_trace::Traces;
use std::sync::Arc;

/// Runs `command` with the traces the environment asks for (none: nothing is installed), then
/// exports what is still queued.
pub fn with_traces(command: impl FnOnce(Option<Arc<Traces>>) -> Status) -> Status {
    let traces = match Traces::from_env() {
        Ok(traces) => traces.map(Arc::new),
        Err(message) => {
            warn(format_args!("{message}; the run goes on without traces"));
            None
        }
    };
    let status = command(traces.clone());
    if let Some(traces) = traces
        && let Err(message) = traces.shutdown()
    {
        warn(message);
    }
    status
}
