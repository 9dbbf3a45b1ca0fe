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
//!   server in the same round: runs per second, and each run's latency (p50, p99).
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
#[path = "../tests/common/restate.rs"]
mod restate;

use restate::{Cluster, Process, Restate, free_port, localhost};
use std::path::{Path, PathBuf};
use std::process::Stdio;
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
}
