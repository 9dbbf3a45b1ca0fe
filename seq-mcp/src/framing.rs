//! Every request gets an answer (JSON-RPC 2.0, "Error object"). rmcp's stdio transport drops a
//! line that is not JSON (malformed, invalid UTF-8, nested past serde's depth) without a word,
//! and reads a known method whose params do not fit (`tools/call` with `arguments: []`) as an
//! unknown one. So `seqc mcp`'s stdin passes through [`framed`] first, which reads each line as
//! JSON and answers what is broken itself, on stdout between rmcp's own lines:
//! - not JSON: −32700 (parse error) with a null `id`;
//! - JSON but not a request, notification or response: −32600 (invalid request), with the
//!   request's `id` when it has a usable one, else null;
//! - a request whose `params` do not fit its method: −32602 (invalid params) under its `id`.
//!
//! Everything else goes to rmcp as it came.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// What a line is.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// For rmcp.
    Pass,
    /// Broken: this answer goes back at once (nothing to rmcp).
    Answer(Value),
    /// Broken, but a notification: nobody to answer.
    Drop,
}

/// Judges one line (newline removed).
pub fn judge(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Pass;
    }
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(error) => {
            let why = if std::str::from_utf8(line).is_err() {
                "the message is not UTF-8".to_owned()
            } else {
                format!("the message is not JSON: {error}")
            };
            return Verdict::Answer(error_answer(Value::Null, PARSE_ERROR, "Parse error", &why));
        }
    };
    let Value::Object(object) = &message else {
        return Verdict::Answer(error_answer(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request",
            "a message is one JSON object (batches are not part of MCP)",
        ));
    };
    let id = object.get("id");
    let usable_id = match id {
        None => None,
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(id.clone()),
        Some(id @ Value::String(_)) => Some(id.clone()),
        // A fractional id (`1.5`) is no id rmcp keeps: answered here, with the null id.
        Some(
            Value::Number(_) | Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_),
        ) => {
            return Verdict::Answer(error_answer(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request",
                "`id` must be a string or a whole number",
            ));
        }
    };
    let invalid = |why: &str| match &usable_id {
        Some(id) => Verdict::Answer(error_answer(
            id.clone(),
            INVALID_REQUEST,
            "Invalid Request",
            why,
        )),
        None => Verdict::Answer(error_answer(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request",
            why,
        )),
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    let Some(method) = object.get("method") else {
        // A response to a request of the server's own.
        if usable_id.is_some() && (object.contains_key("result") || object.contains_key("error")) {
            return Verdict::Pass;
        }
        return invalid("a request needs `method`; a response needs `id` and `result` or `error`");
    };
    let Value::String(method) = method else {
        return invalid("`method` must be a string");
    };
    let params = object.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return match &usable_id {
            Some(id) => Verdict::Answer(error_answer(
                id.clone(),
                INVALID_PARAMS,
                "Invalid params",
                "`params` must be an object",
            )),
            None => Verdict::Drop,
        };
    }
    if let (Some(why), Some(id)) = (misfit(method, params), &usable_id) {
        return Verdict::Answer(error_answer(
            id.clone(),
            INVALID_PARAMS,
            "Invalid params",
            &why,
        ));
    }
    Verdict::Pass
}

/// Why `params` do not fit `method`, for the methods whose shape rmcp would otherwise mistake
/// for an unknown method.
fn misfit(method: &str, params: Option<&Value>) -> Option<String> {
    match method {
        "tools/call" => {
            let Some(params) = params else {
                return Some("`tools/call` needs `params` with `name`".to_owned());
            };
            if !params.get("name").is_some_and(Value::is_string) {
                return Some("`params.name` must be the tool's name, a string".to_owned());
            }
            match params.get("arguments") {
                None | Some(Value::Object(_) | Value::Null) => None,
                Some(_) => Some("`params.arguments` must be an object".to_owned()),
            }
        }
        "prompts/get" | "resources/read" => {
            let key = if method == "prompts/get" {
                "name"
            } else {
                "uri"
            };
            (!params
                .and_then(|p| p.get(key))
                .is_some_and(Value::is_string))
            .then(|| format!("`{method}` needs `params.{key}`, a string"))
        }
        _ => None,
    }
}

fn error_answer(id: Value, code: i64, message: &str, why: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": {"reason": why}}})
}

/// `input` and `output` with broken lines answered here (module comment): returns the stream
/// rmcp reads and the one it writes. Both copies run on their own tasks.
pub fn framed<R, W>(input: R, output: W) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_rmcp, rmcp_reads) = tokio::io::duplex(64 * 1024);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(64 * 1024);
    let (answers, mut answered) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            match judge(body) {
                Verdict::Pass => {
                    if to_rmcp.write_all(&line).await.is_err() {
                        break;
                    }
                }
                Verdict::Answer(answer) => {
                    if answers.send(answer).is_err() {
                        break;
                    }
                }
                Verdict::Drop => {}
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    tokio::spawn(async move {
        let mut output = output;
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        let mut rmcp_open = true;
        loop {
            tokio::select! {
                read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => {
                    match read {
                        Ok(0) | Err(_) => rmcp_open = false,
                        Ok(_) => {
                            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                                break;
                            }
                            line.clear();
                        }
                    }
                }
                answer = answered.recv() => {
                    let Some(answer) = answer else {
                        if rmcp_open { continue } else { break }
                    };
                    let text = format!("{answer}\n");
                    if output.write_all(text.as_bytes()).await.is_err() || output.flush().await.is_err() {
                        break;
                    }
                }
                else => break,
            }
            if !rmcp_open && answered.is_empty() && answered.is_closed() {
                break;
            }
        }
        // What rmcp wrote last without a newline still goes out.
        let _ = output.write_all(&line).await;
        let _ = output.flush().await;
    });
    (rmcp_reads, rmcp_writes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests may unwrap")]
    use super::*;

    fn code(line: &str) -> Option<(Value, i64)> {
        match judge(line.as_bytes()) {
            Verdict::Answer(a) => Some((a["id"].clone(), a["error"]["code"].as_i64().unwrap())),
            Verdict::Pass | Verdict::Drop => None,
        }
    }

    #[test]
    fn broken_lines_are_answered() {
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":1,"),
            Some((Value::Null, PARSE_ERROR))
        );
        assert_eq!(
            judge(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}"),
            Verdict::Answer(error_answer(
                Value::Null,
                PARSE_ERROR,
                "Parse error",
                "the message is not UTF-8"
            ))
        );
        let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
        let nested = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"x\",\"arguments\":{{\"a\":{deep}}}}}}}"
        );
        assert_eq!(code(&nested), Some((Value::Null, PARSE_ERROR)));
        assert_eq!(code("[1]"), Some((Value::Null, INVALID_REQUEST)));
        assert_eq!(
            code("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}"),
            Some((json!(3), INVALID_REQUEST))
        );
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"ping\"}"),
            Some((Value::Null, INVALID_REQUEST))
        );
        assert_eq!(
            code(
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"seq_list\",\"arguments\":[]}}"
            ),
            Some((json!(4), INVALID_PARAMS))
        );
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":7}"),
            Some((json!(5), INVALID_PARAMS))
        );
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}"),
            None
        );
        assert_eq!(code("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"), None);
        assert_eq!(code(""), None);
    }
}
