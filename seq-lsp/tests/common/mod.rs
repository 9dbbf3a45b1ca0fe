//! An in-process LSP client: the server runs on a thread over `Connection::memory()`, the test
//! sends what an editor would and reads what comes back. Fixtures mark cursor positions with
//! [`MARKER`] instead of hand-written coordinates; [`Client::position`] turns a marked offset into
//! a position in the encoding the server negotiated.

#![allow(dead_code)] // Each test binary uses a different part of the harness.
#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response, ResponseError};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Exit, Initialized, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{Initialize, Request as _, Shutdown};
use lsp_types::{
    ClientCapabilities, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams, FileEvent,
    GeneralClientCapabilities, InitializeParams, InitializeResult, Position, PositionEncodingKind,
    PublishDiagnosticsParams, Range, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, Uri, VersionedTextDocumentIdentifier, WorkspaceFolder,
};
use seq_syntax::LineIndex;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Marks a cursor (or a range's ends) in a fixture. Not `$0`: `$` starts references in the
/// sequence language, and a marker must never be mistaken for the text under test.
pub const MARKER: char = '┃';

/// How long to wait for the server before failing the test (a hang, not a slow answer).
const PATIENCE: Duration = Duration::from_secs(30);

/// The fixture without its markers, and the byte offset of each marker in that text.
pub fn marked(fixture: &str) -> (String, Vec<u32>) {
    let mut text = String::with_capacity(fixture.len());
    let mut offsets = Vec::new();
    for ch in fixture.chars() {
        if ch == MARKER {
            offsets.push(text.len() as u32);
        } else {
            text.push(ch);
        }
    }
    (text, offsets)
}

/// The diagnostic with `code` among those `published`; the test stops if there is none.
pub fn with_code<'p>(
    published: &'p PublishDiagnosticsParams,
    code: &str,
) -> &'p lsp_types::Diagnostic {
    published
        .diagnostics
        .iter()
        .find(|d| d.code == Some(lsp_types::NumberOrString::String(code.to_owned())))
        .unwrap_or_else(|| panic!("no {code} in {published:#?}"))
}

/// A fresh directory for one test's workspace, with `files` written into it.
pub fn workspace(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("seq-lsp-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir.canonicalize().unwrap()
}

pub fn file_uri(path: &Path) -> Uri {
    let mut text = String::from("file://");
    for byte in path.to_str().unwrap().bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            text.push(char::from(byte));
        } else {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&text).unwrap()
}

pub struct Client {
    connection: Connection,
    server: Option<JoinHandle<Result<seq_lsp::Ending, seq_lsp::ServerError>>>,
    next_id: i32,
    pub root: PathBuf,
    pub encoding: PositionEncodingKind,
    pub initialize: InitializeResult,
    /// Every publishDiagnostics received so far, in order.
    pub published: Vec<PublishDiagnosticsParams>,
    /// How many publishes had arrived when the client last told the server something.
    since: usize,
    /// Every other notification received so far (log messages, ...).
    pub notifications: Vec<Notification>,
    /// Requests the server sent us (registrations).
    pub server_requests: Vec<Request>,
    /// Answers to requests sent with [`Client::request_later`], not yet taken.
    answers: Vec<Response>,
    /// Ids of requests sent with [`Client::request_later`].
    asked: Vec<RequestId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The client offers nothing: UTF-16, as LSP mandates.
    Default,
    /// The client offers UTF-8 before UTF-16.
    Utf8,
}

impl Client {
    pub fn start(root: &Path, offer: Offer) -> Client {
        Client::start_capable(root, offer, ClientCapabilities::default())
    }

    /// Starts with the client capabilities given (the workspace ones and the encoding are set
    /// here).
    pub fn start_capable(
        root: &Path,
        offer: Offer,
        mut capabilities: ClientCapabilities,
    ) -> Client {
        if offer == Offer::Utf8 {
            capabilities.general = Some(GeneralClientCapabilities {
                position_encodings: Some(vec![
                    PositionEncodingKind::UTF8,
                    PositionEncodingKind::UTF16,
                ]),
                ..GeneralClientCapabilities::default()
            });
        }
        capabilities.workspace = Some(lsp_types::WorkspaceClientCapabilities {
            did_change_watched_files: Some(lsp_types::DidChangeWatchedFilesClientCapabilities {
                dynamic_registration: Some(true),
                relative_pattern_support: None,
            }),
            ..lsp_types::WorkspaceClientCapabilities::default()
        });
        let params = InitializeParams {
            capabilities,
            workspace_folders: Some(vec![WorkspaceFolder {
                uri: file_uri(root),
                name: "test".to_owned(),
            }]),
            ..InitializeParams::default()
        };
        Client::start_with(root, serde_json::to_value(params).unwrap())
    }

