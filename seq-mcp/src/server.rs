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

use crate::host::{Combined, McpHost};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ErrorCode, ErrorData, GetPromptRequestParams, GetPromptResponse, Implementation, JsonObject,
    ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{MaybeSendFuture, RequestContext};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use seq_catalog::{
    CMD_RUN, CMD_RUN_GUIDE, SEQ_CALL, SEQ_CREATE, SEQ_DELETE, SEQ_LIST, SEQ_RUN, SEQ_WHEN_CALL,
    result_shape,
};
use seq_catalog::{Catalog, ParallelSafety, ToolDef};
use seq_exec::builtin::{BuiltinHost, JqRunner, OutputSink};
use seq_exec::engine::RunRequest;
use seq_exec::engine::{CancellationToken, FinishedRun, RunRecorder};
use seq_exec::{Authorizer, Caller, ToolHost};
use seq_service::{Remote, SeqConfig, SeqTools};
use seq_store::quota::Quotas;
use seq_store::storage::SequenceStorage;
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;
use tokio::io::{AsyncRead, ReadBuf};

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
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
            .cloned()
            .unwrap_or_else(|| self.caller.clone())
    }

    /// Cancelled when the HTTP session of this request ends ([`crate::http::SessionEnded`]);
    /// over stdio, never (the stdin end is [`SeqServer::session_token`]).
    fn session_ended(context: &RequestContext<RoleServer>) -> CancellationToken {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::http::SessionEnded>())
            .map(|ended| ended.0.clone())
            .unwrap_or_default()
    }

    /// Cancelled when the HTTP connection answering this request dropped and its client did not
    /// come back in time ([`crate::http::Abandoned`]); over stdio, never.
    fn abandoned(context: &RequestContext<RoleServer>) -> CancellationToken {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::http::Abandoned>())
            .map(|abandoned| abandoned.0.clone())
            .unwrap_or_default()
    }

    fn tool(&self, def: ToolDef, caller: &Caller) -> Tool {
        let mut description = def.description.clone();
        if def.name == SEQ_CREATE {
            // `cmd_run` is taught only where a sequence may use it.
            if self.authorizer().allows(caller, CMD_RUN)
                && (self.downstream)().iter().any(|d| d.name == CMD_RUN)
            {
                description.push_str(CMD_RUN_GUIDE);
            }
            description.push_str(&self.available(caller));
        } else if def.name == SEQ_RUN {
            description.push_str(&self.reachable(caller));
        }
        // The seq tools' schemas are objects (`Schema::to_json`).
        let schema: JsonObject = def.raw_parameters.as_object().cloned().unwrap_or_default();
        let tool = Tool::new(def.name.clone(), description, schema)
            .with_annotations(annotations(&def.name));
        // What `seq_run` answers is the report: its schema is derived from the report's types.
        match crate::answer::output_schema(&def.name, def.output.as_ref()) {
            Some(output) => tool.with_raw_output_schema(Arc::new(output)),
            None => tool,
        }
    }

    /// " Tools available to sequences here: ..." for `seq_create`'s description.
    fn available(&self, caller: &Caller) -> String {
        let mut tools: Vec<ToolDef> = (self.downstream)()
            .into_iter()
            .filter(|def| self.authorizer().allows(caller, &def.name))
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        // The calls are items too, with a parallel safety of their own.
        tools.extend(
            seq_service::definitions()
                .into_iter()
                .filter(|def| Catalog::is_call(&def.name))
                .filter(|def| self.authorizer().allows(caller, &def.name)),
        );
        let listed: Vec<String> = tools.iter().map(signature).collect();
        let mut text = format!(
            "\nTools available to sequences here (`name {{parameters}} -> result`, `?` marking an optional parameter; `parallel-safe` ones may share a parallel group): {}.",
            listed.join("; ")
        );
        if text.len() > MAX_AVAILABLE_BYTES {
            // Without summaries, every tool still fits.
            let short: Vec<String> = tools.iter().map(signature_only).collect();
            text = format!(
                "\nTools available to sequences here (`name {{parameters}} -> result`): {}.",
                short.join("; ")
            );
        }
        text
    }

    /// " A run here can reach: ..." for `seq_run`'s description: the names only, since
    /// `seq_create`'s description gives their parameters.
    fn reachable(&self, caller: &Caller) -> String {
        let mut names: Vec<String> = (self.downstream)()
            .into_iter()
            .filter(|def| self.authorizer().allows(caller, &def.name))
            .map(|def| format!("`{}`", def.name))
            .collect();
        names.sort();
        if names.is_empty() {
            return " A run here can reach no tools besides the seq_* ones.".to_owned();
        }
        format!(
            " A run here can reach these tools (any other is refused as unauthorized): {}.",
            names.join(", ")
        )
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

/// One `tools/call` being answered, counted while it lives.
struct Answering(Arc<tokio::sync::watch::Sender<usize>>);

impl Answering {
    fn start(calls: &Arc<tokio::sync::watch::Sender<usize>>) -> Answering {
        calls.send_modify(|calls| *calls += 1);
        Answering(Arc::clone(calls))
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.send_modify(|calls| *calls = calls.saturating_sub(1));
    }
}

/// stdin of `seqc mcp`, which cancels `closed` once it ends or fails: the client closed the
/// session.
struct UntilClosed<R> {
    inner: R,
    closed: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for UntilClosed<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if wanted && buf.filled().len() == before => self.closed.cancel(),
            Poll::Ready(Err(_)) => self.closed.cancel(),
            Poll::Ready(Ok(())) | Poll::Pending => {}
        }
        polled
    }
}

