//! The real MCP servers the tests run against, and ways to check and run sequences on them.
//!
//! The servers are npm packages pinned in `tests/mcp/package-lock.json`, installed by `.ci/run`
//! (`npm ci --prefix tests/mcp`). A test that cannot find them fails, saying how to install
//! them: these tests never pass without the servers.

#![allow(dead_code, reason = "each test binary uses part of the kit")]
#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::Catalog;
use seq_check::Source;
use seq_exec::engine::RunRequest;
use seq_exec::{Caller, Engine, Reason, RunReport, ToolCall, ToolError, ToolHost};
use seq_mcp::{McpHost, Options, ServerSpec, Transport};
use seq_store::storage::Storage;
use seq_syntax::Diagnostic;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// `tests/mcp/` of the repository.
pub fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp")
}

/// The entry point of an installed npm package or script under `tests/mcp/`.
fn installed(relative: &str) -> String {
    let path = mcp_dir().join(relative);
    assert!(
        path.is_file(),
        "{} is missing: install the test servers with `npm ci --prefix tests/mcp` (.ci/run does)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

fn node(name: Option<&str>, args: Vec<String>) -> ServerSpec {
    let mut spec = ServerSpec::parse("node").unwrap();
    spec.transport = Transport::Command {
        program: "node".to_owned(),
        args,
        env: BTreeMap::new(),
        cwd: None,
    };
    if let Some(name) = name {
        spec.name = name.to_owned();
        spec.prefix = Some(name.to_owned());
    } else {
        spec.name = spec.target();
    }
    spec
}

/// `@modelcontextprotocol/server-filesystem` confined to `root`, under prefix `name` if given.
pub fn filesystem(root: &Path, name: Option<&str>) -> ServerSpec {
    let entry = installed("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    node(name, vec![entry, root.to_string_lossy().into_owned()])
}

/// `@modelcontextprotocol/server-everything` over stdio, under prefix `name` if given.
pub fn everything(name: Option<&str>) -> ServerSpec {
    let entry = installed("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    node(name, vec![entry, "stdio".to_owned()])
}

/// `tests/mcp/changing-server.mjs`: `grow` adds `extra`; `fail` answers `isError`.
pub fn changing(name: Option<&str>) -> ServerSpec {
    // The script imports the SDK installed beside it.
    installed("node_modules/@modelcontextprotocol/sdk/package.json");
    node(name, vec![installed("changing-server.mjs")])
}

/// The entry point of server-everything, for a test that starts it itself.
pub fn everything_entry() -> String {
    installed("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

pub async fn connect(specs: Vec<ServerSpec>) -> Arc<McpHost> {
    match McpHost::connect(specs, Options::new()).await {
        Ok(host) => Arc::new(host),
        Err(error) => panic!("the test servers did not start: {error}"),
    }
}

/// The sequence fixture `name` (under `tests/fixtures/`).
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// The checker's diagnostics of `text` against the built-in catalog plus the servers' live one.
pub fn check(text: &str, host: &McpHost) -> Vec<Diagnostic> {
    let mut catalog = Catalog::builtin();
    catalog.merge(host.definitions());
    let mut checked = seq_check::check(&[Source::new("t.json", text)], &catalog);
    checked.files.pop().unwrap().diagnostics
}

/// The codes of `diagnostics` that are errors.
pub fn errors(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code.as_str())
        .collect()
}

/// Runs `text` (which must check clean of errors) on `host` with `args`; a run that does not
/// end within a minute is a hang, and fails the test.
pub async fn run(host: Arc<dyn ToolHost>, text: &str, args: Value) -> RunReport {
    run_under(host, seq_exec::Authorizer::allow_all(), text, args).await
}

/// [`run`] with every dispatch held to `authorizer`.
pub async fn run_under(
    host: Arc<dyn ToolHost>,
    authorizer: seq_exec::Authorizer,
    text: &str,
    args: Value,
) -> RunReport {
    let parse = seq_syntax::parse(text);
    assert!(!parse.has_errors(), "{:?}", parse.diagnostics);
    let sequence = parse.sequence.unwrap();
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::new(host, Arc::new(Storage::new(data.path()))).with_authorizer(authorizer);
    let Value::Object(args) = args else {
        panic!("run arguments must be an object")
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        engine.run(&sequence, args, RunRequest::new(&Caller::new("test"))),
    )
    .await
    .expect("the run hung")
}

/// Waits until `ready` holds, checking every 20 ms for at most 20 s.
pub async fn eventually(what: &str, mut ready: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if ready() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("waited 20 s for {what}");
}

/// A host with one tool, `kill_server {server, ms?}`: waits `ms`, kills that server's process
/// (SIGKILL) and returns once the MCP host has seen it go.
pub struct Killer {
    pub mcp: Arc<McpHost>,
}

impl Killer {
    async fn kill(&self, args: Value) -> Result<Value, ToolError> {
        let name = args["server"].as_str().unwrap().to_owned();
        tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
        let status = self
            .mcp
            .servers()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap();
        let pid = status.pid.unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "kill {pid}");
        let mcp = Arc::clone(&self.mcp);
        eventually("the host to see the server stop", move || {
            mcp.servers().iter().any(|s| s.name == name && !s.alive)
        })
        .await;
        Ok(json!({"killed": pid}))
    }
}

impl ToolHost for Killer {
    fn lookup(&self, name: &str) -> Option<std::sync::Arc<seq_catalog::ToolDef>> {
        (name == "kill_server").then(|| {
            let text = json!([{"name": "kill_server", "parallel_safe": true, "parameters": {
                "type": "object", "properties": {"server": {"type": "string"}, "ms": {"type": "integer"}},
                "required": ["server"]}}]);
            std::sync::Arc::new(Catalog::load_json(&text.to_string()).unwrap().remove(0))
        })
    }

    fn call<'a>(&'a self, _caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        Box::pin(async move {
            if name == "kill_server" {
                self.kill(args).await
            } else {
                Err(ToolError::new(Reason::NotFound, name))
            }
        })
    }
}