    /// Starts the server and runs the handshake with raw initialize parameters.
    pub fn start_with(root: &Path, params: serde_json::Value) -> Client {
        let (server_side, connection) = Connection::memory();
        let server = std::thread::spawn(move || seq_lsp::run(server_side));
        let mut client = Client {
            connection,
            server: Some(server),
            next_id: 0,
            root: root.to_owned(),
            encoding: PositionEncodingKind::UTF16,
            initialize: InitializeResult::default(),
            published: Vec::new(),
            since: 0,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            answers: Vec::new(),
            asked: Vec::new(),
        };
        let result = client.request_raw(Initialize::METHOD, params);
        client.initialize = serde_json::from_value(result.unwrap()).unwrap();
        client.encoding = client
            .initialize
            .capabilities
            .position_encoding
            .clone()
            .unwrap_or(PositionEncodingKind::UTF16);
        client.notify::<Initialized>(lsp_types::InitializedParams {});
        client
    }

    pub fn uri(&self, relative: &str) -> Uri {
        file_uri(&self.root.join(relative))
    }

    /// The position of byte `offset` of `text` in the negotiated encoding.
    pub fn position(&self, text: &str, offset: u32) -> Position {
        let index = LineIndex::new(text);
        let (line, character) = if self.encoding == PositionEncodingKind::UTF8 {
            index.line_col_utf8(text, offset)
        } else {
            index.line_col_utf16(text, offset)
        };
        Position { line, character }
    }

    pub fn range(&self, text: &str, start: u32, end: u32) -> Range {
        Range::new(self.position(text, start), self.position(text, end))
    }

    /// The byte offset of a position in the negotiated encoding.
    pub fn offset(&self, text: &str, position: Position) -> u32 {
        let index = LineIndex::new(text);
        if self.encoding == PositionEncodingKind::UTF8 {
            index.offset_utf8(text, position.line, position.character)
        } else {
            index.offset_utf16(text, position.line, position.character)
        }
    }

