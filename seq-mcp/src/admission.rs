//! Who gets a connection and a call on `--http`, so that no caller can starve the others
//! ([`Limits`] holds every bound; docs/service.md says what a caller sees past each).
//!
//! - Connections: a connection is *unproven* until a request on it names a caller (a valid
//!   token; on an open server, any request). At most [`MAX_UNPROVEN_CONNECTIONS`] are unproven
//!   at once, and a new connection past it closes the oldest unproven one: connections without
//!   a token cost only each other, never a caller that has one, and a flood of them cannot keep
//!   a newcomer out (the accept loop never waits for them). A proven connection counts against
//!   [`MAX_CONNECTIONS`] and, for a caller with a token, [`MAX_CONNECTIONS_PER_CALLER`]: a
//!   request past either is 503 and its connection closes.
//! - Calls: the `tools/call`s being answered count against [`MAX_CALLS`] and, for a caller with
//!   a token, [`MAX_CALLS_PER_CALLER`], from the request until its run ends; one past either is
//!   503. An open server has one caller, so the bounds in all alone.

use seq_exec::Caller;
use seq_exec::engine::CancellationToken;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Connections that have named a caller, served at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// Connections one caller with a token may hold at once, so that no caller can take all of
/// [`MAX_CONNECTIONS`] (with half-sent bodies, say).
pub const MAX_CONNECTIONS_PER_CALLER: usize = 64;
/// Connections that have named no caller yet, kept at once; the oldest goes for a new one.
pub const MAX_UNPROVEN_CONNECTIONS: usize = 512;
/// `tools/call`s answered at once.
pub const MAX_CALLS: usize = 512;
/// `tools/call`s one caller with a token may have answered at once.
pub const MAX_CALLS_PER_CALLER: usize = 32;
/// How long a client may take to send a request's body once its headers came.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The bounds of one server; [`Limits::default`] is the constants of this module and of
/// [`crate::resume`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub connections: usize,
    pub connections_per_caller: usize,
    pub unproven_connections: usize,
    pub calls: usize,
    pub calls_per_caller: usize,
    pub body_timeout: Duration,
    /// Bytes of SSE events kept for resumption, in all and per caller ([`crate::resume`]).
    pub kept_bytes: usize,
    pub kept_bytes_per_caller: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections: MAX_CONNECTIONS,
            connections_per_caller: MAX_CONNECTIONS_PER_CALLER,
            unproven_connections: MAX_UNPROVEN_CONNECTIONS,
            calls: MAX_CALLS,
            calls_per_caller: MAX_CALLS_PER_CALLER,
            body_timeout: BODY_TIMEOUT,
            kept_bytes: crate::resume::MAX_KEPT_BYTES,
            kept_bytes_per_caller: crate::resume::MAX_KEPT_BYTES_PER_CALLER,
        }
    }
}

/// The connection and call slots of one server (module comment).
#[derive(Clone, Debug)]
pub struct Admission(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    limits: Limits,
    /// Whether callers are told apart (tokens): the per-caller bounds apply.
    per_caller: bool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Unproven connections, oldest first, with the token that closes each.
    unproven: VecDeque<(u64, CancellationToken)>,
    next: u64,
    proven: usize,
    connections: HashMap<String, usize>,
    calls: usize,
    calls_of: HashMap<String, usize>,
}

/// A bound reached: the text of the 503.
#[derive(Clone, Debug)]
pub struct Full(pub String);

impl Admission {
    pub fn new(limits: Limits, per_caller: bool) -> Admission {
        Admission(Arc::new(Shared {
            limits,
            per_caller,
            state: Mutex::new(State::default()),
        }))
    }

    pub fn limits(&self) -> &Limits {
        &self.0.limits
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the state leaves it usable.
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A connection just accepted, unproven; the oldest unproven one is closed when there are
    /// too many.
    pub fn admit(&self) -> Connection {
        let close = CancellationToken::new();
        let mut state = self.state();
        let id = state.next;
        state.next += 1;
        state.unproven.push_back((id, close.clone()));
        while state.unproven.len() > self.0.limits.unproven_connections.max(1) {
            if let Some((_, oldest)) = state.unproven.pop_front() {
                oldest.cancel();
            }
        }
        Connection {
            admission: self.clone(),
            id,
            close,
            owner: Mutex::new(None),
        }
    }

    /// A slot for a `tools/call` of `caller`, held until dropped.
    pub fn call(&self, caller: &Caller) -> Result<CallSlot, Full> {
        let limits = &self.0.limits;
        let mut state = self.state();
        if state.calls >= limits.calls {
            return Err(Full(format!(
                "{} calls are being answered, the most this server answers at once ({}); \
                 retry later",
                state.calls, limits.calls
            )));
        }
        if self.0.per_caller {
            let mine = state.calls_of.get(&caller.id).copied().unwrap_or(0);
            if mine >= limits.calls_per_caller {
                return Err(Full(format!(
                    "caller `{}` has {mine} calls being answered, the most one caller may have \
                     ({}); wait for one to end or retry later",
                    caller.id, limits.calls_per_caller
                )));
            }
            *state.calls_of.entry(caller.id.clone()).or_insert(0) += 1;
        }
        state.calls += 1;
        Ok(CallSlot {
            admission: self.clone(),
            caller: caller.id.clone(),
        })
    }
}

/// One accepted connection's slot: unproven until [`Connection::prove`]; released when dropped.
#[derive(Debug)]
pub struct Connection {
    admission: Admission,
    id: u64,
    close: CancellationToken,
    /// The caller it counts against, once proven.
    owner: Mutex<Option<String>>,
}

impl Connection {
    /// Cancelled when the connection is to close now (the oldest unproven one, evicted).
    pub fn closed(&self) -> &CancellationToken {
        &self.close
    }

