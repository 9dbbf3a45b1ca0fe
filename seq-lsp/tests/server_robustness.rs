//! The server survives clients that break the protocol's order or outrun it: messages
//! before `initialize` and after `shutdown`, notifications about documents in states they are
//! not in, and edits faster than it can check. (Frames that are not JSON-RPC at all are the
//! stdio transport's to survive: `tests/lsp_stdio.rs` at the root drives the real binary.)

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{Client, Offer, codes, marked, with_code, workspace};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{DidChangeTextDocument, DidOpenTextDocument, Notification as _};
use lsp_types::request::{HoverRequest, Request as _};
use lsp_types::{
    DidChangeTextDocumentParams, TextDocumentContentChangeEvent, VersionedTextDocumentIdentifier,
};
use std::thread::JoinHandle;
use std::time::Duration;

/// A raw connection to a server thread, for the handshake's own tests.
struct Raw {
    connection: Connection,
    server: JoinHandle<Result<seq_lsp::Ending, seq_lsp::ServerError>>,
}

impl Raw {
    fn start() -> Raw {
        let (server_side, connection) = Connection::memory();
        let server = std::thread::spawn(move || seq_lsp::run(server_side));
        Raw { connection, server }
    }

    fn request(&self, id: i32, method: &str, params: serde_json::Value) -> Response {
        let request = Request::new(id.into(), method.to_owned(), params);
        self.connection.sender.send(request.into()).unwrap();
        loop {
            match self.receive() {
                Message::Response(response) => {
                    assert_eq!(response.id, RequestId::from(id));
                    return response;
                }
                Message::Notification(_) | Message::Request(_) => {}
            }
        }
    }

    fn notify(&self, method: &str, params: serde_json::Value) {
        let notification = Notification::new(method.to_owned(), params);
        self.connection.sender.send(notification.into()).unwrap();
    }

    fn receive(&self) -> Message {
        self.connection
            .receiver
            .recv_timeout(Duration::from_secs(30))
            .expect("the server answers")
    }

    fn end(self) -> seq_lsp::Ending {
        drop(self.connection);
        self.server.join().unwrap().unwrap()
    }
}

fn error_code(response: Response) -> i32 {
    response.response_result.unwrap_err().code
}

fn initialize_params() -> serde_json::Value {
    serde_json::to_value(lsp_types::InitializeParams::default()).unwrap()
}

const BROKEN: &str = r#"{"name": "s", "groups": [{"name": "g", "paralell": true,
  "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}} ;"}]}
"#;

#[test]
fn before_initialize_requests_are_refused_and_notifications_dropped() {
    let raw = Raw::start();
    let hover = serde_json::json!({
        "textDocument": {"uri": "untitled:a.json"}, "position": {"line": 0, "character": 0}
    });
    assert_eq!(
        error_code(raw.request(1, HoverRequest::METHOD, hover.clone())),
        ErrorCode::ServerNotInitialized as i32
    );
    // Dropped: the document is not open afterwards.
    raw.notify(
        DidOpenTextDocument::METHOD,
        serde_json::json!({"textDocument": {
            "uri": "untitled:early.json", "languageId": "json", "version": 1, "text": BROKEN
        }}),
    );
    // An `initialize` that does not parse is refused, and the server waits for a good one.
    assert_eq!(
        error_code(raw.request(2, "initialize", serde_json::json!({"capabilities": 7}))),
        ErrorCode::InvalidParams as i32
    );
    let initialized = raw.request(3, "initialize", initialize_params());
    assert!(initialized.response_result.is_ok(), "{initialized:?}");
    raw.notify("initialized", serde_json::json!({}));
    assert_eq!(
        error_code(raw.request(4, "initialize", initialize_params())),
        ErrorCode::InvalidRequest as i32
    );
    // The early document was never opened: the first publish is the one opened now.
    raw.notify(
        DidOpenTextDocument::METHOD,
        serde_json::json!({"textDocument": {
            "uri": "untitled:late.json", "languageId": "json", "version": 1, "text": BROKEN
        }}),
    );
    let published = loop {
        if let Message::Notification(n) = raw.receive()
            && n.method == "textDocument/publishDiagnostics"
        {
            break n.params;
        }
    };
    assert_eq!(published["uri"], "untitled:late.json");

    let shutdown = raw.request(5, "shutdown", serde_json::Value::Null);
    assert!(shutdown.response_result.is_ok(), "{shutdown:?}");
    assert_eq!(
        error_code(raw.request(6, HoverRequest::METHOD, hover)),
        ErrorCode::InvalidRequest as i32
    );
    raw.notify("textDocument/didClose", serde_json::json!({}));
    raw.notify("exit", serde_json::Value::Null);
    assert_eq!(raw.end(), seq_lsp::Ending::Orderly);
}

