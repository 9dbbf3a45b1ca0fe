//! `seqc mcp`: the six `seq_*` tools served to any MCP client (over stdio).
//!
//! - `tools/list` gives the tools the caller's policy allows, with their catalog schemas and
//!   honest annotations ([`annotations`]). `seq_create`'s description ends with the tools a
//!   sequence may use here (the embedded host's and the downstream servers', as the policy
//!   allows), so that an agent can write a sequence without guessing.
//! - `tools/call` runs [`SeqTools::call`] for the caller of the request (the one identity of
//!   a stdio server, the token's over HTTP); the engine applies the policy again at every dispatch, at every depth.
//! - Answers and their `outputSchema`s are shaped in [`crate::answer`]: a success's value or a
//!   failure's `{error, diagnostics, report}`, each value once, within the message bound.

mod handler;
mod listing;
mod stdio;

pub use listing::annotations;
pub use stdio::Stderr;

use crate::host::{Combined, McpHost};
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorData, Tool};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServiceExt};
use seq_catalog::SEQ_RUN;
use seq_catalog::{Catalog, ToolDef};
use seq_exec::builtin::{BuiltinHost, JqRunner, OutputSink};
use seq_exec::engine::RunRequest;
use seq_exec::engine::{CancellationToken, FinishedRun, RunRecorder};
use seq_exec::{Authorizer, Caller, ToolHost};
use seq_service::{Remote, SeqConfig, SeqTools};
use seq_store::quota::Quotas;
use seq_store::storage::SequenceStorage;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;
use stdio::UntilClosed;

/// Lists the tools a sequence may use here (the server's downstream tools).
pub type Downstream = Arc<dyn Fn() -> Vec<ToolDef> + Send + Sync>;

/// The MCP server of the seq tools.
#[derive(Clone)]
pub struct SeqServer {
    tools: SeqTools,
    caller: Caller,
    downstream: Downstream,
    /// Cancelled when the client closes the session (its end of stdin): every run stops then,
    /// without waiting for rmcp's drain of in-flight answers.
    session: CancellationToken,
    /// How many `tools/call`s are being answered, so that a server that stops can wait for
    /// its cancelled runs to wind down ([`SeqServer::calls_ended`]).
    calls: Arc<tokio::sync::watch::Sender<usize>>,
    /// Where the reports of `seq_run`'s runs go once they end (their traces).
    recorder: Option<Arc<dyn RunRecorder>>,
    /// The level this session asked with `logging/setLevel` (a clone starts without one).
    log_level: crate::log::LogLevel,
}

impl std::fmt::Debug for SeqServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeqServer")
            .field("caller", &self.caller)
            .finish_non_exhaustive()
    }
}

