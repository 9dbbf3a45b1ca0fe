//! Progress of a long `tools/call`: when the request carries `_meta.progressToken`, a
//! `notifications/progress` as each item and group of the run finishes (the groups of the run
//! or call itself: `seq_run`, `seq_call` and `seq_when_call` in process; a durable `seq_run`'s
//! as its worker records them, told by [`Observer::item_finished`] and
//! [`Observer::group_finished_elsewhere`]), and a heartbeat every [`HEARTBEAT`] while nothing
//! finishes, so that a client whose request timeout resets on progress (the TypeScript SDK's
//! `resetTimeoutOnProgress`) keeps waiting for a long run instead of giving up on it.
//!
//! `progress` counts the items finished; it must grow with each notification, so a group's end
//! or a heartbeat after the `n`th item says `n + k/(k+1)` for its `k`th since (always below the
//! next item's `n + 1`). The message says what finished, or what is still running.

use crate::forward::Forwarder;
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use seq_exec::engine::{GroupReport, GroupStatus, ItemReport, Observer};
use std::time::Duration;

/// How often a running call says it is still running when nothing finished: below the
/// shortest request timeouts clients use in practice, and well below the 10 s a client may
/// wait between notifications.
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// Something that finished.
#[derive(Debug)]
enum Finished {
    Item(String),
    Group(String),
}

/// The progress of one call; it stops when dropped (the call answered or was dropped).
#[derive(Debug)]
pub struct Progress(Forwarder<Finished>);

impl Progress {
    /// Starts reporting for `tool` if the request asked for progress.
    pub fn start(context: &RequestContext<RoleServer>, tool: &str) -> Progress {
        let Some(token) = context.meta.get_progress_token() else {
            return Progress(Forwarder::off());
        };
        let peer = context.peer.clone();
        let tool = tool.to_owned();
        let started = tokio::time::Instant::now();
        Progress(Forwarder::start(|mut received| async move {
            let mut ticks = tokio::time::interval_at(started + HEARTBEAT, HEARTBEAT);
            let (mut items, mut since) = (0u32, 0u32);
            loop {
                let message = tokio::select! {
                    event = received.recv() => match event {
                        Some(Finished::Item(message)) => {
                            items += 1;
                            since = 0;
                            message
                        }
                        Some(Finished::Group(message)) => {
                            since += 1;
                            message
                        }
                        None => break,
                    },
                    _ = ticks.tick() => {
                        since += 1;
                        let elapsed = started.elapsed().as_secs();
                        format!("`{tool}` is still running ({elapsed} s)")
                    }
                };
                ticks.reset();
                let progress = f64::from(items) + f64::from(since) / f64::from(since + 1);
                let note =
                    ProgressNotificationParam::new(token.clone(), progress).with_message(message);
                // A client that went away needs no more.
                if peer.notify_progress(note).await.is_err() {
                    break;
                }
            }
        }))
    }

    /// The run's observer, when the request asked for progress.
    pub fn observer(&self) -> Option<&dyn Observer> {
        self.0.is_on().then_some(self as &dyn Observer)
    }

    /// Sends what finished and is not told yet, then stops: the call is answered next.
    pub async fn finish(self) {
        self.0.finish().await;
    }

    fn send(&self, finished: Finished) {
        self.0.send(finished);
    }
}

impl Observer for Progress {
    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        let status = report.status.predicate();
        self.send(Finished::Item(format!(
            "item {} `{}` of group `{group}` {status}",
            index + 1,
            report.tool
        )));
    }

    fn group_finished(&self, report: &GroupReport) {
        self.send(Finished::Group(format!(
            "group `{}` {} in {} ms",
            report.name,
            report.status.predicate(),
            report.duration_ms
        )));
    }

    fn group_finished_elsewhere(&self, group: &str, status: GroupStatus) {
        self.send(Finished::Group(format!(
            "group `{group}` {}",
            status.predicate()
        )));
    }
}
