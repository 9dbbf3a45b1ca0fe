//! Durable runs end to end: a real Restate server (from tests/restate's npm lockfile, started
//! here on free ports), `seqc worker`s registered with it, and `seqc run --restate`.
//!
//! - the same run gives the same report on the in-process engine and on Restate, for the
//!   examples the embedded host can run and for a fixed sample of the differential generator's
//!   sequences (durations aside);
//! - a worker killed in the middle of a serial group, of a parallel group whose items run side
//!   by side as child invocations, or of a timed group: the run finishes on the other worker, the
//!   items that had completed are not run again, the interrupted one is, and a group's timeout
//!   runs from the group's start, not from the replay's;
//! - after a worker killed mid-run, the run's progress records (what its items and groups
//!   finished) are there once each, as without the kill;
//! - a worker killed during a retry's pause (a durable timer): the run finishes on the other
//!   worker, the failed attempt not run again and the pause neither shortened nor repeated;
//! - a run id submitted twice runs once;
//! - `seqc runs` lists the runs, `seqc cancel` stops one and the commands of its children, also
//!   those of a run it called, and a serial step at once, also in a run it called;
//! - a step or an item longer than the server's inactivity timeout runs once;
//! - a step that kills its worker fails its item after three deaths, and the run goes on;
//! - `seqc cancel` kills, after its grace, a run that cannot take the cancellation.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/restate.rs"]
mod restate;

use common::{status, stderr};
use restate::{
    Restate, Setup, evidence_lines, free_port, in_dir, in_process, local, localhost, post, query,
    report, wait_for,
};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// `file` with `args` run in process (commands in `local_root`) and on Restate: the same exit
/// status (`what` names the case in a failure), then both reports.
fn both_ways(
    restate: &Restate,
    data: &Path,
    local_root: &Path,
    file: &str,
    args: &str,
    what: &str,
) -> (Value, Value) {
    let here = local(
        data,
        &[file, "--args", args, "--root", local_root.to_str().unwrap()],
    );
    let there = restate.run(data, &[file, "--args", args]);
    assert_eq!(status(&here), status(&there), "{what}: {}", stderr(&there));
    (report(&here), report(&there))
}

/// Every example the embedded host can run (`inspect-nodes` needs ssh to three hosts), with
/// arguments that take each through its main paths, and parallel groups run side by side,
/// give the same report either way.
#[test]
fn examples_give_the_same_report_in_process_and_on_restate() {
    let Setup {
        restate,
        root,
        data,
        worker: _worker,
    } = Setup::start();
    // `release-gate` calls `#hello`: stored for the local runs and in the engine.
    for storage in [
        ["--data-dir", data.path().to_str().unwrap()],
        ["--restate", &restate.ingress],
    ] {
        let created = common::command()
            .args(["create", "examples/hello.json"])
            .args(storage)
            .output()
            .unwrap();
        assert_eq!(status(&created), 0, "{}", stderr(&created));
    }
    let local_root = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        ("examples/hello.json", r#"{"who":"world"}"#),
        ("examples/hello.json", "{}"),
        (
            "examples/system-report.json",
            r#"{"path":"reports/system.txt"}"#,
        ),
        (
            "examples/release-gate.json",
            r#"{"announce":true,"version":"1.2"}"#,
        ),
        (
            "examples/release-gate.json",
            r#"{"announce":false,"version":"1.2"}"#,
        ),
        // Parallel groups whose items run side by side as child invocations: a tolerated
        // failure, `array` slots in item order, a retry.
        ("tests/fixtures/durable/parallel.json", "{}"),
        // An `each` item's failed elements caught by `error_as`, side by side (as child
        // invocations, under `max_parallel`) and in turn after a retry.
        ("tests/fixtures/durable/each-caught.json", "{}"),
        // A fan-out in a serial group: its elements side by side as child invocations, two
        // at a time, between an item before and one after.
        ("tests/fixtures/durable/each-fan-out.json", "{}"),
        // Sequences in the differential generator's words (seq_gen::differential):
        // group calls, `when`, `missing` skip and degrade, a tool no host has, `$out` read
        // back, retries spent, a group not reached.
        (
            "tests/fixtures/durable/differential-calls.json",
            r#"{"x":1}"#,
        ),
        ("tests/fixtures/durable/differential-calls.json", "{}"),
        (
            "tests/fixtures/durable/differential-retry.json",
            r#"{"x":3}"#,
        ),
    ];
    for (file, args) in cases {
        let (here, there) = both_ways(
            &restate,
            data.path(),
            local_root.path(),
            file,
            args,
            &format!("{file} {args}"),
        );
        assert_eq!(here, there, "{file} {args}");
        assert!(here["groups"].as_array().is_some_and(|g| !g.is_empty()));
    }
    // The durable run wrote where its worker runs commands.
    let written = std::fs::read_to_string(root.path().join("reports/system.txt")).unwrap();
    assert!(written.contains("cores: "), "{written}");
}

