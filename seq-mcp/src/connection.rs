//! One MCP server: started (a child process) or reached (a URL), initialized, its tools listed,
//! called, and watched for `tools/list_changed` and for going away.
//!
//! A child's stderr is drained into a short tail (servers log there; a full pipe would block
//! them), shown only when the server fails to start or stops.

use crate::authorize::{Authorizer, OAuthHttp, TokenFile};
use crate::child::BoundedChild;
use crate::convert;
use crate::notice::{ConnectError, Notice};
use crate::spec::{ServerSpec, Transport};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use seq_catalog::ToolDef;
use seq_exec::ToolError;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc::UnboundedSender;

/// Lines of a server's stderr kept for reports.
const TAIL_LINES: usize = 20;

/// The `_meta` key of a call's idempotency key (docs/reference.md, "Durable runs").
const IDEMPOTENCY_KEY_META: &str = "seqc/idempotencyKey";
/// Longest stderr line kept, in characters.
const TAIL_LINE_CHARS: usize = 400;

/// A tool as the server knows it.
#[derive(Clone, Debug)]
pub(crate) struct Remote {
    /// Its definition under the name seqc offers it by.
    pub def: Arc<ToolDef>,
    /// Its name on the server.
    pub name: String,
}

/// The tools of one server, by the names seqc offers them under (shared: a call takes one
/// without copying its definition).
pub(crate) type Tools = BTreeMap<String, Arc<Remote>>;

