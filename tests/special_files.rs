//! `seqc check DIR` never blocks on, nor reads, a file that is not a regular one: a FIFO, a
//! socket or a device named `*.json` is an error naming what it is, at once.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

    let started = Instant::now();
    let mut child = common::command()
        .arg("check")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Generous: the point is that it ends, not how fast (the machine is shared).
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("`seqc check` blocked on a special file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr).replace(path.to_str().unwrap(), "DIR");
    insta::assert_snapshot!(stderr);
}
