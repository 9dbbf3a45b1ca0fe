//! Messages past the line bound are answered, not lost.
//!
//! rmcp's stdio transport bounds a line (one JSON-RPC message) at [`MAX_MESSAGE_BYTES`] and drops
//! a longer one without a word: a client would wait for an answer that never comes, and a
//! downstream server's oversized result would leave the call waiting out its timeout. So the
//! bytes pass through [`bounded`] first, which hands rmcp every line within the bound as it is
//! and, for a longer one, a short stand-in instead, made from the oversized message's `id`:
//! - read by the server (`seqc mcp`'s stdin): [`request_stand_in`], the request [`OVERSIZED`],
//!   which the server answers with a JSON-RPC error;
//! - read by the client (a downstream server's stdout): [`response_stand_in`], an error
//!   response, so the call fails at once with a reason that says why.
//!
//! The `id` is found by a scan of the message as it streams past (any position in the object);
//! nothing but the bound's worth of one line is ever held. A message without an `id` (a
//! notification) has nobody to answer and is dropped.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, DuplexStream};

/// The longest message, newline included: rmcp's own line bound.
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The method of the stand-in for a request past the bound; its `params.bytes` is the size.
pub const OVERSIZED: &str = "seqc/oversized";

/// The longest `id` value kept, in bytes (JSON-RPC ids are numbers or short strings).
const MAX_ID_BYTES: usize = 1024;

/// A message past the bound, as far as its scan tells.
#[derive(Debug)]
pub struct Oversized {
    /// Its `id`, when it has one that is a number or a string.
    pub id: Option<Value>,
    /// Whether it names a `method` (a request or a notification, not a response).
    pub has_method: bool,
    /// Its size, newline included.
    pub bytes: usize,
}

/// What stands in for an oversized message: a message for rmcp to read, or nothing.
pub type StandIn = fn(&Oversized, usize) -> Option<Value>;

/// The server's stand-in: the request [`OVERSIZED`] under the message's id.
pub fn request_stand_in(message: &Oversized, bound: usize) -> Option<Value> {
    let id = message.id.as_ref()?;
    Some(json!({"jsonrpc": "2.0", "id": id, "method": OVERSIZED,
        "params": {"bytes": message.bytes, "bound": bound}}))
}

/// The client's stand-in: an error response to the request whose answer was too long. A
/// request of the server's own that is too long is not answered here (its id is the server's).
pub fn response_stand_in(message: &Oversized, bound: usize) -> Option<Value> {
    if message.has_method {
        return None;
    }
    let id = message.id.as_ref()?;
    Some(json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32603,
        "message": format!(
            "its answer is {} bytes, more than the {} MiB a message may have; it was not read",
            message.bytes,
            bound / (1024 * 1024)
        ),
        "data": {"bytes": message.bytes, "bound": bound}}}))
}

/// `input` with every line past `bound` bytes replaced by its stand-in (module comment), as a
/// stream for rmcp to read; the copy runs on its own task and ends with `input`.
pub fn bounded<R>(input: R, bound: usize, stand_in: StandIn) -> DuplexStream
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let (mut to_rmcp, from_us) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            match read_line(&mut input, &mut line, bound).await {
                Ok(Line::Whole) => {
                    if to_rmcp.write_all(&line).await.is_err() {
                        break;
                    }
                }
                Ok(Line::Oversized(message)) => {
                    let Some(stand_in) = stand_in(&message, bound) else {
                        continue;
                    };
                    if to_rmcp
                        .write_all(format!("{stand_in}\n").as_bytes())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
                Ok(Line::End) | Err(_) => {
                    // An unterminated tail is passed on as rmcp would have seen it.
                    let _ = to_rmcp.write_all(&line).await;
                    break;
                }
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    from_us
}

enum Line {
    /// A line within the bound, newline included, is in the buffer.
    Whole,
    /// A line past the bound went by.
    Oversized(Oversized),
    /// The input ended; the buffer holds what came after the last newline.
    End,
}

async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
    bound: usize,
) -> std::io::Result<Line> {
    line.clear();
    // Set once the line is past the bound: from then on it is only scanned for its `id`.
    let mut over: Option<(IdScan, usize)> = None;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match over {
                Some((scan, bytes)) => Line::Oversized(Oversized {
                    id: scan.id(),
                    has_method: scan.has_method,
                    bytes,
                }),
                None => Line::End,
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.map_or(available.len(), |at| at + 1);
        let chunk = &available[..take];
        match &mut over {
            Some((scan, bytes)) => {
                scan.feed(chunk);
                *bytes += take;
            }
            None if line.len() + take > bound => {
                let mut scan = IdScan::default();
                scan.feed(line);
                scan.feed(chunk);
                over = Some((scan, line.len() + take));
                line.clear();
            }
            None => line.extend_from_slice(chunk),
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(match over {
                Some((scan, bytes)) => Line::Oversized(Oversized {
                    id: scan.id(),
                    has_method: scan.has_method,
                    bytes,
                }),
                None => Line::Whole,
            });
        }
    }
}

