//! Progress of a long `tools/call`: when the request carries `_meta.progressToken`, a heartbeat
//! `notifications/progress` every [`HEARTBEAT`] while the call runs, so that a client whose
//! request timeout resets on progress (the TypeScript SDK's `resetTimeoutOnProgress`) keeps
//! waiting for a long run instead of giving up on it. `progress` is the seconds elapsed (it
//! must grow with each notification), the message says what is still running.

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use std::time::Duration;

/// How often a running call says it is still running: below the shortest request timeouts
/// clients use in practice, and well below the 10 s a client may wait between notifications.
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// The heartbeat of one call; it stops when dropped (the call answered or was dropped).
#[derive(Debug)]
pub struct Heartbeat(Option<tokio::task::JoinHandle<()>>);

impl Heartbeat {
    /// Starts beating for `tool` if the request asked for progress.
    pub fn start(context: &RequestContext<RoleServer>, tool: &str) -> Heartbeat {
        let Some(token) = context.meta.get_progress_token() else {
            return Heartbeat(None);
        };
        let peer = context.peer.clone();
        let tool = tool.to_owned();
        let started = tokio::time::Instant::now();
        Heartbeat(Some(tokio::spawn(async move {
            let mut ticks = tokio::time::interval_at(started + HEARTBEAT, HEARTBEAT);
            loop {
                ticks.tick().await;
                let elapsed = started.elapsed().as_secs_f64().floor();
                let message = format!("`{tool}` is still running ({elapsed} s)");
                let beat =
                    ProgressNotificationParam::new(token.clone(), elapsed).with_message(message);
                // A client that went away needs no more.
                if peer.notify_progress(beat).await.is_err() {
                    break;
                }
            }
        })))
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}