#[test]
fn exit_without_shutdown_and_hang_ups_end_abruptly() {
    let raw = Raw::start();
    raw.notify("exit", serde_json::Value::Null);
    assert_eq!(raw.end(), seq_lsp::Ending::Abrupt);

    let raw = Raw::start();
    assert!(
        raw.request(1, "initialize", initialize_params())
            .response_result
            .is_ok()
    );
    raw.notify("exit", serde_json::Value::Null);
    assert_eq!(raw.end(), seq_lsp::Ending::Abrupt);

    // The client goes away before and after initializing.
    assert_eq!(Raw::start().end(), seq_lsp::Ending::Abrupt);
    let raw = Raw::start();
    assert!(
        raw.request(1, "initialize", initialize_params())
            .response_result
            .is_ok()
    );
    assert_eq!(raw.end(), seq_lsp::Ending::Abrupt);
}

fn logs(client: &Client) -> usize {
    client
        .notifications
        .iter()
        .filter(|n| n.method == "window/logMessage")
        .count()
}

#[test]
fn notifications_out_of_order_are_ignored_or_applied_and_logged() {
    let on_disk = BROKEN;
    let root = workspace("out-of-order", &[("disk.json", on_disk)]);
    let mut client = Client::start(&root, Offer::Default);
    let disk = client.uri("disk.json");
    client.diagnostics_until(&disk, "the workspace file's diagnostics", |p| {
        codes(&p.diagnostics) == ["E0101"]
    });
    client.sync();
    let mut logged = logs(&client);

    // A change to a document never opened: ignored, logged, nothing published.
    let stranger = client.uri("never-opened.json");
    client.replace(&stranger, 2, BROKEN);
    // A change to a workspace file that is not open: the disk's text stays what counts.
    client.replace(&disk, 2, "{}");
    // Closing what is not open: ignored; the workspace file keeps its diagnostics.
    client.close(&disk);
    client.close(&stranger);
    client.sync();
    assert_eq!(logs(&client), logged + 4, "{:#?}", client.notifications);
    logged = logs(&client);
    assert!(client.published.iter().all(|p| p.uri != stranger));
    assert_eq!(codes(&client.last_diagnostics(&disk)), ["E0101"]);

    // A version that goes backwards is applied (it is the client's text) and logged.
    let uri = client.uri("open.json");
    let broken = BROKEN.replace("\"s\"", "\"t\"");
    client.notify::<DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
        text_document: lsp_types::TextDocumentItem::new(
            uri.clone(),
            "json".to_owned(),
            5,
            broken.clone(),
        ),
    });
    client.diagnostics_of_version(&uri, 5);
    let fixed = broken.replace("paralell", "parallel");
    client.replace(&uri, 3, &fixed);
    let back = client.diagnostics_of_version(&uri, 3);
    assert!(back.diagnostics.is_empty(), "{back:#?}");
    // Opening an open document again: its text is replaced.
    client.notify::<DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
        text_document: lsp_types::TextDocumentItem::new(
            uri.clone(),
            "json".to_owned(),
            9,
            broken.clone(),
        ),
    });
    let reopened = client.diagnostics_of_version(&uri, 9);
    assert_eq!(codes(&reopened.diagnostics), ["E0101"]);
    client.sync();
    assert_eq!(logs(&client), logged + 2, "{:#?}", client.notifications);

    // An incremental edit whose range lies past the end of the text is clamped, not a crash.
    let far = lsp_types::Range::new(
        lsp_types::Position::new(999, 5),
        lsp_types::Position::new(3, 999),
    );
    client.edit(&uri, 10, Some(far), " ");
    let clamped = client.diagnostics_of_version(&uri, 10);
    assert_eq!(codes(&clamped.diagnostics), ["E0101"]);
    client.shutdown();
}

/// Version `k`: the undeclared `$args.late` sits `k` columns further right than in version 0.
/// Groups after it make each check slow enough for the edits to outrun it.
fn shifted(k: usize) -> (String, Vec<u32>) {
    let padding = " ".repeat(k);
    let filler: String = (0..400)
        .map(|i| {
            format!(
                r#",
    {{"name": "fill{i}", "tools": "{{\"tool\":\"echo\",\"args\":{{\"value\":{i}}}}} ;"}}"#
            )
        })
        .collect();
    marked(&format!(
        r#"{{"name": "fast", "groups": [{{"name": "g", "out": {{"said": "string"}},
  "tools": "{{\"tool\":\"echo\",\"args\":{{\"value\":\"{padding}┃$args.late┃\"}},\"as\":\"said\"}} ;"}}{filler}]}}
"#
    ))
}

