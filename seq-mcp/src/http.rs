//! `seqc mcp --http ADDR`: the seq tools served over MCP's streamable HTTP at `/mcp`, on
//! rmcp's server transport (sessions, SSE streams, resumption with `Last-Event-ID`, DELETE
//! ending a session), behind a gate of our own that
//!
//! - answers only `/mcp` (404 elsewhere);
//! - knows who is calling: the bearer token's caller ([`Tokens`]), or the one caller of an open
//!   loopback server; no or a wrong token is 401 with `WWW-Authenticate: Bearer`. The caller
//!   rides in the request's extensions to [`SeqServer`], which uses it as `--caller` is used;
//! - binds a session to the caller that opened it: another caller's requests on it are 404, as
//!   for a session that does not exist;
//! - bounds sessions ([`MAX_SESSIONS`] in all and [`MAX_SESSIONS_PER_CALLER`] for each caller
//!   with a token, 503 past either; a session being opened is counted from its request on, so
//!   that racing `initialize`s cannot overshoot), connections and calls in flight
//!   ([`crate::admission`]: a connection holds a slot only once a request on it named a caller),
//!   header reading time, and body reading time and size (408 and 413, a `Content-Length` past
//!   the bound refused before any of the body is read).
//!
//! - keeps every SSE stream for resumption ([`crate::resume`]): a connection that drops while
//!   a call runs leaves the call running for the resume window, so that the client can come
//!   back with `Last-Event-ID` and get its answer; past the window, the call is cancelled (a
//!   dropped connection stops what the run started). A stream is resumed only within its own
//!   session.
//!
//! rmcp validates `Host` and `Origin` (DNS-rebinding protection) against [`HttpOptions`]'s
//! lists and bounds the request body.

use crate::admission::{Admission, CallSlot, Connection, Limits};
use crate::bound::MAX_MESSAGE_BYTES;
use crate::framing;
use crate::oauth::{METADATA_PATH, OAuth, Refusal};
use crate::resume::{Lost, Reader, Streams};
use crate::server::{SeqServer, ServeError};
use crate::token::Tokens;
use bytes::Bytes;
use futures::Stream;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, BodyStream, Full, Limited, StreamBody, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use seq_exec::Caller;
use seq_exec::engine::CancellationToken;
use serde_json::Value;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;

/// The path MCP is served at.
pub const PATH: &str = "/mcp";
/// Sessions open at once; an `initialize` past it is 503.
pub const MAX_SESSIONS: usize = 256;
/// Sessions one caller with a token may have open at once, so that no caller can take all of
/// [`MAX_SESSIONS`]; an `initialize` past it is 503. An open server (one caller) has the
/// global bound alone.
pub const MAX_SESSIONS_PER_CALLER: usize = 32;
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
const SESSION_HEADER: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";

/// Cancelled when the request's session ends (DELETE, or closed idle): the runs it started stop.
/// The gate puts it in each request's extensions for [`SeqServer`].
#[derive(Clone, Debug)]
pub struct SessionEnded(pub CancellationToken);

/// Cancelled when the connection answering this request dropped and no client came back for
/// its stream within the resume window: the call stops. The gate puts it in each request's
/// extensions for [`SeqServer`].
#[derive(Clone, Debug)]
pub struct Abandoned(pub CancellationToken);

/// The slot of a `tools/call` among the calls in flight ([`crate::admission`]): it rides in the
/// request's extensions into the call's handler, so that it is free again once the run ends.
#[derive(Clone, Debug)]
pub struct InFlight(pub Arc<CallSlot>);

/// Who may call.
#[derive(Clone, Debug)]
pub enum Access {
    /// Everyone is this caller (a loopback address without tokens, as over stdio).
    Open(Caller),
    /// A bearer token names the caller.
    Tokens(Tokens),
}

/// How `--http` serves.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub access: Access,
    /// `Host` values (name or `name:port`) requests may carry.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values a request that carries one must have (with scheme; `:*` any port).
    pub allowed_origins: Vec<String>,
    /// How long a call whose connection dropped waits for its client to come back.
    pub resume_window: Duration,
    /// The bounds on connections, calls, bodies and kept answers.
    pub limits: Limits,
}

