//! `seq_mcp::http::serve` in this process, on loopback, with small bounds
//! (`seq_mcp::admission::Limits`): no caller can starve the others. A stalled body is answered
//! 408 and its connection closed; a `Content-Length` past the bound is 413 before any body;
//! connections without a token cannot keep a caller out; one caller's connections and calls in
//! flight are bounded; racing `initialize`s never overshoot the session bound; a resumption
//! after an answer already delivered is told so; a server bound to `127.0.0.2` answers to its
//! own name.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/http.rs"]
mod http;

use http::eventually;
use seq_exec::Caller;
use seq_exec::builtin::Captured;
use seq_exec::engine::CancellationToken;

use seq_mcp::admission::Limits;
use seq_mcp::http::{Access, HttpOptions, MAX_SESSIONS};
use seq_mcp::token::{Tokens, sha256_hex};
use seq_mcp::{McpHost, SeqServer};
use seq_store::storage::Storage;
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-9876543210";
/// How long a read waits before the test fails instead of hanging.
const GUARD: Duration = Duration::from_secs(120);

/// A server in this process, stopped when dropped.
struct Served {
    addr: SocketAddr,
    url: String,
    root: tempfile::TempDir,
    _data: tempfile::TempDir,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// Serves on `bind` (port 0) with `limits`; with tokens for alice and bob, or open.
    fn start(bind: &str, tokens: bool, limits: Limits) -> Served {
        let root = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let file = if tokens {
            serde_json::json!({"callers": {"alice": {"token_sha256": sha256_hex(ALICE)},
                                           "bob": {"token_sha256": sha256_hex(BOB)}}})
        } else {
            serde_json::json!({})
        };
        let file = seq_mcp::policy_file::PolicyFile::parse(&file.to_string()).unwrap();
        let policy = Arc::new(file.policy);
        let access = if tokens {
            Access::Tokens(Tokens::from_settings(&file.settings).unwrap())
        } else {
            Access::Open(Caller::new("local"))
        };
        let server = SeqServer::assemble(
            Storage::new(data.path().join("store")),
            root.path().to_path_buf(),
            Caller::new("local"),
            Arc::clone(&policy),
            Arc::new(McpHost::none()),
            Arc::new(Captured::new()),
        );
        let stop = CancellationToken::new();
        let (tell, told) = std::sync::mpsc::channel();
        let bind = bind.to_owned();
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind(&bind).await.unwrap();
                let addr = listener.local_addr().unwrap();
                tell.send(addr).unwrap();
                let options = HttpOptions::new(access, addr, &[], &[]).with_limits(limits);
                seq_mcp::http::serve(server, listener, options, stopped)
                    .await
                    .unwrap();
            });
        });
        let addr = told.recv().unwrap();
        Served {
            addr,
            url: format!("http://{addr}/mcp"),
            root,
            _data: data,
            stop,
            thread: Some(thread),
        }
    }

    /// A session of `token`'s caller with the sequence `waits` (its run ends once the file
    /// `go` is in the root) and `quick` (an echo).
    fn client(&self, token: Option<&str>) -> http::Client {
        let mut client = http::Client::connect(&self.url, token);
        let waits = "while [ ! -e go ]; do sleep 0.05; done";
        let waits = json!({"tool": "cmd_run", "args": {"command": waits}}).to_string() + " ;";
        let quick = json!({"tool": "echo", "args": {"value": 1}, "as": "v"}).to_string() + " ;";
        for (name, group) in [
            ("waits", json!({"name": "g", "tools": waits})),
            (
                "quick",
                json!({"name": "g", "out": {"v": "any"}, "tools": quick}),
            ),
        ] {
            let created = client.call(
                "seq_create",
                json!({"name": name, "replace": true, "groups": [group]}),
            );
            assert_ne!(created["isError"], true, "{created}");
        }
        client
    }

    /// A raw connection, its reads guarded.
    fn socket(&self) -> TcpStream {
        let socket = TcpStream::connect(self.addr).unwrap();
        socket.set_read_timeout(Some(GUARD)).unwrap();
        socket
    }

    /// The head of a POST to /mcp declaring `length` bytes of body, with `token` if given.
    fn post_head(&self, length: usize, token: Option<&str>) -> String {
        let auth = token
            .map(|token| format!("Authorization: Bearer {token}\r\n"))
            .unwrap_or_default();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n{auth}\r\n",
            self.addr
        )
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // Every run waiting on `go` ends; then the server stops.
        let _ = std::fs::write(self.root.path().join("go"), "");
        self.stop.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Everything the server sends until it closes the connection.
