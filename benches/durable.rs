//! What a durable run costs against the in-process engine, end to end (`seqc run` processes,
//! wall time), on a Restate server of its own (from tests/restate's npm lockfile, started here
//! on free ports, as tests/durable.rs starts it) with two `seqc worker`s at one address:
//!
//! - `per item`: a serial group of `echo` items, 101 items minus 1 item, divided by 100: the cost
//!   of one journaled step, against the same difference in process;
//! - `fan-out`: one parallel group of 100 `sleep {"ms": 50}` items (child invocations), against
//!   the 50 ms floor and against the same run in process;
//! - `runs/s`: 40 runs of a one-item sequence submitted 8 at a time, against the same runs in
//!   process.
//!
//! Every figure is the median of the rounds, and a ratio against a baseline of the same round.
//! `cargo bench --bench durable` (the seqc binary of the bench profile); `-- --rounds N`.
//! Without `--bench` (`cargo test --benches`) one small round runs, as a smoke test.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark that cannot set up should stop there, and prints its figures"
)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SEQC: &str = env!("CARGO_BIN_EXE_seqc");
const PACKAGE: &str = env!("CARGO_MANIFEST_DIR");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn healthy(addr: SocketAddr, path: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.split_whitespace().nth(1) == Some("200")
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < Duration::from_secs(30), "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Killed when dropped, with its process group when it leads one (npm's launcher of the
/// server: killing it alone would leave the server running).
struct Process(Child, bool);

impl Drop for Process {
    fn drop(&mut self) {
        let group = i32::try_from(self.0.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        match group {
            Some(group) if self.1 => {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            Some(_) | None => {
                let _ = self.0.kill();
            }
        }
        let _ = self.0.wait();
    }
}

struct Setup {
    ingress: String,
    _processes: Vec<Process>,
    dir: tempfile::TempDir,
}

fn start() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let [ingress, admin, node, worker] = [free_port(), free_port(), free_port(), free_port()];
    let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
    let server =
        Command::new(Path::new(PACKAGE).join("tests/restate/node_modules/.bin/restate-server"))
            .process_group(0)
            .env("RESTATE_BASE_DIR", dir.path())
            .env("TMPDIR", dir.path())
            .env(
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{ingress}"),
            )
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{node}"))
            .env(
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{node}"),
            )
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("run `npm ci --prefix tests/restate` first");
    let mut processes = vec![Process(server, true)];
    let admin_addr: SocketAddr = format!("127.0.0.1:{admin}").parse().unwrap();
    let ingress_addr: SocketAddr = format!("127.0.0.1:{ingress}").parse().unwrap();
    wait_for("the server is healthy", || {
        healthy(admin_addr, "/health") && healthy(ingress_addr, "/restate/health")
    });
    for n in 0..2 {
        let log = dir.path().join(format!("worker-{n}.log"));
        let child = Command::new(SEQC)
            .args(["worker", "--listen", &format!("127.0.0.1:{worker}")])
            .args(["--register", &format!("http://127.0.0.1:{admin}"), "--root"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        processes.push(Process(child, false));
        wait_for("the worker registered", || {
            std::fs::read_to_string(&log).is_ok_and(|text| text.contains("registered"))
        });
    }
    Setup {
        ingress: format!("http://127.0.0.1:{ingress}"),
        _processes: processes,
        dir,
    }
}

/// A sequence file of one group of `count` copies of `item`.
fn sequence(dir: &Path, name: &str, parallel: bool, item: &str, count: usize) -> PathBuf {
    let tools: Vec<String> = (0..count).map(|_| format!("{item} ;")).collect();
    let text = serde_json::json!({
        "name": name,
        "description": "A benchmark sequence.",
        "groups": [{
            "name": "items",
            "description": "The items measured.",
            "parallel": parallel,
            "timeout": "5m",
            "tools": tools.join(" "),
        }]
    });
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, text.to_string()).unwrap();
    path
}

/// The wall time of `seqc run FILE` (in process, or on Restate at `ingress`), which must succeed.
fn run(setup: &Setup, file: &Path, ingress: Option<&str>) -> Duration {
    let mut command = Command::new(SEQC);
    command
        .arg("run")
        .arg(file)
        .arg("--data-dir")
        .arg(setup.dir.path().join("data"));
    command.arg("--root").arg(setup.dir.path());
    if let Some(ingress) = ingress {
        command.args(["--restate", ingress]);
    }
    let started = Instant::now();
    let output = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    elapsed
}

/// `runs` runs of `file`, `at_once` at a time: runs per second.
fn throughput(
    setup: &Setup,
    file: &Path,
    ingress: Option<&str>,
    runs: usize,
    at_once: usize,
) -> f64 {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for lane in 0..at_once {
            scope.spawn(move || {
                for _ in (lane..runs).step_by(at_once) {
                    run(setup, file, ingress);
                }
            });
        }
    });
    runs as f64 / started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench");
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(if full { 5 } else { 1 });
    let (items, fan, runs) = if full { (100, 100, 40) } else { (10, 10, 4) };
    let setup = start();
    let dir = setup.dir.path();
    let echo = r#"{"tool":"echo","args":{"value":1}}"#;
    let sleep = r#"{"tool":"sleep","args":{"ms":50}}"#;
    let one = sequence(dir, "one", false, echo, 1);
    let many = sequence(dir, "many", false, echo, items + 1);
    let fan_out = sequence(dir, "fan", true, sleep, fan);
    let ingress = Some(setup.ingress.as_str());
    // Warm both paths (the first durable run registers the deployment's services).
    run(&setup, &one, ingress);
    run(&setup, &one, None);

    let (mut local_item, mut durable_item, mut item_ratio) = (vec![], vec![], vec![]);
    let (mut fan_durable, mut fan_local, mut fan_floor) = (vec![], vec![], vec![]);
    let (mut rps_durable, mut rps_local, mut rps_ratio) = (vec![], vec![], vec![]);
    for _ in 0..rounds {
        let per_item = |ingress| {
            let base = run(&setup, &one, ingress);
            let all = run(&setup, &many, ingress);
            all.saturating_sub(base).as_secs_f64() * 1000.0 / items as f64
        };
        let here = per_item(None);
        let there = per_item(ingress);
        local_item.push(here);
        durable_item.push(there);
        item_ratio.push(there / here.max(f64::EPSILON));

        let there = run(&setup, &fan_out, ingress).as_secs_f64();
        let here = run(&setup, &fan_out, None).as_secs_f64();
        fan_durable.push(there);
        fan_local.push(there / here);
        fan_floor.push(there / 0.05);

        let there = throughput(&setup, &one, ingress, runs, 8);
        let here = throughput(&setup, &one, None, runs, 8);
        rps_durable.push(there);
        rps_local.push(here);
        rps_ratio.push(there / here);
    }
    println!("durable runs, median of {rounds} round(s):");
    println!(
        "  per item: {:.2} ms durable, {:.3} ms in process: {:.0}x",
        median(durable_item),
        median(local_item),
        median(item_ratio)
    );
    println!(
        "  fan-out of {fan} x sleep 50 ms: {:.2} s durable end to end, {:.1}x the 50 ms floor, \
         {:.1}x the run in process",
        median(fan_durable),
        median(fan_floor),
        median(fan_local)
    );
    println!(
        "  runs/s ({runs} runs, 8 at a time, two workers): {:.1} durable, {:.1} in process: {:.2}x",
        median(rps_durable),
        median(rps_local),
        median(rps_ratio)
    );
}
