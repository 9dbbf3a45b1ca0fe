//! The gate in front of rmcp's service: the path, the caller, the body's bound, the calls in
//! flight and the sessions each caller may open (the module comment of [`super`]).

use super::reply::{
    Body, Unauthorized, busy, closing, lost_answer, metadata, plain, too_large, unparsable,
};
use super::watched::Watched;
use super::{
    Abandoned, Access, InFlight, LAST_EVENT_ID, MAX_SESSIONS, MAX_SESSIONS_PER_CALLER, PATH,
    SESSION_HEADER, SessionEnded,
};
use crate::admission::{Admission, Connection};
use crate::bound::MAX_MESSAGE_BYTES;
use crate::oauth::{METADATA_PATH, OAuth};
use crate::resume::Streams;
use crate::server::SeqServer;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, BodyStream, Full, Limited, StreamBody};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use seq_exec::Caller;
use seq_exec::engine::CancellationToken;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The gate in front of rmcp's service (module comment).
pub(super) struct Gate {
    pub(super) access: Access,
    pub(super) service: StreamableHttpService<SeqServer, LocalSessionManager>,
    pub(super) manager: Arc<LocalSessionManager>,
    pub(super) streams: Streams,
    pub(super) admission: Admission,
    /// Which caller opened each session, and the token its end cancels.
    pub(super) owners: Mutex<HashMap<String, (String, CancellationToken)>>,
    /// The sessions each caller is opening now (its `initialize` not answered yet), counted
    /// against its bound with those it has.
    pub(super) opening: Arc<Mutex<HashMap<String, usize>>>,
}

