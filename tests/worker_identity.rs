//! `seqc worker --identity-key` and `--root` (docs/operations.md, "Workers are a trust
//! boundary"): a worker given the Restate server's request identity public key serves that
//! server, and refuses requests it did not sign, registration's discovery included; a key that
//! is not one stops it at start; a worker without a root does not start. On a Restate server of
//! its own that signs with a test key (tests/fixtures/identity/restate-signing-key.pem, made for
//! these tests only).

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/restate.rs"]
mod restate;

use restate::{Restate, free_port, localhost};
use std::path::Path;
use std::process::Output;

/// The public half of the test key, as the server prints it (`kid`) when it loads it.
const SERVER_KEY: &str = "publickeyv1_3TfnTfB2gbFYJ6Hp3iykQcQYMKiYb3VgQNDVNEXVrTis";

/// A well-formed key of another server.
const OTHER_KEY: &str = "publickeyv1_ChjENKeMvCtRnqG2mrBK1HmPKufgFUc98K8B3ononQvp";

/// `seqc worker` with `key`, registering with `admin`, until it says it registered (then it is
/// killed) or exits.
fn register(admin: &str, key: &str, root: &Path) -> (bool, Output) {
    let mut child = common::command()
        .args(["worker", "--listen"])
        .arg(localhost(free_port()).to_string())
        .args(["--register", admin, "--identity-key", key, "--root"])
        .arg(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    // The first line: registered, or why not (then the worker exits).
    let first = lines.next().map(Result::unwrap).unwrap_or_default();
    let registered = first.contains("registered with");
    if registered {
        child.kill().unwrap();
    }
    let mut output = child.wait_with_output().unwrap();
    output.stderr = [first.into_bytes(), b"\n".to_vec()].concat();
    for line in lines.map_while(Result::ok) {
        output.stderr.extend(line.into_bytes());
        output.stderr.push(b'\n');
    }
    (registered, output)
}

#[test]
fn a_worker_serves_only_the_server_whose_key_it_was_given() {
    let pem = Path::new(common::PACKAGE).join("tests/fixtures/identity/restate-signing-key.pem");
    let restate = Restate::start_with(&[(
        "RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE",
        pem.to_str().unwrap(),
    )]);
    let root = tempfile::tempdir().unwrap();

    let (registered, output) = register(&restate.admin, SERVER_KEY, root.path());
    assert!(registered, "{}", common::stderr(&output));

    // The server's discovery request, signed with its key, fails another key's check.
    let (registered, output) = register(&restate.admin, OTHER_KEY, root.path());
    assert!(!registered);
    assert_eq!(common::status(&output), 2);
    common::assert_says(common::stderr(&output), "401 Unauthorized");
}

#[test]
fn a_key_that_is_not_one_stops_the_worker_at_start() {
    let root = tempfile::tempdir().unwrap();
    let output = common::command()
        .args(["worker", "--listen"])
        .arg(localhost(free_port()).to_string())
        .args([
            "--identity-key",
            "ChjENKeMvCtRnqG2mrBK1HmPKufgFUc98K8B3ononQvp",
            "--root",
        ])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(common::status(&output), 2);
    common::assert_says(common::stderr(&output), "is not one");
}

/// A worker serves whoever reaches the ingress: it never takes the directory it was started in
/// as the root of their file tools and commands, so `--root` is required.
#[test]
fn a_worker_without_a_root_is_refused() {
    let here = tempfile::tempdir().unwrap();
    let output = common::command()
        .args(["worker", "--listen"])
        .arg(localhost(free_port()).to_string())
        .current_dir(here.path())
        .output()
        .unwrap();
    assert_eq!(common::status(&output), 2);
    assert_eq!(
        common::stderr(&output),
        "seqc: seqc worker needs --root DIR: the directory the file tools and commands of the \
         runs it serves are confined to\n"
    );
}
