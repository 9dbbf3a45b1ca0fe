//! The file tools against a hostile tree: special files never block, a link swapped in while a
//! path is opened never leads outside the root, a hard link is never written through, and a
//! failed write leaves the old file whole (docs/reference.md, "The file tools"; docs/robustness.md,
//! "Files").

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::Caller;
use seq_exec::builtin::BuiltinHost;
use seq_exec::{Reason, ToolError, ToolHost};
use seq_test_support::{assert_detail, assert_refused, root_beside_outside};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

async fn call(host: &BuiltinHost, tool: &str, args: Value) -> Result<Value, ToolError> {
    // Generous: the point is that it ends at all (a FIFO used to block in open()).
    tokio::time::timeout(
        Duration::from_secs(10),
        host.call(&Caller::new("local"), tool, args),
    )
    .await
    .unwrap_or_else(|_| panic!("{tool} blocked"))
}

/// A FIFO, a socket and a character device (made where the process may, as root can; a link to
/// `/dev/null` otherwise, which is refused as leading outside).
fn special_files(root: &Path) -> (std::os::unix::net::UnixListener, bool) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        root.join("pipe"),
        rustix::fs::Mode::from_raw_mode(0o666),
    )
    .unwrap();
    let socket = std::os::unix::net::UnixListener::bind(root.join("socket")).unwrap();
    let device = rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("device"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    )
    .is_ok();
    if !device {
        std::os::unix::fs::symlink("/dev/null", root.join("device")).unwrap();
    }
    (socket, device)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_files_are_refused_at_once_by_every_file_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (_socket, device) = special_files(dir.path());
    let host = BuiltinHost::new(dir.path());
    for (name, kind) in [
        ("pipe", "a FIFO (named pipe)"),
        ("socket", "a socket"),
        ("device", "a character device"),
    ] {
        for (tool, args) in [
            ("files_read", json!({"path": name})),
            ("files_write", json!({"path": name, "content": "x"})),
            ("files_list", json!({"path": name})),
        ] {
            let error = call(&host, tool, args).await.unwrap_err();
            assert_eq!(error.field.as_deref(), Some("path"), "{tool} {name}");
            if name == "device" && !device {
                assert_eq!(error.reason, Reason::Unauthorized, "{tool} {name}");
            } else if tool == "files_list" {
                assert_detail(&error, "Not a directory");
            } else {
                assert_eq!(error.reason, Reason::Failed, "{tool} {name}");
                assert!(
                    error
                        .detail
                        .as_deref()
                        .unwrap_or_default()
                        .contains(&format!("is {kind}, not a regular file")),
                    "{tool} {name}: {error:?}"
                );
            }
        }
    }
    // Nothing was replaced: the special files are still there.
    let kind = |name: &str| std::fs::symlink_metadata(dir.path().join(name)).unwrap();
    use std::os::unix::fs::FileTypeExt;
    assert!(kind("pipe").file_type().is_fifo());
    assert!(kind("socket").file_type().is_socket());
}

#[tokio::test]
async fn a_path_that_does_not_exist_is_absent_in_one_text_for_every_file_tool() {
    let dir = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(dir.path());
    for (tool, path) in [
        ("files_read", "nope.txt"),
        ("files_read", "no/dir/nope.txt"),
        ("files_list", "nodir"),
        ("files_delete", "nope.txt"),
        ("files_delete", "no/dir/nope.txt"),
    ] {
        let error = call(&host, tool, json!({"path": path})).await.unwrap_err();
        assert_eq!(error.reason, Reason::Absent, "{tool} {path}: {error:?}");
        assert_eq!(error.field.as_deref(), Some("path"), "{error:?}");
        assert_eq!(
            error.detail.as_deref(),
            Some(format!("`{path}` does not exist").as_str()),
            "{tool}: {error:?}"
        );
    }
}

/// A path names at most `MAX_PATH_ENTRIES` entries: deeper, every file tool refuses it before
/// looking at the tree (each entry is looked at on the way, so thousands of them held a thread).
#[tokio::test]
async fn a_path_past_the_entry_bound_is_refused_by_every_file_tool() {
    use seq_exec::builtin::MAX_PATH_ENTRIES;
    let dir = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(dir.path());
    let at_bound = vec!["d"; MAX_PATH_ENTRIES].join("/");
    call(
        &host,
        "files_write",
        json!({"path": at_bound, "content": "x"}),
    )
    .await
    .unwrap();
    let past = format!("{at_bound}/e");
    for (tool, args) in [
        ("files_write", json!({"path": past, "content": "x"})),
        ("files_read", json!({"path": past})),
        ("files_list", json!({"path": past})),
        ("files_stat", json!({"path": past})),
        ("files_delete", json!({"path": past})),
        ("files_move", json!({"from": past, "to": "e"})),
        ("files_move", json!({"from": "e", "to": past})),
    ] {
        let error = call(&host, tool, args).await.unwrap_err();
        assert_eq!(error.reason, Reason::ArgError, "{tool}: {error:?}");
        assert_eq!(
            error.detail.as_deref(),
            Some(
                format!("the path names more than {MAX_PATH_ENTRIES} entries under the root")
                    .as_str()
            ),
            "{tool}: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_hard_link_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "outside").unwrap();
    std::fs::hard_link(&outside, root.join("linked.txt")).unwrap();
    let host = BuiltinHost::new(&root);
    let error = call(
        &host,
        "files_write",
        json!({"path": "linked.txt", "content": "planted"}),
    )
    .await
    .unwrap_err();
    assert_refused(&error, Reason::Unauthorized, "2 names");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside");
}

#[tokio::test]
async fn a_write_replaces_the_file_whole_and_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.sh");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    let host = BuiltinHost::new(dir.path());
    let written = call(
        &host,
        "files_write",
        json!({"path": "script.sh", "content": "new"}),
    )
    .await
    .unwrap();
    assert_eq!(written, json!({"path": "script.sh", "bytes": 3}));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o751);
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["script.sh"]);
}

