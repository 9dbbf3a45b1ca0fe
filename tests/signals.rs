//! SIGINT, SIGTERM, SIGHUP and SIGQUIT to the commands that run things (docs/reference.md,
//! "Cancellation"): `seqc run`, `seqc mcp` over stdio and over HTTP, and `seqc worker` stop
//! what runs as a cancellation does, then exit with 128 plus the signal's number; `seqc lsp`
//! exits so too. And SIGKILL, which nothing in seqc sees: the shell of a running `cmd_run`, and
//! an MCP server seqc started as a client (`--mcp`), die with seqc all the same, through their
//! parent-death signal.
//!
//! Each run's command records the processes it starts (its shell, a `sleep 300`, and a shell
//! that would touch `MARK` two seconds on) in `pids`; the tests wait for that file, signal seqc,
//! wait for it to exit, then for every recorded process to be gone (or a zombie), and only then
//! look for `MARK`: once the process that would touch it is gone, it never will.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/restate.rs"]
mod restate;

use restate::{Process, Restate, free_port, localhost, wait_for};
use rustix::process::{Pid, Signal, kill_process};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The signals a command is stopped by, and the status it then exits with.
const SIGNALS: [(Signal, i32); 4] = [
    (Signal::INT, 130),
    (Signal::TERM, 143),
    (Signal::HUP, 129),
    (Signal::QUIT, 131),
];

/// Generous bounds for a loaded machine; they only end a test that would otherwise hang.
const PATIENCE: Duration = Duration::from_secs(60);

/// The shell records itself, a long `sleep` and the delayed `touch MARK` (its own shell), then
/// renames the record into place, so that `pids` is whole once it exists.
const COMMAND: &str = "echo $$ > pids.tmp; sleep 300 & echo $! >> pids.tmp; \
    sh -c 'sleep 2; touch MARK' & echo $! >> pids.tmp; mv pids.tmp pids; wait";

/// A sequence `hold` of one `cmd_run` item running [`COMMAND`].
fn write_sequence(dir: &Path) -> PathBuf {
    let item = json!({"tool": "cmd_run", "args": {"command": COMMAND}}).to_string() + " ;";
    let text = json!({"name": "hold", "groups": [{"name": "hold", "tools": item}]});
    let path = dir.join("hold.json");
    std::fs::write(&path, serde_json::to_string_pretty(&text).unwrap()).unwrap();
    path
}

/// A scratch directory with an empty `root` (where the commands run), and the sequence file.
struct Scratch {
    dir: tempfile::TempDir,
    root: PathBuf,
    file: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let file = write_sequence(dir.path());
        Scratch { dir, root, file }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `hold` stored in the data directory, for `seq_run`.
    fn store(&self) {
        common::create_in(&self.file, self.data());
    }

    /// The processes the command recorded, once it has, and the item's mark in its shell's
    /// environment.
    fn started(&self, seqc: &mut Child) -> Started {
        let record = self.root.join("pids");
        wait_for(PATIENCE, "the command records its processes", || {
            if let Ok(Some(status)) = seqc.try_wait() {
                panic!("seqc exited with {status} before the command started");
            }
            record.is_file()
        });
        let pids: Vec<i32> = std::fs::read_to_string(&record)
            .unwrap()
            .lines()
            .map(|line| line.trim().parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 3, "{pids:?}");
        let environ = std::fs::read(format!("/proc/{}/environ", pids[0])).unwrap();
        let mark = environ
            .split(|&b| b == 0)
            .find_map(|var| var.strip_prefix(b"SEQC_ITEM="))
            .map(|mark| String::from_utf8_lossy(mark).into_owned())
            .expect("the shell carries the item's mark");
        Started { pids, mark }
    }
}

/// What the command started; whatever is left is killed when dropped, so that a failing test
/// leaves nothing behind.
struct Started {
    pids: Vec<i32>,
    mark: String,
}

impl Drop for Started {
    fn drop(&mut self) {
        for &pid in &self.pids {
            if let Some(pid) = Pid::from_raw(pid) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    }
}

impl Started {
    /// Every recorded process gone, nothing carrying the item's mark left, and no `MARK`.
    fn assert_all_stopped(&self, root: &Path, what: &str) {
        wait_for(PATIENCE, &format!("{what}: every process is gone"), || {
            self.pids.iter().all(|&pid| gone(pid))
        });
        assert_eq!(
            marked(&self.mark),
            Vec::<i32>::new(),
            "{what}: marked ones left"
        );
        // The process that would touch it is gone: it never will.
        assert!(!root.join("MARK").exists(), "{what}: MARK was touched");
    }
}

/// Whether `pid` has ended: no such process, or a zombie not yet reaped.
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The live processes whose environment carries the item's mark.
fn marked(mark: &str) -> Vec<i32> {
    let needle = format!("SEQC_ITEM={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| !gone(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .unwrap_or_default()
                .split(|&b| b == 0)
                .any(|var| var == needle.as_bytes())
        })
        .collect()
}

