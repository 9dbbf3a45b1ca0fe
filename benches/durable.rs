//! What a durable run costs against the in-process engine, end to end (`seqc run` processes,
//! wall time), on a Restate server of its own (from tests/restate's npm lockfile, started on free
//! ports by the durable tests' own module, tests/common/restate.rs) with two `seqc worker`s at
//! one address:
//!
//! - `per item`: a serial group of `echo` items, 101 items minus 1 item, divided by 100: the cost
//!   of one journaled step, against the same difference in process;
//! - `fan-out`: one parallel group of 100 `sleep {"ms": 50}` items (child invocations), against
//!   the 50 ms floor and against the same run in process;
//! - `runs/s`: 40 runs of a one-item sequence submitted 8 at a time, against the same runs in
//!   process;
//! - `cluster`: the same runs on the repository's three-node cluster (deploy/cluster/, two
//!   workers registered with it), submitted to its three ingresses in turn, against the single
//!   server in the same round: runs per second, and each run's latency (p50, p99);
//! - `agents`: 200 agents making 10 runs each, each with a `run_id`, through two `seqc mcp
//!   --http` front-ends of the cluster, the first killed when half the runs have ended: an agent
//!   whose call it cut off calls the other front-end with the same `run_id`. Every run's step
//!   must have run once; the figure is runs per second over the whole, against the cluster's
//!   runs per second through `seqc run` in the same round.
//!
//! Every figure is the median of the rounds, and a ratio against a baseline of the same round
//! (per item: the ratio of the two medians, a round's in-process difference being near the
//! noise).
//! `cargo bench --bench durable` (the seqc binary of the bench profile); `-- --rounds N`.
//! Without `--bench` (`cargo test --benches`) one small round runs, as a smoke test.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark that cannot set up should stop there, and prints its figures"
)]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/common/http.rs"]
mod http;
#[path = "../tests/common/restate.rs"]
mod restate;

use restate::{Cluster, Process, Restate, evidence_lines, free_port, localhost};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The server, two workers at one address, and a directory for the sequences, the data
/// directory and the workers' commands.
struct Setup {
    _workers: Vec<Process>,
    restate: Restate,
    dir: tempfile::TempDir,
}

