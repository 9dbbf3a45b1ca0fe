//! The embedded host: its tools, the root confinement (docs/reference.md, "The file tools"), the
//! output sink, the policy.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::{Catalog, ParallelSafety};
use seq_exec::builtin::{BuiltinHost, Captured, TOOLS, resolve_under, wait_stopped};
use seq_exec::policy::{Policy, Rules};
use seq_exec::{Caller, Reason, ToolHost};
use seq_test_support::{assert_field, call_local, refused, root_beside_outside};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn host(root: &Path) -> BuiltinHost {
    BuiltinHost::new(root)
}

#[tokio::test]
async fn definitions_are_the_catalogs() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let catalog = Catalog::builtin();
    for name in TOOLS {
        assert_eq!(host.lookup(name).as_deref(), catalog.get(name), "{name}");
    }
    assert_eq!(host.definitions().count(), TOOLS.len());
    assert_eq!(
        host.lookup("files_write").unwrap().parallel_safe,
        ParallelSafety::Unsafe
    );
    assert!(host.lookup("seq_run").is_none());
    assert!(host.lookup("nope").is_none());
    let error = refused(&host, "nope", json!({})).await;
    assert_eq!(error.reason, Reason::NotFound);
}

#[tokio::test]
async fn echo_and_sleep() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let value = json!({"a": [1, "two", null]});
    assert_eq!(
        call_local(&host, "echo", json!({ "value": value }))
            .await
            .unwrap(),
        value
    );
    assert_eq!(
        call_local(&host, "sleep", json!({"ms": 1})).await.unwrap(),
        Value::Null
    );
    let missing = refused(&host, "echo", json!({})).await;
    assert_field(&missing, Reason::Required, "value");
    let negative = refused(&host, "sleep", json!({"ms": -5})).await;
    assert_field(&negative, Reason::Type, "ms");
    let not_object = refused(&host, "sleep", json!([1])).await;
    assert_eq!(not_object.reason, Reason::Type);
}

#[tokio::test]
async fn cmd_run_returns_output_and_runs_in_the_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker"), "here").unwrap();
    let host = host(dir.path());
    let value = call_local(
        &host,
        "cmd_run",
        json!({"command": "cat marker; echo oops >&2"}),
    )
    .await
    .unwrap();
    assert_eq!(
        value,
        json!({"stdout": "here", "stderr": "oops\n", "exit_code": 0})
    );
}

#[tokio::test]
async fn cmd_run_nonzero_exit_is_a_failure_with_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let error = refused(
        &host,
        "cmd_run",
        json!({"command": "echo out; echo 'disk full' >&2; exit 3"}),
    )
    .await;
    assert_eq!(error.reason, Reason::Failed);
    assert_eq!(error.detail.as_deref(), Some("exit status 3: disk full"));
    assert!(
        error
            .hint
            .as_deref()
            .unwrap()
            .contains("stderr ends the `detail`")
    );
}

#[tokio::test]
async fn ok_exit_lists_the_exit_codes_that_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "nothing to do\n").unwrap();
    let host = host(dir.path());
    let count = json!({"command": "grep -c TODO notes.txt", "ok_exit": [0, 1]});
    let found = call_local(&host, "cmd_run", count).await.unwrap();
    assert_eq!(
        found,
        json!({"stdout": "0\n", "stderr": "", "exit_code": 1})
    );
    // Outside `ok_exit` the exit is a failure that keeps its code and the end of stderr.
    let error = refused(
        &host,
        "cmd_run",
        json!({"command": "echo 'no such file' >&2; exit 2", "ok_exit": [0, 1]}),
    )
    .await;
    assert_eq!(error.detail.as_deref(), Some("exit status 2: no such file"));
    for wrong in [json!([0, "1"]), json!(1), json!([256]), json!([-1])] {
        let error = refused(
            &host,
            "cmd_run",
            json!({"command": "true", "ok_exit": wrong}),
        )
        .await;
        assert_eq!(error.field.as_deref(), Some("ok_exit"), "{wrong}");
    }
}