fn read_to_close(mut socket: TcpStream) -> String {
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

/// Whether the server closed `socket` (a read sees its end or a reset, not the guard).
fn closed(mut socket: TcpStream) -> bool {
    let mut byte = [0u8; 1];
    match socket.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(error) => matches!(
            error.kind(),
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
        ),
    }
}

#[test]
fn a_body_that_stalls_is_answered_408_and_its_connection_closed() {
    let served = Served::start(
        "127.0.0.1:0",
        false,
        Limits {
            body_timeout: Duration::from_millis(200),
            ..Limits::default()
        },
    );
    let mut socket = served.socket();
    socket
        .write_all(served.post_head(64, None).as_bytes())
        .unwrap();
    socket.write_all(b"{\"jsonrpc\":").unwrap();
    let answer = read_to_close(socket);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not come within 0.2 s"), "{answer}");
}

#[test]
fn a_content_length_past_the_bound_is_refused_before_the_body() {
    let served = Served::start("127.0.0.1:0", true, Limits::default());
    let mut socket = served.socket();
    let declared = 1 << 30;
    socket
        .write_all(served.post_head(declared, Some(ALICE)).as_bytes())
        .unwrap();
    let answer = read_to_close(socket);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let bound = seq_mcp::bound::MAX_MESSAGE_BYTES;
    assert!(
        answer.contains(&format!("is {declared} bytes, more than the {bound} bytes")),
        "{answer}"
    );
}

#[test]
fn connections_without_a_token_cannot_keep_a_caller_out() {
    let served = Served::start(
        "127.0.0.1:0",
        true,
        Limits {
            unproven_connections: 4,
            ..Limits::default()
        },
    );
    // Idle connections, and ones whose requests carry a wrong token: none names a caller.
    let idle: Vec<TcpStream> = (0..8).map(|_| served.socket()).collect();
    let mut wrong = served.socket();
    wrong
        .write_all(served.post_head(2, Some("wrong-token")).as_bytes())
        .unwrap();
    wrong.write_all(b"{}").unwrap();
    // Alice is served all the same: a newer connection is kept, the oldest unproven go.
    let mut alice = served.client(Some(ALICE));
    let answer = alice.call("seq_list", json!({}));
    assert_ne!(answer["isError"], true, "{answer}");
    // Nine connections named no caller, four may: the five oldest were closed for newer ones.
    for socket in idle.into_iter().take(5) {
        assert!(closed(socket), "an old connection without a token was kept");
    }
}

#[test]
fn one_caller_cannot_hold_more_than_its_share_of_connections() {
    let served = Served::start(
        "127.0.0.1:0",
        true,
        Limits {
            connections_per_caller: 3,
            ..Limits::default()
        },
    );
    // Three of alice's connections, each kept open after a request that named her; one more
    // sends its headers and half its body, and would hold a slot for the body timeout.
    let held: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut socket = served.socket();
            let head = format!(
                "GET /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {ALICE}\r\n\
                 Accept: text/event-stream\r\n\r\n",
                served.addr
            );
            socket.write_all(head.as_bytes()).unwrap();
            let mut status = [0u8; 12];
            socket.read_exact(&mut status).unwrap();
            assert_eq!(&status[..9], b"HTTP/1.1 ", "{status:?}");
            socket
        })
        .collect();
    let mut third = served.socket();
    third
        .write_all(served.post_head(64, Some(ALICE)).as_bytes())
        .unwrap();
    third.write_all(b"{\"jsonrpc\":").unwrap();
    let answer = read_to_close(third);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("retry-after"), "{answer}");
    assert!(
        answer.contains("caller `alice` has 3 connections open, the most one caller may hold (3)"),
        "{answer}"
    );
    // Bob is served meanwhile (a session: two connections at once).
    let bob = http::Client::open(&served.url, Some(BOB));
    assert!(bob.is_ok(), "{bob:?}");
    // Alice's slots come back when her connections close.
    drop(held);
    eventually("alice's connections released", || {
        http::Client::open(&served.url, Some(ALICE)).is_ok()
    });
}