/// Two workers share one address; the one running the third of four serial steps is killed.
/// The run ends on the other: steps 0, 1 and 3 ran once, step 2 twice (once interrupted).
#[test]
fn a_run_survives_its_worker_being_killed_in_a_serial_group() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let addr = localhost(free_port());
    let first = restate.worker(addr, root.path());
    let second = restate.worker(addr, root.path());
    let dir = root.path().to_str().unwrap().to_owned();
    let data = tempfile::tempdir().unwrap();
    let args = format!(r#"{{"dir":"{dir}"}}"#);
    let run = restate.submit(
        data.path(),
        &[
            "tests/fixtures/durable/crash.json",
            "--args",
            &args,
            "--run-id",
            "crash-1",
        ],
    );
    let marker = root.path().join("marker");
    wait_for(Duration::from_secs(30), "step 2 started", || {
        marker.exists()
    });
    kill_the_worker_of(&marker, [first.0.id(), second.0.id()]);
    let output = run.wait_with_output().unwrap();
    // Read while a worker serves the workflow's shared handler.
    let records = finished(&restate, "crash-1");
    drop((first, second));
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let report = report(&output);
    assert_eq!(report["ok"], true, "{report}");
    let evidence = std::fs::read_to_string(root.path().join("evidence")).unwrap();
    let lines: Vec<&str> = evidence.lines().collect();
    // The step run again is the same attempt: the same idempotency key both times.
    let step2 = "step-2 crash-1/#crash/steps/2/0";
    assert_eq!(lines, ["step-0", "step-1", step2, step2, "step-3"]);
    // Every step wrote its command's result to the `array` slot, once, in order.
    let done = report["out"]["steps"]["done"].as_array().unwrap();
    assert_eq!(done.len(), 4, "{report}");
    // What finished was recorded once each, the replay writing the same again.
    assert_eq!(records, told("steps"));
}

/// The progress records of run `run_id` (what its workflow's `finished` reads).
fn finished(restate: &Restate, run_id: &str) -> Value {
    let (status, body) = post(
        &restate.ingress,
        &format!("/SeqRun/{run_id}/finished"),
        Some(&json!(0)),
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// The records of a group of four `cmd_run` items that all succeeded.
fn told(group: &str) -> Value {
    let mut records: Vec<Value> = (0..4)
        .map(|index| {
            json!({"kind": "item", "group": group, "index": index, "tool": "cmd_run",
                   "status": "ok"})
        })
        .collect();
    records.push(json!({"kind": "group", "name": group, "status": "ran"}));
    Value::Array(records)
}

/// Two workers share one address; a parallel group's four items run side by side as child
/// invocations. The first waits; once the other three have finished (their invocations
/// completed), the worker running the first is killed. The run ends on the other worker: items
/// 1 to 3 ran once, item 0 twice (once interrupted), and the report is the one of a run that
/// was never interrupted.
#[test]
fn a_run_survives_its_worker_being_killed_in_a_parallel_group() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let addr = localhost(free_port());
    let first = restate.worker(addr, root.path());
    let second = restate.worker(addr, root.path());
    let dir = root.path().to_str().unwrap().to_owned();
    let data = tempfile::tempdir().unwrap();
    let args = format!(r#"{{"dir":"{dir}"}}"#);
    let run = restate.submit(
        data.path(),
        &[
            "tests/fixtures/durable/crash-parallel.json",
            "--args",
            &args,
            "--run-id",
            "crash-2",
        ],
    );
    let marker = root.path().join("marker");
    // Only items side by side let the three after the waiting one finish.
    wait_for(Duration::from_secs(30), "items 1 to 3 finished", || {
        let completed = "SELECT count(*) AS n FROM sys_invocation \
             WHERE target_service_name = 'SeqItem' AND status = 'completed'";
        marker.exists() && query(&restate.admin, completed)[0]["n"] == 3
    });
    kill_the_worker_of(&marker, [first.0.id(), second.0.id()]);
    let output = run.wait_with_output().unwrap();
    // Read while a worker serves the workflow's shared handler.
    let records = finished(&restate, "crash-2");
    drop((first, second));
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let report = report(&output);
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["groups"][0]["parallel"], true, "{report}");
    let lines = evidence_lines(root.path());
    // The item made again is the same attempt: the same idempotency key both times.
    let item0 = "item-0 crash-2/#crash_parallel/items/0/0";
    assert_eq!(lines, [item0, item0, "item-1", "item-2", "item-3"]);
    // The `array` slot holds the four results in item order, whatever the finishing order.
    let done = report["out"]["items"]["done"].as_array().unwrap();
    assert_eq!(done.len(), 4, "{report}");
    // What finished was recorded once each, in item order, the replay writing the same again.
    assert_eq!(records, told("items"));
}

/// Two workers share one address; one `each` item runs 100 elements side by side as child
/// invocations, and the worker running element 50 is killed once the other 99 have finished.
/// The run finishes on the other worker: no finished element runs again, element 50 runs again
/// as the same attempt, and the report is the one of a run in process (durations aside).
#[test]
fn a_run_survives_its_worker_being_killed_in_an_each_item() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let addr = localhost(free_port());
    let first = restate.worker(addr, root.path());
    let second = restate.worker(addr, root.path());
    let data = tempfile::tempdir().unwrap();
    let file = "tests/fixtures/durable/crash-each.json";
    let n: Vec<u32> = (0..100).collect();
    let args = |dir: &Path| serde_json::json!({"dir": dir.to_str().unwrap(), "n": n}).to_string();
    let run = restate.submit(
        data.path(),
        &[file, "--args", &args(root.path()), "--run-id", "crash-each"],
    );
    let marker = root.path().join("marker");
    wait_for(
        Duration::from_secs(60),
        "the other 99 elements finished",
        || {
            let completed = "SELECT count(*) AS n FROM sys_invocation \
             WHERE target_service_name = 'SeqItem' AND status = 'completed'";
            marker.exists() && query(&restate.admin, completed)[0]["n"] == 99
        },
    );
    kill_the_worker_of(&marker, [first.0.id(), second.0.id()]);
    let output = run.wait_with_output().unwrap();
    drop((first, second));
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let there = report(&output);
    assert_eq!(there["ok"], true, "{there}");
    let lines = evidence_lines(root.path());
    let again = "element-50 crash-each/#crash_each/elements/0[50]/0";
    assert_eq!(
        lines.iter().filter(|l| **l == again).count(),
        2,
        "{lines:?}"
    );
    for i in (0..100).filter(|&i| i != 50) {
        let element = format!("element-{i}");
        let runs = lines
            .iter()
            .filter(|l| l.split(' ').next() == Some(&element))
            .count();
        assert_eq!(runs, 1, "{element} ran {runs} times: {lines:?}");
    }
    // In process, with the marker already there, nothing waits.
    assert_eq!(
        in_process(data.path(), file, args, "marker"),
        in_dir(&there, root.path())
    );
}