pub(crate) struct Connection {
    pub spec: ServerSpec,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    tools: RwLock<Arc<Tools>>,
    stderr: Tail,
    pid: Option<u32>,
    /// Set once its stop has been reported.
    stop_reported: AtomicBool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("spec", &self.spec)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Receives the server's notifications: a changed tool list asks the host for a refresh.
pub(crate) struct Handler {
    index: usize,
    refresh: UnboundedSender<usize>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        // A closed channel means the host is shutting down: nothing left to refresh.
        let _ = self.refresh.send(self.index);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("seqc", env!("CARGO_PKG_VERSION")),
        )
        // The `initialize` handshake, which every server speaks.
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

impl Connection {
    /// Starts or reaches the server, initializes it within `timeout`, and lists its tools.
    /// Tools whose definition cannot be read come back as notices.
    pub async fn connect(
        index: usize,
        spec: ServerSpec,
        refresh: UnboundedSender<usize>,
        timeout: Duration,
        tokens: Arc<TokenFile>,
    ) -> Result<(Connection, Vec<Notice>), ConnectError> {
        let handler = Handler { index, refresh };
        let stderr = Tail::default();
        let (service, pid) = match &spec.transport {
            Transport::Command {
                program,
                args,
                env,
                cwd,
            } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env);
                if let Some(cwd) = cwd {
                    command.current_dir(cwd);
                }
                // Killed with seqc, as each command's shell is, when seqc is killed outright.
                #[cfg(target_os = "linux")]
                seq_exec::builtin::die_with_parent(&mut command);
                let (child, pipe) =
                    BoundedChild::spawn(command).map_err(|error| ConnectError::Spawn {
                        server: spec.name.clone(),
                        reason: error.to_string(),
                    })?;
                if let Some(pipe) = pipe {
                    stderr.follow(pipe);
                }
                let pid = child.id();
                (
                    start(&spec, handler, child, timeout, &stderr, None).await?,
                    pid,
                )
            }
            Transport::Url {
                url,
                headers,
                oauth,
            } => {
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(header_map(&spec, headers)?);
                // A token given in the headers is the user's choice: no OAuth beside it.
                let own_token = headers
                    .keys()
                    .any(|name| name.eq_ignore_ascii_case("authorization"));
                let service = if own_token {
                    let transport = StreamableHttpClientTransport::from_config(config);
                    start(&spec, handler, transport, timeout, &stderr, None).await?
                } else {
                    let authorizer =
                        Arc::new(Authorizer::new(&spec.name, url, oauth.clone(), tokens));
                    let client = OAuthHttp::new(Arc::clone(&authorizer));
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    start(
                        &spec,
                        handler,
                        transport,
                        timeout,
                        &stderr,
                        Some(&authorizer),
                    )
                    .await?
                };
                (service, None)
            }
        };
        let peer = service.peer().clone();
        let connection = Connection {
            spec,
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            tools: RwLock::new(Arc::new(Tools::new())),
            stderr,
            pid,
            stop_reported: AtomicBool::new(false),
        };
        let (tools, notices) = connection
            .list()
            .await
            .map_err(|reason| ConnectError::List {
                server: connection.spec.name.clone(),
                reason,
            })?;
        connection.install(tools);
        Ok((connection, notices))
    }

    /// The server's tools now, read afresh (`tools/list`, every page).
    pub async fn list(&self) -> Result<(Tools, Vec<Notice>), String> {
        let listed = self
            .peer
            .list_all_tools()
            .await
            .map_err(|error| sign_in_failure_of(&error).unwrap_or_else(|| error.to_string()))?;
        let mut tools = Tools::new();
        let mut notices = Vec::new();
        for tool in &listed {
            match convert::tool_def(&self.spec, tool) {
                Ok(def) => {
                    tools.insert(
                        def.name.clone(),
                        Arc::new(Remote {
                            def: Arc::new(def),
                            name: tool.name.to_string(),
                        }),
                    );
                }
                Err(error) => notices.push(Notice::ToolLeftOut {
                    server: self.spec.name.clone(),
                    tool: tool.name.to_string(),
                    reason: error.message,
                }),
            }
        }
        Ok((tools, notices))
    }

    /// Replaces the tools offered.
    pub fn install(&self, tools: Tools) {
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(tools);
    }

    /// The tools offered now.
    pub fn tools(&self) -> Arc<Tools> {
        Arc::clone(&self.tools.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether the connection still stands. A server that exited closes its output, which ends
    /// the client's loop.
    pub fn alive(&self) -> bool {
        !self.peer.is_transport_closed()
    }

    /// The notice that the server stopped, the first time it is asked for after it did.
    pub fn stop_notice(&self) -> Option<Notice> {
        if self.alive() || self.stop_reported.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(Notice::Stopped {
            server: self.spec.name.clone(),
            stderr: self.stderr.lines(),
        })
    }

    /// The process id of a server started as a child process.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Calls the server's tool `remote` (its own name; `exposed` is seqc's, for messages).
    /// The attempt's idempotency key, when its run gave it one (a durable run), goes with the
    /// request as `_meta["seqc/idempotencyKey"]`: the same for an attempt made again after a
    /// worker died, so that a server can tell a repeat.
    pub async fn call(&self, exposed: &str, remote: &str, args: Value) -> Result<Value, ToolError> {
        let mut params = CallToolRequestParams::new(remote.to_owned());
        if let Value::Object(arguments) = args {
            params = params.with_arguments(arguments);
        }
        if let Some(key) = seq_exec::engine::idempotency_key() {
            let mut meta = serde_json::Map::new();
            meta.insert(IDEMPOTENCY_KEY_META.to_owned(), Value::String(key));
            params.meta = Some(meta.into());
        }
        match self.peer.call_tool(params).await {
            Ok(result) => convert::call_result(&self.spec, exposed, result),
            Err(error) => Err(convert::service_error(&self.spec, exposed, &error)),
        }
    }

    /// Ends the session: a child gets its stdin closed, then SIGTERM, then SIGKILL (rmcp's
    /// graceful shutdown, a few seconds at most).
    pub async fn shutdown(&self) {
        // Stopped on purpose: nothing to report.
        self.stop_reported.store(true, Ordering::Release);
        let service = self.service.lock().await.take();
        if let Some(service) = service {
            // The loop's end is all that is waited for; how it ended does not matter here.
            let _ = service.cancel().await;
        }
    }
}

/// Runs the `initialize` exchange within `timeout`, not counting the time a sign-in of
/// `authorizer`'s is under way (a person may be approving; that has a bound of its own).
async fn start<T, E, A>(
    spec: &ServerSpec,
    handler: Handler,
    transport: T,
    timeout: Duration,
    stderr: &Tail,
    authorizer: Option<&Authorizer>,
) -> Result<RunningService<RoleClient, Handler>, ConnectError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let serve = handler.serve(transport);
    tokio::pin!(serve);
    let mut deadline = tokio::time::Instant::now() + timeout;
    let outcome = loop {
        match tokio::time::timeout_at(deadline, &mut serve).await {
            Err(_) if authorizer.is_some_and(Authorizer::busy) => {
                deadline = tokio::time::Instant::now() + timeout;
            }
            outcome => break outcome,
        }
    };
    match outcome {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(error)) => {
            // A process that exited has its last words on the way; one that lives on does not.
            stderr.settle(Duration::from_millis(500)).await;
            Err(ConnectError::Initialize {
                server: spec.name.clone(),
                reason: in_words(&error),
                stderr: stderr.lines(),
            })
        }
        Err(_) => Err(ConnectError::Timeout {
            server: spec.name.clone(),
            after: timeout,
            stderr: stderr.lines(),
        }),
    }
}