/// Finds the value of the top-level `id` member of a JSON object fed in pieces, in one pass
/// and constant memory.
#[derive(Default)]
struct IdScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// A member name is expected next (after `{` or `,` at the top level).
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    /// The member just named is `id`: its value follows the `:`.
    key_is_id: bool,
    capturing: bool,
    value: Vec<u8>,
    found: Option<Vec<u8>>,
    /// A top-level `method` member was seen (so far).
    has_method: bool,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.found.is_some() && self.has_method {
                return;
            }
            self.step(b);
        }
    }

    fn keep(&mut self, b: u8) {
        if self.capturing && self.value.len() < MAX_ID_BYTES {
            self.value.push(b);
        }
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            self.keep(b);
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.key_is_id = self.key == b"id";
                    self.has_method |= self.key == b"method";
                }
                return;
            }
            if self.reading_key && self.key.len() < 8 {
                self.key.push(b);
            }
            return;
        }
        let top = self.depth == 1;
        match b {
            b'"' => {
                self.in_string = true;
                if top && self.expect_key {
                    self.expect_key = false;
                    self.reading_key = true;
                    self.key.clear();
                }
                self.keep(b);
            }
            b'{' | b'[' => {
                self.keep(b);
                self.depth += 1;
                self.expect_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => {
                if top && self.capturing {
                    self.finish();
                } else {
                    self.keep(b);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' if top => {
                if self.capturing {
                    self.finish();
                }
                self.expect_key = true;
            }
            b':' if top && self.key_is_id && !self.capturing && self.found.is_none() => {
                self.key_is_id = false;
                self.capturing = true;
            }
            _ => self.keep(b),
        }
    }

    fn finish(&mut self) {
        self.capturing = false;
        let value = std::mem::take(&mut self.value);
        self.found.get_or_insert(value);
    }

    /// The `id`, when it is a number or a string as JSON-RPC's are.
    fn id(&self) -> Option<Value> {
        let found = self.found.as_deref()?;
        match serde_json::from_slice::<Value>(found.trim_ascii()).ok()? {
            id @ (Value::Number(_) | Value::String(_)) => Some(id),
            Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IdScan;
    use serde_json::{Value, json};

    fn id_of(text: &str, piece: usize) -> Option<Value> {
        let mut scan = IdScan::default();
        for chunk in text.as_bytes().chunks(piece) {
            scan.feed(chunk);
        }
        scan.id()
    }

    #[test]
    fn a_top_level_method_is_seen_before_or_after_the_id() {
        for (text, has_method) in [
            (r#"{"id":1,"method":"x"}"#, true),
            (r#"{"method":"x","id":1}"#, true),
            (r#"{"id":1,"result":{"method":"x"}}"#, false),
        ] {
            let mut scan = IdScan::default();
            scan.feed(text.as_bytes());
            assert_eq!(scan.has_method, has_method, "{text}");
            assert_eq!(scan.id(), Some(json!(1)), "{text}");
        }
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        for (text, id) in [
            (r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#, Some(json!(7))),
            (
                r#"{"method":"x","params":{"id":1,"s":"\"id\":2"},"id": "a\"b" }"#,
                Some(json!("a\"b")),
            ),
            (r#"{"params":[{"id":3}],"jsonrpc":"2.0"}"#, None),
            (r#"{"id":{"no":1}}"#, None),
            (r#"{"idx":1,"id":-2.5}"#, Some(json!(-2.5))),
            ("DB_PASSWORD=hunter2", None),
        ] {
            for piece in [1, 3, 1000] {
                assert_eq!(id_of(text, piece), id, "{text} in pieces of {piece}");
            }
        }
    }
}
