//! SIGINT and SIGTERM to `seqc run` (docs/reference.md, "Cancellation"): the run stops, the
//! next group never starts, no process of the run is left, the report says `cancelled`, and the
//! exit status is 128 plus the signal's number. Real processes on a real clock, wide margins.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use rustix::process::{Pid, Signal, kill_process};
use serde_json::{Value, json};
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// First group `sleep 2; touch LATE`, second group `touch NEXT`.
fn write_sequence(dir: &Path) -> std::path::PathBuf {
    let item =
        |command: &str| json!({"tool": "cmd_run", "args": {"command": command}}).to_string() + " ;";
    let text = json!({
        "name": "slow",
        "groups": [
            {"name": "first", "tools": item("sleep 2; touch LATE")},
            {"name": "next", "tools": item("touch NEXT")},
        ],
    });
    let path = dir.join("slow.json");
    std::fs::write(&path, serde_json::to_string_pretty(&text).unwrap()).unwrap();
    path
}

/// The processes whose working directory is `root`: the run's commands.
fn left_in(root: &Path) -> Vec<String> {
    let root = root.canonicalize().unwrap();
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_ok()
            && std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == root)
        {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            left.push(format!("{name}: {}", String::from_utf8_lossy(&cmdline)));
        }
    }
    left
}

#[test]
fn a_signal_cancels_the_run_and_nothing_of_it_is_left() {
    // (signals sent, exit status)
    let cases: [(&[Signal], i32); 3] = [
        (&[Signal::INT], 130),
        (&[Signal::TERM], 143),
        // The second exits at once, killing what runs.
        (&[Signal::INT, Signal::INT], 130),
    ];
    for (signals, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let file = write_sequence(dir.path());
        let mut child = common::run_in(&file, &root, &dir.path().join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Until the command runs (its shell has the root as working directory).
        let deadline = Instant::now() + Duration::from_secs(30);
        while left_in(&root).is_empty() {
            assert!(Instant::now() < deadline, "the command never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        for &signal in signals {
            kill_process(pid, signal).unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = child.wait().unwrap();
        let mut stdout = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(status.code(), Some(expected), "{signals:?}: {stderr}");
        if signals.len() == 1 {
            let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
            assert_eq!(report["cancelled"], json!(true), "{report}");
            assert_eq!(report["ok"], json!(false));
            assert_eq!(report["error"]["reason"], json!("cancelled"));
            assert_eq!(report["groups"][0]["status"], json!("cancelled"));
            assert_eq!(
                report["groups"][0]["items"][0]["status"],
                json!("cancelled")
            );
            assert_eq!(report["groups"].as_array().map(Vec::len), Some(1));
        }
        // Past the command's sleep.
        std::thread::sleep(Duration::from_secs(3));
        assert!(!root.join("LATE").exists(), "{signals:?}: LATE was created");
        assert!(!root.join("NEXT").exists(), "{signals:?}: NEXT was created");
        assert_eq!(left_in(&root), Vec::<String>::new(), "{signals:?}");
    }
}

/// `seqc mcp` over a stored `slow`, with the JSON-RPC lines written by hand.
struct Session {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl Session {
    fn start(dir: &Path, root: &Path) -> Session {
        let data = dir.join("data");
        let file = write_sequence(dir);
        common::create_in(&file, &data);
        let (child, stdin, stdout) = common::spawn_piped(
            common::command()
                .arg("mcp")
                .arg("--root")
                .arg(root)
                .arg("--enable")
                .arg("cmd_run")
                .arg("--data-dir")
                .arg(&data),
        );
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = send.send(value);
                }
            }
        });
        let mut session = Session {
            stdin: Some(stdin),
            child,
            lines,
        };
        session.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        );
        session.answer(1);
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The response to request `id`; any other message before it is a failure.
    fn answer(&self, id: u64) -> Value {
        let message = self.lines.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(message["id"], json!(id), "{message}");
        message
    }
}

#[test]
fn an_mcp_cancel_or_a_closed_session_cancels_the_run() {
    for trigger in ["notifications/cancelled", "session closed"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let mut session = Session::start(dir.path(), &root);
        session.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "seq_run", "arguments": {"name": "slow"}}}));
        let deadline = Instant::now() + Duration::from_secs(30);
        while left_in(&root).is_empty() {
            assert!(
                Instant::now() < deadline,
                "{trigger}: the command never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        if trigger == "session closed" {
            session.stdin = None;
            let deadline = Instant::now() + Duration::from_secs(30);
            while session.child.try_wait().unwrap().is_none() {
                assert!(Instant::now() < deadline, "seqc mcp did not exit");
                std::thread::sleep(Duration::from_millis(20));
            }
        } else {
            session.send(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 2, "reason": "test"}}),
            );
        }
        std::thread::sleep(Duration::from_secs(3));
        if trigger == "notifications/cancelled" {
            // MCP: a cancelled request gets no response (rmcp drops the run's answer, whose
            // report says `cancelled`); the session goes on.
            session.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "seq_list", "arguments": {}}}));
            let answer = session.answer(3);
            assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
            assert!(
                session.lines.try_recv().is_err(),
                "an answer to the cancelled request"
            );
        }
        assert!(!root.join("LATE").exists(), "{trigger}: LATE was created");
        assert!(!root.join("NEXT").exists(), "{trigger}: NEXT was created");
        assert_eq!(left_in(&root), Vec::<String>::new(), "{trigger}");
        session.stdin = None;
        let _ = session.child.wait();
    }
}
