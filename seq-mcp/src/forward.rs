//! What a call's progress ([`crate::progress`]) and its log ([`crate::log`]) share: the run's
//! observer puts events on a channel, and a task of their own drains it to the client, so that
//! the run never waits on the client. It stops when dropped (the call answered or was dropped);
//! [`Forwarder::finish`] first lets the task tell what is left.

use std::future::Future;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

/// The channel of one call's events and the task that drains it; both absent when the client
/// did not ask for what it forwards.
#[derive(Debug)]
pub struct Forwarder<E> {
    events: Option<UnboundedSender<E>>,
    task: Option<JoinHandle<()>>,
}

impl<E: Send + 'static> Forwarder<E> {
    /// Forwards nothing: the client did not ask.
    pub fn off() -> Forwarder<E> {
        Forwarder {
            events: None,
            task: None,
        }
    }

    /// Spawns `drain` on the receiving end; it should end when the channel closes or the client
    /// went away.
    pub fn start<F>(drain: impl FnOnce(UnboundedReceiver<E>) -> F) -> Forwarder<E>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (events, received) = unbounded_channel();
        Forwarder {
            events: Some(events),
            task: Some(tokio::spawn(drain(received))),
        }
    }

    /// Whether the client asked, so that the run has something to tell.
    pub fn is_on(&self) -> bool {
        self.events.is_some()
    }

    pub fn send(&self, event: E) {
        if let Some(events) = &self.events {
            // The task ends only when the client went away: nobody to tell then.
            let _ = events.send(event);
        }
    }

    /// Tells what is not told yet, then stops: the call is answered next.
    pub async fn finish(mut self) {
        self.events = None;
        if let Some(task) = self.task.take() {
            // The task ends once it has told the last event (or the client went away).
            let _ = task.await;
        }
    }
}

impl<E> Drop for Forwarder<E> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