    /// The text a range covers.
    pub fn text_at<'t>(&self, text: &'t str, range: Range) -> &'t str {
        let start = self.offset(text, range.start) as usize;
        let end = self.offset(text, range.end) as usize;
        &text[start..end]
    }

    /// `text` with `edits` applied (LSP semantics: every range refers to the original text).
    pub fn apply(&self, text: &str, edits: &[lsp_types::TextEdit]) -> String {
        let mut spans: Vec<(usize, usize, &str)> = edits
            .iter()
            .map(|e| {
                let start = self.offset(text, e.range.start) as usize;
                let end = self.offset(text, e.range.end) as usize;
                (start, end, e.new_text.as_str())
            })
            .collect();
        spans.sort_by_key(|&(start, end, _)| (start, end));
        let mut out = text.to_owned();
        for &(start, end, new_text) in spans.iter().rev() {
            out.replace_range(start..end, new_text);
        }
        out
    }

    pub fn text_document_position(
        &self,
        uri: &Uri,
        text: &str,
        offset: u32,
    ) -> lsp_types::TextDocumentPositionParams {
        lsp_types::TextDocumentPositionParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
            position: self.position(text, offset),
        }
    }

    pub fn notify<N: lsp_types::notification::Notification>(&mut self, params: N::Params) {
        self.since = self.published.len();
        let notification = Notification::new(N::METHOD.to_owned(), params);
        self.connection.sender.send(notification.into()).unwrap();
    }

    pub fn notify_raw(&mut self, method: &str, params: serde_json::Value) {
        self.since = self.published.len();
        let notification = Notification::new(method.to_owned(), params);
        self.connection.sender.send(notification.into()).unwrap();
    }

    pub fn open(&mut self, relative: &str, text: &str) -> Uri {
        let uri = self.uri(relative);
        self.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
            text_document: TextDocumentItem::new(
                uri.clone(),
                "json".to_owned(),
                1,
                text.to_owned(),
            ),
        });
        uri
    }

    /// Replaces the whole text (a full-sync client).
    pub fn replace(&mut self, uri: &Uri, version: i32, text: &str) {
        self.edit(uri, version, None, text);
    }

    /// Replaces `range` (in the negotiated encoding) with `text`.
    pub fn edit(&mut self, uri: &Uri, version: i32, range: Option<Range>, text: &str) {
        self.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
            text_document: VersionedTextDocumentIdentifier::new(uri.clone(), version),
            content_changes: vec![TextDocumentContentChangeEvent {
                range,
                range_length: None,
                text: text.to_owned(),
            }],
        });
    }

    pub fn save(&mut self, uri: &Uri) {
        self.notify::<DidSaveTextDocument>(DidSaveTextDocumentParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
            text: None,
        });
    }

    pub fn close(&mut self, uri: &Uri) {
        self.notify::<DidCloseTextDocument>(DidCloseTextDocumentParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
        });
    }

    pub fn files_changed(&mut self, changes: Vec<FileEvent>) {
        self.notify::<DidChangeWatchedFiles>(DidChangeWatchedFilesParams { changes });
    }

    /// Sends a request and waits for its answer, collecting whatever else arrives meanwhile.
    pub fn request_raw(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, ResponseError> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_owned(), params);
        self.connection.sender.send(request.into()).unwrap();
        loop {
            match self.receive(&format!("the answer to `{method}`")) {
                Message::Response(response) if response.id == id => {
                    return response.response_result;
                }
                other @ (Message::Request(_) | Message::Response(_) | Message::Notification(_)) => {
                    self.keep(other)
                }
            }
        }
    }

    /// Sends a request without waiting for its answer; [`Client::answer`] waits for it.
    pub fn request_later(&mut self, method: &str, params: serde_json::Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_owned(), params);
        self.connection.sender.send(request.into()).unwrap();
        self.asked.push(id.clone());
        id
    }

    /// The answer to a request sent with [`Client::request_later`].
    pub fn answer(&mut self, id: &RequestId) -> Result<serde_json::Value, ResponseError> {
        loop {
            if let Some(at) = self.answers.iter().position(|r| &r.id == id) {
                return self.answers.remove(at).response_result;
            }
            let message = self.receive(&format!("the answer to request {id}"));
            self.keep(message);
        }
    }

    /// A typed request whose answer must be a success.
    pub fn request<R: lsp_types::request::Request>(&mut self, params: R::Params) -> R::Result {
        match self.request_raw(R::METHOD, serde_json::to_value(params).unwrap()) {
            Ok(result) => serde_json::from_value(result).unwrap(),
            Err(error) => panic!("`{}` failed: {error:?}", R::METHOD),
        }
    }

    /// Waits for a publish for `uri` that satisfies `accept`, made since the last notification
    /// the client sent, and returns it.
    pub fn diagnostics_until(
        &mut self,
        uri: &Uri,
        what: &str,
        accept: impl Fn(&PublishDiagnosticsParams) -> bool,
    ) -> PublishDiagnosticsParams {
        let mut seen = self.since;
        loop {
            if let Some(found) = self.published[seen..]
                .iter()
                .find(|p| &p.uri == uri && accept(p))
            {
                return found.clone();
            }
            seen = self.published.len();
            let message = self.receive(what);
            self.keep(message);
        }
    }

    /// Waits for the diagnostics of `uri` computed from document `version`.
    pub fn diagnostics_of_version(&mut self, uri: &Uri, version: i32) -> PublishDiagnosticsParams {
        self.diagnostics_until(uri, &format!("diagnostics of version {version}"), |p| {
            p.version == Some(version)
        })
    }

    /// Makes sure that every publish the server made before this call has arrived: the main loop
    /// answers an unknown method itself, after publishing whatever it had in hand.
    pub fn sync(&mut self) {
        let response = self.request_raw("seqc/ping", serde_json::Value::Null);
        assert!(response.is_err());
    }

    /// The last diagnostics published for `uri` (empty when none were).
    pub fn last_diagnostics(&self, uri: &Uri) -> Vec<lsp_types::Diagnostic> {
        self.published
            .iter()
            .rev()
            .find(|p| &p.uri == uri)
            .map(|p| p.diagnostics.clone())
            .unwrap_or_default()
    }

    fn receive(&self, what: &str) -> Message {
        let deadline = Instant::now() + PATIENCE;
        match self
            .connection
            .receiver
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(message) => message,
            Err(err) => panic!(
                "waiting for {what}: {err}; diagnostics so far: {:#?}",
                self.published
            ),
        }
    }

    fn keep(&mut self, message: Message) {
        match message {
            Message::Notification(n) if n.method == PublishDiagnostics::METHOD => {
                self.published
                    .push(serde_json::from_value(n.params).unwrap());
            }
            Message::Notification(n) => self.notifications.push(n),
            Message::Request(r) => {
                let answer = Response::new_ok(r.id.clone(), serde_json::Value::Null);
                self.connection.sender.send(answer.into()).unwrap();
                self.server_requests.push(r);
            }
            Message::Response(r) if self.asked.contains(&r.id) => self.answers.push(r),
            Message::Response(r) => panic!("an answer to nothing we asked: {r:?}"),
        }
    }

    /// The orderly end: `shutdown`, `exit`, and the server thread must end cleanly.
    pub fn shutdown(mut self) {
        let response = self.request_raw(Shutdown::METHOD, serde_json::Value::Null);
        assert!(response.is_ok(), "{response:?}");
        self.notify::<Exit>(());
        let result = self.server.take().unwrap().join().unwrap();
        assert!(matches!(result, Ok(seq_lsp::Ending::Orderly)), "{result:?}");
    }
}

/// Diagnostic codes of a publish, in order.
pub fn codes(diagnostics: &[lsp_types::Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| match &d.code {
            Some(lsp_types::NumberOrString::String(code)) => code.clone(),
            Some(lsp_types::NumberOrString::Number(n)) => n.to_string(),
            None => String::new(),
        })
        .collect()
}
