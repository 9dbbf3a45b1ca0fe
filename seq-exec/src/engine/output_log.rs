//! What a run's `output_send__<channel>` items sent, kept for its report (docs/reference.md,
//! "A run"), so that a caller who sees only the report (an agent through `seq_run`) sees what
//! the sequence printed. The host still delivers every line as before (`seqc run` prints them).
//! Bounded: past [`MAX_OUTPUT_LOG_BYTES`] lines are counted, not kept.

use seq_catalog::OUTPUT_SEND_PREFIX as PREFIX;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// The most bytes of text a run's report keeps of its output, over all channels.
pub const MAX_OUTPUT_LOG_BYTES: usize = 1024 * 1024;

#[derive(Debug, Default)]
pub(crate) struct OutputLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    channels: BTreeMap<String, Vec<String>>,
    bytes: usize,
    dropped: usize,
}

impl OutputLog {
    /// Records what a successful call of `tool` sent, if it is an output channel.
    pub(crate) fn record(&self, tool: &str, text: Option<&str>) {
        let (Some(channel), Some(text)) = (tool.strip_prefix(PREFIX), text) else {
            return;
        };
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.bytes.saturating_add(text.len()) > MAX_OUTPUT_LOG_BYTES {
            inner.dropped += 1;
            return;
        }
        inner.bytes += text.len();
        inner
            .channels
            .entry(channel.to_owned())
            .or_default()
            .push(text.to_owned());
    }

    /// Records what another run sent (a called sequence run elsewhere): its report's `output`.
    pub(crate) fn absorb(&self, output: &Map<String, Value>) {
        for (channel, lines) in output {
            let Value::Array(lines) = lines else {
                // `dropped`: lines the other run did not keep.
                let dropped = lines.as_u64().and_then(|n| usize::try_from(n).ok());
                let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
                inner.dropped += dropped.unwrap_or(0);
                continue;
            };
            let tool = format!("{PREFIX}{channel}");
            for line in lines {
                self.record(&tool, line.as_str());
            }
        }
    }

    /// The report's `output`: each channel's lines in the order sent, and `dropped` when lines
    /// past the bound were not kept. Empty when nothing was sent.
    pub(crate) fn take(&self) -> Map<String, Value> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out: Map<String, Value> = std::mem::take(&mut inner.channels)
            .into_iter()
            .map(|(channel, lines)| {
                let lines = lines.into_iter().map(Value::String).collect();
                (channel, Value::Array(lines))
            })
            .collect();
        if inner.dropped > 0 {
            out.insert("dropped".to_owned(), Value::from(inner.dropped));
        }
        out
    }
}