fn signal(child: &Child, signal: Signal) {
    kill_process(Pid::from_child(child), signal).unwrap();
}

/// seqc's exit code, within [`PATIENCE`] (killed past it).
fn exit_code(child: &mut Child, what: &str) -> Option<i32> {
    let mut status = None;
    wait_for(PATIENCE, &format!("{what}: seqc exits"), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    status.and_then(|status| status.code())
}

/// A child killed when dropped, for the tests' own processes.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_signal_to_seqc_run_stops_everything_the_run_started() {
    for (sig, code) in SIGNALS {
        let what = format!("seqc run, {sig:?}");
        let scratch = Scratch::new();
        let mut seqc = Guard(
            common::run_in(&scratch.file, &scratch.root, &scratch.data())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let started = scratch.started(&mut seqc.0);
        signal(&seqc.0, sig);
        assert_eq!(exit_code(&mut seqc.0, &what), Some(code), "{what}");
        started.assert_all_stopped(&scratch.root, &what);
    }
}

/// `seqc mcp` over stdio with JSON-RPC lines written by hand.
struct StdioSession {
    stdin: ChildStdin,
    lines: Receiver<Value>,
}

impl StdioSession {
    fn start(child: &mut Child) -> StdioSession {
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = send.send(value);
                }
            }
        });
        let mut session = StdioSession {
            stdin: child.stdin.take().unwrap(),
            lines,
        };
        session.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        );
        let answer = session.lines.recv_timeout(PATIENCE).unwrap();
        assert_eq!(answer["id"], json!(1), "{answer}");
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }
}

fn seq_run_hold() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "seq_run", "arguments": {"name": "hold"}}})
}

