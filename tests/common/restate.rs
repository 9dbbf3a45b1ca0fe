//! A Restate server of its own for a test (from tests/restate's npm lockfile, on free ports),
//! and `seqc worker`s registered with it; shared by the durable-mode test binaries and the
//! durable benchmark (benches/durable.rs).

#![allow(dead_code, reason = "each test binary uses a part of this module")]

use crate::common;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The server binary `npm ci --prefix tests/restate` installs.
pub fn server_binary() -> PathBuf {
    Path::new(common::PACKAGE).join("tests/restate/node_modules/.bin/restate-server")
}

/// A port free now (the listener is dropped before the port is used).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` over plain HTTP/1.1: the status code, or `None` when nothing answers.
pub fn http_status(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split_whitespace().nth(1)?.parse().ok()
}

/// The rows of `sql` over the admin API's `/query` (HTTP/1.0: the body is not chunked).
pub fn query(admin: &str, sql: &str) -> Vec<Value> {
    let addr: SocketAddr = admin.trim_start_matches("http://").parse().unwrap();
    let body = serde_json::json!({ "query": sql }).to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /query HTTP/1.0\r\nHost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (_, json) = answer.split_once("\r\n\r\n").unwrap();
    let rows: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {answer}"));
    rows["rows"].as_array().cloned().unwrap_or_default()
}

/// `POST path` at `base` (`http://HOST:PORT`, the ingress) with the JSON `body` if any, over
/// HTTP/1.0 (the answer is not chunked): the status code and the answer's body.
pub fn post(base: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let addr: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    // A handler without input refuses a content type.
    let (kind, body) = match body {
        Some(body) => ("content-type: application/json\r\n", body.to_string()),
        None => ("", String::new()),
    };
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.0\r\nHost: {addr}\r\n{kind}accept: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// Waits up to `within` for `ready`.
pub fn wait_for(within: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child process killed (SIGKILL) when dropped.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The server's process group (npm's launcher and the server it starts), killed when dropped:
/// killing the launcher alone would leave the server running.
pub struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(group) = i32::try_from(self.0.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.0.wait();
    }
}

/// One Restate server of its own, in a temporary directory.
pub struct Restate {
    _server: Group,
    pub ingress: String,
    pub admin: String,
    _dir: tempfile::TempDir,
}

impl Restate {
    pub fn start() -> Restate {
        Restate::start_with(&[])
    }

    /// A server with the settings of `env` besides (`RESTATE_…` variables).
    pub fn start_with(env: &[(&str, &str)]) -> Restate {
        again_while_taken(|| Restate::try_start_with(env))
    }