/// Why a session could not start, in words: rmcp's own message names the transport's Rust type
/// ("Send message error Transport [rmcp::transport::worker::WorkerTransport<…>] error: Auth
/// required, when send initialize request"); what a user needs is the causes, outermost first,
/// and what to do about the common ones.
fn in_words(error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match error {
        E::TransportError { error, .. } => {
            let mut causes: Vec<String> = Vec::new();
            let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
            while let Some(cause) = next {
                if let Some(sentence) = sign_in_failure(cause) {
                    return sentence.to_owned();
                }
                let text = cause.to_string();
                // A wrapper repeats its cause's text after its own; keep each once.
                if !causes.iter().any(|known| known.contains(&text)) {
                    causes.push(text);
                }
                next = cause_of(cause);
            }
            let said = causes.join(": ");
            let lower = said.to_ascii_lowercase();
            if lower.contains("auth required") || lower.contains("authorization required") {
                // Only a server given its token in the headers gets here: the OAuth client
                // answers every other server's 401.
                format!(
                    "the server refused the token in the `Authorization` header ({said}); check \
                     it, or leave the header out and seqc signs in with OAuth"
                )
            } else if lower.contains("connection refused") {
                format!("nothing answers at the server's address ({said}); is it running?")
            } else {
                format!("the connection failed while starting the session: {said}")
            }
        }
        E::ConnectionClosed(_) => {
            "the server closed the connection before answering `initialize`".to_owned()
        }
        E::JsonRpcError(data) => format!("the server refused `initialize`: {}", data.message),
        other @ (E::ExpectedInitResponse(_)
        | E::ExpectedInitResult(_)
        | E::ConflictInitResponseId(..)
        | E::UncorrelatedErrorResponse { .. }
        | E::NoCompatibleProtocolVersion { .. }
        | E::NoPreferredProtocolVersion
        | E::Cancelled
        | E::LegacyFallbackFailed { .. }
        | _) => other.to_string(),
    }
}

/// The sentence of a failed sign-in (the OAuth client's own words, whole).
pub(crate) fn sign_in_failure<'e>(error: &'e (dyn std::error::Error + 'static)) -> Option<&'e str> {
    use rmcp::transport::auth::AuthError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Auth(AuthError::AuthorizationFailed(sentence))) => Some(sentence),
        Some(_) | None => None,
    }
}

/// The sentence of a failed sign-in anywhere in `error`'s causes.
pub(crate) fn sign_in_failure_of(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next = Some(error);
    while let Some(cause) = next {
        if let Some(sentence) = sign_in_failure(cause) {
            return Some(sentence.to_owned());
        }
        next = cause_of(cause);
    }
    None
}

/// What caused `error`: its source, or for rmcp's HTTP client error (whose variant holding the
/// HTTP library's error does not name it as its source) that error.
fn cause_of<'e>(
    error: &'e (dyn std::error::Error + 'static),
) -> Option<&'e (dyn std::error::Error + 'static)> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => Some(inner),
        Some(_) | None => error.source(),
    }
}

fn header_map(
    spec: &ServerSpec,
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, ConnectError> {
    headers
        .iter()
        .map(|(name, value)| {
            let bad = |what: &str| ConnectError::Initialize {
                server: spec.name.clone(),
                reason: format!("header `{name}` has an invalid {what}"),
                stderr: Vec::new(),
            };
            Ok((
                http::HeaderName::try_from(name.as_str()).map_err(|_| bad("name"))?,
                http::HeaderValue::try_from(value.as_str()).map_err(|_| bad("value"))?,
            ))
        })
        .collect()
}

/// The last lines a child wrote to stderr.
#[derive(Debug, Default)]
struct Tail {
    lines: Arc<Mutex<VecDeque<String>>>,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Tail {
    fn follow(&self, pipe: tokio::process::ChildStderr) {
        let lines = Arc::clone(&self.lines);
        let reader = tokio::spawn(async move {
            let mut reader = BufReader::new(pipe).lines();
            // Ends at EOF (the process is gone) or when stderr is not text.
            while let Ok(Some(line)) = reader.next_line().await {
                let line: String = line.chars().take(TAIL_LINE_CHARS).collect();
                let mut kept = lines.lock().unwrap_or_else(PoisonError::into_inner);
                if kept.len() == TAIL_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        *self.reader.lock().unwrap_or_else(PoisonError::into_inner) = Some(reader);
    }

    /// Waits, at most `bound`, for the stderr to end.
    async fn settle(&self, bound: Duration) {
        let reader = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(reader) = reader {
            // Either it ended or the bound passed: the tail is what it is.
            let _ = tokio::time::timeout(bound, reader).await;
        }
    }

    fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|line| !line.trim().is_empty())
            .cloned()
            .collect()
    }
}