impl HttpOptions {
    /// The loopback names and their origins at `addr`'s port, plus `hosts` and `origins`.
    pub fn new(access: Access, addr: SocketAddr, hosts: &[String], origins: &[String]) -> Self {
        let port = addr.port();
        let mut allowed_hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        // The address bound is its own name (`127.0.0.2`, say); rmcp compares an IPv6 `Host`
        // without its brackets, so `[::1]` and `::1` are one.
        let own = addr.ip().to_string();
        if !addr.ip().is_unspecified() && !allowed_hosts.contains(&own) {
            allowed_hosts.push(own);
        }
        allowed_hosts.extend(hosts.iter().cloned());
        let mut allowed_origins: Vec<String> = allowed_hosts
            .iter()
            .map(|host| {
                if host.contains(':')
                    && !host.contains(']')
                    && host.parse::<std::net::Ipv6Addr>().is_ok()
                {
                    format!("http://[{host}]:{port}")
                } else {
                    format!("http://{host}:{port}")
                }
            })
            .collect();
        allowed_origins.extend(origins.iter().cloned());
        HttpOptions {
            access,
            allowed_hosts,
            allowed_origins,
            resume_window: crate::resume::RESUME_WINDOW,
            limits: Limits::default(),
        }
    }

    /// Serves within `limits` instead of the default bounds.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// A call whose connection dropped waits `window` for its client to come back.
    pub fn with_resume_window(mut self, window: Duration) -> Self {
        self.resume_window = window;
        self
    }
}

type Body = BoxBody<Bytes, Infallible>;

/// The gate in front of rmcp's service (module comment).
struct Gate {
    access: Access,
    service: StreamableHttpService<SeqServer, LocalSessionManager>,
    manager: Arc<LocalSessionManager>,
    streams: Streams,
    admission: Admission,
    /// Which caller opened each session, and the token its end cancels.
    owners: Mutex<HashMap<String, (String, CancellationToken)>>,
    /// The sessions each caller is opening now (its `initialize` not answered yet), counted
    /// against its bound with those it has.
    opening: Arc<Mutex<HashMap<String, usize>>>,
}

impl Gate {
    async fn handle(&self, request: Request<Incoming>, connection: &Connection) -> Response<Body> {
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

/// 413: the body is past the bound (`declared`: as its `Content-Length` says).
fn too_large(declared: Option<u64>) -> Response<Body> {
    let bound = MAX_MESSAGE_BYTES;
    let size = match declared {
        Some(bytes) => format!("is {bytes} bytes, more than"),
        None => "is longer than".to_owned(),
    };
    closing(plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request's body {size} the {bound} bytes ({} MiB) a request may have",
            bound / (1024 * 1024)
        ),
    ))
}

/// `response`, after which the connection closes.
fn closing(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The answer to a resumption whose events are no longer kept: the request's own error, as an
/// SSE stream of one event, so that the client's call ends with the reason; 410 when the
/// request is not known.
fn lost_answer(lost: &Lost) -> Response<Body> {
    let Some(request) = &lost.request else {
        return plain(StatusCode::GONE, lost.text());
    };
    let error = serde_json::json!({"jsonrpc": "2.0", "id": request, "error": {
        "code": -32603, "message": lost.text()}});
    let mut response = Response::new(Full::new(Bytes::from(format!("data: {error}\n\n"))).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// 503 with `Retry-After`: a bound on sessions, connections or calls is reached.
fn busy(text: String) -> Response<Body> {
    let mut response = plain(StatusCode::SERVICE_UNAVAILABLE, text);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// The body of a call's SSE answer, watched: its first event names the stream, whose reader it
/// is; dropped before its end (the connection went), the stream may be abandoned
/// ([`crate::resume`]).
struct Watched {
    body: BodyStream<Body>,
    streams: Streams,
    abandon: CancellationToken,
    session: Option<String>,
    /// Whose answer it is, and the id of the request it answers.
    caller: String,
    answers: Option<Value>,
    reader: Option<Reader>,
    ended: bool,
}

impl Stream for Watched {
    type Item = Result<hyper::body::Frame<Bytes>, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.body).poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                let data = frame
                    .data_ref()
                    .map(|data| data.as_ref())
                    .unwrap_or_default();
                let mut ids = event_ids(data).peekable();
                if self.reader.is_none()
                    && let Some(event) = ids.peek()
                {
                    let (abandon, session) = (self.abandon.clone(), self.session.clone());
                    let answers = self.answers.take();
                    self.reader =
                        self.streams
                            .watch(event, abandon, session, &self.caller, answers);
                }
                for event in ids {
                    self.streams.sent(event);
                }
            }
            Poll::Ready(None) => {
                self.ended = true;
                if let Some(reader) = &self.reader {
                    reader.delivered();
                }
            }
            Poll::Ready(Some(Err(never))) => match *never {},
            Poll::Pending => {}
        }
        polled
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        // Gone before its first event: no client can come back for it.
        if self.reader.is_none() && !self.ended {
            self.abandon.cancel();
        }
    }
}