/// Why serving stopped early.
#[derive(Debug)]
pub struct ServeError(String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

impl ServeError {
    pub fn new(message: impl Into<String>) -> ServeError {
        ServeError(message.into())
    }
}

impl SeqServer {
    /// Serves `tools` for `caller`; their authorizer (the one their engine asks) decides
    /// which seq tools are listed (the tools check it again when called) and which downstream
    /// tools are shown.
    pub fn new(tools: SeqTools, caller: Caller, downstream: Downstream) -> SeqServer {
        SeqServer {
            tools,
            caller,
            downstream,
            session: CancellationToken::new(),
            calls: Arc::new(tokio::sync::watch::Sender::new(0)),
            recorder: None,
            log_level: crate::log::LogLevel::default(),
        }
    }

    /// The usual wiring (what `seqc mcp` serves): the seq tools over the store in `storage`, their
    /// sequences running on the embedded host (confined to `root`, printing to `output`) beside
    /// the MCP servers of `mcp`, everything under `authorizer` for `caller`. `seq_create` checks
    /// against the built-in catalog plus the servers' tools as they list them at that moment
    /// (refreshed on `tools/list_changed`), as its description lists them.
    pub fn assemble(
        storage: impl SequenceStorage + 'static,
        root: PathBuf,
        caller: Caller,
        authorizer: impl Into<Authorizer>,
        mcp: Arc<McpHost>,
        output: Arc<dyn OutputSink>,
    ) -> SeqServer {
        Self::assemble_with(
            storage,
            root,
            caller,
            authorizer,
            Quotas::default(),
            mcp,
            output,
            JqRunner::InThread,
        )
    }

    /// [`SeqServer::assemble`] with the `jq` tool's filters evaluated by `jq` (`seqc mcp`
    /// isolates them in child processes, so that no caller's filter takes the service down) and
    /// each caller's stored sequences held to `quotas`.
    #[allow(
        clippy::too_many_arguments,
        reason = "what a door set up, each part used once"
    )]
    pub fn assemble_with(
        storage: impl SequenceStorage + 'static,
        root: PathBuf,
        caller: Caller,
        authorizer: impl Into<Authorizer>,
        quotas: Quotas,
        mcp: Arc<McpHost>,
        output: Arc<dyn OutputSink>,
        jq: JqRunner,
    ) -> SeqServer {
        let builtin = BuiltinHost::new(&root).with_jq(jq).with_output(output);
        let builtin_tools: Vec<ToolDef> = builtin.definitions().cloned().collect();
        let authorizer: Authorizer = authorizer.into();
        let catalog = live_catalog(Arc::clone(&mcp), Arc::clone(authorizer.policy()));
        let inner: Arc<dyn ToolHost> = Arc::new(Combined::new(vec![
            Arc::new(builtin),
            Arc::clone(&mcp) as Arc<dyn ToolHost>,
        ]));
        let config = SeqConfig {
            storage: Arc::new(storage),
            root,
            catalog,
            authorizer,
            quotas,
        };
        let tools = SeqTools::assemble(inner, config, |engine| engine);
        let downstream: Downstream = Arc::new(move || {
            let mut tools = builtin_tools.clone();
            tools.extend(mcp.definitions());
            tools
        });
        SeqServer::new(tools, caller, downstream)
    }

    /// Who may use what: the seq tools' authorizer, which their engine asks too.
    fn authorizer(&self) -> &Authorizer {
        self.tools.storage_tools().authorizer()
    }

    /// `seq_run` runs on `remote` (a durable engine) instead of in this process; `seq_call` and
    /// `seq_when_call` are then not listed.
    pub fn with_remote(mut self, remote: Arc<dyn Remote>) -> SeqServer {
        self.tools = self.tools.with_remote(remote);
        self
    }

    /// Hands every `seq_run`'s report to `recorder` once the run ends, with the
    /// `_meta.traceparent` of the request that started it.
    pub fn with_recorder(mut self, recorder: Arc<dyn RunRecorder>) -> SeqServer {
        self.recorder = Some(recorder);
        self
    }

    /// Cancelled when serving ends: every run of every session stops then.
    pub fn session_token(&self) -> CancellationToken {
        self.session.clone()
    }

    /// Waits until no `tools/call` is being answered (after [`SeqServer::session_token`] is
    /// cancelled: every run winds down, and a durable one is cancelled on its server).
    pub async fn calls_ended(&self) {
        let mut calls = self.calls.subscribe();
        // The sender lives in `self`: the wait cannot fail.
        let _ = calls.wait_for(|&calls| calls == 0).await;
    }

    /// Serves on stdin and stdout until the client closes them.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let (input, output) = rmcp::transport::stdio_pipes();
        // A request past the line bound is answered with an error instead of vanishing, and so
        // is one that does not parse or fit.
        let (input, output) = crate::framing::framed(
            crate::bound::bounded(
                input,
                crate::bound::MAX_MESSAGE_BYTES,
                crate::bound::request_stand_in,
            ),
            output,
        );
        let input = UntilClosed {
            inner: input,
            closed: self.session.clone(),
        };
        let running = self
            .serve((input, output))
            .await
            .map_err(|error| ServeError(format!("the MCP session did not start: {error}")))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| ServeError(format!("the MCP session ended abnormally: {error}")))
    }

    /// The seq tools this server lists to the caller it was started for, in catalog order.
    pub fn listed(&self) -> Vec<Tool> {
        self.listed_for(&self.caller)
    }

    /// The seq tools `caller` sees, in catalog order.
    pub fn listed_for(&self, caller: &Caller) -> Vec<Tool> {
        seq_service::definitions()
            .into_iter()
            .filter(|def| self.tools.offers(&def.name))
            .filter(|def| self.authorizer().allows(caller, &def.name))
            .map(|def| self.tool(def, caller))
            .collect()
    }

    /// Who is calling: the caller the HTTP transport authenticated for this request
    /// ([`crate::http`]), else the one the server was started for (stdio).
    fn caller_of(&self, context: &RequestContext<RoleServer>) -> Caller {
        gate_put::<Caller>(context).unwrap_or_else(|| self.caller.clone())
    }

    /// Cancelled when the HTTP session of this request ends ([`crate::http::SessionEnded`]);
    /// over stdio, never (the stdin end is [`SeqServer::session_token`]).
    fn session_ended(context: &RequestContext<RoleServer>) -> CancellationToken {
        gate_put::<crate::http::SessionEnded>(context)
            .map(|ended| ended.0)
            .unwrap_or_default()
    }

    /// Cancelled when the HTTP connection answering this request dropped and its client did not
    /// come back in time ([`crate::http::Abandoned`]); over stdio, never.
    fn abandoned(context: &RequestContext<RoleServer>) -> CancellationToken {
        gate_put::<crate::http::Abandoned>(context)
            .map(|abandoned| abandoned.0)
            .unwrap_or_default()
    }

    async fn answer(
        &self,
        request: CallToolRequestParams,
        caller: &Caller,
        cancel: &CancellationToken,
        observer: Option<&dyn seq_exec::engine::Observer>,
        traceparent: Option<&str>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = request.name.to_string();
        if seq_service::definition(&name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; this server offers the seq_* tools"),
                None,
            ));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let sequence = args
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let started = SystemTime::now();
        let outcome = self
            .tools
            .call(
                &name,
                args,
                RunRequest::new(caller)
                    .cancel(cancel)
                    .observer(observer)
                    .traceparent(traceparent),
            )
            .await;
        // A run made elsewhere took the traceparent with it: its spans are exported there.
        if let (Some(recorder), Some(report), true, false) = (
            &self.recorder,
            &outcome.report,
            name == SEQ_RUN,
            self.tools.runs_elsewhere(),
        ) {
            recorder.finished(&FinishedRun {
                sequence: &sequence,
                caller,
                started,
                report,
                traceparent,
            });
        }
        // Measuring and cutting a large answer is CPU work on megabytes: on the blocking pool,
        // not on the threads that answer every other caller's requests.
        let shaped = tokio::task::spawn_blocking(move || crate::answer::to_result(&name, outcome));
        shaped.await.map_err(|error| {
            ErrorData::internal_error(format!("the answer could not be made: {error}"), None)
        })
    }
}

/// What the HTTP gate put in this request's extensions ([`crate::http`]); over stdio, nothing.
fn gate_put<T: Clone + Send + Sync + 'static>(context: &RequestContext<RoleServer>) -> Option<T> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<T>())
        .cloned()
}

/// The catalog `seq_create` and `seq_run` check against, read anew at each admission: the
/// built-in tools and `mcp`'s as listed now (its tool lists follow `tools/list_changed`), as
/// `seq_create`'s description reads them; a tool `policy` turned off is known but not offered,
/// so that no hint suggests it.
fn live_catalog(
    mcp: Arc<McpHost>,
    policy: Arc<seq_exec::policy::Policy>,
) -> seq_service::CatalogSource {
    seq_service::CatalogSource::live(move || {
        let mut catalog = Catalog::builtin();
        catalog.merge(mcp.definitions());
        let off: Vec<String> = catalog
            .names()
            .filter(|name| policy.off_hint(name).is_some())
            .map(str::to_owned)
            .collect();
        for name in off {
            catalog.turn_off(name);
        }
        Arc::new(catalog)
    })
}