impl Gate {
    pub(super) async fn handle(
        &self,
        request: Request<Incoming>,
        connection: &Connection,
    ) -> Response<Body> {
        if let Some(oauth) = self.oauth()
            && request.uri().path().starts_with(METADATA_PATH)
            && request.method() == Method::GET
        {
            return metadata(oauth);
        }
        if request.uri().path() != PATH {
            return plain(StatusCode::NOT_FOUND, format!("MCP is served at {PATH}"));
        }
        let caller = match self.caller(&request).await {
            Ok(caller) => caller,
            Err(refusal) => return refusal.answer(self.oauth()),
        };
        // Only now does the connection hold a slot (crate::admission).
        if let Err(full) = connection.prove(&caller) {
            return closing(busy(full.0));
        }
        let (parts, body) = request.into_parts();
        let body = if parts.method == Method::POST {
            match self.read_body(&parts, body).await {
                Ok(body) => body,
                Err(refused) => return refused,
            }
        } else {
            Bytes::new()
        };
        if let Some(answer) = unparsable(&parts, &body) {
            return answer;
        }
        let mut request = Request::from_parts(parts, Full::new(body.clone()));
        // A call's slot among the calls in flight, and the id its answer will carry.
        let mut answers = None;
        if let Some(peeked) = peek(&body) {
            if peeked.method.as_deref() == Some("tools/call") {
                match self.admission.call(&caller) {
                    Ok(slot) => {
                        request.extensions_mut().insert(InFlight(Arc::new(slot)));
                    }
                    Err(full) => return busy(full.0),
                }
            }
            answers = peeked.id;
        }
        // Holds the caller's place among its sessions while its `initialize` is answered.
        let mut reserved: Option<Opening> = None;
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        match &session {
            Some(id) => {
                let known = self.owners().get(id).cloned();
                match known {
                    Some((owner, ended)) => {
                        if owner != caller.id {
                            return plain(StatusCode::NOT_FOUND, "no such session".to_owned());
                        }
                        request.extensions_mut().insert(SessionEnded(ended));
                    }
                    // rmcp accepts the end of a session it does not know (202); the
                    // specification says 404, and clients report anything else as a failure.
                    None if request.method() == Method::DELETE => {
                        return plain(StatusCode::NOT_FOUND, "no such session".to_owned());
                    }
                    None => {}
                }
                // A stream is resumed only in the session it belongs to.
                let resumed = request
                    .headers()
                    .get(LAST_EVENT_ID)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|event| self.streams.session_of(event));
                if resumed.is_some_and(|owner| owner != *id) {
                    return plain(StatusCode::NOT_FOUND, "no such stream".to_owned());
                }
                if let Some(lost) = request
                    .headers()
                    .get(LAST_EVENT_ID)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|event| self.streams.lost(event))
                {
                    return lost_answer(&lost);
                }
            }
            None if request.method() == Method::POST => {
                let live = self.manager.sessions.read().await;
                let mut owners = self.owners();
                forget_ended(&mut owners, &live);
                // The sessions the gate knows (still live) and those being opened (their
                // `initialize` not answered yet), each counted once and under one lock: racing
                // requests cannot all see room for one, nor a session count twice as it opens.
                let mut opening = lock(&self.opening);
                let open = owners.len() + opening.values().sum::<usize>();
                if open >= MAX_SESSIONS {
                    return busy(format!(
                        "{open} sessions are open, the most this server keeps ({MAX_SESSIONS}); \
                         end one (DELETE {PATH}) or retry later"
                    ));
                }
                let pending = opening.get(&caller.id).copied().unwrap_or(0);
                if matches!(self.access, Access::Tokens(_)) {
                    let mine = pending
                        + owners
                            .values()
                            .filter(|(owner, _)| *owner == caller.id)
                            .count();
                    if mine >= MAX_SESSIONS_PER_CALLER {
                        return busy(format!(
                            "caller `{}` has {mine} sessions open, the most one caller may keep \
                             ({MAX_SESSIONS_PER_CALLER}); end one (DELETE {PATH}) or retry later",
                            caller.id
                        ));
                    }
                }
                opening.insert(caller.id.clone(), pending + 1);
                drop(opening);
                drop(owners);
                drop(live);
                reserved = Some(Opening {
                    opening: Arc::clone(&self.opening),
                    caller: caller.id.clone(),
                });
            }
            None => {}
        }
        let deleting = request.method() == Method::DELETE;
        let posting = request.method() == Method::POST;
        let abandon = CancellationToken::new();
        request.extensions_mut().insert(caller.clone());
        request.extensions_mut().insert(Abandoned(abandon.clone()));
        let mut response = self.service.handle(request).await;
        // rmcp accepts a session's end with 202; clients (the Python SDK) take only 200 or 204
        // as a session ended, and report anything else as a failed termination.
        if deleting && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        let streamed = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
        if posting && streamed && session.is_some() {
            response = response.map(|body| {
                StreamBody::new(Watched {
                    body: BodyStream::new(body),
                    streams: self.streams.clone(),
                    abandon,
                    session: session.clone(),
                    caller: caller.id.clone(),
                    answers: answers.take(),
                    reader: None,
                    ended: false,
                })
                .boxed()
            });
        }
        match session {
            Some(id) if deleting && response.status().is_success() => {
                if let Some((_, ended)) = self.owners().remove(&id) {
                    ended.cancel();
                }
                self.streams.forget_session(&id);
            }
            Some(_) => {}
            None => {
                if let Some(id) = response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|value| value.to_str().ok())
                {
                    let live = self.manager.sessions.read().await;
                    let mut owners = self.owners();
                    forget_ended(&mut owners, &live);
                    owners.insert(id.to_owned(), (caller.id, CancellationToken::new()));
                    // Counted among the owners from now on, in the same breath.
                    drop(reserved.take());
                }
            }
        }
        // A session that did not open is not counted any more.
        drop(reserved);
        response
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, CancellationToken)>> {
        lock(&self.owners)
    }

    fn oauth(&self) -> Option<&OAuth> {
        match &self.access {
            Access::Open(_) => None,
            Access::Tokens(tokens) => tokens.oauth.as_deref(),
        }
    }

    /// The body of a POST, read within the body timeout and the size bound; else the answer
    /// that refuses it (and closes the connection, whose rest is not read).
    async fn read_body(
        &self,
        parts: &http::request::Parts,
        body: Incoming,
    ) -> Result<Bytes, Response<Body>> {
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok());
        if let Some(declared) = declared
            && declared > MAX_MESSAGE_BYTES as u64
        {
            return Err(too_large(Some(declared)));
        }
        let timeout = self.admission.limits().body_timeout;
        let read = Limited::new(body, MAX_MESSAGE_BYTES).collect();
        match tokio::time::timeout(timeout, read).await {
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
            Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
                Err(too_large(None))
            }
            // The client went away or broke the framing: nobody to read an answer well.
            Ok(Err(error)) => Err(closing(plain(
                StatusCode::BAD_REQUEST,
                format!("the request's body could not be read: {error}"),
            ))),
            Err(_) => Err(closing(plain(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request's body did not come within {} s, the most this server waits \
                     for one",
                    timeout.as_secs_f64()
                ),
            ))),
        }
    }

    /// The request's caller, or why it has none.
    async fn caller<B>(&self, request: &Request<B>) -> Result<Caller, Unauthorized> {
        let tokens = match &self.access {
            Access::Open(caller) => return Ok(caller.clone()),
            Access::Tokens(tokens) => tokens,
        };
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let Some(token) = presented else {
            return Err(Unauthorized::NoToken);
        };
        if let Some(caller) = tokens.caller(token) {
            return Ok(caller.clone());
        }
        match &tokens.oauth {
            Some(oauth) => oauth.caller(token).await.map_err(Unauthorized::OAuth),
            None => Err(Unauthorized::WrongToken),
        }
    }
}

/// A mutex's guard; a panic elsewhere while holding it leaves the map usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Forgets the sessions of `owners` that ended on their own (idle, closed), cancelling their
/// runs.
fn forget_ended<V>(
    owners: &mut HashMap<String, (String, CancellationToken)>,
    live: &HashMap<Arc<str>, V>,
) {
    owners.retain(|id, (_, ended)| {
        let open = live.contains_key(id.as_str());
        if !open {
            ended.cancel();
        }
        open
    });
}

/// A caller's session being opened, counted until dropped.
struct Opening {
    opening: Arc<Mutex<HashMap<String, usize>>>,
    caller: String,
}

impl Drop for Opening {
    fn drop(&mut self) {
        let mut opening = lock(&self.opening);
        if let Some(count) = opening.get_mut(&self.caller) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                opening.remove(&self.caller);
            }
        }
    }
}

/// What a POST's body says of itself, as far as the gate needs.
#[derive(serde::Deserialize)]
struct Peeked {
    method: Option<String>,
    id: Option<Value>,
}

/// The method and id of a JSON-RPC request (`None` for anything else: rmcp answers it).
fn peek(body: &[u8]) -> Option<Peeked> {
    serde_json::from_slice(body).ok()
}