/// The `id:`s of the events in `data` (SSE text), in order; only those lines are decoded.
fn event_ids(data: &[u8]) -> impl Iterator<Item = &str> {
    data.split(|&byte| byte == b'\n')
        .filter_map(|line| line.strip_prefix(b"id:"))
        .filter_map(|id| std::str::from_utf8(id).ok())
        .map(str::trim)
        .filter(|id| !id.is_empty())
}

/// Why a request has no caller: answered 401 (403 for a valid access token that names no
/// caller, or several).
#[derive(Clone, Debug)]
enum Unauthorized {
    NoToken,
    WrongToken,
    OAuth(Refusal),
}

impl Unauthorized {
    /// The answer, whose challenge names the resource metadata when OAuth is configured.
    fn answer(self, oauth: Option<&OAuth>) -> Response<Body> {
        let challenge = |error: Option<&str>| match oauth {
            Some(oauth) => oauth.challenge(error),
            None => match error {
                Some(error) => format!("Bearer realm=\"seqc\", error=\"{error}\""),
                None => "Bearer realm=\"seqc\"".to_owned(),
            },
        };
        let (status, error, text) = match self {
            Unauthorized::NoToken => (
                StatusCode::UNAUTHORIZED,
                None,
                "this server needs `Authorization: Bearer TOKEN`".to_owned(),
            ),
            Unauthorized::WrongToken => (
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                "the bearer token names no caller here".to_owned(),
            ),
            Unauthorized::OAuth(Refusal::Invalid(why)) => (
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                format!("the bearer token names no caller here: {why}"),
            ),
            Unauthorized::OAuth(Refusal::NoCallerScope) => (
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                "the access token has no scope that is a caller here".to_owned(),
            ),
            Unauthorized::OAuth(Refusal::SeveralCallers(callers)) => (
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                format!(
                    "the access token's scopes name several callers ({}): ask for one",
                    callers.join(", ")
                ),
            ),
        };
        let mut response = plain(status, text);
        if let Ok(value) = HeaderValue::from_str(&challenge(error)) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The protected resource metadata document.
fn metadata(oauth: &OAuth) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(oauth.metadata().to_string())).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON POST whose body is not JSON gets JSON-RPC's parse error (400), as over stdio
/// ([`framing::judge`]); rmcp would answer 415, which says the media type was wrong.
fn unparsable(parts: &http::request::Parts, body: &Bytes) -> Option<Response<Body>> {
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"));
    if parts.method != Method::POST || !json {
        return None;
    }
    let framing::Verdict::Answer(answer) = framing::judge(body) else {
        return None;
    };
    if answer["error"]["code"] != framing::PARSE_ERROR {
        return None;
    }
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())).boxed());
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Some(response)
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Serves `server` on `listener` until `stop` is cancelled; then every session ends and every
/// run stops.
pub async fn serve(
    server: SeqServer,
    listener: TcpListener,
    options: HttpOptions,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    let limits = options.limits.clone();
    let streams = Streams::new(
        options.resume_window,
        limits.kept_bytes,
        limits.kept_bytes_per_caller,
    );
    let admission = Admission::new(limits, matches!(options.access, Access::Tokens(_)));
    let manager =
        Arc::new(LocalSessionManager::default().with_event_store(Arc::new(streams.clone())));
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(crate::bound::MAX_MESSAGE_BYTES)
        .with_cancellation_token(stop.child_token());
    let runs = server.session_token();
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&manager), config);
    let gate = Arc::new(Gate {
        access: options.access,
        service,
        manager,
        streams,
        admission: admission.clone(),
        owners: Mutex::new(HashMap::new()),
        opening: Arc::new(Mutex::new(HashMap::new())),
    });
    loop {
        // Never waits for a slot: a connection that names no caller is the one that goes
        // (crate::admission).
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        // A failed accept (out of descriptors, a reset before accept) ends only that connection.
        let Ok((stream, _)) = accepted else { continue };
        let gate = Arc::clone(&gate);
        let stop = stop.clone();
        let slot = Arc::new(admission.admit());
        tokio::spawn(async move {
            let evicted = slot.closed().clone();
            let service = hyper::service::service_fn(move |request| {
                let (gate, slot) = (Arc::clone(&gate), Arc::clone(&slot));
                async move { Ok::<_, Infallible>(gate.handle(request, &slot).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                // The oldest connection that named no caller, closed for a newer one.
                () = evicted.cancelled() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    runs.cancel();
    Ok(())
}