#[test]
fn a_signal_to_seqc_mcp_over_stdio_stops_every_run() {
    for (sig, code) in SIGNALS {
        let what = format!("seqc mcp, {sig:?}");
        let scratch = Scratch::new();
        scratch.store();
        let mut seqc = Guard(
            common::command()
                .arg("mcp")
                .arg("--root")
                .arg(&scratch.root)
                .args(["--enable", "cmd_run", "--data-dir"])
                .arg(scratch.data())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        // The session stays open: the signal, not the client, ends it.
        let mut session = StdioSession::start(&mut seqc.0);
        session.send(&seq_run_hold());
        let started = scratch.started(&mut seqc.0);
        signal(&seqc.0, sig);
        assert_eq!(exit_code(&mut seqc.0, &what), Some(code), "{what}");
        started.assert_all_stopped(&scratch.root, &what);
    }
}

/// One HTTP/1.1 POST of `body` to `url` (`http://ADDR/mcp`), its connection left open; the
/// response's `mcp-session-id`, if it has one, once its headers are in.
fn post(url: &str, session: Option<&str>, body: &Value) -> (TcpStream, Option<String>) {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let body = body.to_string();
    let session = session.map_or(String::new(), |id| {
        format!("mcp-session-id: {id}\r\nmcp-protocol-version: 2025-06-18\r\n")
    });
    write!(
        stream,
        "POST /{path} HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\n{session}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(
        head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.1 202"),
        "{head}"
    );
    let id = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    (stream, id)
}

#[test]
fn a_signal_to_seqc_mcp_over_http_stops_every_run() {
    for (sig, code) in SIGNALS {
        let what = format!("seqc mcp --http, {sig:?}");
        let scratch = Scratch::new();
        scratch.store();
        let mut seqc = Guard(
            common::command()
                .args(["mcp", "--http", "127.0.0.1:0", "--root"])
                .arg(&scratch.root)
                .args(["--enable", "cmd_run", "--data-dir"])
                .arg(scratch.data())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let mut lines = BufReader::new(seqc.0.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines.next().expect("seqc says where it serves").unwrap();
            if let Some(url) = line.strip_prefix("seqc mcp: serving MCP at ") {
                break url.to_owned();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        let (_, session) = post(
            &url,
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}),
        );
        let session = session.expect("a session id");
        post(
            &url,
            Some(&session),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        // Open while the run runs: its answer would come on it.
        let _call = post(&url, Some(&session), &seq_run_hold());
        let started = scratch.started(&mut seqc.0);
        signal(&seqc.0, sig);
        assert_eq!(exit_code(&mut seqc.0, &what), Some(code), "{what}");
        started.assert_all_stopped(&scratch.root, &what);
    }
}

#[test]
fn a_signal_to_seqc_worker_stops_the_attempts_it_runs() {
    let restate = Restate::start();
    for (sig, code) in SIGNALS {
        let what = format!("seqc worker, {sig:?}");
        let scratch = Scratch::new();
        let log = scratch.dir.path().join("worker.log");
        let mut worker = Guard(
            common::command()
                .args(["worker", "--listen"])
                .arg(localhost(free_port()).to_string())
                .arg("--register")
                .arg(&restate.admin)
                .arg("--root")
                .arg(&scratch.root)
                .args(["--enable", "cmd_run"])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap(),
        );
        wait_for(PATIENCE, "the worker registered", || {
            if let Ok(Some(status)) = worker.0.try_wait() {
                panic!(
                    "the worker exited with {status}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            std::fs::read_to_string(&log).is_ok_and(|text| text.contains("registered"))
        });
        let file = scratch.file.to_str().unwrap();
        // Waits for the run's report, which never comes from this worker.
        let _submitter = Process(restate.submit(&scratch.data(), &[file]));
        let started = scratch.started(&mut worker.0);
        signal(&worker.0, sig);
        assert_eq!(exit_code(&mut worker.0, &what), Some(code), "{what}");
        started.assert_all_stopped(&scratch.root, &what);
    }
}

#[test]
fn a_signal_to_seqc_lsp_ends_it_with_the_signals_status() {
    for (sig, code) in SIGNALS {
        let what = format!("seqc lsp, {sig:?}");
        let mut seqc = Guard(
            common::command()
                .arg("lsp")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": null, "rootUri": null, "capabilities": {}}})
        .to_string();
        let mut stdin = seqc.0.stdin.take().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
        // An answer: the server runs, its signals watched since before it started.
        let mut stdout = BufReader::new(seqc.0.stdout.take().unwrap());
        let mut header = String::new();
        stdout.read_line(&mut header).unwrap();
        assert!(header.starts_with("Content-Length:"), "{what}: {header}");
        signal(&seqc.0, sig);
        assert_eq!(exit_code(&mut seqc.0, &what), Some(code), "{what}");
        drop(stdin);
    }
}

#[test]
fn a_command_shell_dies_with_seqc_killed_outright() {
    let scratch = Scratch::new();
    let mut seqc = Guard(
        common::run_in(&scratch.file, &scratch.root, &scratch.data())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The rest of what it started outlives seqc (documented) and is killed when this drops.
    let started = scratch.started(&mut seqc.0);
    signal(&seqc.0, Signal::KILL);
    let _ = seqc.0.wait();
    let shell = started.pids[0];
    wait_for(PATIENCE, "the shell dies with seqc", || gone(shell));
}

/// An MCP server that seqc starts as a client (`--mcp`) dies with seqc killed outright too: here
/// a "server" that records its process id and never answers, killed while seqc waits for it.
#[test]
fn a_downstream_mcp_server_dies_with_seqc_killed_outright() {
    let scratch = Scratch::new();
    let record = scratch.root.join("server.pid");
    let server = format!(
        "sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 300'",
        record.display()
    );
    let mut seqc = Guard(
        common::command()
            .arg("run")
            .arg(&scratch.file)
            .arg("--root")
            .arg(&scratch.root)
            .arg("--data-dir")
            .arg(scratch.data())
            .arg("--mcp")
            .arg(&server)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(PATIENCE, "the server records itself", || {
        if let Ok(Some(status)) = seqc.0.try_wait() {
            panic!("seqc exited with {status} before the server started");
        }
        record.is_file()
    });
    let pid: i32 = std::fs::read_to_string(&record)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Killed when this drops, should the test fail.
    let _left = Started {
        pids: vec![pid],
        mark: String::new(),
    };
    signal(&seqc.0, Signal::KILL);
    let _ = seqc.0.wait();
    wait_for(PATIENCE, "the downstream server dies with seqc", || {
        gone(pid)
    });
}
