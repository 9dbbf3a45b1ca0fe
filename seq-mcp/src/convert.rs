//! What MCP says, in seqc's terms, and back: tool definitions, call results, failures.
//!
//! - A `tools/list` entry becomes a [`ToolDef`] by the catalog's own reading of the MCP shape
//!   (`inputSchema` is the parameter schema, `annotations.readOnlyHint: true` means
//!   parallel-safe, anything else not), under the server's prefix if it has one.
//! - A result is its `structuredContent` when present, else its text blocks joined by newlines
//!   (one block: that text), else — only images, audio or resources — the content blocks as
//!   JSON. `isError: true` is a `failed` [`ToolError`] whose detail is the server's text.
//! - A failure of the exchange itself: the server gone is `not_found` (so the group's `missing`
//!   policy applies), a JSON-RPC "method not found" too; "invalid params" is `type`; anything
//!   else is `failed`.

use crate::spec::ServerSpec;
use rmcp::ServiceError;
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, Tool};
use seq_catalog::CatalogError;
use seq_catalog::{Catalog, ToolDef};
use seq_exec::{Reason, ToolError};
use serde_json::Value;

/// The catalog entry of `tool`, offered by `server` (under its prefix).
pub fn tool_def(server: &ServerSpec, tool: &Tool) -> Result<ToolDef, CatalogError> {
    let entry = serde_json::to_value(tool).map_err(|error| CatalogError {
        message: format!("the definition cannot be read: {error}"),
        span: None,
    })?;
    let mut def = Catalog::load_tool(&entry)?;
    def.name = server.exposed(&tool.name);
    Ok(def)
}

