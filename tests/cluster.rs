//! Durable runs on a Restate cluster: the repository's three-node deployment
//! (deploy/cluster/), started on free loopback ports, with a `seqc worker` registered with it.
//!
//! - a node killed in the middle of a run loses nothing: every element that finished before the
//!   kill ran once, every one after it ran as one attempt, and the report is the one of the run
//!   in process. (Restate makes a step at least once: one in flight while the cluster moves a
//!   partition's leader or re-places a log, some seconds after the loss, may be made again, with
//!   the same idempotency key.)

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/restate.rs"]
mod restate;

use common::{status, stderr};
use restate::{
    Cluster, evidence_lines, free_port, in_dir, in_process, localhost, report, wait_for,
};
use std::path::Path;
use std::time::Duration;

/// Waits until three rounds in a row of 48 elements side by side (child invocations over most
/// partitions) succeed through the first node's ingress with every element run once: the
/// partitions have leaders, and logs, that stay. A step in flight while its partition's leader
/// or log changes may run again (Restate makes a step at least once; see docs/operations.md),
/// and after a node is lost that goes on for some seconds after the first run succeeds.
fn takes_runs(cluster: &Cluster, data: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let n: Vec<u32> = (0..48).collect();
    let mut last = None;
    let mut in_a_row = 0;
    for round in 0..40 {
        let args = serde_json::json!({"dir": dir.path().to_str().unwrap(), "round": round, "n": n});
        let output = cluster.node(0).run(
            data,
            &[
                "tests/fixtures/durable/settle.json",
                "--args",
                &args.to_string(),
            ],
        );
        let lines = std::fs::read_to_string(dir.path().join("settle")).unwrap_or_default();
        let once = (0..48).all(|i| {
            let element = format!("{round}-{i}");
            lines.lines().filter(|l| *l == element).count() == 1
        });
        if status(&output) == 0 && once {
            in_a_row += 1;
            if in_a_row == 3 {
                return;
            }
        } else {
            in_a_row = 0;
            last = Some(stderr(&output).to_owned());
        }
    }
    panic!("the cluster does not settle: {last:?}");
}

#[test]
fn a_run_survives_a_restate_node_killed_in_its_middle() {
    let mut cluster = Cluster::start();
    let root = tempfile::tempdir().unwrap();
    let worker = cluster.node(0).worker(localhost(free_port()), root.path());
    let data = tempfile::tempdir().unwrap();
    // Partitions get their leaders some seconds after the nodes say they are healthy, and a step
    // in flight while its partition's leader changes may run again: wait until runs go through.
    takes_runs(&cluster, data.path());
    let file = "tests/fixtures/durable/cluster-kill.json";
    let n: Vec<u32> = (0..40).collect();
    let args = |dir: &Path| serde_json::json!({"dir": dir.to_str().unwrap(), "n": n}).to_string();
    let mut run = cluster.node(0).submit(
        data.path(),
        &[file, "--args", &args(root.path()), "--run-id", "node-lost"],
    );
    let mut ended = false;
    wait_for(Duration::from_secs(120), "the pause started", || {
        ended = run.try_wait().unwrap().is_some();
        ended || evidence_lines(root.path()).iter().any(|l| l == "pause")
    });
    if ended {
        let output = run.wait_with_output().unwrap();
        panic!(
            "the run ended before its pause: {}\n{}\n{}",
            common::stdout(&output),
            stderr(&output),
            cluster.node(0).log()
        );
    }
    cluster.kill(2);
    // Its partitions' leadership moves to the nodes left; then the run goes on.
    takes_runs(&cluster, data.path());
    std::fs::write(root.path().join("go"), "").unwrap();
    let output = run.wait_with_output().unwrap();
    drop(worker);
    assert_eq!(
        status(&output),
        0,
        "{}\n{}",
        stderr(&output),
        cluster.node(0).log()
    );
    let there = report(&output);
    assert_eq!(there["ok"], true, "{there}");
    let lines = evidence_lines(root.path());
    // Each line is an element's name and the idempotency key its command saw.
    let keys = |element: &str| -> Vec<&str> {
        lines
            .iter()
            .filter_map(|l| l.split_once(' '))
            .filter(|(name, _)| *name == element)
            .map(|(_, key)| key)
            .collect()
    };
    let logs = || format!("{}\n{}", cluster.node(0).log(), cluster.node(1).log());
    for i in 0..40 {
        // Finished and journaled before the kill: never made again.
        let element = format!("before-{i}");
        let runs = keys(&element).len();
        assert_eq!(runs, 1, "{element} ran {runs} times: {lines:?}\n{}", logs());
        // After it: at least once, and a step made again while the cluster moved a partition or a
        // log is the same attempt, with the same key, which a command can use to notice.
        let element = format!("after-{i}");
        let mut seen = keys(&element);
        assert!(!seen.is_empty(), "{element} never ran: {lines:?}");
        let runs = seen.len();
        seen.dedup();
        assert_eq!(
            seen.len(),
            1,
            "{element} ran as {} attempts: {lines:?}\n{}",
            seen.len(),
            logs()
        );
        if runs > 1 {
            eprintln!("{element} was made {runs} times, as one attempt");
        }
    }
    // In process, with `go` already there, nothing waits.
    assert_eq!(
        in_process(data.path(), file, args, "go"),
        in_dir(&there, root.path())
    );
}
