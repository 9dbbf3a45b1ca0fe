//! [`McpHost`]: MCP servers behind one [`ToolHost`], and [`Combined`], hosts side by side.
//!
//! - Every tool name is offered once. A name offered by two servers, or by a server and another
//!   host (the embedded one, the `seq_*` tools: [`Options::reserved`]), is a [`ConnectError`]
//!   naming both, unless a prefix tells them apart. A clash that appears later, after a
//!   `tools/list_changed`, keeps the tool where it was and is reported.
//! - `lookup` answers from the latest `tools/list` of each server (refreshed on
//!   `tools/list_changed`, by one background task, one refresh at a time). A server that has
//!   stopped offers nothing: its tools are not found (so `missing` policies apply), and the stop
//!   is reported once. A call in flight when it stops fails with `not_found`, never hangs.
//! - Like every host, these say what they offer: who may use it is the engine's
//!   [`seq_exec::Authorizer`]'s to say, at every depth.

use crate::authorize::{TokenFile, tokens};
use crate::connection::{Connection, Remote};
use crate::notice::{ConnectError, Notice};
use crate::spec::{ServerSpec, Transport};
use futures::future::join_all;
use seq_catalog::SEQ_TOOLS;
use seq_catalog::ToolDef;
use seq_exec::builtin;
use seq_exec::{Caller, Reason, ToolCall, ToolError, ToolHost};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a server may take to start and answer `initialize` (`npx` may first download it).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// Called with each notice as it happens.
pub type NoticeSink = Arc<dyn Fn(&Notice) + Send + Sync>;

/// How [`McpHost::connect`] sets the host up.
#[derive(Clone)]
pub struct Options {
    /// Names other hosts offer, with who offers them (for the conflict message).
    pub reserved: BTreeMap<String, String>,
    pub connect_timeout: Duration,
    pub on_notice: Option<NoticeSink>,
    /// Where OAuth tokens for remote servers are kept between runs (none: for this run only).
    pub token_file: Option<PathBuf>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("reserved", &self.reserved)
            .field("connect_timeout", &self.connect_timeout)
            .field("token_file", &self.token_file)
            .finish_non_exhaustive()
    }
}

impl Default for Options {
    fn default() -> Options {
        Options::new()
    }
}

impl Options {
    /// Nothing reserved, [`CONNECT_TIMEOUT`], notices only kept, tokens in the default token
    /// file ([`tokens::default_path`]).
    pub fn new() -> Options {
        Options {
            reserved: BTreeMap::new(),
            connect_timeout: CONNECT_TIMEOUT,
            on_notice: None,
            token_file: tokens::default_path(),
        }
    }

    /// Reserves the names of the embedded host and of the `seq_*` tools: the servers sit beside
    /// them.
    pub fn beside_builtin(mut self) -> Options {
        for name in builtin::TOOLS {
            self.reserved
                .insert(name.to_owned(), "the embedded host".to_owned());
        }
        for name in SEQ_TOOLS {
            self.reserved
                .insert(name.to_owned(), "seqc's own seq_* tools".to_owned());
        }
        self
    }

    pub fn on_notice(mut self, sink: NoticeSink) -> Options {
        self.on_notice = Some(sink);
        self
    }

    pub fn connect_timeout(mut self, timeout: Duration) -> Options {
        self.connect_timeout = timeout;
        self
    }
}

/// The token file, read when a server is reached over HTTP (a child process signs in to nothing).
fn token_file(specs: &[ServerSpec], options: &Options) -> Result<TokenFile, ConnectError> {
    let remote = specs
        .iter()
        .find(|spec| matches!(spec.transport, Transport::Url { .. }));
    match (remote, &options.token_file) {
        (Some(spec), Some(path)) => {
            TokenFile::open(path).map_err(|reason| ConnectError::Initialize {
                server: spec.name.clone(),
                reason,
                stderr: Vec::new(),
            })
        }
        (Some(_), None) | (None, _) => Ok(TokenFile::in_memory()),
    }
}

/// MCP servers as one tool host.
pub struct McpHost {
    shared: Arc<Shared>,
    /// Refreshes tool lists on `tools/list_changed`; none without servers.
    refresher: Option<tokio::task::JoinHandle<()>>,
}

struct Shared {
    connections: Vec<Connection>,
    options: Options,
    notices: Mutex<Vec<Notice>>,
}

