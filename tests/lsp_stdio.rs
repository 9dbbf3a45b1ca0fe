//! `seqc lsp` over real pipes, fed bytes that are not JSON-RPC: broken headers, bodies
//! that are not JSON, JSON that is not a message, wrong lengths. The server answers what has an
//! id, logs what has none, finds the next frame and goes on serving; the session's order
//! (before `initialize`, `exit` without `shutdown`) is answered as the protocol says.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// How long to wait for the server before failing the test (a hang, not a slow answer).
const PATIENCE: Duration = Duration::from_secs(30);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    /// Log messages received so far.
    logs: Vec<Value>,
}

impl Server {
    fn start() -> Server {
        let (child, stdin, stdout) = common::spawn_piped(common::command().arg("lsp"));
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(body) = read_frame(&mut reader) {
                if sender.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Server {
            child,
            stdin: Some(stdin),
            messages,
            logs: Vec::new(),
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }

    /// Waits for the answer to request `id`, keeping the logs that come before it.
    fn answer(&mut self, id: i64) -> Value {
        loop {
            let message = self.receive(&format!("the answer to {id}"));
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            if message["method"] == "window/logMessage" {
                self.logs.push(message);
            }
        }
    }

    fn receive(&self, what: &str) -> Value {
        self.messages
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|err| panic!("waiting for {what}: {err}"))
    }

    /// Sends `bytes`, then a request the server does not know: its answer comes after anything
    /// the bytes caused. Returns the log messages that came meanwhile.
    fn feed(&mut self, bytes: &[u8], ping: i64) -> Vec<Value> {
        let before = self.logs.len();
        self.raw(bytes);
        let pong = self.request(ping, "seqc/ping", Value::Null);
        assert_eq!(pong["error"]["code"], -32601, "{pong}");
        self.logs.split_off(before)
    }

    fn initialize(&mut self) {
        let answer = self.request(1, "initialize", json!({"capabilities": {}}));
        assert!(answer["result"]["capabilities"].is_object(), "{answer}");
        self.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    }

    /// Closes stdin (after `exit`, or to hang up) and returns the exit status.
    fn wait(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().unwrap().code().unwrap()
    }
}

/// One frame of the server's output: it must be well formed, so this reader is strict.
fn read_frame(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        let line = line.strip_suffix("\r\n").expect("headers end in CRLF");
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(": ").unwrap();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<usize>().unwrap());
        }
    }
    let mut body = vec![0; length.expect("a Content-Length")];
    reader.read_exact(&mut body).unwrap();
    Some(body)
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