/// Where `output_send__stdout` goes under `seqc mcp`: stdout carries the protocol, so the lines
/// go to stderr, where MCP clients keep a server's log.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stderr;

impl OutputSink for Stderr {
    fn send(&self, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        writeln!(
            err,
            "{}",
            seq_syntax::printable::printable(text, seq_syntax::printable::Lines::Kept)
        )?;
        err.flush()
    }
}

/// `name {a, b?} -> result` and whether it is parallel-safe.
/// How long the tool list in `seq_create`'s description may grow with summaries.
const MAX_AVAILABLE_BYTES: usize = 8 * 1024;

/// Longest summary of a tool's description, in characters.
const MAX_SUMMARY_CHARS: usize = 320;

/// A tool's signature with the first sentence of its description.
fn signature(def: &ToolDef) -> String {
    let summary = first_sentence(&def.description);
    if summary.is_empty() {
        signature_only(def)
    } else {
        format!("{} ({summary})", signature_only(def))
    }
}

/// The first sentence of a description, bounded.
fn first_sentence(description: &str) -> String {
    let line = description.lines().next().unwrap_or("").trim();
    let end = line
        .match_indices(". ")
        .map(|(i, _)| i + 1)
        .next()
        .unwrap_or(line.len());
    let sentence = line.get(..end).unwrap_or(line).trim_end_matches('.');
    if sentence.chars().count() <= MAX_SUMMARY_CHARS {
        return sentence.to_owned();
    }
    // Too long: cut at the last clause (or, failing one, word) that fits, never inside a word.
    let bound = sentence
        .char_indices()
        .nth(MAX_SUMMARY_CHARS)
        .map_or(sentence.len(), |(i, _)| i);
    let head = &sentence[..bound];
    let cut = head
        .rfind("; ")
        .or_else(|| head.rfind(", "))
        .or_else(|| head.rfind(' '))
        .unwrap_or(bound);
    format!("{} …", head[..cut].trim_end_matches([',', ';', ':']))
}

fn signature_only(def: &ToolDef) -> String {
    let params: Vec<String> = def
        .parameters
        .properties
        .iter()
        .map(|(name, _)| {
            if def.parameters.required.contains(name) {
                name.clone()
            } else {
                format!("{name}?")
            }
        })
        .collect();
    let safety = match def.parallel_safe {
        ParallelSafety::Safe => ", parallel-safe",
        ParallelSafety::Unsafe => "",
        ParallelSafety::ThroughTarget => {
            ", as parallel-safe as all it reaches; reaching a tool that is not, the item needs \
             `\"unsafe_serial\": true` in a `parallel: false` group"
        }
    };
    format!(
        "`{}` {{{}}} -> {}{safety}",
        def.name,
        params.join(", "),
        result_shape(def.output.as_ref())
    )
}

/// What each seq tool does to the world, as MCP's hints say it.
pub fn annotations(name: &str) -> ToolAnnotations {
    let (title, read_only, destructive, idempotent, open_world) = match name {
        SEQ_LIST => ("List stored sequences", true, false, true, false),
        // `replace: true` overwrites a stored sequence; the same call twice stores the same.
        SEQ_CREATE => ("Check and store a sequence", false, true, true, false),
        SEQ_DELETE => ("Delete a stored sequence", false, true, true, false),
        // A run reaches whatever tools the sequence calls, here and on downstream servers.
        SEQ_RUN => ("Run a stored sequence", false, true, false, true),
        SEQ_CALL => ("Call a stored sequence", false, true, false, true),
        SEQ_WHEN_CALL => (
            "Call a stored sequence if a condition holds",
            false,
            true,
            false,
            true,
        ),
        // Not a seq tool: say nothing beyond the defaults.
        other => return ToolAnnotations::with_title(other),
    };
    ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(open_world)
}

