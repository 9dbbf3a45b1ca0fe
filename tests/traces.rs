//! Traces over OTLP/HTTP (docs/reference.md, "Traces"): `seqc run`, `seqc mcp` and `seqc worker`
//! (a durable run on a real Restate server) export their runs' spans to a real receiver, which decodes them with the official OTLP protobuf
//! definitions (tests/traces/receiver.py, on opentelemetry-proto from tests/mcp/requirements.txt)
//! and dumps them as JSON once seqc has exited.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;
#[path = "common/restate.rs"]
mod restate;
#[path = "common/session.rs"]
mod session;

use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Stdio};

/// A W3C `traceparent` as an agent would send it.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

fn python() -> PathBuf {
    let path = Path::new(common::PACKAGE).join("tests/mcp/.venv/bin/python");
    assert!(
        path.is_file(),
        "{} is missing: create it with `python3 -m venv tests/mcp/.venv && \
         tests/mcp/.venv/bin/pip install --require-hashes -r tests/mcp/requirements.txt` \
         (.ci/run does)",
        path.display()
    );
    path
}

/// The receiver, listening.
struct Receiver {
    child: Child,
    stdout: BufReader<ChildStdout>,
    port: u16,
}

impl Receiver {
    fn start() -> Receiver {
        let mut child = std::process::Command::new(python())
            .arg(Path::new(common::PACKAGE).join("tests/traces/receiver.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the receiver said {line:?}"));
        Receiver {
            child,
            stdout,
            port,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span received, in the order received: once seqc has exited (it exports before).
    fn spans(mut self) -> Vec<Value> {
        drop(self.child.stdin.take());
        let mut text = String::new();
        self.stdout.read_to_string(&mut text).unwrap();
        assert!(self.child.wait().unwrap().success());
        serde_json::from_str(&text).unwrap()
    }
}

/// A sequence with a group only called (run only by its call), a parallel group, an item
/// retried once (its command fails the first time) and a call.
fn write_sequence(dir: &Path) -> PathBuf {
    let item = |value: Value| value.to_string() + " ;";
    let text = json!({
        "name": "traced",
        "groups": [
            {
                "name": "probe",
                "in": {"host": "string"},
                "out": {"said": "any"},
                "tools": item(json!({"tool": "echo", "args": {"value": "$args.host"}, "as": "said"})),
            },
            {
                "name": "fan",
                "parallel": true,
                "tools": item(json!({"tool": "echo", "args": {"value": "a"}}))
                    + &item(json!({"tool": "echo", "args": {"value": "b"}})),
            },
            {
                "name": "flaky",
                "on_error": "retry",
                "retries": 2,
                "tools": item(json!({"tool": "cmd_run",
                    "args": {"command": "test -e tried || { touch tried; exit 3; }"}})),
            },
            {
                "name": "calls",
                "tools": item(json!({"tool": "seq_call",
                    "args": {"target": "probe", "args": {"host": "h1"}}})),
            },
        ],
    });
    let path = dir.join("traced.json");
    std::fs::write(&path, serde_json::to_string_pretty(&text).unwrap()).unwrap();
    path
}

/// Checks the spans' links and times, then gives their tree with ids and times left out:
/// each span's name, kind, status and attributes, and its children in the order received
/// (siblings end, and are exported, in report order).
fn tree(spans: &[Value]) -> Value {
    let trace = spans[0]["trace_id"].as_str().unwrap();
    for span in spans {
        assert_eq!(span["trace_id"], trace, "one trace: {span}");
        assert!(span["end"].as_u64() >= span["start"].as_u64(), "{span}");
    }
    let roots: Vec<&Value> = spans
        .iter()
        .filter(|span| {
            let parent = span["parent_span_id"].as_str().unwrap();
            !spans.iter().any(|other| other["span_id"] == parent)
        })
        .collect();
    assert_eq!(roots.len(), 1, "one root: {roots:?}");
    node(roots[0], spans)
}

fn node(span: &Value, spans: &[Value]) -> Value {
    let children: Vec<Value> = spans
        .iter()
        .filter(|child| child["parent_span_id"] == span["span_id"])
        .map(|child| {
            // Times are the report's milliseconds, each rounded down on its own: a child may
            // end up to a millisecond past its parent's rounded end, never start before it.
            assert!(child["start"].as_u64() >= span["start"].as_u64(), "{child}");
            let slack = 1_000_000;
            assert!(
                child["end"].as_u64().unwrap() <= span["end"].as_u64().unwrap() + slack,
                "{child} ends after {span}"
            );
            node(child, spans)
        })
        .collect();
    let mut out = Map::new();
    out.insert("name".into(), span["name"].clone());
    out.insert("kind".into(), span["kind"].clone());
    out.insert("status".into(), span["status"].clone());
    out.insert("attributes".into(), span["attributes"].clone());
    if !children.is_empty() {
        out.insert("children".into(), Value::Array(children));
    }
    Value::Object(out)
}

#[test]
fn a_run_exports_its_span_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let file = write_sequence(dir.path());
    let receiver = Receiver::start();
    let ran = common::run_in(&file, &root, &dir.path().join("data"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_SERVICE_NAME", "traced-test")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", common::stderr(&ran));
    let spans = receiver.spans();
    for span in &spans {
        assert_eq!(span["service"], "traced-test", "{span}");
        assert_eq!(span["scope"], "seqc", "{span}");
    }
    let root_span = tree(&spans);
    insta::assert_json_snapshot!(root_span);
}

#[test]
fn an_mcp_run_joins_the_trace_of_its_traceparent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let data = dir.path().join("data");
    let file = write_sequence(dir.path());
    common::create_in(&file, &data);
    let receiver = Receiver::start();
    let (mut server, mut stdin, stdout) = common::spawn_piped(
        common::command()
            .arg("mcp")
            .arg("--root")
            .arg(&root)
            .args(["--enable", "cmd_run", "--data-dir"])
            .arg(&data)
            .env(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                format!("{}/v1/traces", receiver.endpoint()),
            )
            .env_remove("OTEL_SERVICE_NAME"),
    );
    let mut lines = BufReader::new(stdout).lines();
    let ask = |stdin: &mut std::process::ChildStdin, message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    ask(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let initialized: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(initialized["id"], 1, "{initialized}");
    ask(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    ask(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "seq_run",
        "arguments": {"name": "traced"},
        "_meta": {"traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01")}}}),
    );
    let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    // The session ends; seqc exports what it holds before it exits.
    drop(stdin);
    assert!(server.wait().unwrap().success());

    let spans = receiver.spans();
    let run = spans
        .iter()
        .find(|span| span["name"] == "run traced")
        .unwrap_or_else(|| panic!("no run span in {spans:?}"));
    assert_eq!(run["trace_id"], TRACE_ID);
    assert_eq!(run["parent_span_id"], PARENT_ID);
    assert_eq!(run["service"], "seqc", "the default service name");
    // Every span of the run is in the agent's trace, under the run.
    assert!(spans.iter().all(|span| span["trace_id"] == TRACE_ID));
    let tree = tree(&spans);
    assert_eq!(tree["name"], "run traced");
    assert_eq!(
        tree["children"].as_array().unwrap().len(),
        3,
        "the run's three groups: {tree}"
    );
}