#[test]
fn frames_that_are_not_json_rpc_are_answered_or_logged_and_the_server_goes_on() {
    let mut server = Server::start();
    server.initialize();

    // No id can be known: each is logged, once.
    let shutdown = br#"{"jsonrpc":"2.0","id":99,"method":"shutdown"}"#;
    let unanswerable: Vec<(&str, Vec<u8>)> = vec![
        ("a body that is not JSON", frame(b"{not json")),
        ("a body that is not UTF-8", frame(b"{\"a\": \"\xff\xfe\"}")),
        ("JSON that is not an object", frame(b"[1, 2, 3]")),
        (
            "a notification without a method name",
            frame(br#"{"jsonrpc":"2.0","method":7}"#),
        ),
        (
            "an id that is neither an i32 nor a string",
            frame(br#"{"jsonrpc":"2.0","id":1.5,"method":"textDocument/hover"}"#),
        ),
        (
            "a malformed answer",
            frame(br#"{"jsonrpc":"2.0","id":[1],"result":1}"#),
        ),
        (
            // The request inside is skipped with its header: it must not shut the server down.
            "a Content-Length that is not a number",
            [b"Content-Length: twelve\r\n\r\n".as_slice(), shutdown].concat(),
        ),
        (
            "a header block without Content-Length",
            [
                b"Content-Type: application/json\r\n\r\n".as_slice(),
                shutdown,
            ]
            .concat(),
        ),
        (
            "a line that is not a header",
            b"hello, server\r\n\r\n".to_vec(),
        ),
        (
            "a Content-Length past the bound",
            b"Content-Length: 99999999999999\r\n\r\n".to_vec(),
        ),
    ];
    let mut ping = 100;
    for (what, bytes) in &unanswerable {
        ping += 1;
        let logs = server.feed(bytes, ping);
        assert_eq!(logs.len(), 1, "{what}: {logs:#?}");
        assert_eq!(logs[0]["params"]["type"], 1, "{what}: an error is logged");
    }

    // An id can be read: the request gets -32600.
    for (id, body) in [
        (7, r#"{"jsonrpc":"2.0","id":7,"method":5}"#),
        (8, r#"{"jsonrpc":"2.0","id":8}"#),
    ] {
        server.raw(&frame(body.as_bytes()));
        let answer = server.answer(id);
        assert_eq!(answer["error"]["code"], -32600, "{body}: {answer}");
    }

    // A Content-Length too short cuts the body; its rest is skipped up to the next frame.
    let whole = br#"{"jsonrpc":"2.0","id":20,"method":"seqc/ping"}"#;
    let logs = server.feed(
        &[b"Content-Length: 10\r\n\r\n".as_slice(), whole].concat(),
        21,
    );
    assert!(!logs.is_empty(), "{logs:#?}");
    // A Content-Length too long swallows the next frames' start; they are found in it.
    let mut swallowing =
        b"Content-Length: 160\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}".to_vec();
    for id in 30..34 {
        swallowing.extend(frame(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"seqc/ping"}}"#).as_bytes(),
        ));
    }
    server.raw(&swallowing);
    for id in 30..34 {
        assert_eq!(server.answer(id)["error"]["code"], -32601, "request {id}");
    }

    // Methods and parameters the server does not take.
    let unknown = server.request(40, "textDocument/unheardOf", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let bad_params = server.request(41, "textDocument/hover", json!({"textDocument": 5}));
    assert_eq!(bad_params["error"]["code"], -32602);
    server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": 3}));

    // Still serving: a broken document gets its diagnostics.
    let text = r#"{"name": "s", "groups": [{"name": "g", "paralell": true, "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}} ;"}]}"#;
    server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": "untitled:x.json", "languageId": "json", "version": 1, "text": text}
    }}));
    let published = loop {
        let message = server.receive("the diagnostics of x.json");
        if message["method"] == "textDocument/publishDiagnostics" {
            break message;
        }
    };
    assert_eq!(published["params"]["diagnostics"][0]["code"], "E0101");

    let shutdown = server.request(50, "shutdown", Value::Null);
    assert_eq!(shutdown["result"], Value::Null, "{shutdown}");
    server.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(server.wait(), 0);
}

#[test]
fn the_session_order_is_answered_and_exit_statuses_follow_the_protocol() {
    let mut server = Server::start();
    let early = server.request(1, "textDocument/hover", json!({}));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    let bad = server.request(2, "initialize", json!({"capabilities": "none"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    server.initialize();
    let again = server.request(3, "initialize", json!({"capabilities": {}}));
    assert_eq!(again["error"]["code"], -32600, "{again}");
    // `exit` without `shutdown`: status 1.
    server.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(server.wait(), 1);

    // The client hangs up in the middle of a frame: the server ends, it does not wait.
    let mut server = Server::start();
    server.initialize();
    server.raw(b"Content-Length: 50\r\n\r\n{\"jsonrpc\"");
    assert_eq!(server.wait(), 1);

    // After `shutdown`, requests are refused until `exit`: status 0.
    let mut server = Server::start();
    server.initialize();
    assert_eq!(
        server.request(4, "shutdown", Value::Null)["result"],
        Value::Null
    );
    let late = server.request(5, "textDocument/hover", json!({}));
    assert_eq!(late["error"]["code"], -32600, "{late}");
    server.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(server.wait(), 0);
}