    /// A request on this connection named `caller`: the connection counts against the caller
    /// from now on (the first caller it named), or is refused when a bound is reached.
    pub fn prove(&self, caller: &Caller) -> Result<(), Full> {
        let mut owner = self.owner.lock().unwrap_or_else(PoisonError::into_inner);
        if owner.is_some() {
            return Ok(());
        }
        let shared = &self.admission.0;
        let limits = &shared.limits;
        let mut state = self.admission.state();
        if state.proven >= limits.connections {
            return Err(Full(format!(
                "{} connections are open, the most this server serves ({}); retry later",
                state.proven, limits.connections
            )));
        }
        if shared.per_caller {
            let mine = state.connections.get(&caller.id).copied().unwrap_or(0);
            if mine >= limits.connections_per_caller {
                return Err(Full(format!(
                    "caller `{}` has {mine} connections open, the most one caller may hold \
                     ({}); reuse or close one, or retry later",
                    caller.id, limits.connections_per_caller
                )));
            }
            *state.connections.entry(caller.id.clone()).or_insert(0) += 1;
        }
        state.proven += 1;
        state.unproven.retain(|(id, _)| *id != self.id);
        *owner = Some(caller.id.clone());
        Ok(())
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let owner = self
            .owner
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut state = self.admission.state();
        match owner {
            Some(caller) => {
                state.proven = state.proven.saturating_sub(1);
                release(&mut state.connections, &caller);
            }
            None => state.unproven.retain(|(id, _)| *id != self.id),
        }
    }
}

/// A `tools/call` being answered; the slot is free again when the last clone goes.
#[derive(Debug)]
pub struct CallSlot {
    admission: Admission,
    caller: String,
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        let mut state = self.admission.state();
        state.calls = state.calls.saturating_sub(1);
        if self.admission.0.per_caller {
            release(&mut state.calls_of, &self.caller);
        }
    }
}

/// One less for `caller`; a caller at none is forgotten.
fn release(counts: &mut HashMap<String, usize>, caller: &str) {
    if let Some(count) = counts.get_mut(caller) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            counts.remove(caller);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    fn small() -> Limits {
        Limits {
            connections: 3,
            connections_per_caller: 2,
            unproven_connections: 2,
            calls: 3,
            calls_per_caller: 2,
            ..Limits::default()
        }
    }

    #[test]
    fn a_new_connection_closes_the_oldest_unproven_one() {
        let admission = Admission::new(small(), true);
        let first = admission.admit();
        let second = admission.admit();
        assert!(!first.closed().is_cancelled());
        let third = admission.admit();
        assert!(first.closed().is_cancelled());
        assert!(!second.closed().is_cancelled() && !third.closed().is_cancelled());
        // A proven connection is out of the unproven queue: newcomers no longer close it.
        second.prove(&Caller::new("alice")).unwrap();
        let _fourth = admission.admit();
        let _fifth = admission.admit();
        assert!(!second.closed().is_cancelled());
        assert!(third.closed().is_cancelled());
    }

    #[test]
    fn connections_are_bounded_per_caller_and_in_all() {
        let admission = Admission::new(small(), true);
        let (alice, bob) = (Caller::new("alice"), Caller::new("bob"));
        let held: Vec<Connection> = (0..2).map(|_| admission.admit()).collect();
        for connection in &held {
            connection.prove(&alice).unwrap();
        }
        let third = admission.admit();
        let refused = third.prove(&alice).unwrap_err();
        assert!(
            refused.0.contains("caller `alice` has 2 connections"),
            "{}",
            refused.0
        );
        third.prove(&bob).unwrap();
        let fourth = admission.admit();
        let refused = fourth.prove(&bob).unwrap_err();
        assert!(
            refused.0.contains("3 connections are open"),
            "{}",
            refused.0
        );
        drop(held);
        fourth.prove(&bob).unwrap();
    }

    #[test]
    fn calls_are_bounded_per_caller_and_in_all_until_their_slots_go() {
        let admission = Admission::new(small(), true);
        let (alice, bob) = (Caller::new("alice"), Caller::new("bob"));
        let mine = [
            admission.call(&alice).unwrap(),
            admission.call(&alice).unwrap(),
        ];
        let refused = admission.call(&alice).unwrap_err();
        assert!(refused.0.contains("(2)"), "{}", refused.0);
        let theirs = admission.call(&bob).unwrap();
        assert!(admission.call(&bob).unwrap_err().0.contains("(3)"));
        drop(mine);
        admission.call(&alice).unwrap();
        drop(theirs);
        // An open server has one caller: the bound in all alone.
        let open = Admission::new(small(), false);
        let held: Vec<CallSlot> = (0..3).map(|_| open.call(&alice).unwrap()).collect();
        assert_eq!(held.len(), 3);
        assert!(open.call(&alice).is_err());
    }
}
