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

mod gate;
mod reply;
mod watched;

use crate::admission::{Admission, CallSlot, Limits};
use crate::resume::Streams;
use crate::server::{SeqServer, ServeError};
use crate::token::Tokens;
use gate::Gate;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use seq_exec::Caller;
use seq_exec::engine::CancellationToken;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
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