/// Set in the child that [`a_failed_write_leaves_the_old_file_whole`] starts: the directory to
/// write in.
const CHILD_DIR: &str = "SEQC_TEST_FAILED_WRITE_DIR";

#[test]
fn a_failed_write_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.txt");
    std::fs::write(&path, "the old content").unwrap();
    // A full disk, simulated: files may not grow past 4 KiB (`ulimit -f` counts 512-byte
    // blocks) and SIGXFSZ is ignored, so the write fails with EFBIG as on ENOSPC.
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 8; exec \"$0\" --exact failed_write_child --nocapture")
        .arg(&exe)
        .env(CHILD_DIR, dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("WRITE FAILED: "), "{stdout}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "the old content");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["data.txt"], "no temporary file is left");
}

/// The child of [`a_failed_write_leaves_the_old_file_whole`]; on its own it has nothing to do.
#[tokio::test]
async fn failed_write_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let host = BuiltinHost::new(Path::new(&dir));
    let content = "x".repeat(64 * 1024);
    match call(
        &host,
        "files_write",
        json!({"path": "data.txt", "content": content}),
    )
    .await
    {
        Ok(value) => println!("WRITE SUCCEEDED: {value}"),
        Err(error) => println!("WRITE FAILED: {}", error.detail.unwrap_or_default()),
    }
}

/// A directory exchanged with a link to outside the root, over and over, while the file tools
/// read and write beneath it: they see the directory or fail, never the outside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_never_leads_outside() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) =
        root_beside_outside(dir.path(), &[("d/x.txt", "inside")], &[("x.txt", "SECRET")]);
    std::os::unix::fs::symlink(&outside, root.join("l")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let root = root.clone();
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    root.join("d"),
                    rustix::fs::CWD,
                    root.join("l"),
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let host = BuiltinHost::new(&root);
    let (mut read_inside, mut refused) = (0, 0);
    for i in 0..2000 {
        match host
            .call(
                &Caller::new("local"),
                "files_read",
                json!({"path": "d/x.txt"}),
            )
            .await
        {
            Ok(text) => {
                assert_eq!(text, json!("inside"), "read {i} reached outside the root");
                read_inside += 1;
            }
            Err(_) => refused += 1,
        }
        let name = format!("d/new-{i}.txt");
        let _ = host
            .call(
                &Caller::new("local"),
                "files_write",
                json!({"path": name, "content": "w"}),
            )
            .await;
        let _ = host
            .call(&Caller::new("local"), "files_list", json!({"path": "d"}))
            .await;
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let escaped: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(escaped, ["x.txt"], "files written outside the root");
    assert_eq!(
        std::fs::read_to_string(outside.join("x.txt")).unwrap(),
        "SECRET"
    );
    // The race was real: the tree changed under the tools, and both outcomes happened.
    assert!(swaps > 100, "{swaps} swaps");
    assert!(
        read_inside > 0 && refused > 0,
        "{read_inside} read, {refused} refused"
    );
}

/// The data directory under the root is out of the file tools' reach, however it is named: a
/// sequence cannot rewrite a stored sequence past the checker and the policy.
#[tokio::test]
async fn the_hidden_data_directory_is_out_of_reach() {
    let dir = tempfile::tempdir().unwrap();
    let sequences = dir.path().join(".seqc/sequences");
    std::fs::create_dir_all(&sequences).unwrap();
    std::fs::write(sequences.join("deploy.json"), "stored").unwrap();
    std::os::unix::fs::symlink(dir.path().join(".seqc"), dir.path().join("alias")).unwrap();
    let host = BuiltinHost::new(dir.path()).with_hidden(&sequences);
    for (tool, args) in [
        (
            "files_write",
            json!({"path": ".seqc/sequences/deploy.json", "content": "planted"}),
        ),
        (
            "files_write",
            json!({"path": "alias/sequences/new.json", "content": "planted"}),
        ),
        (
            "files_read",
            json!({"path": "./.seqc/sequences/deploy.json"}),
        ),
        ("files_list", json!({"path": ".seqc/sequences"})),
    ] {
        let error = call(&host, tool, args.clone()).await.unwrap_err();
        assert_eq!(error.reason, Reason::Unauthorized, "{tool} {args}");
        assert_detail(&error, "inside seqc's data directory");
    }
    assert_eq!(
        std::fs::read_to_string(sequences.join("deploy.json")).unwrap(),
        "stored"
    );
    assert!(!sequences.join("new.json").exists());
    // The rest of the root is as reachable as ever, the data directory's parent included.
    assert_eq!(
        call(&host, "files_list", json!({"path": ".seqc"}))
            .await
            .unwrap(),
        json!(["sequences/"])
    );
}