#[test]
fn one_caller_cannot_have_more_than_its_share_of_calls_in_flight() {
    let served = Served::start(
        "127.0.0.1:0",
        true,
        Limits {
            calls_per_caller: 2,
            ..Limits::default()
        },
    );
    let mut alice = served.client(Some(ALICE));
    let running: Vec<(u64, http::Response)> = (0..2)
        .map(|_| {
            let (id, stream) = alice.start_call("seq_run", json!({"name": "waits"}));
            assert_eq!(stream.status, 200, "{stream:?}");
            (id, stream)
        })
        .collect();
    let (_, refused) = alice.start_call("seq_run", json!({"name": "quick"}));
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("5"));
    let text = refused.text();
    assert!(
        text.contains(
            "caller `alice` has 2 calls being answered, the most one caller may have (2)"
        ),
        "{text}"
    );
    // Bob's calls are answered meanwhile.
    let mut bob = http::Client::connect(&served.url, Some(BOB));
    let listed = bob.call("seq_list", json!({}));
    assert_ne!(listed["isError"], true, "{listed}");
    // Once alice's runs end, her slots are free again.
    std::fs::write(served.root.path().join("go"), "").unwrap();
    for (id, mut stream) in running {
        let answer = stream.answer(id);
        assert_eq!(answer["structuredContent"]["ok"], true, "{answer}");
    }
    for _ in 0..3 {
        let answer = alice.call("seq_run", json!({"name": "quick"}));
        assert_eq!(answer["structuredContent"]["ok"], true, "{answer}");
    }
}

#[test]
fn racing_initializes_never_open_more_sessions_than_the_bound() {
    let served = Served::start("127.0.0.1:0", false, Limits::default());
    let url = served.url.clone();
    let threads: Vec<_> = (0..40)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                (0..8)
                    .map(|_| http::Client::open(&url, None))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut opened = Vec::new();
    let mut refused = 0;
    for thread in threads {
        for result in thread.join().unwrap() {
            match result {
                Ok(client) => opened.push(client),
                Err(answer) => {
                    assert_eq!(answer.status, 503, "{answer:?}");
                    refused += 1;
                }
            }
        }
    }
    assert!(opened.len() <= MAX_SESSIONS, "{} sessions", opened.len());
    assert_eq!(opened.len() + refused, 320);
}

#[test]
fn a_resumption_after_a_delivered_answer_is_told_so() {
    let served = Served::start("127.0.0.1:0", false, Limits::default());
    let mut client = served.client(None);
    // With a progress token, the run's progress comes before its answer, each an event.
    let (id, mut stream) = client.request(
        "tools/call",
        json!({"name": "seq_run", "arguments": {"name": "quick"},
               "_meta": {"progressToken": "p"}}),
    );
    let first = stream.event().unwrap().id.unwrap();
    let answer = stream.answer(id);
    assert_eq!(answer["structuredContent"]["ok"], true, "{answer}");
    assert!(stream.event().is_none(), "the stream ends with its answer");
    let mut resumed = client.resume(&first);
    assert_eq!(resumed.status, 200, "{resumed:?}");
    let told = resumed.answer(id);
    assert!(
        told["message"]
            .as_str()
            .unwrap()
            .contains("already delivered"),
        "{told}"
    );
}

#[test]
fn a_server_bound_to_another_loopback_address_answers_to_it() {
    let served = Served::start("127.0.0.2:0", false, Limits::default());
    // The raw client's `Host` is the address it reaches.
    let mut client = served.client(None);
    assert_ne!(client.call("seq_list", json!({}))["isError"], true);
    let allowed = HttpOptions::new(
        Access::Open(Caller::new("local")),
        "[::1]:7000".parse().unwrap(),
        &[],
        &[],
    );
    assert!(
        allowed
            .allowed_origins
            .contains(&"http://[::1]:7000".to_owned())
    );
}

/// Ending a session is 200 (the Python SDK takes only 200 or 204 as ended); ending it again, or
/// one that never was, is 404, as the specification says.
#[test]
fn ending_an_unknown_session_is_404() {
    let served = Served::start("127.0.0.1:0", false, Limits::default());
    let mut client = served.client(None);
    assert_eq!(client.delete().status, 200);
    assert_eq!(client.delete().status, 404);
    client.session = Some("no-such-session".to_owned());
    assert_eq!(client.delete().status, 404);
}
