//! `seqc mcp --http` started for a test, and a raw MCP client over streamable HTTP on a plain
//! `TcpStream`: each request its own connection, which the test reads, holds or drops as it
//! pleases (a dropped connection mid-run, a stream resumed with `Last-Event-ID`).

#![allow(dead_code, reason = "each test binary uses a part of this module")]

use crate::common;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

/// How long a read waits before the test fails instead of hanging.
const READ_TIMEOUT: Duration = Duration::from_secs(120);

/// A policy file `dir/policy.json` giving each `(caller, token)` its token (as its SHA-256),
/// and its path.
pub fn token_policy<C: AsRef<str>, T: AsRef<str>>(
    dir: &Path,
    callers: impl IntoIterator<Item = (C, T)>,
) -> PathBuf {
    let callers: serde_json::Map<String, Value> = callers
        .into_iter()
        .map(|(caller, token)| {
            let hash = seq_mcp::token::sha256_hex(token.as_ref());
            (caller.as_ref().to_owned(), json!({"token_sha256": hash}))
        })
        .collect();
    let path = dir.join("policy.json");
    std::fs::write(&path, json!({"callers": callers}).to_string()).unwrap();
    path
}

/// Polls `ready` up to 4500 times, 20 ms apart, until it holds: only a broken server runs out.
pub fn eventually(what: &str, mut ready: impl FnMut() -> bool) {
    for _ in 0..4500 {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{what}: not after 4500 polls");
}

/// `seqc mcp --http 127.0.0.1:0 ARGS`, started, and the URL it printed once listening.
pub fn serve(args: &[&str]) -> (Child, String) {
    let mut child = common::command()
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().expect("seqc says where it serves").unwrap();
        if let Some(url) = line.strip_prefix("seqc mcp: serving MCP at ") {
            break url.to_owned();
        }
    };
    // The rest of stderr is read away, so that seqc never blocks on it.
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

/// [`serve`] with `root` as its root and `data` as its data directory, then `options`.
pub fn serve_in(root: &Path, data: &Path, options: &[&str]) -> (Child, String) {
    let (root, data) = (root.to_str().unwrap(), data.to_str().unwrap());
    serve(&[&["--root", root, "--data-dir", data], options].concat())
}

/// SIGTERM, then its exit status.
pub fn stop(mut child: Child) -> Option<i32> {
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    child.wait().unwrap().code()
}

/// One MCP session over HTTP.
#[derive(Debug)]
pub struct Client {
    addr: SocketAddr,
    token: Option<String>,
    pub session: Option<String>,
    next_id: u64,
}

impl Client {
    /// A session at `url` (`http://127.0.0.1:PORT/mcp`), initialized, with `token` if given.
    pub fn connect(url: &str, token: Option<&str>) -> Client {
        Client::open(url, token).unwrap_or_else(|refused| panic!("initialize: {refused:?}"))
    }

    /// [`Client::connect`], or the answer that refused the session.
    pub fn open(url: &str, token: Option<&str>) -> Result<Client, Box<Response>> {
        let authority = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .expect("an http://HOST:PORT/mcp URL");
        let mut client = Client {
            addr: authority.parse().unwrap(),
            token: token.map(str::to_owned),
            session: None,
            next_id: 0,
        };
        let (id, mut stream) = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "0"}}),
        );
        if stream.status != 200 {
            return Err(Box::new(stream));
        }
        client.session = stream.header("mcp-session-id").map(str::to_owned);
        assert!(client.session.is_some(), "no session: {stream:?}");
        stream.answer(id);
        let accepted = client.send(
            "POST",
            Some(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            &[],
        );
        assert_eq!(accepted.status, 202, "{accepted:?}");
        Ok(client)
    }

    /// Sends request `method`: its id and the open answer.
    pub fn request(&mut self, method: &str, params: Value) -> (u64, Response) {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        (id, self.send("POST", Some(&message), &[]))
    }

    /// Starts `tools/call` of `tool`: its id and the open answer (an SSE stream).
    pub fn start_call(&mut self, tool: &str, arguments: Value) -> (u64, Response) {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// Calls `tool` to its answer: the result.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let (id, mut stream) = self.start_call(tool, arguments);
        stream.answer(id)
    }

    /// The stream after `last_event_id` resumed, and the answer to `id` on it: that of a run
    /// cancelled meanwhile (its connection dropped, nobody came back within the window).
    pub fn resume_cancelled(&mut self, last_event_id: &str, id: u64) {
        let mut resumed = self.resume(last_event_id);
        assert_eq!(resumed.status, 200, "{resumed:?}");
        let answer = resumed.answer(id);
        assert_eq!(answer["isError"], true, "{answer}");
        let report = &answer["structuredContent"]["report"];
        assert_eq!(report["groups"][0]["status"], "cancelled", "{answer}");
    }

    /// `GET /mcp` with `Last-Event-ID`: the stream resumed after that event.
    pub fn resume(&mut self, last_event_id: &str) -> Response {
        self.send("GET", None, &[("Last-Event-ID", last_event_id)])
    }

    /// `DELETE /mcp`: ends the session.
    pub fn delete(&mut self) -> Response {
        self.send("DELETE", None, &[])
    }

    /// One HTTP request on a connection of its own.
    pub fn send(&self, method: &str, body: Option<&Value>, extra: &[(&str, &str)]) -> Response {
        let body = body.map(Value::to_string).unwrap_or_default();
        self.send_text(method, &body, extra)
    }

    /// One HTTP request whose body is `body` as written (JSON or not).
    pub fn send_text(&self, method: &str, body: &str, extra: &[(&str, &str)]) -> Response {
        let mut socket = TcpStream::connect(self.addr).unwrap();
        socket.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        if let Some(session) = &self.session {
            head.push_str(&format!(
                "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
            ));
        }
        for (name, value) in extra {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        socket.write_all(head.as_bytes()).unwrap();
        socket.write_all(body.as_bytes()).unwrap();
        Response::read(socket)
    }
}