#[test]
fn edits_faster_than_checks_never_publish_stale_results_and_requests_are_answered() {
    const LAST: usize = 300;
    let root = workspace("flood", &[]);
    let mut client = Client::start(&root, Offer::Default);
    let (first, _) = shifted(1);
    let uri = client.open("fast.json", &first);
    // Each version inserts one space before `$args.late`, as a typist would, without waiting.
    let mut hovers = Vec::new();
    for k in 2..=LAST {
        let (before, at) = shifted(k - 1);
        let insert_at = client.position(&before, at[0] - "$args.".len() as u32);
        client.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
            text_document: VersionedTextDocumentIdentifier::new(uri.clone(), k as i32),
            content_changes: vec![TextDocumentContentChangeEvent {
                range: Some(lsp_types::Range::new(insert_at, insert_at)),
                range_length: None,
                text: " ".to_owned(),
            }],
        });
        if k % 25 == 0 {
            // A hover on the group's name, asked of version k, answered whatever comes after.
            let (text, _) = shifted(k);
            let name = text.find("\"g\"").unwrap() as u32 + 1;
            let params = client.text_document_position(&uri, &text, name);
            hovers.push(client.request_later(
                HoverRequest::METHOD,
                serde_json::json!({
                    "textDocument": params.text_document, "position": params.position
                }),
            ));
        }
    }
    // The main loop answers the ping itself, after it has taken every change before it: from
    // then on, only the newest version may be published.
    client.sync();
    let newest_known = client.published.len();
    for id in &hovers {
        let hover = client.answer(id).unwrap();
        assert!(hover["contents"].is_object(), "{hover}");
    }
    client.diagnostics_of_version(&uri, LAST as i32);
    client.sync();
    let stale: Vec<Option<i32>> = client.published[newest_known..]
        .iter()
        .filter(|p| p.uri == uri && p.version != Some(LAST as i32))
        .map(|p| p.version)
        .collect();
    assert!(
        stale.is_empty(),
        "published after version {LAST} was known: {stale:?}"
    );

    let ours: Vec<&lsp_types::PublishDiagnosticsParams> =
        client.published.iter().filter(|p| p.uri == uri).collect();
    let versions: Vec<i32> = ours.iter().map(|p| p.version.unwrap()).collect();
    assert!(
        versions.windows(2).all(|w| w[0] < w[1]),
        "a publish for an older version came after a newer one: {versions:?}"
    );
    assert_eq!(
        versions.last(),
        Some(&(LAST as i32)),
        "something was published after the newest version: {versions:?}"
    );
    // Every publish carries its own version's diagnostics.
    for published in &ours {
        let (text, at) = shifted(published.version.unwrap() as usize);
        let undeclared = with_code(published, "E0502");
        assert_eq!(undeclared.range, client.range(&text, at[0], at[1]));
    }
    client.shutdown();
}

#[test]
fn the_workspace_walk_skips_fifos_sockets_and_devices_without_blocking() {
    let root = workspace("special-files", &[("z-disk.json", BROKEN)]);
    // Walked in name order, all before the sequence file: a walk that blocked on any of them
    // would never publish its diagnostics.
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("a-pipe.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let _socket = std::os::unix::net::UnixListener::bind(root.join("b-socket.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("c-zero.json")).unwrap();
    let mut client = Client::start(&root, Offer::Default);
    let disk = client.uri("z-disk.json");
    client.diagnostics_until(&disk, "the workspace file's diagnostics", |p| {
        codes(&p.diagnostics) == ["E0101"]
    });
    client.shutdown();
}

/// A literal `jq` filter nested 3,000 deep (6 KB of file): jaq's parser would descend
/// it on the server's stack. It is a diagnostic (E1004) instead, and the server goes on:
/// coloured and hovered without descending it either.
#[test]
fn a_deeply_nested_jq_filter_is_a_diagnostic_not_a_crash() {
    let filter = format!("{}.{}", "[(".repeat(1500), ")]".repeat(1500));
    let tools =
        serde_json::json!({"tool": "jq", "args": {"filter": filter}, "as": "v"}).to_string() + " ;";
    let text = serde_json::json!({"name": "deep", "groups": [
        {"name": "g", "out": {"v": "any"}, "tools": tools}
    ]})
    .to_string();
    assert!(text.len() > 6000);
    let root = workspace("deep-jq", &[]);
    let mut client = Client::start(&root, Offer::Default);
    let uri = client.open("deep.json", &text);
    client.diagnostics_until(&uri, "the filter's diagnostic", |p| {
        codes(&p.diagnostics).contains(&"E1004".to_owned())
    });
    let tokens = client.request::<lsp_types::request::SemanticTokensFullRequest>(
        lsp_types::SemanticTokensParams {
            text_document: lsp_types::TextDocumentIdentifier::new(uri.clone()),
            work_done_progress_params: lsp_types::WorkDoneProgressParams::default(),
            partial_result_params: lsp_types::PartialResultParams::default(),
        },
    );
    assert!(tokens.is_some());
    let at = u32::try_from(text.find("[(").unwrap()).unwrap();
    let position = client.text_document_position(&uri, &text, at);
    let _ = client.request::<HoverRequest>(lsp_types::HoverParams {
        text_document_position_params: position,
        work_done_progress_params: lsp_types::WorkDoneProgressParams::default(),
    });
    client.shutdown();
}