fn start() -> Setup {
    let restate = Restate::start();
    let dir = tempfile::tempdir().unwrap();
    let addr = localhost(free_port());
    let workers = (0..2).map(|_| restate.worker(addr, dir.path())).collect();
    Setup {
        _workers: workers,
        restate,
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
    let mut command = common::command();
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
    let ingresses: Vec<Option<&str>> = vec![ingress];
    spread(setup, file, &ingresses, runs, at_once).0
}

/// `runs` runs of `file`, `at_once` at a time, the `i`th at `ingresses[i % len]`: runs per
/// second, and each run's wall time in milliseconds, sorted.
fn spread(
    setup: &Setup,
    file: &Path,
    ingresses: &[Option<&str>],
    runs: usize,
    at_once: usize,
) -> (f64, Vec<f64>) {
    let started = Instant::now();
    let mut times: Vec<f64> = std::thread::scope(|scope| {
        let lanes: Vec<_> = (0..at_once)
            .map(|lane| {
                scope.spawn(move || {
                    (lane..runs)
                        .step_by(at_once)
                        .map(|i| {
                            let ingress = ingresses[i % ingresses.len()];
                            run(setup, file, ingress).as_secs_f64() * 1000.0
                        })
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        lanes
            .into_iter()
            .flat_map(|lane| lane.join().unwrap())
            .collect()
    });
    times.sort_by(f64::total_cmp);
    (runs as f64 / started.elapsed().as_secs_f64(), times)
}

/// The `p`th percentile (0 to 100) of sorted `values`.
/// What the agents' part measured.
struct Agents {
    runs_per_second: f64,
    /// Runs whose step ran other than once (a duplicate or none).
    not_once: usize,
    /// Calls that met the killed front-end and went again to the other with their `run_id`.
    retried: usize,
}

/// `agents` agents making `each` runs, with a `run_id` each, through two front-ends on nodes 0
/// and 1 of `cluster`; the first is killed once half the runs have ended.
fn agents(cluster: &Cluster, root: &Path, agents: usize, each: usize) -> Agents {
    let root_text = root.to_str().unwrap();
    let front = |i: usize| {
        http::serve(&[
            "--restate",
            &cluster.node(i).ingress,
            "--restate-admin",
            &cluster.node(i).admin,
            "--enable",
            "cmd_run",
            "--root",
            root_text,
        ])
    };
    let (mut first, first_url) = front(0);
    let (second, second_url) = front(1);
    let mark = json!({
        "name": "mark",
        "description": "Appends the run's id to the evidence file.",
        "groups": [{"name": "mark", "description": "One step.",
                    "in": {"id": "string", "dir": "string"},
                    "out": {"said": "object"},
                    "tools": r#"{"tool":"cmd_run","args":{"command":"echo $args.id >> $args.dir/evidence"},"as":"said"} ;"#}]
    });
    let created = http::Client::connect(&first_url, None).call("seq_create", mark);
    assert_ne!(created["isError"], true, "{created}");
    let ended = Arc::new(AtomicUsize::new(0));
    let retried = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(Mutex::new(Vec::new()));
    // A call cut off by the kill panics inside the test client (a reset connection, a stream
    // ended early): caught, and said once at the end instead of once per agent.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let started = Instant::now();
    std::thread::scope(|scope| {
        for agent in 0..agents {
            let (ended, retried, failed) = (&ended, &retried, &failed);
            let urls = if agent % 2 == 0 {
                [first_url.as_str(), second_url.as_str()]
            } else {
                [second_url.as_str(), first_url.as_str()]
            };
            scope.spawn(move || {
                // One session an agent, opened again on the other front-end when its own died.
                let mut at = 0;
                let mut session: Option<http::Client> = None;
                for run in 0..each {
                    let id = format!("agent-{agent}-{run}");
                    let args = json!({"name": "mark", "run_id": id,
                                      "args": {"id": id, "dir": root_text}});
                    let answer = loop {
                        let url = urls[at];
                        let call = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            let client =
                                session.get_or_insert_with(|| http::Client::connect(url, None));
                            client.call("seq_run", args.clone())
                        }));
                        match call {
                            Ok(answer) => break answer,
                            // The other front-end, with the same `run_id`.
                            Err(_) if at == 0 => {
                                at = 1;
                                session = None;
                                retried.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(panic) => break Value::from(panic_text(&panic)),
                        }
                    };
                    if answer["isError"] == true || answer.is_string() {
                        failed.lock().unwrap().push(format!("{id}: {answer}"));
                    }
                    ended.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        // The first front-end dies half-way.
        let half = agents * each / 2;
        while ended.load(Ordering::Relaxed) < half {
            std::thread::sleep(Duration::from_millis(20));
        }
        first.kill().unwrap();
        first.wait().unwrap();
    });
    let seconds = started.elapsed().as_secs_f64();
    std::panic::set_hook(hook);
    http::stop(second);
    let failed = failed.lock().unwrap();
    assert!(
        failed.is_empty(),
        "{} runs failed, the first: {:?}",
        failed.len(),
        &failed[..failed.len().min(3)]
    );
    let lines = evidence_lines(root);
    let not_once = (0..agents)
        .flat_map(|agent| (0..each).map(move |run| format!("agent-{agent}-{run}")))
        .filter(|id| lines.iter().filter(|l| *l == id).count() != 1)
        .count();
    Agents {
        runs_per_second: (agents * each) as f64 / seconds,
        not_once,
        retried: retried.load(Ordering::Relaxed),
    }
}

/// What a caught panic said.
fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

fn percentile(values: &[f64], p: usize) -> f64 {
    let at = (values.len() * p / 100).min(values.len().saturating_sub(1));
    values.get(at).copied().unwrap_or(f64::NAN)
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
    let ingress = Some(setup.restate.ingress.as_str());
    // Warm both paths (the first durable run registers the deployment's services).
    run(&setup, &one, ingress);
    run(&setup, &one, None);

    let (mut local_item, mut durable_item) = (vec![], vec![]);
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
    // The same runs on three nodes, against the single server, in the same rounds.
    let cluster = Cluster::start();
    let addr = localhost(free_port());
    let cluster_workers: Vec<Process> = (0..2).map(|_| cluster.node(0).worker(addr, dir)).collect();
    let three: Vec<Option<&str>> = (0..3)
        .map(|i| Some(cluster.node(i).ingress.as_str()))
        .collect();
    run(&setup, &one, three[0]);
    let (mut one_node, mut three_nodes) = (vec![], vec![]);
    let (mut one_times, mut three_times) = (vec![], vec![]);
    for _ in 0..rounds {
        let (rps, times) = spread(&setup, &one, &[ingress], runs, 8);
        one_node.push(rps);
        one_times.extend(times);
        let (rps, times) = spread(&setup, &one, &three, runs, 8);
        three_nodes.push(rps);
        three_times.extend(times);
    }
    let (agent_count, each) = if full { (200, 10) } else { (4, 2) };
    let agents_root = dir.join("agents");
    std::fs::create_dir_all(&agents_root).unwrap();
    let crowd = agents(&cluster, &agents_root, agent_count, each);
    drop(cluster_workers);
    one_times.sort_by(f64::total_cmp);
    three_times.sort_by(f64::total_cmp);

    println!("durable runs, median of {rounds} round(s):");
    // A round's in-process difference can be below the noise of starting a process (0 ms):
    // the ratio is of the medians.
    let (durable_item, local_item) = (median(durable_item), median(local_item));
    let item_ratio = if local_item > 0.0 {
        format!("{:.0}x", durable_item / local_item)
    } else {
        "the in-process cost is below the resolution".to_owned()
    };
    println!(
        "  per item: {durable_item:.2} ms durable, {local_item:.3} ms in process: {item_ratio}"
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
    let (one_rps, three_rps) = (median(one_node), median(three_nodes));
    println!(
        "  cluster ({runs} runs, 8 at a time, two workers): {three_rps:.1} runs/s on 3 nodes, \
         {one_rps:.1} on 1: {:.2}x; latency p50/p99 {:.0}/{:.0} ms on 3 nodes, {:.0}/{:.0} ms \
         on 1",
        three_rps / one_rps,
        percentile(&three_times, 50),
        percentile(&three_times, 99),
        percentile(&one_times, 50),
        percentile(&one_times, 99),
    );
    println!(
        "  agents ({agent_count} x {each} runs with a run_id, two front-ends, one killed \
         half-way): {:.1} runs/s, {:.2}x the cluster's runs/s through `seqc run`; {} calls went \
         again to the other front-end; runs whose step did not run once: {}",
        crowd.runs_per_second,
        crowd.runs_per_second / three_rps,
        crowd.retried,
        crowd.not_once,
    );
}