/// Two workers share one address; a serial step fails once and is retried after a
/// `retry_delay` of 3 s. Once the journal holds the pause's durable timer, the worker that ran
/// the failed attempt is killed. The other worker finishes the run: the failed attempt is not
/// run again, the retry runs once, and it starts a whole pause after the first attempt, by the
/// attempts' own start times in the report (journaled with their outcomes, so the replay on
/// the other worker reports when the first attempt ran, not when it was replayed).
#[test]
fn a_worker_killed_during_a_retry_pause_neither_shortens_nor_repeats_it() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let addr = localhost(free_port());
    let first = restate.worker(addr, root.path());
    let second = restate.worker(addr, root.path());
    let data = tempfile::tempdir().unwrap();
    let file = "tests/fixtures/durable/crash-pause.json";
    let args = |dir: &Path| serde_json::json!({"dir": dir.to_str().unwrap()}).to_string();
    let run = restate.submit(
        data.path(),
        &[
            file,
            "--args",
            &args(root.path()),
            "--run-id",
            "crash-pause",
        ],
    );
    // The pause is under way once its timer (a `Sleep` command) follows the clock read it is
    // measured from (`steps/0/pause/1`) in the run's journal.
    let pausing = "SELECT count(*) AS n FROM sys_journal s JOIN sys_journal p ON s.id = p.id \
         WHERE p.name = 'steps/0/pause/1' AND s.entry_type = 'Command: Sleep' \
         AND s.index > p.index";
    wait_for(
        Duration::from_secs(60),
        "the pause's timer is journaled",
        || {
            query(&restate.admin, pausing)
                .first()
                .and_then(|row| row["n"].as_u64())
                .is_some_and(|n| n >= 1)
        },
    );
    kill_the_worker_of(&root.path().join("marker"), [first.0.id(), second.0.id()]);
    let output = run.wait_with_output().unwrap();
    drop((first, second));
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let timed: Value =
        serde_json::from_str(common::stdout(&output).lines().last().unwrap_or_default()).unwrap();
    let item = &timed["groups"][0]["items"][0];
    assert_eq!(item["status"], "ok", "{timed}");
    assert_eq!(item["retries"], 1, "{timed}");
    assert_eq!(item["failed_attempts"][0]["reason"], "failed", "{timed}");
    let attempts = item["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{timed}");
    let started = |i: usize| attempts[i]["started_ms"].as_u64().unwrap();
    // Not shortened: the retry came at least the whole delay after the first attempt began.
    assert!(started(1) >= started(0) + 3000, "{timed}");
    // Not repeated: one failed attempt, one retry, each run once.
    let lines = evidence_lines(root.path());
    assert_eq!(
        lines,
        [
            "attempt crash-pause/#crash_pause/steps/0/0",
            "attempt crash-pause/#crash_pause/steps/0/1"
        ],
        "{lines:?}"
    );
}