impl std::fmt::Debug for McpHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHost")
            .field("connections", &self.shared.connections)
            .finish_non_exhaustive()
    }
}

/// A server as [`McpHost::servers`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub alive: bool,
    /// The names its tools are offered under.
    pub tools: Vec<String>,
    /// The process id of a server started as a command.
    pub pid: Option<u32>,
}

impl McpHost {
    /// Starts (or reaches) every server at once, initializes them and lists their tools. Any
    /// failure stops the servers already started and is the error; so is a name clash.
    pub async fn connect(
        specs: Vec<ServerSpec>,
        options: Options,
    ) -> Result<McpHost, ConnectError> {
        let (refresh, requests) = mpsc::unbounded_channel();
        let timeout = options.connect_timeout;
        let tokens = Arc::new(token_file(&specs, &options)?);
        let started = join_all(specs.into_iter().enumerate().map(|(index, spec)| {
            Connection::connect(index, spec, refresh.clone(), timeout, Arc::clone(&tokens))
        }))
        .await;
        let mut connections = Vec::with_capacity(started.len());
        let mut notices = Vec::new();
        let mut failure = None;
        for result in started {
            match result {
                Ok((connection, left_out)) => {
                    connections.push(connection);
                    notices.extend(left_out);
                }
                Err(error) => {
                    failure.get_or_insert(error);
                }
            }
        }
        let failure = failure.or_else(|| first_conflict(&connections, &options.reserved).err());
        if let Some(error) = failure {
            join_all(connections.iter().map(Connection::shutdown)).await;
            return Err(error);
        }
        Ok(McpHost::assemble(connections, options, notices, requests))
    }

    /// A host without servers (no runtime needed).
    pub fn none() -> McpHost {
        let (_, requests) = mpsc::unbounded_channel();
        McpHost::assemble(Vec::new(), Options::new(), Vec::new(), requests)
    }