#[test]
fn without_an_endpoint_nothing_is_exported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let file = write_sequence(dir.path());
    let receiver = Receiver::start();
    let ran = common::run_in(&file, &root, &dir.path().join("data"))
        .env("OTEL_SERVICE_NAME", "traced-test")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", common::stderr(&ran));
    assert_eq!(receiver.spans(), Vec::<Value>::new());
}

/// A durable run asked for over `seqc mcp --restate` with a `traceparent`: the trace context
/// travels in the run's input, and the worker that runs it exports the run's spans under it,
/// with the tree a local run's spans have; the MCP server, which only submitted it, exports none.
#[test]
fn a_durable_run_exports_its_span_tree_from_the_worker_under_the_traceparent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let file = write_sequence(dir.path());
    let receiver = Receiver::start();
    let endpoint = receiver.endpoint();
    let otel = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_SERVICE_NAME", "traced-test"),
    ];
    let server = restate::Restate::start();
    let mut worker = server.worker_with(
        restate::localhost(restate::free_port()),
        &root,
        &["--enable", "cmd_run"],
        &otel,
    );
    common::create_on(&file, &server.ingress);
    let mut session = session::Session::start_with(
        &server.mcp_args(&["--enable", "cmd_run", "--root", root.to_str().unwrap()]),
        None,
        &otel,
    );
    let answer = session.call_with_meta(
        "seq_run",
        json!({"name": "traced"}),
        json!({"traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01")}),
    );
    assert_eq!(answer["isError"], false, "{answer}");
    assert!(session.close().success());
    // The worker exports what it holds when it stops (SIGTERM, as a service manager stops it).
    let pid = rustix::process::Pid::from_child(&worker.0);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    worker.0.wait().unwrap();

    let spans = receiver.spans();
    let runs: Vec<&Value> = spans
        .iter()
        .filter(|span| span["name"] == "run traced")
        .collect();
    assert_eq!(runs.len(), 1, "one run span, the worker's: {spans:?}");
    assert_eq!(runs[0]["trace_id"], TRACE_ID);
    assert_eq!(runs[0]["parent_span_id"], PARENT_ID);
    for span in &spans {
        assert_eq!(span["service"], "traced-test", "{span}");
        assert_eq!(span["trace_id"], TRACE_ID, "{span}");
    }
    insta::assert_json_snapshot!(tree(&spans));
}