/// Two workers share one address; a serial group of a 10 s timeout runs four steps, and the
/// worker running the third is killed 5 s into the group. The step runs again on the other
/// worker and outlasts the timeout: the group stops at the deadline of its first start (read
/// from the journaled clock), not 10 s after the replay, and the report is the one of a local
/// run that was never interrupted. Steps 0 and 1 ran once, step 3 never.
#[test]
fn a_timed_group_keeps_its_deadline_when_its_worker_is_killed() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let addr = localhost(free_port());
    let first = restate.worker(addr, root.path());
    let second = restate.worker(addr, root.path());
    let data = tempfile::tempdir().unwrap();
    let file = "tests/fixtures/durable/crash-timeout.json";
    let args = format!(r#"{{"dir":"{}"}}"#, root.path().display());
    let started = Instant::now();
    let run = restate.submit(data.path(), &[file, "--args", &args, "--run-id", "crash-3"]);
    // The same run in process, meanwhile, in a directory of its own.
    let here_dir = tempfile::tempdir().unwrap();
    let here_args = format!(r#"{{"dir":"{}"}}"#, here_dir.path().display());
    let here = std::thread::spawn({
        let data = data.path().to_owned();
        move || local(&data, &[file, "--args", &here_args])
    });
    let marker = root.path().join("marker");
    wait_for(Duration::from_secs(30), "step 2 waited", || marker.exists());
    kill_the_worker_of(&marker, [first.0.id(), second.0.id()]);
    let output = run.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    drop((first, second));
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    // 10 s from the group's start; a deadline read afresh by the replay would be 17 s or more
    // (the kill came 5 s in, the step's next attempt 2 s later). One-sided: that the group did not end before its deadline is the
    // report's (a timeout of a group whose step 2 had started) and the evidence's below.
    assert!(
        elapsed < Duration::from_secs(16),
        "the run ended after {elapsed:?}"
    );
    let there = report(&output);
    assert_eq!(there["groups"][0]["status"], "failed", "{there}");
    assert_eq!(there["groups"][0]["error"]["reason"], "timeout", "{there}");
    let here = here.join().unwrap();
    assert_eq!(
        in_dir(&report(&here), here_dir.path()),
        in_dir(&there, root.path())
    );
    let evidence = std::fs::read_to_string(root.path().join("evidence")).unwrap();
    let lines: Vec<&str> = evidence.lines().collect();
    let step2 = "step-2 crash-3/#crash_timeout/steps/2/0";
    assert_eq!(lines, ["step-0", "step-1", step2, step2]);
    // The step run again was stopped at the deadline with its command.
    let open = "SELECT count(*) AS n FROM sys_invocation WHERE status != 'completed'";
    wait_for(Duration::from_secs(10), "every invocation ended", || {
        query(&restate.admin, open)[0]["n"] == 0
    });
}

/// SIGKILL to the worker running the step whose shell wrote `marker` (`PPID PGID`: the worker,
/// which must be one of `workers`, and the step's own process group), and to what it had
/// started, which its death orphans.
fn kill_the_worker_of(marker: &Path, workers: [u32; 2]) {
    let text = std::fs::read_to_string(marker).unwrap();
    let ids: Vec<i32> = text
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let (worker, group) = (ids[0], ids[1]);
    let pids = workers.map(|p| i32::try_from(p).unwrap());
    assert!(
        pids.contains(&worker),
        "{worker} is not one of the workers {pids:?}"
    );
    let pid = rustix::process::Pid::from_raw(worker).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    let _ = rustix::process::kill_process_group(
        rustix::process::Pid::from_raw(group).unwrap(),
        rustix::process::Signal::KILL,
    );
}

/// The run id is the workflow's key: a second submission by the same caller with the same
/// arguments gets the first run's report and runs nothing; with other arguments, or by another
/// caller, it is refused, saying which differs.
#[test]
fn a_run_id_submitted_twice_runs_once_and_refuses_other_arguments() {
    let Setup {
        restate,
        root,
        data,
        worker: _worker,
    } = Setup::start();
    let seq = root.path().join("once.json");
    std::fs::write(
        &seq,
        r#"{"name": "once", "description": "Appends a line.", "groups": [{"name": "append", "description": "One command.", "in": {"line": "string"}, "out": {"r": "object"}, "tools": "{\"tool\":\"cmd_run\",\"args\":{\"command\":\"echo $args.line >> evidence\"},\"as\":\"r\"} ;"}]}"#,
    )
    .unwrap();
    let seq = seq.to_str().unwrap();
    let first = restate.run(
        data.path(),
        &[seq, "--args", r#"{"line":"first"}"#, "--run-id", "once-1"],
    );
    assert_eq!(status(&first), 0, "{}", stderr(&first));
    // The same id with the same arguments: the first run's report, nothing run again.
    let again = restate.run(
        data.path(),
        &[seq, "--args", r#"{"line":"first"}"#, "--run-id", "once-1"],
    );
    assert_eq!(status(&again), 0, "{}", stderr(&again));
    assert_eq!(report(&first), report(&again));
    // The same id with other arguments, or for another caller: refused, saying which differs.
    let second = restate.run(
        data.path(),
        &[seq, "--args", r#"{"line":"second"}"#, "--run-id", "once-1"],
    );
    assert_ne!(status(&second), 0);
    common::assert_says(stderr(&second), "was submitted with other arguments");
    let other = restate.run(
        data.path(),
        &[
            seq,
            "--args",
            r#"{"line":"first"}"#,
            "--run-id",
            "once-1",
            "--caller",
            "mallory",
        ],
    );
    assert_ne!(status(&other), 0);
    common::assert_says(stderr(&other), "was submitted by another caller");
    let evidence = std::fs::read_to_string(root.path().join("evidence")).unwrap();
    assert_eq!(evidence, "first\n");
    // Another id is another run.
    let third = restate.run(
        data.path(),
        &[seq, "--args", r#"{"line":"third"}"#, "--run-id", "once-2"],
    );
    assert_eq!(status(&third), 0, "{}", stderr(&third));
    let evidence = std::fs::read_to_string(root.path().join("evidence")).unwrap();
    assert_eq!(evidence, "first\nthird\n");
}

/// `#c0` → `#c1` → … → `#c4`: four nested calls run durably, each a child run (the stored
/// callees travel with the run); a fifth the check cannot see is refused at run time, and one it
/// sees before anything is submitted, as for a local run.
#[test]
fn a_chain_of_four_calls_runs_and_a_fifth_is_refused_before_submission() {
    let Setup {
        restate,
        root,
        data,
        worker: _worker,
    } = Setup::start();
    let link = |n: usize| {
        let items = if n == 4 {
            r#"{\"tool\":\"echo\",\"args\":{\"value\":\"bottom\"},\"as\":\"v\"} ;"#.to_owned()
        } else {
            format!(
                r##"{{\"tool\":\"seq_call\",\"args\":{{\"target\":\"#c{}\"}},\"as\":\"v\"}} ;"##,
                n + 1
            )
        };
        let path = root.path().join(format!("c{n}.json"));
        std::fs::write(
            &path,
            format!(
                r#"{{"name": "c{n}", "description": "Link {n}.", "groups": [{{"name": "g", "description": "One call.", "out": {{"v": "any"}}, "tools": "{items}"}}]}}"#
            ),
        )
        .unwrap();
        path
    };
    for n in (1..=4).rev() {
        common::create_on(link(n), &restate.ingress);
    }
    let top = link(0);
    let ran = restate.run(data.path(), &[top.to_str().unwrap()]);
    assert_eq!(status(&ran), 0, "{}", stderr(&ran));
    let report = report(&ran);
    let mut value = &report["out"]["g"]["v"];
    for n in 1..=4 {
        value = &value["g"]["v"];
        assert!(!value.is_null(), "no value at depth {n}: {report}");
    }
    assert_eq!(value, "bottom");
    // Each call was a run of its own, invoked by its caller; `seqc runs` lists only the one
    // submitted.
    let called = "SELECT count(*) AS n FROM sys_invocation \
         WHERE target_service_name = 'SeqRun' AND invoked_by = 'service'";
    assert_eq!(query(&restate.admin, called)[0]["n"], 4);
    let listed = common::command()
        .args(["runs", "--restate", &restate.admin, "--format", "json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_str(common::stdout(&listed)).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");

    common::create_on(&top, &restate.ingress);
    // The local run to compare with reads the same chain from its data directory.
    for n in 0..=4 {
        let path = root.path().join(format!("c{n}.json"));
        common::create_in(&path, data.path());
    }
    // `seq_run` hides its callee from the check (W0508): a fifth call is refused at run time,
    // in the called run four deep, whose input carried the stack; as in a local run.
    let hidden = root.path().join("hidden.json");
    std::fs::write(
        &hidden,
        r#"{"name": "hidden", "description": "A fifth call the check cannot see.", "groups": [{"name": "g", "description": "One run.", "parallel": false, "out": {"v": "any"}, "tools": "{\"tool\":\"seq_run\",\"args\":{\"name\":\"c0\"},\"as\":\"v\",\"unsafe_serial\":true} ;"}]}"#,
    )
    .unwrap();
    let hidden = hidden.to_str().unwrap();
    let here = local(data.path(), &[hidden]);
    let there = restate.run(data.path(), &[hidden]);
    assert_eq!(status(&there), 1, "{}", stderr(&there));
    let (here, there) = (self::report(&here), self::report(&there));
    assert_eq!(here, there);
    assert_eq!(there["groups"][0]["error"]["reason"], "depth", "{there}");

    let deeper = root.path().join("deeper.json");
    std::fs::write(
        &deeper,
        r##"{"name": "deeper", "description": "A fifth call.", "groups": [{"name": "g", "description": "One call.", "out": {"v": "any"}, "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"#c0\"},\"as\":\"v\"} ;"}]}"##,
    )
    .unwrap();
    let refused = restate.run(data.path(), &[deeper.to_str().unwrap()]);
    assert_eq!(status(&refused), 1, "{}", stderr(&refused));
    common::assert_says(common::stdout(&refused), "E0603");
}

/// `seqc runs` lists a finished run and a running one; `seqc cancel` stops the running one: its
/// two children's commands are stopped (their invocations end long before their `sleep 40`
/// would), the group after them never starts, and the submitter prints a cancelled report.
#[test]
fn runs_lists_the_runs_and_cancel_stops_a_run_and_its_children() {
    let Setup {
        restate,
        root,
        data,
        worker: _worker,
    } = Setup::start();
    let finished = restate.run(
        data.path(),
        &[
            "examples/hello.json",
            "--args",
            r#"{"who":"x"}"#,
            "--run-id",
            "done-1",
        ],
    );
    assert_eq!(status(&finished), 0, "{}", stderr(&finished));
    let args = format!(r#"{{"dir":"{}"}}"#, root.path().display());
    let long = restate.submit(
        data.path(),
        &[
            "tests/fixtures/durable/long.json",
            "--args",
            &args,
            "--run-id",
            "long-1",
        ],
    );
    let lines = || evidence_lines(root.path());
    wait_for(Duration::from_secs(30), "both children started", || {
        lines() == ["start-0", "start-1"]
    });

    let listed = common::command()
        .args(["runs", "--restate", &restate.admin, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(status(&listed), 0, "{}", stderr(&listed));
    let runs: Value = serde_json::from_str(common::stdout(&listed)).unwrap();
    let runs = runs.as_array().unwrap();
    let of = |id: &str| {
        runs.iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {runs:?}"))
    };
    assert_eq!(of("done-1")["status"], "completed", "{runs:?}");
    assert_ne!(of("long-1")["status"], "completed", "{runs:?}");
    assert!(
        of("long-1")["started"]
            .as_str()
            .is_some_and(|s| s.ends_with('Z'))
    );
    let human = common::command()
        .args(["runs", "--restate", &restate.admin])
        .output()
        .unwrap();
    let human = common::stdout(&human);
    assert!(
        human
            .lines()
            .any(|l| l.starts_with("done-1") && l.contains("completed")),
        "{human}"
    );

    let cancelled = common::command()
        .args(["cancel", "--restate", &restate.admin, "long-1"])
        .output()
        .unwrap();
    assert_eq!(status(&cancelled), 0, "{}", stderr(&cancelled));
    let output = long.wait_with_output().unwrap();
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    assert_cancelled_in_first_group(&report(&output));
    // The children's commands were stopped: their invocations are over, and neither wrote
    // its `end` line (nor will: its process is gone).
    wait_for(Duration::from_secs(20), "the children ended", || {
        let open = "SELECT count(*) AS n FROM sys_invocation \
             WHERE target_service_name = 'SeqItem' AND status != 'completed'";
        query(&restate.admin, open)[0]["n"] == 0
    });
    assert_eq!(lines(), ["start-0", "start-1"]);

    let unknown = common::command()
        .args(["cancel", "--restate", &restate.admin, "no-such-run"])
        .output()
        .unwrap();
    assert_eq!(status(&unknown), 2, "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("no durable run has the id `no-such-run`"));
}

/// A group whose timeout runs out gives the report of a local run, and what it was running is
/// stopped: the commands of a parallel group's child invocations, and the command of a
/// sequence a serial group called, a run of its own whose groups have a longer timeout.
#[test]
fn a_group_timeout_stops_its_items_and_reports_as_in_process() {
    let Setup {
        restate,
        data,
        worker: _worker,
        root: _root,
    } = Setup::start();
    let created = common::command()
        .args(["create", "tests/fixtures/durable/slow.json", "--data-dir"])
        .arg(data.path())
        .output()
        .unwrap();
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    // The durable run reads `#slow` from the engine's storage.
    let created = common::command()
        .args(["create", "tests/fixtures/durable/slow.json", "--restate"])
        .arg(&restate.ingress)
        .output()
        .unwrap();
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    let cases = [
        (
            "tests/fixtures/durable/timeout-parallel.json",
            "wait",
            ["pid-1", "pid-2"].as_slice(),
        ),
        (
            "tests/fixtures/durable/timeout-call.json",
            "outer",
            ["pid-slow"].as_slice(),
        ),
    ];
    for (file, group, pids) in cases {
        let dir = tempfile::tempdir().unwrap();
        let args = format!(r#"{{"dir":"{}"}}"#, dir.path().display());
        let here = local(data.path(), &[file, "--args", &args]);
        let started = Instant::now();
        let there = restate.run(data.path(), &[file, "--args", &args]);
        assert!(started.elapsed() < Duration::from_secs(20), "{file}");
        assert_eq!(status(&there), 1, "{file}: {}", stderr(&there));
        let (here, there) = (report(&here), report(&there));
        assert_eq!(here, there, "{file}");
        assert_eq!(there["groups"][0]["name"], group, "{there}");
        assert_eq!(there["groups"][0]["error"]["reason"], "timeout", "{there}");
        // The commands' shells (each leads its process group) are gone, long before their 30 s.
        for pid in pids {
            let pid = std::fs::read_to_string(dir.path().join(pid)).unwrap();
            let proc = Path::new("/proc").join(pid.trim());
            wait_for(Duration::from_secs(10), "the command stopped", || {
                !proc.exists()
            });
        }
        assert!(!dir.path().join("evidence").exists(), "{file}");
    }
    // The children stopped at the deadline: none is still running.
    let open = "SELECT count(*) AS n FROM sys_invocation WHERE status != 'completed'";
    wait_for(Duration::from_secs(10), "every invocation ended", || {
        query(&restate.admin, open)[0]["n"] == 0
    });
}

/// `seqc cancel` of a run while a sequence it called (`#sleeper`, a run of its own) waits on two
/// commands side by side: the called run stops with its caller, its commands' shells are gone
/// long before their `sleep 40` would end, and nothing it started writes afterwards.
#[test]
fn cancel_stops_a_called_run_and_what_it_started() {
    let Setup {
        restate,
        root,
        data,
        worker: _worker,
    } = Setup::start();
    let created = common::command()
        .args(["create", "tests/fixtures/durable/sleeper.json", "--restate"])
        .arg(&restate.ingress)
        .output()
        .unwrap();
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    let args = format!(r#"{{"dir":"{}"}}"#, root.path().display());
    let run = restate.submit(
        data.path(),
        &[
            "tests/fixtures/durable/cancel-call.json",
            "--args",
            &args,
            "--run-id",
            "cancel-call-1",
        ],
    );
    let pid = |n: usize| root.path().join(format!("pid-{n}"));
    wait_for(
        Duration::from_secs(30),
        "the called run's commands started",
        || pid(0).exists() && pid(1).exists(),
    );
    let shells = [0, 1].map(|n| {
        let pid = std::fs::read_to_string(pid(n)).unwrap();
        Path::new("/proc").join(pid.trim())
    });
    assert!(shells.iter().all(|shell| shell.exists()));
    let called = "SELECT count(*) AS n FROM sys_invocation \
         WHERE target_service_name = 'SeqRun' AND invoked_by = 'service' AND status != 'completed'";
    assert_eq!(query(&restate.admin, called)[0]["n"], 1);

    let cancelled = common::command()
        .args(["cancel", "--restate", &restate.admin, "cancel-call-1"])
        .output()
        .unwrap();
    assert_eq!(status(&cancelled), 0, "{}", stderr(&cancelled));
    let output = run.wait_with_output().unwrap();
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    let report = report(&output);
    assert_cancelled_in_first_group(&report);
    assert_eq!(
        report["groups"][0]["items"][0]["status"], "cancelled",
        "{report}"
    );
    for shell in &shells {
        wait_for(Duration::from_secs(10), "the command stopped", || {
            !shell.exists()
        });
    }
    // Every invocation is over: the run, the run it called and that run's items.
    let open = "SELECT count(*) AS n FROM sys_invocation WHERE status != 'completed'";
    wait_for(Duration::from_secs(20), "every invocation ended", || {
        query(&restate.admin, open)[0]["n"] == 0
    });
    assert!(!root.path().join("evidence").exists());
}

/// `seqc cancel` of a run while a step of a serial group runs a `sleep 30`, in the run itself
/// and in a run it called (`#serial_sleeper`): the step's shell is gone at once, the run ends
/// with a cancelled report, every invocation is over and nothing after the step ran.
#[test]
fn cancel_stops_a_serial_step_at_once() {
    let Setup {
        restate,
        data,
        worker: _worker,
        root,
    } = Setup::start();
    let created = common::command()
        .args([
            "create",
            "tests/fixtures/durable/serial-sleeper.json",
            "--restate",
        ])
        .arg(&restate.ingress)
        .output()
        .unwrap();
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    let cases = [
        ("tests/fixtures/durable/serial-sleeper.json", "serial-1"),
        (
            "tests/fixtures/durable/cancel-serial-call.json",
            "serial-call-1",
        ),
    ];
    for (file, id) in cases {
        let dir = tempfile::tempdir().unwrap();
        let args = format!(r#"{{"dir":"{}"}}"#, dir.path().display());
        let run = restate.submit(data.path(), &[file, "--args", &args, "--run-id", id]);
        let pid = dir.path().join("pid-0");
        wait_for(
            Duration::from_secs(30),
            "the step's command started",
            || pid.exists(),
        );
        let pid = std::fs::read_to_string(&pid).unwrap();
        let shell = Path::new("/proc").join(pid.trim());
        assert!(shell.exists(), "{file}");

        let cancelled = common::command()
            .args(["cancel", "--restate", &restate.admin, id])
            .output()
            .unwrap();
        assert_eq!(status(&cancelled), 0, "{file}: {}", stderr(&cancelled));
        let stopped = Instant::now();
        wait_for(Duration::from_secs(3), "the step's command stopped", || {
            !shell.exists()
        });
        let output = run.wait_with_output().unwrap();
        assert!(stopped.elapsed() < Duration::from_secs(10), "{file}");
        assert_eq!(status(&output), 1, "{file}: {}", stderr(&output));
        let report = report(&output);
        assert_cancelled_in_first_group(&report);
        assert_eq!(
            report["groups"][0]["items"][0]["status"], "cancelled",
            "{report}"
        );
        // The run, the run it called: every invocation ended, none is retried.
        let open = "SELECT count(*) AS n FROM sys_invocation WHERE status != 'completed'";
        wait_for(Duration::from_secs(20), "every invocation ended", || {
            query(&restate.admin, open)[0]["n"] == 0
        });
        assert!(!dir.path().join("evidence").exists(), "{file}");
    }
    // The steps left without an outcome made the SDK neither panic nor fail the invocation.
    for entry in std::fs::read_dir(root.path()).unwrap() {
        let log = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!log.contains("panicked"), "{log}");
    }
    let failed = "SELECT count(*) AS n FROM sys_invocation WHERE completion_result != 'success'";
    assert_eq!(query(&restate.admin, failed)[0]["n"], 0);
}

/// A server whose inactivity timeout (2 s) is shorter than a serial step and than parallel
/// items (5 s each): each runs once, and the run succeeds in about their time.
#[test]
fn steps_longer_than_the_inactivity_timeout_run_once() {
    let restate = Restate::start_with(&[("RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT", "2s")]);
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let _worker = restate.worker(localhost(free_port()), root.path());
    let args = format!(r#"{{"dir":"{}"}}"#, root.path().display());
    let started = Instant::now();
    let output = restate.run(
        data.path(),
        &["tests/fixtures/durable/inactivity.json", "--args", &args],
    );
    let took = started.elapsed();
    let lines = evidence_lines(root.path());
    assert_eq!(
        status(&output),
        0,
        "{took:?} {lines:?} {}: {}",
        common::stdout(&output),
        stderr(&output)
    );
    assert_eq!(report(&output)["ok"], true);
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert_eq!(
        lines,
        ["end-0", "end-1", "end-s", "start-0", "start-1", "start-s"]
    );
}

/// The differential generator's sequences (`seq_gen::differential`, a fixed sample of those
/// the checker accepts: group calls with and without `else`, `when`, `missing`, `on_error` and
/// retries (also from an input), local slots, `each` fanned out, tools no host has, parallel and
/// serial groups, arguments of every type) give the same report, and the same
/// exit status, in process and on Restate.
#[test]
fn the_differential_generators_sequences_give_the_same_report_in_process_and_on_restate() {
    use seq_catalog::Catalog;
    use seq_check::{Source, check};
    const CASES: usize = 40;
    let Setup {
        restate,
        data,
        worker: _worker,
        root: _root,
    } = Setup::start();
    let dir = tempfile::tempdir().unwrap();
    let local_root = tempfile::tempdir().unwrap();
    let catalog = Catalog::builtin();
    let accepted: Vec<(String, String)> = seq_gen::differential::sample(400)
        .iter()
        .map(|case| {
            let args = serde_json::Value::Object(seq_gen::differential::run_args(case));
            (seq_gen::differential::render(case), args.to_string())
        })
        .filter(|(text, _)| {
            let checked = check(&[Source::new("diff.json", text.clone())], &catalog);
            checked
                .files
                .iter()
                .all(|file| !file.diagnostics.iter().any(|d| d.is_error()))
        })
        .take(CASES)
        .collect();
    assert_eq!(accepted.len(), CASES);
    let started = Instant::now();
    let mut outcomes = std::collections::BTreeMap::new();
    let mut settled = 0;
    for (n, (text, args)) in accepted.iter().enumerate() {
        let file = dir.path().join(format!("case-{n}.json"));
        std::fs::write(&file, text).unwrap();
        let file = file.to_str().unwrap();
        let (mut here, mut there) = both_ways(
            &restate,
            data.path(),
            local_root.path(),
            file,
            args,
            &format!("case {n} {args}\n{text}"),
        );
        if where_the_order_shows(&mut here, &mut there) {
            settled += 1;
        }
        assert_eq!(here, there, "case {n} {args}\n{text}");
        *outcomes.entry(here["ok"] == true).or_insert(0) += 1;
    }
    eprintln!("{outcomes:?} (ok or not); {settled} with an item whose end the order shows");
    // Both kinds of end are in the sample, so the comparison covers failures as well.
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{CASES} cases took {:?}",
        started.elapsed()
    );
}

/// Where a parallel group stopped under `on_error: abort`, an item that ended on one side and
/// was stopped (`cancelled`) or not yet started (`skipped`) on the other: in process, items end
/// in the order they finish, on Restate they are observed in the order they were called, and an
/// item not observed yet when another fails is stopped (docs/reference.md, durable runs,
/// "Parallel groups"). An item with no step to make (an `each` over `[]`) ends as soon as it
/// starts: on Restate before the failure of an earlier item is observed, in process not at all
/// when that failure came first. Such an item is marked alike on both sides; whether there was
/// one.
fn where_the_order_shows(here: &mut Value, there: &mut Value) -> bool {
    let mut found = false;
    let stopped_group = |group: &Value| group["parallel"] == true && group["status"] == "failed";
    if stopped_group(here)
        && stopped_group(there)
        && let (Some(mine), Some(theirs)) = (
            here.get_mut("items").and_then(Value::as_array_mut),
            there.get_mut("items").and_then(Value::as_array_mut),
        )
    {
        for (a, b) in mine.iter_mut().zip(theirs.iter_mut()) {
            let stopped =
                |item: &Value| item["status"] == "cancelled" || item["status"] == "skipped";
            if a["status"] != b["status"] && (stopped(a) || stopped(b)) {
                let settled = serde_json::json!({"ended or stopped": a["tool"].clone()});
                (*a, *b) = (settled.clone(), settled);
                found = true;
            }
        }
    }
    if let (Value::Object(mine), Value::Object(theirs)) = (&mut *here, &mut *there) {
        for (key, value) in mine.iter_mut() {
            if let Some(other) = theirs.get_mut(key) {
                found |= where_the_order_shows(value, other);
            }
        }
    }
    if let (Value::Array(mine), Value::Array(theirs)) = (here, there) {
        for (a, b) in mine.iter_mut().zip(theirs.iter_mut()) {
            found |= where_the_order_shows(a, b);
        }
    }
    found
}

/// The report of a run cancelled in its first group: cancelled, and that group the only one.
fn assert_cancelled_in_first_group(report: &Value) {
    assert_eq!(report["cancelled"], true, "{report}");
    assert_eq!(report["groups"][0]["status"], "cancelled", "{report}");
    assert_eq!(report["groups"].as_array().unwrap().len(), 1, "{report}");
}

/// A step that kills its worker every time it runs (a `kill -9` of the shell's parent) is no
/// poison pill: two workers share one address and the test starts another whenever one dies.
/// Restate makes the step three times; then it fails its item with the reason, the group goes
/// on past it (`on_error: continue`) and the run reports. No fourth worker dies.
#[test]
fn a_step_that_kills_its_worker_fails_after_three_deaths() {
    let restate = Restate::start();
    let root = tempfile::tempdir().unwrap();
    let addr = localhost(free_port());
    let mut workers = vec![
        restate.worker(addr, root.path()),
        restate.worker(addr, root.path()),
    ];
    let data = tempfile::tempdir().unwrap();
    let args = format!(r#"{{"dir":"{}"}}"#, root.path().display());
    let file = "tests/fixtures/durable/poison.json";
    let mut run = restate.submit(data.path(), &[file, "--args", &args, "--run-id", "poison"]);
    let mut died = 0;
    let started = Instant::now();
    while run.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the run did not end"
        );
        for worker in &mut workers {
            if worker.0.try_wait().unwrap().is_some() {
                died += 1;
                *worker = restate.worker(addr, root.path());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = run.wait_with_output().unwrap();
    let deaths = std::fs::read_to_string(root.path().join("deaths")).unwrap();
    for worker in &mut workers {
        if worker.0.try_wait().unwrap().is_some() {
            died += 1;
        }
    }
    drop(workers);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let report = report(&output);
    let items = &report["groups"][0]["items"];
    assert_eq!(items[0]["status"], "failed", "{report}");
    assert_eq!(items[0]["error"]["reason"], "failed", "{report}");
    let detail = items[0]["error"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("given up after 3 attempts"), "{report}");
    assert_eq!(items[1]["status"], "ok", "{report}");
    assert_eq!(deaths.lines().count(), 3, "{deaths}");
    assert_eq!(died, 3, "{deaths}");
    assert_eq!(evidence_lines(root.path()), ["after"]);
}

/// `seqc cancel` of a run whose worker does not answer (stopped, SIGSTOP) while a step runs:
/// the cancellation cannot be delivered, so after the grace the run's invocations are killed,
/// every one of them ends, and the step after never runs.
#[test]
fn cancel_kills_a_run_that_cannot_take_the_cancellation() {
    let Setup {
        restate,
        root,
        data,
        worker,
    } = Setup::start();
    let args = format!(r#"{{"dir":"{}"}}"#, root.path().display());
    let run = restate.submit(
        data.path(),
        &[
            "tests/fixtures/durable/stuck.json",
            "--args",
            &args,
            "--run-id",
            "stuck-1",
        ],
    );
    let marker = root.path().join("marker");
    wait_for(Duration::from_secs(30), "the step started", || {
        marker.exists()
    });
    let text = std::fs::read_to_string(&marker).unwrap();
    let parent: i32 = text.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(parent, i32::try_from(worker.0.id()).unwrap(), "{text}");
    let pid = rustix::process::Pid::from_raw(parent).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::STOP).unwrap();
    let cancelled = common::command()
        .args([
            "cancel",
            "--restate",
            &restate.admin,
            "--grace",
            "2s",
            "stuck-1",
        ])
        .output()
        .unwrap();
    assert_eq!(status(&cancelled), 0, "{}", stderr(&cancelled));
    common::assert_says(stderr(&cancelled), "did not stop within 2s: killed");
    let open = "SELECT count(*) AS n FROM sys_invocation WHERE status != 'completed'";
    assert_eq!(query(&restate.admin, open)[0]["n"], 0);
    let output = run.wait_with_output().unwrap();
    assert_ne!(status(&output), 0, "{}", stderr(&output));
    // The stopped worker and the step's shell go with the test.
    let group: i32 = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let _ = rustix::process::kill_process_group(
        rustix::process::Pid::from_raw(group).unwrap(),
        rustix::process::Signal::KILL,
    );
    drop(worker);
    assert!(evidence_lines(root.path()).is_empty());
}
