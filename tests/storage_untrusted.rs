//! The command line against a data directory it does not trust and files it is named: a FIFO
//! among the stored sequences is listed as unreadable (never a hang), a huge named file is
//! refused before it is read, two `seqc create` processes storing look-alike names leave exactly
//! one, two `seqc mcp` servers of one data directory never together take a caller past its
//! quota, a root and a data directory may not contain each other either way (nor through a link
//! whose target does not exist yet), and `seqc run` keeps the file tools out of the whole data
//! directory.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{scratch, seqc, status, stderr, stdout};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;

fn write_sequence(path: &Path, name: &str) {
    let text = serde_json::json!({
        "name": name,
        "groups": [{"name": "g", "tools": r#"{"tool":"echo","args":{"value":"hi"}} ;"#}]
    });
    std::fs::write(path, text.to_string()).unwrap();
}

#[test]
fn a_fifo_among_the_stored_sequences_is_listed_as_unreadable() {
    let dir = scratch("fifo_in_store");
    let data = dir.join("data");
    let file = dir.join("good.json");
    write_sequence(&file, "good");
    let data_arg = data.to_str().unwrap();
    let created = seqc(&["create", file.to_str().unwrap(), "--data-dir", data_arg]);
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        data.join("sequences/pipe.json"),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();

    // Each of these returns (with nobody ever writing the FIFO, a plain read would block).
    let listed = seqc(&["list", "--data-dir", data_arg]);
    assert_eq!(status(&listed), 0, "{}", stderr(&listed));
    let out = stdout(&listed);
    assert!(out.contains("good "), "{out}");
    assert!(
        out.contains("pipe  unreadable: the stored sequence `pipe` cannot be read: it is a FIFO, not a regular file"),
        "{out}"
    );
    let run = seqc(&["run", "#pipe", "--data-dir", data_arg]);
    assert_ne!(status(&run), 0);
    common::assert_says(stderr(&run), "it is a FIFO");
    let ran = seqc(&["run", "#good", "--data-dir", data_arg]);
    assert_eq!(status(&ran), 0, "{}", stderr(&ran));
}

#[test]
fn a_huge_named_file_is_refused_before_it_is_read() {
    let dir = scratch("huge_named_file");
    let big = dir.join("big.json");
    // Sparse: 3 GB by its size, nothing on disk; read whole it would take 3 GB of memory.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let data = dir.join("data");
    for args in [
        vec!["check", big.to_str().unwrap()],
        vec!["run", big.to_str().unwrap()],
        vec![
            "create",
            big.to_str().unwrap(),
            "--data-dir",
            data.to_str().unwrap(),
        ],
    ] {
        let refused = seqc(&args);
        assert_eq!(status(&refused), 2, "{args:?}: {}", stderr(&refused));
        assert!(
            stderr(&refused)
                .contains("it is 3221225472 bytes, more than the 64 MiB a sequence file may have"),
            "{args:?}: {}",
            stderr(&refused)
        );
    }
}

/// Two processes, each storing one of two names that look alike (`look` and `lоok` with a
/// Cyrillic `о`), started together many times: exactly one of each pair is stored.
#[test]
fn two_processes_storing_look_alike_names_leave_exactly_one() {
    let dir = scratch("look_alike_race");
    for round in 0..20 {
        let data = dir.join(format!("data{round}"));
        let names = [format!("look{round}"), format!("l\u{43e}ok{round}")];
        let children: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(at, name)| {
                let file = dir.join(format!("{round}-{at}.json"));
                write_sequence(&file, name);
                common::command()
                    .args(["create", file.to_str().unwrap(), "--data-dir"])
                    .arg(&data)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outputs: Vec<_> = children
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .collect();
        let won = outputs.iter().filter(|o| o.status.success()).count();
        assert_eq!(won, 1, "round {round}: {outputs:?}");
        let lost = outputs.iter().find(|o| !o.status.success()).unwrap();
        common::assert_says(
            &String::from_utf8_lossy(&lost.stderr),
            "looks like the stored sequence",
        );
        let stored = std::fs::read_dir(data.join("sequences"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".json")
            })
            .count();
        assert_eq!(stored, 1, "round {round}");
    }
}

/// A `seqc mcp` server on `data` for the caller `bob`, initialized: its stdin and its answers.
struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Server {
    fn start(data: &Path, root: &Path, policy: &Path) -> Server {
        let (child, stdin, stdout) = common::spawn_piped(
            common::command()
                .args(["mcp", "--caller", "bob", "--root"])
                .arg(root)
                .arg("--data-dir")
                .arg(data)
                .arg("--policy")
                .arg(policy),
        );
        let lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
        let mut server = Server {
            child,
            stdin,
            lines,
        };
        server.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        );
        server.answer();
        server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The next answer (this test asks one thing at a time).
    fn answer(&mut self) -> serde_json::Value {
        loop {
            let line = self.lines.next().unwrap().unwrap();
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    fn stop(self) {
        let Server {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        assert!(child.wait().unwrap().success());
    }
}

/// Two servers on one data directory, for one caller whose quota holds one more sequence, each
/// asked to create one at the same moment, many times: exactly one is stored each time, and the
/// other is refused for the quota (the check is made with the write, under the lock of the
/// data directory).
#[test]
fn two_servers_never_take_a_caller_past_its_quota_together() {
    let dir = scratch("quota_race");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let policy = dir.join("policy.json");
    std::fs::write(&policy, r#"{"quota": {"sequences": 1}}"#).unwrap();
    for round in 0..20 {
        let data = dir.join(format!("data{round}"));
        let mut servers = [
            Server::start(&data, &root, &policy),
            Server::start(&data, &root, &policy),
        ];
        for (at, server) in servers.iter_mut().enumerate() {
            server.send(
                &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "seq_create", "arguments": {
                    "name": format!("s{round}x{at}"),
                    "groups": [{"name": "g", "tools": r#"{"tool":"echo","args":{"value":"hi"}} ;"#}]
                }}}),
            );
        }
        let answers: Vec<serde_json::Value> = servers.iter_mut().map(Server::answer).collect();
        let refused: Vec<&serde_json::Value> = answers
            .iter()
            .filter(|a| a["result"]["isError"] == serde_json::json!(true))
            .collect();
        assert_eq!(refused.len(), 1, "round {round}: {answers:#?}");
        assert!(
            refused[0]
                .to_string()
                .contains("already owns 1 stored sequences, the quota of 1"),
            "round {round}: {}",
            refused[0]
        );
        let stored = std::fs::read_dir(data.join("sequences"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".json")
            })
            .count();
        assert_eq!(stored, 1, "round {round}");
        for server in servers {
            server.stop();
        }
    }
}

#[test]
fn a_root_inside_the_data_directory_is_refused_too() {
    let dir = scratch("root_inside_data");
    let data = dir.join("data");
    let inside = data.join("sequences");
    std::fs::create_dir_all(&inside).unwrap();
    let refused = seqc(&[
        "mcp",
        "--root",
        inside.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert_eq!(status(&refused), 2);
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(
        stderr(&refused),
        format!(
            "seqc: --root {} is inside the data directory {}: the file tools could rewrite the \
             stored sequences; give a --root outside the data directory\n",
            canonical(&inside),
            canonical(&data)
        )
    );
    // The other way is refused as before.
    let outer = seqc(&[
        "mcp",
        "--root",
        dir.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert_eq!(status(&outer), 2);
    common::assert_says(stderr(&outer), "contains the data directory");
}

#[test]
fn a_sequences_directory_linked_into_the_root_is_refused() {
    let dir = scratch("sequences_linked_into_root");
    let root = dir.join("root");
    let data = dir.join("data");
    std::fs::create_dir_all(root.join("stash")).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::os::unix::fs::symlink(root.join("stash"), data.join("sequences")).unwrap();
    refused_to_start(&root, &data, "which is inside --root");
}

/// A link whose target does not exist yet cannot be placed: once its target is made, a data
/// directory behind it could be inside the root. Refused, for the data directory and for its
/// `sequences`.
#[test]
fn a_data_directory_behind_a_dangling_link_is_refused() {
    let dir = scratch("data_behind_dangling_link");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(root.join("future"), dir.join("later")).unwrap();
    refused_to_start(
        &root,
        &dir.join("later/data"),
        "is a symbolic link whose target does not exist",
    );
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::os::unix::fs::symlink(root.join("stash"), data.join("sequences")).unwrap();
    refused_to_start(
        &root,
        &data,
        "is a symbolic link whose target does not exist",
    );
}

/// `seqc run` hides the whole data directory from the file tools, not only its `sequences`: the
/// lock and write count beside them are what other processes of the same store rely on.
#[test]
fn seqc_run_keeps_the_file_tools_out_of_the_whole_data_directory() {
    let dir = scratch("run_hides_data_directory");
    let data = dir.join(".seqc");
    std::fs::create_dir_all(data.join("sequences")).unwrap();
    std::fs::write(data.join("sequences.lock"), "").unwrap();
    let file = dir.join("peek.json");
    for (tool, path) in [
        ("files_read", ".seqc/sequences.lock"),
        ("files_list", ".seqc"),
        ("files_stat", ".seqc/sequences.lock"),
    ] {
        let sequence = json!({"name": "peek", "groups": [{"name": "g", "out": {"v": "any"},
            "tools": format!("{{\"tool\":\"{tool}\",\"args\":{{\"path\":\"{path}\"}},\"as\":\"v\"}} ;")}]});
        std::fs::write(&file, sequence.to_string()).unwrap();
        let out = seqc(&[
            "run",
            "--root",
            dir.to_str().unwrap(),
            "--data-dir",
            data.to_str().unwrap(),
            "--format",
            "json",
            file.to_str().unwrap(),
        ]);
        assert_eq!(status(&out), 1, "{tool}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("inside seqc's data directory"),
            "{tool}: {}",
            stdout(&out)
        );
    }
}

/// `seqc mcp` with `root` and `data` exits with status 2, its message saying `said`.
fn refused_to_start(root: &Path, data: &Path, said: &str) {
    let refused = seqc(&[
        "mcp",
        "--root",
        root.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert_eq!(status(&refused), 2, "{}", stderr(&refused));
    common::assert_says(stderr(&refused), said);
}
