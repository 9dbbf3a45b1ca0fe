//! `seqc check DIR` never blocks on, nor reads, a file that is not a regular one: a FIFO, a
//! socket or a device named `*.json` is an error naming what it is, at once; nor does `seqc mcp`
//! on its policy file.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `command` (no stdin, its output captured) and waits for it to end; panics with
/// `blocked` if it has not ended in 20 seconds. Generous: the point is that it ends, not how
/// fast (the machine is shared).
fn output_unless_blocked(command: &mut Command, blocked: &str) -> Output {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{blocked}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn check_dir_refuses_fifos_sockets_and_devices_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/hello.json"),
        path.join("hello.json"),
    )
    .unwrap();
    let made = Command::new("mkfifo")
        .arg(path.join("pipe.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let _socket = std::os::unix::net::UnixListener::bind(path.join("socket.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", path.join("zero.json")).unwrap();

    let output = output_unless_blocked(
        common::command().arg("check").arg(path),
        "`seqc check` blocked on a special file",
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr).replace(path.to_str().unwrap(), "DIR");
    insta::assert_snapshot!(stderr);
}

/// The policy file of `seqc mcp` (and `seqc worker`) is read as the stored sequences are: a
/// FIFO, a link or a file past the bound is refused at start with its reason, never waited on.
#[test]
fn a_policy_file_that_is_not_a_plain_small_file_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let root = path.join("root");
    std::fs::create_dir(&root).unwrap();
    let made = Command::new("mkfifo")
        .arg(path.join("fifo.json"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(path.join("real.json"), "{}").unwrap();
    std::os::unix::fs::symlink(path.join("real.json"), path.join("link.json")).unwrap();
    // Sparse: its size says 2 MiB, nothing is on disk.
    std::fs::File::create(path.join("big.json"))
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    for (file, reason) in [
        ("fifo.json", "it is a FIFO, not a regular file"),
        ("link.json", "it is a symbolic link, not a regular file"),
        (
            "big.json",
            "it is 2097152 bytes, more than the 1 MiB a policy file may have",
        ),
    ] {
        let output = output_unless_blocked(
            common::command()
                .args(["mcp", "--root"])
                .arg(&root)
                .arg("--data-dir")
                .arg(path.join("data"))
                .arg("--policy")
                .arg(path.join(file)),
            &format!("`seqc mcp` blocked on the policy file {file}"),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{file}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "cannot read the policy file {}",
                path.join(file).display()
            )) && stderr.contains(reason),
            "{file}: {stderr}"
        );
    }
}
