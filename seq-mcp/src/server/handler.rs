//! The MCP methods of [`SeqServer`]: `tools/list` and `tools/call`, the oversized request's
//! stand-in, the resources, the prompts and `logging/setLevel`.

use super::SeqServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode, ErrorData,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::{MaybeSendFuture, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use seq_exec::engine::CancellationToken;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;

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