    fn assemble(
        connections: Vec<Connection>,
        options: Options,
        notices: Vec<Notice>,
        mut requests: mpsc::UnboundedReceiver<usize>,
    ) -> McpHost {
        let shared = Arc::new(Shared {
            connections,
            options,
            notices: Mutex::new(Vec::new()),
        });
        for notice in notices {
            shared.notify(notice);
        }
        let refresher = (!shared.connections.is_empty()).then(|| {
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                while let Some(index) = requests.recv().await {
                    shared.refresh(index).await;
                }
            })
        });
        McpHost { shared, refresher }
    }

    /// The definitions of every tool offered now (a live catalog for the checker).
    pub fn definitions(&self) -> Vec<ToolDef> {
        self.shared.report_stops();
        self.shared
            .connections
            .iter()
            .filter(|c| c.alive())
            .flat_map(|c| {
                c.tools()
                    .values()
                    .map(|r| ToolDef::clone(&r.def))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Every notice so far, oldest first (stops are looked for first).
    pub fn notices(&self) -> Vec<Notice> {
        self.shared.report_stops();
        self.shared
            .notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The servers, in the order given.
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.shared
            .connections
            .iter()
            .map(|c| ServerStatus {
                name: c.spec.name.clone(),
                alive: c.alive(),
                tools: c.tools().keys().cloned().collect(),
                pid: c.pid(),
            })
            .collect()
    }

    /// Stops every server (in parallel; a few seconds at most each) and the refresh task.
    pub async fn shutdown(&self) {
        if let Some(refresher) = &self.refresher {
            refresher.abort();
        }
        join_all(self.shared.connections.iter().map(Connection::shutdown)).await;
    }
}

impl Drop for McpHost {
    fn drop(&mut self) {
        // The task holds the host's state; the connections end with it.
        if let Some(refresher) = &self.refresher {
            refresher.abort();
        }
    }
}

/// The first tool name offered twice, among the servers and the reserved names.
fn first_conflict(
    connections: &[Connection],
    reserved: &BTreeMap<String, String>,
) -> Result<(), ConnectError> {
    let mut owners: BTreeMap<String, String> = reserved.clone();
    for connection in connections {
        let owner = describe(&connection.spec);
        for name in connection.tools().keys() {
            if let Some(first) = owners.get(name) {
                return Err(ConnectError::Conflict {
                    tool: name.clone(),
                    first: first.clone(),
                    second: owner,
                });
            }
            owners.insert(name.clone(), owner.clone());
        }
    }
    Ok(())
}

/// "MCP server `fs` (`npx ...`)", or just the command line when that is its name.
fn describe(spec: &ServerSpec) -> String {
    let target = spec.target();
    if spec.name == target {
        format!("MCP server `{target}`")
    } else {
        format!("MCP server `{}` (`{target}`)", spec.name)
    }
}

impl Shared {
    fn notify(&self, notice: Notice) {
        if let Some(sink) = &self.options.on_notice {
            sink(&notice);
        }
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(notice);
    }

    fn report_stops(&self) {
        for connection in &self.connections {
            if let Some(notice) = connection.stop_notice() {
                self.notify(notice);
            }
        }
    }

    /// The live connection offering `name`, and the tool there.
    fn find(&self, name: &str) -> Option<(&Connection, Arc<Remote>)> {
        self.report_stops();
        self.connections
            .iter()
            .filter(|c| c.alive())
            .find_map(|c| c.tools().get(name).cloned().map(|remote| (c, remote)))
    }

    /// Lists server `index` again and installs what it offers now, leaving out names that
    /// another server or host already offers.
    async fn refresh(&self, index: usize) {
        let Some(connection) = self.connections.get(index) else {
            return;
        };
        if !connection.alive() {
            return;
        }
        let (mut tools, left_out) = match connection.list().await {
            Ok(listed) => listed,
            Err(reason) => {
                self.notify(Notice::RefreshFailed {
                    server: connection.spec.name.clone(),
                    reason,
                });
                return;
            }
        };
        for notice in left_out {
            self.notify(notice);
        }
        let here = describe(&connection.spec);
        let clashes: Vec<(String, String)> = tools
            .keys()
            .filter_map(|name| self.owner_elsewhere(index, name).map(|o| (name.clone(), o)))
            .collect();
        for (name, first) in clashes {
            tools.remove(&name);
            self.notify(Notice::Conflict {
                tool: name,
                first,
                second: here.clone(),
            });
        }
        connection.install(tools);
    }

    /// Who else offers `name`: a reserved owner or another server.
    fn owner_elsewhere(&self, index: usize, name: &str) -> Option<String> {
        if let Some(owner) = self.options.reserved.get(name) {
            return Some(owner.clone());
        }
        self.connections
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .find(|(_, c)| c.tools().contains_key(name))
            .map(|(_, c)| describe(&c.spec))
    }
}

impl ToolHost for McpHost {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.shared
            .find(name)
            .map(|(_, remote)| Arc::clone(&remote.def))
    }

    fn call<'a>(&'a self, _caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        Box::pin(async move {
            let Some((connection, remote)) = self.shared.find(name) else {
                return Err(not_offered(name));
            };
            let result = connection.call(name, &remote.name, args).await;
            if let Err(error) = &result
                && error.reason == Reason::NotFound
            {
                // The server may have gone during the call: say so now, not at the next lookup.
                self.shared.report_stops();
            }
            result
        })
    }
}

fn nobody_offers(name: &str) -> ToolError {
    ToolError::new(Reason::NotFound, format!("no host offers `{name}` now"))
}

fn not_offered(name: &str) -> ToolError {
    ToolError::new(
        Reason::NotFound,
        format!("no MCP server offers `{name}` now"),
    )
    .with_hint("the server may have stopped or dropped the tool")
}

/// Hosts side by side: a tool is served by the first host that has it. Names do not clash
/// ([`McpHost`] refuses names its [`Options::reserved`] holds), so the order only settles races.
pub struct Combined {
    hosts: Vec<Arc<dyn ToolHost>>,
}

impl std::fmt::Debug for Combined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Combined")
            .field("hosts", &self.hosts.len())
            .finish()
    }
}

impl Combined {
    pub fn new(hosts: Vec<Arc<dyn ToolHost>>) -> Combined {
        Combined { hosts }
    }

    fn owner(&self, name: &str) -> Option<&Arc<dyn ToolHost>> {
        self.hosts.iter().find(|h| h.lookup(name).is_some())
    }
}

impl ToolHost for Combined {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.hosts.iter().find_map(|h| h.lookup(name))
    }

    fn call<'a>(&'a self, caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        Box::pin(async move {
            match self.owner(name) {
                Some(host) => host.call(caller, name, args).await,
                None => Err(nobody_offers(name)),
            }
        })
    }
}