/// The value of a call's result, or its failure.
pub fn call_result(
    server: &ServerSpec,
    tool: &str,
    result: CallToolResult,
) -> Result<Value, ToolError> {
    if result.is_error == Some(true) {
        let mut text = texts(&result.content).unwrap_or_default();
        if text.is_empty()
            && let Some(structured) = &result.structured_content
        {
            text = structured.to_string();
        }
        if text.is_empty() {
            text = format!("`{tool}` reported an error without saying why");
        }
        return Err(ToolError::new(Reason::Failed, text)
            .with_hint(format!("the error comes from MCP server `{}`", server.name)));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    if let Some(text) = texts(&result.content) {
        return Ok(Value::String(text));
    }
    serde_json::to_value(&result.content).map_err(|error| {
        ToolError::new(
            Reason::Failed,
            format!("the result of `{tool}` cannot be read: {error}"),
        )
    })
}

/// The text blocks joined by newlines; `None` when there is none.
fn texts(content: &[ContentBlock]) -> Option<String> {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// A call that got no result.
pub fn service_error(server: &ServerSpec, tool: &str, error: &ServiceError) -> ToolError {
    let from = format!("MCP server `{}`", server.name);
    if let Some(sentence) = crate::connection::sign_in_failure_of(error) {
        return ToolError::new(Reason::Unauthorized, format!("{from}: `{tool}`: {sentence}"))
            .with_hint("the server's authorization refused seqc; see docs/service.md, \"Remote servers that ask for OAuth\"");
    }
    match error {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => ToolError::new(
            Reason::NotFound,
            format!("{from} is gone, and `{tool}` with it: {error}"),
        )
        .with_hint("the server stopped; its tools are unavailable until seqc is restarted"),
        ServiceError::McpError(data) if data.code == ErrorCode::METHOD_NOT_FOUND => ToolError::new(
            Reason::NotFound,
            format!("{from} does not know `{tool}`: {}", data.message),
        ),
        ServiceError::McpError(data) if data.code == ErrorCode::INVALID_PARAMS => ToolError::new(
            Reason::Type,
            format!("{from} refused the arguments of `{tool}`: {}", data.message),
        )
        .with_hint("pass the arguments the tool's schema asks for"),
        ServiceError::McpError(data) => ToolError::new(
            Reason::Failed,
            format!("{from} failed `{tool}`: {}", data.message),
        ),
        ServiceError::Timeout { .. } => {
            ToolError::new(Reason::Timeout, format!("{from}: `{tool}`: {error}"))
        }
        ServiceError::UnexpectedResponse | ServiceError::InputRequiredRoundsExceeded { .. } => {
            ToolError::new(
                Reason::Failed,
                format!(
                    "{from} answered `{tool}` with something other than a result (a request for input or a task, which seqc does not drive): {error}"
                ),
            )
        }
        ServiceError::Cancelled { .. } | ServiceError::SubscriptionLagged { .. } => {
            ToolError::new(Reason::Failed, format!("{from}: `{tool}`: {error}"))
        }
        // `ServiceError` is non-exhaustive: a kind added later is a failure of the call.
        #[allow(
            clippy::wildcard_enum_match_arm,
            reason = "rmcp's enum is non_exhaustive"
        )]
        _ => ToolError::new(Reason::Failed, format!("{from}: `{tool}`: {error}")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use rmcp::model::ErrorData;
    use seq_catalog::ParallelSafety;
    use serde_json::json;

    fn spec(prefix: Option<&str>) -> ServerSpec {
        let mut spec = ServerSpec::parse("server").unwrap();
        spec.prefix = prefix.map(str::to_owned);
        spec
    }

    fn tool(entry: Value) -> Tool {
        serde_json::from_value(entry).unwrap()
    }

    #[test]
    fn read_only_hint_is_parallel_safety_and_the_prefix_renames() {
        let read = tool(json!({"name": "read_file", "description": "Reads.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            "annotations": {"readOnlyHint": true}}));
        let def = tool_def(&spec(Some("fs")), &read).unwrap();
        assert_eq!(def.name, "fs.read_file");
        assert_eq!(def.parallel_safe, ParallelSafety::Safe);
        assert_eq!(def.parameters.required, ["path"]);
        assert_eq!(def.description, "Reads.");

        for annotations in [json!({"readOnlyHint": false}), json!({}), Value::Null] {
            let mut entry = json!({"name": "write_file", "inputSchema": {"type": "object"}});
            if !annotations.is_null() {
                entry["annotations"] = annotations;
            }
            let def = tool_def(&spec(None), &tool(entry)).unwrap();
            assert_eq!(def.name, "write_file");
            assert_eq!(def.parallel_safe, ParallelSafety::Unsafe);
        }
    }

    #[test]
    fn results_are_structured_content_else_text_else_the_blocks() {
        let s = spec(None);
        let structured: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"t\":1}"}], "structuredContent": {"t": 1}}))
        .unwrap();
        assert_eq!(call_result(&s, "x", structured).unwrap(), json!({"t": 1}));
        let text: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}))
        .unwrap();
        assert_eq!(call_result(&s, "x", text).unwrap(), json!("a\nb"));
        let image: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}))
        .unwrap();
        assert_eq!(
            call_result(&s, "x", image).unwrap(),
            json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}])
        );
    }

    #[test]
    fn is_error_is_a_failure_with_the_server_text() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "ENOENT: no such file"}], "isError": true}))
        .unwrap();
        let error = call_result(&spec(None), "read_file", result).unwrap_err();
        assert_eq!(error.reason, Reason::Failed);
        assert_eq!(error.detail.as_deref(), Some("ENOENT: no such file"));
    }

    #[test]
    fn exchange_failures_keep_not_found_apart_from_failed() {
        let s = spec(None);
        let gone = service_error(&s, "t", &ServiceError::TransportClosed);
        assert_eq!(gone.reason, Reason::NotFound);
        let unknown =
            ServiceError::McpError(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "no", None));
        assert_eq!(service_error(&s, "t", &unknown).reason, Reason::NotFound);
        let params = ServiceError::McpError(ErrorData::invalid_params("bad", None));
        assert_eq!(service_error(&s, "t", &params).reason, Reason::Type);
        let internal = ServiceError::McpError(ErrorData::internal_error("boom", None));
        assert_eq!(service_error(&s, "t", &internal).reason, Reason::Failed);
    }
}
