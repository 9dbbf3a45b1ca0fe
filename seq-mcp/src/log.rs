//! MCP's `logging` capability: after `logging/setLevel`, a run's events (what `seqc run`'s live
//! view shows: a group or item started, finished, failed, was retried or caught) are sent to
//! the session as `notifications/message` at or above the level asked.
//!
//! Nothing is sent before the client asks: the specification leaves the default to the server,
//! and a run of a wide `each` makes thousands of events that a client which never asked would
//! only have to drop. The level is the session's (an HTTP session's own, the one of stdio).
//!
//! rmcp marks its logging types deprecated (the protocol plans to replace logging); they are
//! what clients speak today, hence the `allow` below.
#![allow(
    deprecated,
    reason = "MCP logging is what clients implement today; rmcp marks it as to be replaced"
)]

use crate::forward::Forwarder;
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::Peer;
use seq_exec::engine::{GroupReport, GroupStatus, ItemReport, ItemStatus, Observer};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, PoisonError};

/// The name the notifications carry as their `logger`.
const LOGGER: &str = "seqc";

/// The level a session asked for with `logging/setLevel`; `None` until it does.
///
/// A clone is a new session's (no level asked yet): the HTTP transport clones the server for
/// each session it opens, and one session's level is not another's.
#[derive(Debug, Default)]
pub struct LogLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl Clone for LogLevel {
    fn clone(&self) -> LogLevel {
        LogLevel::default()
    }
}

impl LogLevel {
    pub fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    fn get(&self) -> Option<LoggingLevel> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The severity of a level, to compare them (`debug` least).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The log of one call's run; it stops when dropped (the call answered or was dropped).
#[derive(Debug)]
pub struct RunLog {
    least: Option<LoggingLevel>,
    forward: Forwarder<LoggingMessageNotificationParam>,
}

impl RunLog {
    /// Starts sending to `peer` if the session asked for a level.
    pub fn start(level: &LogLevel, peer: &Peer<RoleServer>) -> RunLog {
        let Some(least) = level.get() else {
            return RunLog {
                least: None,
                forward: Forwarder::off(),
            };
        };
        let peer = peer.clone();
        let forward = Forwarder::start(|mut received| async move {
            while let Some(message) = received.recv().await {
                // A client that went away needs no more.
                if peer.notify_logging_message(message).await.is_err() {
                    break;
                }
            }
        });
        RunLog {
            least: Some(least),
            forward,
        }
    }

    /// The run's observer, when the session asked for a level.
    pub fn observer(&self) -> Option<&dyn Observer> {
        self.forward.is_on().then_some(self as &dyn Observer)
    }

    /// Sends what is not sent yet, then stops: the call is answered next.
    pub async fn finish(self) {
        self.forward.finish().await;
    }

    fn send(&self, level: LoggingLevel, data: Value) {
        let Some(least) = self.least else {
            return;
        };
        if rank(level) < rank(least) {
            return;
        }
        let message = LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER);
        self.forward.send(message);
    }
}

impl Observer for RunLog {
    fn group_started(&self, sequence: &str, group: &str, parallel: bool) {
        let how = if parallel { "side by side" } else { "in order" };
        self.send(
            LoggingLevel::Debug,
            json!({"event": "group_started", "sequence": sequence, "group": group,
                   "parallel": parallel,
                   "message": format!("group `{group}` started, its items {how}")}),
        );
    }

    fn item_started(&self, group: &str, index: usize, tool: &str) {
        self.send(
            LoggingLevel::Debug,
            json!({"event": "item_started", "group": group, "index": index, "tool": tool,
                   "message": format!("item {} `{tool}` of group `{group}` started", index + 1)}),
        );
    }

    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        let level = match report.status {
            ItemStatus::Ok | ItemStatus::Skipped => LoggingLevel::Info,
            ItemStatus::Cancelled => LoggingLevel::Notice,
            ItemStatus::Degraded | ItemStatus::Caught => LoggingLevel::Warning,
            ItemStatus::Failed => LoggingLevel::Error,
        };
        let status = report.status.predicate();
        // A success after retries is worth a warning: something failed on the way.
        let level = if report.retries > 0 && rank(level) < rank(LoggingLevel::Warning) {
            LoggingLevel::Warning
        } else {
            level
        };
        let retries = match report.retries {
            0 => String::new(),
            1 => " after 1 retry".to_owned(),
            n => format!(" after {n} retries"),
        };
        let error = report
            .error
            .as_ref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        let mut data = json!({
            "event": "item_finished", "group": group, "index": index, "tool": report.tool,
            "status": report.status, "retries": report.retries,
            "message": format!("item {} `{}` of group `{group}` {status}{retries}{error}",
                               index + 1, report.tool),
        });
        if let (Some(error), Some(object)) = (&report.error, data.as_object_mut()) {
            object.insert("error".to_owned(), json!(error));
        }
        self.send(level, data);
    }

    fn group_finished(&self, report: &GroupReport) {
        self.group_ended(&report.name, report.status, Some(report.duration_ms));
    }

    fn group_finished_elsewhere(&self, group: &str, status: GroupStatus) {
        self.group_ended(group, status, None);
    }
}

impl RunLog {
    fn group_ended(&self, group: &str, status: GroupStatus, duration_ms: Option<u64>) {
        let level = match status {
            GroupStatus::Ran | GroupStatus::Skipped => LoggingLevel::Info,
            GroupStatus::Cancelled => LoggingLevel::Notice,
            GroupStatus::Partial => LoggingLevel::Warning,
            GroupStatus::Failed => LoggingLevel::Error,
        };
        let word = status.predicate();
        let took = duration_ms
            .map(|ms| format!(" in {ms} ms"))
            .unwrap_or_default();
        self.send(
            level,
            json!({"event": "group_finished", "group": group, "status": status,
                   "message": format!("group `{group}` {word}{took}")}),
        );
    }
}

/// Two observers told the same, in order (a call's progress and its log).
#[allow(
    missing_debug_implementations,
    reason = "observers are behaviour, nothing to show"
)]
pub struct Both<'a>(pub Option<&'a dyn Observer>, pub Option<&'a dyn Observer>);

impl Both<'_> {
    fn each(&self, f: impl Fn(&dyn Observer)) {
        for observer in [self.0, self.1].into_iter().flatten() {
            f(observer);
        }
    }

    /// `None` when neither is there, else the pair.
    pub fn observer(&self) -> Option<&dyn Observer> {
        (self.0.is_some() || self.1.is_some()).then_some(self as &dyn Observer)
    }
}

impl Observer for Both<'_> {
    fn group_started(&self, sequence: &str, group: &str, parallel: bool) {
        self.each(|o| o.group_started(sequence, group, parallel));
    }

    fn item_started(&self, group: &str, index: usize, tool: &str) {
        self.each(|o| o.item_started(group, index, tool));
    }

    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        self.each(|o| o.item_finished(group, index, report));
    }

    fn group_finished(&self, report: &GroupReport) {
        self.each(|o| o.group_finished(report));
    }

    fn group_finished_elsewhere(&self, group: &str, status: GroupStatus) {
        self.each(|o| o.group_finished_elsewhere(group, status));
    }
}