#[tokio::test]
async fn a_failure_with_nothing_on_stderr_quotes_stdout_or_says_there_was_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let only_stdout = refused(
        &host,
        "cmd_run",
        json!({"command": "echo half done; exit 2"}),
    )
    .await;
    assert_eq!(
        only_stdout.detail.as_deref(),
        Some("exit status 2, nothing on stderr; stdout ends: half done")
    );
    assert!(only_stdout.hint.as_deref().unwrap().contains("stdout"));
    let silent = refused(&host, "cmd_run", json!({"command": "grep -q zz /dev/null"})).await;
    assert_eq!(
        silent.detail.as_deref(),
        Some("exit status 1, with no output")
    );
    let hint = silent.hint.as_deref().unwrap();
    assert!(
        hint.contains("ok_exit") && !hint.contains("quoted"),
        "{hint}"
    );
}

#[tokio::test]
async fn cmd_run_timeout_uses_the_duration_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let slow = json!({"command": "sleep 30", "timeout": "100ms"});
    let error = refused(&host, "cmd_run", slow).await;
    assert_field(&error, Reason::Timeout, "timeout");
    for bad in ["5", "1.5s", "0s"] {
        let error = refused(&host, "cmd_run", json!({"command": "true", "timeout": bad})).await;
        assert_field(&error, Reason::Type, "timeout");
    }
    let missing = refused(&host, "cmd_run", json!({})).await;
    assert_field(&missing, Reason::Required, "command");
    // The timed-out command's processes are stopped on a background thread: a test process
    // that exits before it finished would leave them frozen for the scan (stopped for good).
    assert!(
        wait_stopped(Duration::from_secs(30)),
        "the timed-out command was not stopped"
    );
}

#[tokio::test]
async fn cmd_run_kills_a_command_that_writes_without_end() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    // `yes` never stops by itself: without the bound this read would grow until the timeout.
    for (command, stream) in [("yes", "stdout"), ("yes >&2", "stderr")] {
        let error = refused(
            &host,
            "cmd_run",
            json!({"command": command, "timeout": "50s"}),
        )
        .await;
        assert_eq!(error.reason, Reason::Failed, "{command}: {error:?}");
        let detail = error.detail.unwrap_or_default();
        assert!(
            detail.contains(&format!("more than 16 MiB to {stream}")),
            "{detail}"
        );
    }
    // Just under the bound is returned whole.
    let under = seq_exec::builtin::MAX_READ_BYTES - 1;
    let value = call_local(
        &host,
        "cmd_run",
        json!({"command": format!("head -c {under} /dev/zero | tr '\\0' a")}),
    )
    .await
    .unwrap();
    assert_eq!(value["stdout"].as_str().unwrap().len(), under);
}

#[tokio::test]
async fn files_read_refuses_a_file_past_the_bound_without_reading_it_all() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let bound = seq_exec::builtin::MAX_READ_BYTES;
    file_with_len(dir.path().join("big.txt"), bound + 1);
    let error = refused(&host, "files_read", json!({"path": "big.txt"})).await;
    assert_field(&error, Reason::Failed, "path");
    assert!(
        error
            .detail
            .unwrap_or_default()
            .contains("larger than 16 MiB")
    );
    file_with_len(dir.path().join("fits.txt"), bound);
    let value = call_local(&host, "files_read", json!({"path": "fits.txt"}))
        .await
        .unwrap();
    assert_eq!(value.as_str().unwrap().len(), bound);
}

/// A file of `len` zero bytes (sparse: made without writing them).
fn file_with_len(path: std::path::PathBuf, len: usize) {
    let file = std::fs::File::create(path).unwrap();
    file.set_len(u64::try_from(len).unwrap()).unwrap();
}

