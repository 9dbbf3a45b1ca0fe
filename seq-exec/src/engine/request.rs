//! What a run or a call is asked with besides its sequence and arguments: the one set of options
//! of [`Engine::run`](super::Engine::run), [`Engine::call`](super::Engine::call) and
//! [`Engine::when_call`](super::Engine::when_call), which the seq tools take as they are.

use super::driver::{Driver, InProcess};
use super::{CancellationToken, Observer};
use crate::host::Caller;

/// Who asks for a run and how it is to go. [`RunRequest::new`] is the plain case: in process,
/// never cancelled but by dropping the future, nobody watching, the sequence the caller's own.
#[derive(Clone, Copy)]
pub struct RunRequest<'a> {
    /// On whose behalf every dispatch of the run is made and authorized.
    pub caller: &'a Caller,
    /// Who stored the sequence, when a caller did: every dispatch of the run is then bounded by
    /// the owner's rights as well as the caller's (docs/reference.md, "Authority").
    pub owner: Option<&'a str>,
    /// Stops the run when cancelled: what runs is stopped, nothing new starts, and the report
    /// says `cancelled` (docs/reference.md, "Cancellation").
    pub cancel: Option<&'a CancellationToken>,
    /// How attempts at tool calls happen ([`InProcess`], or a durable driver that journals
    /// them). The decisions of the run are the same for every driver.
    pub driver: &'a dyn Driver,
    /// A watcher of this run (an MCP request's progress), told what the engine's own observer
    /// is told, after it.
    pub observer: Option<&'a dyn Observer>,
    /// The W3C trace context of the request, for a run handed elsewhere to join its trace.
    pub traceparent: Option<&'a str>,
}

impl<'a> RunRequest<'a> {
    pub fn new(caller: &'a Caller) -> RunRequest<'a> {
        RunRequest {
            caller,
            owner: None,
            cancel: None,
            driver: &InProcess,
            observer: None,
            traceparent: None,
        }
    }

    pub fn owner(self, owner: Option<&'a str>) -> RunRequest<'a> {
        RunRequest { owner, ..self }
    }

    pub fn cancel(self, cancel: &'a CancellationToken) -> RunRequest<'a> {
        RunRequest {
            cancel: Some(cancel),
            ..self
        }
    }

    pub fn driver(self, driver: &'a dyn Driver) -> RunRequest<'a> {
        RunRequest { driver, ..self }
    }

    pub fn observer(self, observer: Option<&'a dyn Observer>) -> RunRequest<'a> {
        RunRequest { observer, ..self }
    }

    pub fn traceparent(self, traceparent: Option<&'a str>) -> RunRequest<'a> {
        RunRequest {
            traceparent,
            ..self
        }
    }
}

impl std::fmt::Debug for RunRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("caller", self.caller)
            .field("owner", &self.owner)
            .field("cancellable", &self.cancel.is_some())
            .field("observed", &self.observer.is_some())
            .field("traceparent", &self.traceparent)
            .finish_non_exhaustive()
    }
}
