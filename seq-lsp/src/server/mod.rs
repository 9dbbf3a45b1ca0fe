//! The LSP server: the message loop, the workspace's documents and the checking thread.
//!
//! The main loop only keeps state: it applies edits to the [`workspace::Workspace`], hands snapshots to
//! the [`worker`] and publishes what comes back, if it is still current.

mod analysis;
mod capabilities;
mod catalog;
mod diagnostics;
mod encoding;
mod framing;
mod handlers;
mod semantic;
mod session;
mod stdio;
mod uri;
mod worker;
mod workspace;

use crossbeam_channel::select;
use encoding::{Encoding, Lines};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Exit, Initialized, LogMessage, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{Initialize, RegisterCapability, Request as _, Shutdown};
use lsp_types::{
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, FileChangeType, FileSystemWatcher,
    GlobPattern, InitializeParams, InitializeResult, LogMessageParams, MessageType,
    PublishDiagnosticsParams, Registration, RegistrationParams, ServerInfo, Uri,
};
use seq_syntax::LineIndex;
use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::path::PathBuf;
use worker::{Checked, Task, Worker};
use workspace::{ClientCaps, Workspace};

pub use session::Ending;

/// What can end the server abnormally: the connection broke.
pub type ServerError = Box<dyn Error + Send + Sync>;

/// Serves one client over stdin and stdout until it exits.
pub fn run_stdio() -> Result<Ending, ServerError> {
    let (connection, io_threads) = stdio::connect()?;
    let ending = run(connection)?;
    io_threads.join()?;
    Ok(ending)
}

/// Serves one client over `connection`: the initialize handshake, then messages until `exit`
/// (or until the client goes away).
pub fn run(connection: Connection) -> Result<Ending, ServerError> {
    let Some((id, params)) = session::initialize(&connection)? else {
        return Ok(Ending::Abrupt);
    };
    let encoding = Encoding::negotiate(
        params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref()),
    );
    let result = InitializeResult {
        capabilities: capabilities::server_capabilities(encoding),
        server_info: Some(ServerInfo {
            name: "seqc".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
    };
    connection
        .sender
        .send(Response::new_ok(id, result).into())?;

    let watch = params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files)
        .and_then(|w| w.dynamic_registration)
        .unwrap_or(false);
    let worker = Worker::spawn(connection.sender.clone())?;
    let mut server = Server {
        sender: connection.sender.clone(),
        encoding,
        client: client_caps(&params),
        workspace: Workspace::new(workspace_roots(&params)),
        worker,
        published: HashMap::new(),
        // Registered on `initialized`, when the client is ready for requests.
        watch,
    };
    server.workspace.index();
    server.schedule_check();
    let shutdown = server.main_loop(&connection);
    // Every request taken before `shutdown` is answered before it.
    server.worker.stop();
    match shutdown? {
        Some(request) => {
            connection
                .sender
                .send(Response::new_ok(request.id, ()).into())?;
            session::after_shutdown(&connection)
        }
        None => Ok(Ending::Abrupt),
    }
}

struct Server {
    sender: crossbeam_channel::Sender<Message>,
    encoding: Encoding,
    client: ClientCaps,
    workspace: Workspace,
    worker: Worker,
    /// What the client shows, by the text of each file's normalized URI.
    published: HashMap<String, Shown>,
    /// Whether to ask the client to watch files, once it is initialized.
    watch: bool,
}

/// The diagnostics last published for a file.
#[derive(Debug, PartialEq)]
struct Shown {
    /// As the client spells it.
    uri: Uri,
    version: Option<i32>,
    diagnostics: Vec<lsp_types::Diagnostic>,
}