    fn try_start_with(env: &[(&str, &str)]) -> Result<Restate, Taken> {
        let [ingress, admin, node] = [free_port(), free_port(), free_port()];
        let ports = [
            (
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{ingress}"),
            ),
            ("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}")),
            ("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{node}")),
            (
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{node}"),
            ),
        ];
        let mut all: Vec<(&str, &str)> = ports.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.extend(env.iter().copied());
        let server = Restate::spawn(None, ingress, admin, &all);
        server.wait_healthy()?;
        Ok(server)
    }

    /// A server started (not yet healthy) from `config` if any, with `env`, its data in a
    /// temporary directory of its own; `ingress` and `admin` are the ports it listens on.
    fn spawn(config: Option<&str>, ingress: u16, admin: u16, env: &[(&str, &str)]) -> Restate {
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let mut command = Command::new(server_binary());
        if let Some(config) = config {
            let file = dir.path().join("restate.toml");
            std::fs::write(&file, config).unwrap();
            command.arg("--config-file").arg(file);
        }
        let server = command
            .process_group(0)
            .env("RESTATE_BASE_DIR", dir.path())
            // The server's scratch directories (`invoker-*`) go with the rest, not into /tmp.
            .env("TMPDIR", dir.path())
            .envs(env.iter().copied())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "{} does not start ({error}); run `npm ci --prefix tests/restate`",
                    server_binary().display()
                )
            });
        Restate {
            _server: Group(server),
            ingress: format!("http://127.0.0.1:{ingress}"),
            admin: format!("http://127.0.0.1:{admin}"),
            _dir: dir,
        }
    }

    /// Waits until the admin API and the ingress say they are healthy; `Taken` when a port
    /// given to it was taken meanwhile by another process (the tests start many at once).
    fn wait_healthy(&self) -> Result<(), Taken> {
        let admin: SocketAddr = self.admin.trim_start_matches("http://").parse().unwrap();
        let ingress: SocketAddr = self.ingress.trim_start_matches("http://").parse().unwrap();
        let started = Instant::now();
        while http_status(admin, "/health") != Some(200)
            || http_status(ingress, "/restate/health") != Some(200)
        {
            if self.log().contains("Address in use") {
                return Err(Taken);
            }
            if started.elapsed() > Duration::from_secs(60) {
                let log = self.log();
                let tail = &log[log.floor_char_boundary(log.len().saturating_sub(4000))..];
                panic!("the Restate server is not healthy within 60s; its log ends:\n{tail}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// The server's log so far (for a failing test's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("server.log")).unwrap_or_default()
    }

    /// A worker listening at `addr`, its commands running in `root`, registered once it says
    /// so.
    pub fn worker(&self, addr: SocketAddr, root: &Path) -> Process {
        // The tests' sequences run commands and write files: a worker allows neither unless
        // told.
        self.worker_with(
            addr,
            root,
            &["--enable", "cmd_run", "--enable", "files_write"],
            &[],
        )
    }

    /// A worker as [`Restate::worker`] starts one, with `options` (its policy) and `env`.
    pub fn worker_with(
        &self,
        addr: SocketAddr,
        root: &Path,
        options: &[&str],
        env: &[(&str, &str)],
    ) -> Process {
        let log = root.join(format!("worker-{}.log", free_port()));
        let mut child = common::command()
            .args(["worker", "--listen", &addr.to_string(), "--register"])
            .arg(&self.admin)
            .arg("--root")
            .arg(root)
            .args(options)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        wait_for(Duration::from_secs(30), "the worker registered", || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "the worker exited with {status}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            std::fs::read_to_string(&log).is_ok_and(|text| text.contains("registered"))
        });
        Process(child)
    }

    /// `seqc mcp`'s arguments to run on this server and keep its sequences there (its ingress
    /// and its admin API), then `options`.
    pub fn mcp_args<'a>(&'a self, options: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["--restate", &self.ingress, "--restate-admin", &self.admin];
        args.extend_from_slice(options);
        args
    }

    /// `seqc run --restate … --format json ARGS`, in the package directory, to its end.
    pub fn run(&self, data: &Path, args: &[&str]) -> Output {
        self.run_command(data, args).output().unwrap()
    }

    /// [`Restate::run`] in the background, its output piped, for a test that acts meanwhile.
    pub fn submit(&self, data: &Path, args: &[&str]) -> Child {
        self.run_command(data, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn run_command(&self, data: &Path, args: &[&str]) -> Command {
        let mut command = common::command();
        command
            .args(["run", "--restate", &self.ingress, "--format", "json"])
            .args(args)
            .arg("--data-dir")
            .arg(data);
        command
    }
}

/// The three nodes of the repository's cluster (deploy/cluster/n1.toml … n3.toml), on free
/// loopback ports, each with its data in a temporary directory: the log and the partitions kept
/// on two nodes of three. A node is killed (SIGKILL, with what it started) by dropping it.
pub struct Cluster {
    pub nodes: Vec<Option<Restate>>,
}

impl Cluster {
    pub fn start() -> Cluster {
        again_while_taken(Cluster::try_start)
    }

    fn try_start() -> Result<Cluster, Taken> {
        let files: Vec<String> = (1..=3)
            .map(|n| {
                let path = Path::new(common::PACKAGE).join(format!("deploy/cluster/n{n}.toml"));
                std::fs::read_to_string(path).unwrap()
            })
            .collect();
        // Every fixed port of the files, each replaced by a free one in all three.
        let fixed = [5122, 5123, 5124, 9070, 9071, 9072, 8080, 8081, 8082];
        let free: Vec<u16> = fixed.iter().map(|_| free_port()).collect();
        let moved = |text: &str| {
            fixed
                .iter()
                .zip(&free)
                .fold(text.to_owned(), |text, (from, to)| {
                    text.replace(&format!("127.0.0.1:{from}\""), &format!("127.0.0.1:{to}\""))
                })
        };
        let nodes: Vec<Restate> = files
            .iter()
            .enumerate()
            .map(|(i, text)| Restate::spawn(Some(&moved(text)), free[6 + i], free[3 + i], &[]))
            .collect();
        for node in &nodes {
            node.wait_healthy()?;
        }
        Ok(Cluster {
            nodes: nodes.into_iter().map(Some).collect(),
        })
    }

    /// Node `i` (from 0), while it runs.
    pub fn node(&self, i: usize) -> &Restate {
        self.nodes[i].as_ref().unwrap()
    }

    /// Kills node `i` at once, as a crash would.
    pub fn kill(&mut self, i: usize) {
        drop(self.nodes[i].take());
    }
}

/// A port picked free was taken by another process before the server bound it.
#[derive(Debug)]
pub struct Taken;

/// `start`, again with other ports while one it picked was taken meanwhile (at most 5 times).
fn again_while_taken<T>(mut start: impl FnMut() -> Result<T, Taken>) -> T {
    for _ in 0..4 {
        if let Ok(started) = start() {
            return started;
        }
    }
    start().expect("five sets of free ports were each taken before Restate bound them")
}

/// What most durable tests start from: a server, one worker whose commands run in `root`, and
/// a data directory for the local runs and the submitter.
pub struct Setup {
    pub worker: Process,
    pub restate: Restate,
    pub root: tempfile::TempDir,
    pub data: tempfile::TempDir,
}

impl Setup {
    pub fn start() -> Setup {
        let restate = Restate::start();
        let root = tempfile::tempdir().unwrap();
        let worker = restate.worker(localhost(free_port()), root.path());
        Setup {
            worker,
            restate,
            root,
            data: tempfile::tempdir().unwrap(),
        }
    }
}

/// The lines the items of a test's sequence appended to `root/evidence`, sorted (items of a
/// parallel group append in any order); none before the file exists.
pub fn evidence_lines(root: &Path) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(root.join("evidence"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort_unstable();
    lines
}

pub fn localhost(port: u16) -> SocketAddr {
    format!("127.0.0.1:{port}").parse().unwrap()
}

/// `seqc run --format json ARGS` in process, in the package directory, with `data` as its data
/// directory, to its end.
pub fn local(data: &Path, args: &[&str]) -> Output {
    common::command()
        .args(["run", "--format", "json"])
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .output()
        .unwrap()
}

/// `file` run in process to its end, in a directory of its own (its `--root`, `args` made for
/// it) in which `marker` already stands, so that nothing in it waits for the marker: its report,
/// that directory written `DIR`. What a durable run's report is compared with.
pub fn in_process(data: &Path, file: &str, args: impl Fn(&Path) -> String, marker: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(marker), "").unwrap();
    let root = dir.path().to_str().unwrap();
    let output = local(data, &[file, "--args", &args(dir.path()), "--root", root]);
    assert_eq!(common::status(&output), 0, "{}", common::stderr(&output));
    in_dir(&report(&output), dir.path())
}

/// The report (the last line of stdout) with every `duration_ms` set to 0.
/// `report` with the directory `dir` written `DIR` wherever it appears (the commands an item
/// ran, shown with their values): two runs of one sequence in two directories compare equal.
pub fn in_dir(report: &Value, dir: &Path) -> Value {
    let text = report.to_string().replace(dir.to_str().unwrap(), "DIR");
    serde_json::from_str(&text).unwrap()
}

pub fn report(output: &Output) -> Value {
    let text = common::stdout(output);
    let last = text.lines().last().unwrap_or_default();
    let mut report: Value = serde_json::from_str(last)
        .unwrap_or_else(|error| panic!("no report ({error}): {text}{}", common::stderr(output)));
    common::redact_durations(&mut report);
    report
}