/// Whether `pid` is a live process (a zombie, killed and not yet reaped, is not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits (bounded) for `done`; the bound only stops a broken test from hanging.
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn cancelling_cmd_run_kills_the_shell_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let pid_file = dir.path().join("child.pid");
    let running = call_local(
        &host,
        "cmd_run",
        json!({"command": "sleep 300 & echo $! > child.pid.tmp; mv child.pid.tmp child.pid; wait"}),
    );
    let started = async {
        while !pid_file.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    // The run is dropped (cancelled) as soon as the grandchild is known.
    tokio::select! {
        result = running => panic!("the command finished: {result:?}"),
        () = started => {}
    }
    let child: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        eventually(|| !alive(child)).await,
        "`sleep` ({child}) outlived its cancelled run"
    );
}

#[tokio::test]
async fn files_write_read_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path());
    let written = call_local(
        &host,
        "files_write",
        json!({"path": "notes/today.txt", "content": "hello"}),
    )
    .await
    .unwrap();
    assert_eq!(written, json!({"path": "notes/today.txt", "bytes": 5}));
    assert_eq!(
        call_local(&host, "files_read", json!({"path": "./notes/today.txt"}))
            .await
            .unwrap(),
        json!("hello")
    );
    // A value that is not a string is written as compact JSON.
    call_local(
        &host,
        "files_write",
        json!({"path": "data.json", "content": {"a": [1, 2]}}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("data.json")).unwrap(),
        r#"{"a":[1,2]}"#
    );
    std::fs::create_dir(dir.path().join("b-dir")).unwrap();
    assert_eq!(
        call_local(&host, "files_list", json!({"path": ""}))
            .await
            .unwrap(),
        json!(["b-dir/", "data.json", "notes/"])
    );
    assert_eq!(
        call_local(&host, "files_list", json!({"path": "."}))
            .await
            .unwrap(),
        json!(["b-dir/", "data.json", "notes/"])
    );
    let missing = refused(&host, "files_read", json!({"path": "nope.txt"})).await;
    assert_field(&missing, Reason::Absent, "path");
}

#[tokio::test]
async fn files_refuse_absolute_and_parent_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let host = host(&root);
    for path in ["../secret", "a/../../secret", "/etc/passwd", "a/.."] {
        for (tool, args) in [
            ("files_read", json!({ "path": path })),
            ("files_list", json!({ "path": path })),
            ("files_write", json!({ "path": path, "content": "x" })),
            ("files_stat", json!({ "path": path })),
            ("files_delete", json!({ "path": path })),
            ("files_move", json!({ "from": path, "to": "x" })),
        ] {
            let error = refused(&host, tool, args).await;
            let field = if tool == "files_move" { "from" } else { "path" };
            assert_eq!(
                (error.reason, error.field.as_deref()),
                (Reason::ArgError, Some(field)),
                "{tool} {path}"
            );
        }
    }
    assert!(!dir.path().join("secret").exists());
}

#[cfg(unix)]
#[tokio::test]
async fn files_refuse_symbolic_links_that_lead_outside() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) =
        root_beside_outside(dir.path(), &[("inner/ok.txt", "fine")], &[("secret", "s")]);
    symlink(&outside, root.join("out")).unwrap();
    symlink(outside.join("secret"), root.join("secret-link")).unwrap();
    // Dangling: writing through it would create a file outside the root.
    symlink(outside.join("new-file"), root.join("dangling")).unwrap();
    symlink(root.join("inner"), root.join("inside-link")).unwrap();
    let host = host(&root);

    for (tool, args) in [
        ("files_read", json!({"path": "out/secret"})),
        ("files_read", json!({"path": "secret-link"})),
        ("files_list", json!({"path": "out"})),
        ("files_write", json!({"path": "out/new", "content": "x"})),
        ("files_write", json!({"path": "dangling", "content": "x"})),
        ("files_stat", json!({"path": "out/secret"})),
        ("files_delete", json!({"path": "out/secret"})),
        (
            "files_move",
            json!({"from": "inner/ok.txt", "to": "out/moved"}),
        ),
        ("files_move", json!({"from": "out/secret", "to": "here"})),
    ] {
        let error = refused(&host, tool, args.clone()).await;
        let field = match (tool, args.get("to")) {
            ("files_move", Some(to)) if to.as_str().is_some_and(|to| to.starts_with("out")) => "to",
            ("files_move", _) => "from",
            _ => "path",
        };
        assert_eq!(
            (error.reason, error.field.as_deref()),
            (Reason::Unauthorized, Some(field)),
            "{tool} {args}"
        );
    }
    assert!(outside.join("secret").exists());
    assert!(root.join("inner/ok.txt").exists());
    assert!(!outside.join("new").exists());
    assert!(!outside.join("new-file").exists());
    // A link that stays inside is followed.
    assert_eq!(
        call_local(&host, "files_read", json!({"path": "inside-link/ok.txt"}))
            .await
            .unwrap(),
        json!("fine")
    );
}