impl Server {
    /// Serves until `exit`, a hang-up, or `shutdown`, which it returns unanswered.
    fn main_loop(&mut self, connection: &Connection) -> Result<Option<Request>, ServerError> {
        loop {
            select! {
                recv(connection.receiver) -> message => {
                    // The client hung up without `exit`: nothing left to serve.
                    let Ok(message) = message else { return Ok(None) };
                    match message {
                        Message::Request(request) => {
                            if request.method == Shutdown::METHOD {
                                return Ok(Some(request));
                            }
                            self.request(request)?;
                        }
                        Message::Notification(notification) => {
                            if notification.method == Exit::METHOD {
                                return Ok(None);
                            }
                            self.notification(notification)?;
                        }
                        // Answers to our registration requests: nothing to do either way.
                        Message::Response(_) => {}
                    }
                }
                recv(self.worker.results) -> checked => {
                    if let Ok(checked) = checked {
                        self.publish(checked)?;
                    }
                }
            }
        }
    }

    fn request(&mut self, request: Request) -> Result<(), ServerError> {
        if request.method == Initialize::METHOD {
            let response = Response::new_err(
                request.id,
                ErrorCode::InvalidRequest as i32,
                "`initialize` again: the session is initialized".to_owned(),
            );
            self.sender.send(response.into())?;
            return Ok(());
        }
        if !handlers::handles(&request.method) {
            let response = Response::new_err(
                request.id,
                ErrorCode::MethodNotFound as i32,
                format!("seqc does not handle `{}`", request.method),
            );
            self.sender.send(response.into())?;
            return Ok(());
        }
        let snapshot = self.workspace.snapshot(self.encoding, self.client);
        self.worker.tasks.send(Task::Request(snapshot, request))?;
        Ok(())
    }

    fn notification(&mut self, notification: Notification) -> Result<(), ServerError> {
        let changed = match notification.method.as_str() {
            Initialized::METHOD => {
                if std::mem::take(&mut self.watch) {
                    self.register_watchers()?;
                }
                false
            }
            DidOpenTextDocument::METHOD => {
                self.extract(notification, |server, p: DidOpenTextDocumentParams| {
                    let doc = p.text_document;
                    if server.is_open(&doc.uri) {
                        server.log(format!(
                            "`didOpen` of {}, which is open: its text replaced",
                            doc.uri.as_str()
                        ));
                    }
                    server.workspace.open(doc.uri, doc.text, doc.version);
                    true
                })?
            }
            DidChangeTextDocument::METHOD => self.extract(notification, Server::change)?,
            DidCloseTextDocument::METHOD => {
                self.extract(notification, |server, p: DidCloseTextDocumentParams| {
                    let uri = p.text_document.uri;
                    if !server.is_open(&uri) {
                        server.log(format!(
                            "ignored `didClose` of {}, which is not open",
                            uri.as_str()
                        ));
                        return false;
                    }
                    server.workspace.close(&uri);
                    true
                })?
            }
            DidSaveTextDocument::METHOD => {
                self.extract(notification, |server, p: DidSaveTextDocumentParams| {
                    if server.workspace.is_catalog(&p.text_document.uri) {
                        server.workspace.reload_catalog();
                    }
                    true
                })?
            }
            DidChangeWatchedFiles::METHOD => self.extract(notification, Server::watched_files)?,
            // `$/cancelRequest`, `$/setTrace`, workspace settings...: every request is answered
            // in order anyway, and there is nothing to configure.
            _ => false,
        };
        if changed {
            self.schedule_check();
        }
        Ok(())
    }

    /// Runs `handle` on the notification's parameters. Malformed ones are logged to the client
    /// and ignored: a notification has no answer to carry an error, and one bad message must
    /// not end the session.
    fn extract<P: serde::de::DeserializeOwned>(
        &mut self,
        notification: Notification,
        handle: impl FnOnce(&mut Server, P) -> bool,
    ) -> Result<bool, ServerError> {
        let method = notification.method.clone();
        match notification.extract::<P>(&method) {
            Ok(params) => Ok(handle(self, params)),
            Err(err) => {
                let params = LogMessageParams {
                    typ: MessageType::ERROR,
                    message: format!("seqc: ignored a malformed `{method}`: {err}"),
                };
                let log = Notification::new(LogMessage::METHOD.to_owned(), params);
                self.sender.send(log.into())?;
                Ok(false)
            }
        }
    }