/// An HTTP answer whose body is read as it comes.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    body: BufReader<Body>,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// One SSE event.
#[derive(Clone, Debug, Default)]
pub struct Event {
    pub id: Option<String>,
    pub data: String,
}

impl Response {
    fn read(socket: TcpStream) -> Response {
        let mut reader = BufReader::new(socket);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP status line: {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((name, value)) = trimmed.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let find = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        let framing = if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            Framing::Chunked {
                left: 0,
                done: false,
            }
        } else {
            Framing::Length(
                find("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
            )
        };
        Response {
            status,
            headers,
            body: BufReader::new(Body {
                inner: reader,
                framing,
            }),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The whole body as text (a plain answer).
    pub fn text(mut self) -> String {
        let mut text = String::new();
        self.body.read_to_string(&mut text).unwrap();
        text
    }

    /// The next SSE event, `None` when the stream ended.
    pub fn event(&mut self) -> Option<Event> {
        let mut event = Event::default();
        let mut any = false;
        let mut line = String::new();
        loop {
            line.clear();
            if self.body.read_line(&mut line).unwrap() == 0 {
                return any.then_some(event);
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if any {
                    return Some(event);
                }
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => {
                    event.id = Some(value.to_owned());
                    any = true;
                }
                "data" => {
                    if !event.data.is_empty() {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    any = true;
                }
                // `retry:`, and `:` comments (keep-alives).
                _ => {}
            }
        }
    }

    /// The JSON-RPC messages of the stream until the answer to `id`: the answer's `result` (or
    /// `error`). Panics when the stream ends first.
    pub fn answer(&mut self, id: u64) -> Value {
        self.answer_noting(id, |_| {})
    }

    /// [`Response::answer`], handing each other message (notifications) to `note`.
    pub fn answer_noting(&mut self, id: u64, mut note: impl FnMut(&Value)) -> Value {
        while let Some(event) = self.event() {
            if event.data.is_empty() {
                continue;
            }
            let message: Value = serde_json::from_str(&event.data).unwrap();
            if message["id"] == id {
                return message.get("result").unwrap_or(&message["error"]).clone();
            }
            note(&message);
        }
        panic!("the stream ended without the answer to request {id}");
    }
}

/// How the body's end is known.
enum Framing {
    Chunked { left: usize, done: bool },
    Length(usize),
}

/// A response body, de-chunked.
struct Body {
    inner: BufReader<TcpStream>,
    framing: Framing,
}

impl Read for Body {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.framing {
            Framing::Length(left) => {
                // Read nothing more: an empty read would wait for the connection to close.
                if *left == 0 {
                    return Ok(0);
                }
                let wanted = buf.len().min(*left);
                let n = self.inner.read(&mut buf[..wanted])?;
                *left -= n;
                Ok(n)
            }
            Framing::Chunked { left, done } => {
                if *done {
                    return Ok(0);
                }
                if *left == 0 {
                    let mut size = String::new();
                    if self.inner.read_line(&mut size)? == 0 {
                        *done = true;
                        return Ok(0);
                    }
                    let size = size.trim();
                    let size = size.split(';').next().unwrap_or(size);
                    *left = usize::from_str_radix(size, 16).map_err(std::io::Error::other)?;
                    if *left == 0 {
                        *done = true;
                        return Ok(0);
                    }
                }
                let wanted = buf.len().min(*left);
                let n = self.inner.read(&mut buf[..wanted])?;
                if n == 0 {
                    *done = true;
                    return Ok(0);
                }
                *left -= n;
                if *left == 0 {
                    let mut crlf = String::new();
                    self.inner.read_line(&mut crlf)?;
                }
                Ok(n)
            }
        }
    }
}