#[test]
fn resolve_under_appends_what_does_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("a")).unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    assert_eq!(
        resolve_under(dir.path(), "a/b/c.txt").unwrap(),
        canonical.join("a/b/c.txt")
    );
    assert_eq!(resolve_under(dir.path(), "").unwrap(), canonical);
    let missing_root = resolve_under(&dir.path().join("nope"), "x").unwrap_err();
    assert_eq!(missing_root.to_tool_error("path").reason, Reason::Failed);
}

#[tokio::test]
async fn output_goes_to_the_injected_sink_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let captured = Arc::new(Captured::new());
    let host = host(dir.path()).with_output(captured.clone());
    for text in ["one", "two", "three"] {
        assert_eq!(
            call_local(&host, "output_send__stdout", json!({ "text": text }))
                .await
                .unwrap(),
            Value::Null
        );
    }
    assert_eq!(captured.lines(), ["one", "two", "three"]);

    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<String>();
    let host = BuiltinHost::new(dir.path()).with_output(Arc::new(sender));
    call_local(&host, "output_send__stdout", json!({"text": "live"}))
        .await
        .unwrap();
    assert_eq!(receiver.recv().await.as_deref(), Some("live"));
    drop(receiver);
    let error = refused(&host, "output_send__stdout", json!({"text": "lost"})).await;
    assert_eq!(error.reason, Reason::Failed);
}

#[test]
fn the_authorizer_follows_the_policy() {
    let alice = Caller::new("alice");
    let bob = Caller::new("bob");
    let open = seq_exec::Authorizer::allow_all();
    assert!(open.allows(&alice, "cmd_run"));

    let policy = Policy::allow_all()
        .allow("files_*")
        .allow("echo")
        .allow("cmd_run")
        .deny("files_write")
        .for_caller("bob", Rules::default().deny("cmd_*"));
    let authorizer = seq_exec::Authorizer::new(policy);
    let allowed = |caller: &Caller, tool: &str| authorizer.allows(caller, tool);
    assert!(allowed(&alice, "files_read"));
    assert!(allowed(&alice, "cmd_run"));
    assert!(!allowed(&alice, "files_write"), "deny wins over `files_*`");
    assert!(!allowed(&alice, "sleep"), "not in the allow list");
    assert!(!allowed(&bob, "cmd_run"), "bob's own layer denies it");
    assert!(allowed(&bob, "echo"));
    assert!(
        !allowed(&bob, "sleep"),
        "a caller's layer cannot widen the global one"
    );
}

#[test]
fn policies_load_from_json() {
    let policy: Policy = serde_json::from_value(json!({
        "deny": ["cmd_run"],
        "callers": {"agent-7": {"allow": ["echo", "output_send__*"]}}
    }))
    .unwrap();
    let agent = Caller::new("agent-7");
    let other = Caller::new("other");
    assert!(policy.allows(&other, "files_write"));
    assert!(!policy.allows(&other, "cmd_run"));
    assert!(policy.allows(&agent, "output_send__stdout"));
    assert!(!policy.allows(&agent, "files_read"));
    let typo = serde_json::from_value::<Policy>(json!({"dney": ["x"]}));
    assert!(typo.is_err(), "unknown fields are refused");
}