    fn is_open(&self, uri: &Uri) -> bool {
        self.workspace.get(uri).is_some_and(|d| d.version.is_some())
    }

    /// Tells the client's log about a notification taken with a doubt or ignored.
    fn log(&self, message: String) {
        let params = LogMessageParams {
            typ: MessageType::WARNING,
            message: format!("seqc: {message}"),
        };
        let log = Notification::new(LogMessage::METHOD.to_owned(), params);
        // A client gone is noticed at the main loop's next receive.
        let _ = self.sender.send(log.into());
    }

    /// Applies edits in order, each against the text the previous one left. A change to a
    /// document that is not open is ignored: the text it edits is unknown. A version that does
    /// not increase is a client's mistake, but its edit is what the client's text now is, so it
    /// is applied all the same (with the version given) and logged.
    fn change(&mut self, params: DidChangeTextDocumentParams) -> bool {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let Some(doc) = self.workspace.get(&uri).filter(|d| d.version.is_some()) else {
            self.log(format!(
                "ignored `didChange` of {}, which is not open",
                uri.as_str()
            ));
            return false;
        };
        if let Some(current) = doc.version.filter(|&current| version <= current) {
            self.log(format!(
                "`didChange` of {} to version {version} after version {current}: applied, \
                 but versions must increase",
                uri.as_str()
            ));
        }
        let mut text = doc.text.to_string();
        let mut index = (*doc.index).clone();
        for change in params.content_changes {
            match change.range {
                None => text = change.text,
                Some(range) => {
                    let span = Lines {
                        text: &text,
                        index: &index,
                        encoding: self.encoding,
                    }
                    .span(range);
                    text.replace_range(span.range(), &change.text);
                }
            }
            index = LineIndex::new(&text);
        }
        self.workspace.change(&uri, text, index, version).is_some()
    }

    fn watched_files(&mut self, params: DidChangeWatchedFilesParams) -> bool {
        let mut catalog = false;
        for change in &params.changes {
            if self.workspace.is_catalog(&change.uri) {
                catalog = true;
                continue;
            }
            let Some(path) = uri::to_path(&change.uri) else {
                continue;
            };
            if self.workspace.indexes(&path)
                && (change.typ == FileChangeType::DELETED
                    || path.extension().is_some_and(|e| e == "json"))
            {
                self.workspace.load_from_disk(&path);
            }
        }
        if catalog {
            self.workspace.reload_catalog();
        }
        !params.changes.is_empty()
    }

    fn schedule_check(&mut self) {
        let snapshot = self.workspace.snapshot(self.encoding, self.client);
        // The worker only stops when the server does.
        let _ = self.worker.tasks.send(Task::Check(snapshot));
    }

    /// Publishes the files whose diagnostics (or version) changed, and clears the files that
    /// left the workspace. A result computed from an older generation is dropped: a newer check is
    /// already queued and will publish.
    fn publish(&mut self, checked: Checked) -> Result<(), ServerError> {
        if checked.generation != self.workspace.generation() {
            return Ok(());
        }
        let mut seen = HashSet::with_capacity(checked.files.len());
        for file in checked.files {
            seen.insert(file.key.clone());
            let shown = Shown {
                uri: file.uri,
                version: file.version,
                diagnostics: file.diagnostics,
            };
            if self.published.get(&file.key) == Some(&shown) {
                continue;
            }
            self.send_diagnostics(&shown)?;
            self.published.insert(file.key, shown);
        }
        let gone: Vec<String> = self
            .published
            .keys()
            .filter(|key| !seen.contains(*key))
            .cloned()
            .collect();
        for key in gone {
            if let Some(shown) = self.published.remove(&key) {
                self.send_diagnostics(&Shown {
                    version: None,
                    diagnostics: Vec::new(),
                    ..shown
                })?;
            }
        }
        Ok(())
    }

