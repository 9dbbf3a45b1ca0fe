//! `seq_run`'s `run_id` across front-ends: a run submitted through one `seqc mcp --restate`
//! that dies while the run waits is got back through another front-end of the same Restate
//! server, with the one run's report, each of its steps having run once; the same id with
//! other arguments or from another caller is refused, saying which differs.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/restate.rs"]
mod restate;
#[path = "common/session.rs"]
mod session;

use restate::{Restate, Setup, wait_for};
use serde_json::{Value, json};
use session::Session;
use std::path::Path;
use std::time::Duration;

/// `seqc mcp --restate` on `restate` for `caller`, with `cmd_run` on.
fn front_end(restate: &Restate, caller: &str, root: &Path) -> Session {
    let root = root.to_str().unwrap();
    let options = ["--caller", caller, "--enable", "cmd_run", "--root", root];
    Session::start(&restate.mcp_args(&options), None)
}

/// The lines the run's steps appended to `root/evidence`, in order.
fn evidence(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("evidence"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The error a refused `seq_run` answered.
fn refusal(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result.to_string()
}

#[test]
fn a_run_id_gets_a_run_back_through_another_front_end_after_the_first_died() {
    let Setup {
        restate,
        root,
        worker: _worker,
        ..
    } = Setup::start();
    std::fs::copy(
        Path::new(common::PACKAGE).join("tests/fixtures/durable/gated.json"),
        root.path().join("gated.json"),
    )
    .unwrap();
    let dir = root.path().to_str().unwrap();
    let run = json!({"name": "gated", "args": {"dir": dir}, "run_id": "gated-1"});

    let mut a = front_end(&restate, "alice", root.path());
    let created = a.call("seq_create", json!({"name": "gated", "file": "gated.json"}));
    assert_ne!(created["isError"], true, "{created}");
    a.send_call("seq_run", run.clone());
    wait_for(Duration::from_secs(60), "the run waits for `go`", || {
        evidence(root.path()) == ["first", "waiting"]
    });
    // Front-end A dies (SIGKILL) while its `seq_run` waits; the run goes on without it.
    drop(a);
    std::fs::write(root.path().join("go"), "").unwrap();

    let mut b = front_end(&restate, "alice", root.path());
    let got = b.call("seq_run", run.clone());
    assert_ne!(got["isError"], true, "{got}");
    assert_eq!(got["structuredContent"]["ok"], true, "{got}");
    assert_eq!(
        evidence(root.path()),
        ["first", "waiting", "waited", "last"]
    );
    // Once more: the same report, nothing run again.
    let again = b.call("seq_run", run.clone());
    assert_eq!(again["structuredContent"], got["structuredContent"]);
    assert_eq!(
        evidence(root.path()),
        ["first", "waiting", "waited", "last"]
    );

    // The same id with other arguments, or from another caller: refused, saying which.
    let other_args = refusal(&b.call(
        "seq_run",
        json!({"name": "gated", "args": {"dir": "/elsewhere"}, "run_id": "gated-1"}),
    ));
    assert!(
        other_args.contains("was submitted with other arguments"),
        "{other_args}"
    );
    assert!(other_args.contains("run_id"), "{other_args}");
    let mut c = front_end(&restate, "bob", root.path());
    let other_caller = refusal(&c.call("seq_run", run));
    assert!(
        other_caller.contains("was submitted by another caller"),
        "{other_caller}"
    );
    assert!(!other_caller.contains(dir), "{other_caller}");
    assert_eq!(
        evidence(root.path()),
        ["first", "waiting", "waited", "last"]
    );
}