impl ServerHandler for SeqServer {
    #[allow(
        deprecated,
        reason = "MCP logging is what clients implement today; rmcp marks it as to be replaced"
    )]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("seqc", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "seqc stores, checks and runs tool sequences: JSON flows of tool calls in named \
                 groups, with typed inputs and outputs, conditions, parallel groups and retries. \
                 Write one with `seq_create` (every mistake comes back as a diagnostic with its \
                 code, position and hint), run it with `seq_run`, see the stored ones with \
                 `seq_list`. `seq_create`'s description lists the tools a sequence may use; \
                 the prompt `write_sequence` teaches the language, and the resource \
                 `seqc://docs/reference.md` is the whole reference.",
            )
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        let caller = self.caller_of(&context);
        std::future::ready(Ok(ListToolsResult::with_all_items(
            self.listed_for(&caller),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp cancels `context.ct` on `notifications/cancelled` for this request (and once the
        // session has ended); the session token comes first when the client closes stdin. The
        // run then winds down and still answers, with its report saying `cancelled`.
        let _answering = Answering::start(&self.calls);
        let cancel = CancellationToken::new();
        let caller = self.caller_of(&context);
        let ended = SeqServer::session_ended(&context);
        let abandoned = SeqServer::abandoned(&context);
        let progress = crate::progress::Progress::start(&context, &request.name);
        let log = crate::log::RunLog::start(&self.log_level, &context.peer);
        let both = crate::log::Both(progress.observer(), log.observer());
        // W3C trace context from `_meta`: the run joins the client's trace.
        let traceparent = context.meta.get("traceparent").and_then(Value::as_str);
        let result = {
            let answer = self.answer(request, &caller, &cancel, both.observer(), traceparent);
            tokio::pin!(answer);
            let finished = tokio::select! {
                biased;
                result = &mut answer => Some(result),
                () = context.ct.cancelled() => None,
                () = self.session.cancelled() => None,
                () = ended.cancelled() => None,
                () = abandoned.cancelled() => None,
            };
            match finished {
                Some(result) => result,
                None => {
                    cancel.cancel();
                    answer.await
                }
            }
        };
        // What finished is told before the answer, which ends the request.
        progress.finish().await;
        log.finish().await;
        result.map(CallToolResponse::from)
    }
    /// The stand-in for a request past the line bound ([`crate::bound`]): answered under the
    /// request's own id with an error that says so.
    fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + MaybeSendFuture + '_ {
        let answer = if request.method == crate::bound::OVERSIZED {
            let bytes = request
                .params
                .as_ref()
                .and_then(|params| params.get("bytes"))
                .and_then(Value::as_u64)
                .unwrap_or_default();
            let bound = crate::bound::MAX_MESSAGE_BYTES;
            ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "the request is {bytes} bytes, more than the {} MiB a message may have; it \
                     was not read",
                    bound / (1024 * 1024)
                ),
                Some(json!({"bytes": bytes, "bound": bound})),
            )
        } else {
            ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None)
        };
        std::future::ready(Err(answer))
    }

    fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(Ok(ListResourcesResult::with_all_items(
            crate::teach::resources(),
        )))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(crate::teach::read(&request.uri).map(ReadResourceResponse::from))
    }

    fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(Ok(ListPromptsResult::with_all_items(
            crate::teach::prompts(),
        )))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + MaybeSendFuture + '_ {
        let caller = self.caller_of(&context);
        // The guide as this caller's `tools/list` shows it, with the tools available here.
        let guide = seq_service::definitions()
            .into_iter()
            .find(|def| def.name == seq_catalog::SEQ_CREATE)
            .map(|def| {
                self.tool(def, &caller)
                    .description
                    .map(|d| d.into_owned())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        std::future::ready(crate::teach::prompt(&request.name, &guide).map(GetPromptResponse::from))
    }

    /// `logging/setLevel`: the session's run events are sent from now on at `level` and above
    /// ([`crate::log`]).
    #[allow(
        deprecated,
        reason = "MCP logging is what clients implement today; rmcp marks it as to be replaced"
    )]
    fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.log_level.set(request.level);
        std::future::ready(Ok(()))
    }

    // No `get_tool`: rmcp would then validate arguments itself, as protocol errors; the seq
    // tools validate their own and answer with a `ToolError` that names the field.
}