    fn send_diagnostics(&self, shown: &Shown) -> Result<(), ServerError> {
        let params = PublishDiagnosticsParams {
            uri: shown.uri.clone(),
            diagnostics: shown.diagnostics.clone(),
            version: shown.version,
        };
        let notification = Notification::new(PublishDiagnostics::METHOD.to_owned(), params);
        self.sender.send(notification.into())?;
        Ok(())
    }

    /// Asks the client to tell us about JSON files changed outside the editor (a `git pull`,
    /// another tool) and about the catalog.
    fn register_watchers(&self) -> Result<(), ServerError> {
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/*.json".to_owned()),
                kind: None,
            }],
        };
        let params = RegistrationParams {
            registrations: vec![Registration {
                id: "seqc-watch-json".to_owned(),
                method: DidChangeWatchedFiles::METHOD.to_owned(),
                register_options: Some(serde_json::to_value(options)?),
            }],
        };
        let request = Request::new(
            "seqc-register-watchers".to_owned().into(),
            RegisterCapability::METHOD.to_owned(),
            params,
        );
        self.sender.send(request.into())?;
        Ok(())
    }
}

/// The workspace folders, else the deprecated root URI, as paths.
fn workspace_roots(params: &InitializeParams) -> Vec<PathBuf> {
    if let Some(folders) = &params.workspace_folders {
        return folders
            .iter()
            .filter_map(|f| uri::to_path(&f.uri))
            .collect();
    }
    #[allow(deprecated)] // Older clients (Neovim 0.7 without a folder) send only `rootUri`.
    let root = params.root_uri.as_ref().and_then(uri::to_path);
    root.into_iter().collect()
}

fn client_caps(params: &InitializeParams) -> ClientCaps {
    let text = params.capabilities.text_document.as_ref();
    ClientCaps {
        snippets: text
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.snippet_support)
            .unwrap_or(false),
        nested_symbols: text
            .and_then(|t| t.document_symbol.as_ref())
            .and_then(|s| s.hierarchical_document_symbol_support)
            .unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;
    use worker::FileDiagnostics;

    fn server() -> (Server, crossbeam_channel::Receiver<Message>) {
        let (sender, receiver) = crossbeam_channel::unbounded();
        let server = Server {
            sender: sender.clone(),
            encoding: Encoding::Utf16,
            client: ClientCaps::default(),
            workspace: Workspace::new(Vec::new()),
            worker: Worker::spawn(sender).unwrap(),
            published: HashMap::new(),
            watch: false,
        };
        (server, receiver)
    }

    fn checked(generation: u64, uri: &Uri, version: i32) -> Checked {
        Checked {
            generation,
            files: vec![FileDiagnostics {
                key: uri.as_str().to_owned(),
                uri: uri.clone(),
                version: Some(version),
                diagnostics: vec![lsp_types::Diagnostic::default()],
            }],
        }
    }

    #[test]
    fn a_result_of_an_older_generation_is_dropped() {
        let (mut server, client) = server();
        let uri = Uri::from_str("untitled:a.json").unwrap();
        server
            .workspace
            .open(uri.clone(), "{\"groups\": []}".to_owned(), 1);
        let old = server.workspace.generation();
        let text = "{\"groups\": [ ]}".to_owned();
        let index = LineIndex::new(&text);
        server.workspace.change(&uri, text, index, 2).unwrap();

        server.publish(checked(old, &uri, 1)).unwrap();
        assert!(client.try_recv().is_err(), "a stale result was published");

        server
            .publish(checked(server.workspace.generation(), &uri, 2))
            .unwrap();
        let Ok(Message::Notification(published)) = client.try_recv() else {
            panic!("the current result was not published");
        };
        let params: PublishDiagnosticsParams = serde_json::from_value(published.params).unwrap();
        assert_eq!(params.version, Some(2));
        // The same diagnostics again: nothing new to show.
        server
            .publish(checked(server.workspace.generation(), &uri, 2))
            .unwrap();
        assert!(client.try_recv().is_err());
        server.worker.stop();
    }
}
