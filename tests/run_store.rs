//! `seqc create`, `list`, `delete` and `run #name` against a data directory, and the exit
//! statuses of `seqc run`: 0 when the run succeeded, 1 when it failed or the sequence has errors
//! (nothing runs then), 2 for problems of the command itself.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{status, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

const FIXTURES: &str = "tests/fixtures/run";

/// Runs `seqc` in the package directory; the data directory comes from `--data-dir` or the
/// environment the test sets.
fn seqc_in(env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut command = common::command();
    command.args(args).env("NO_COLOR", "1");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// Runs `seqc` with `--data-dir data` after the arguments.
fn seqc(data: &Path, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--data-dir", data.to_str().unwrap()]);
    seqc_in(&[], &all)
}

fn fixture(name: &str) -> String {
    format!("{FIXTURES}/{name}")
}

fn listed(data: &Path) -> Value {
    let output = seqc(data, &["list", "--format", "json"]);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    serde_json::from_str(stdout(&output)).unwrap()
}

#[test]
fn create_list_run_and_delete_a_stored_sequence() {
    let data = tempfile::tempdir().unwrap();
    let empty = seqc(data.path(), &["list"]);
    assert_eq!(status(&empty), 0);
    assert!(
        stdout(&empty).starts_with("no sequences stored in "),
        "{}",
        stdout(&empty)
    );

    let created = seqc(data.path(), &["create", "examples/hello.json"]);
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    assert!(stdout(&created).starts_with("stored `hello` (1 group, 2 items) in "));
    assert!(data.path().join("sequences/hello.json").is_file());

    assert_eq!(
        listed(data.path()),
        serde_json::json!([{
            "name": "hello",
            "groups": 1,
            "items": 2,
            "description": "Greets someone on standard output, then reports what it said.",
            "args": {"who": "string"}
        }])
    );
    let human = seqc(data.path(), &["list"]);
    assert!(
        stdout(&human).starts_with("hello  1 group, 2 items "),
        "{}",
        stdout(&human)
    );

    let ran = seqc(
        data.path(),
        &["run", "#hello", "--args", r#"{"who":"store"}"#],
    );
    assert_eq!(status(&ran), 0, "{}", stderr(&ran));
    assert_eq!(stdout(&ran), "Hello, store!\n");

    let deleted = seqc(data.path(), &["delete", "hello"]);
    assert_eq!(status(&deleted), 0, "{}", stderr(&deleted));
    assert_eq!(listed(data.path()), serde_json::json!([]));
    let gone = seqc(data.path(), &["run", "#hello"]);
    assert_eq!(status(&gone), 2);
    assert!(stderr(&gone).contains("no sequence named `hello` is stored"));
    let again = seqc(data.path(), &["delete", "#hello"]);
    assert_eq!(status(&again), 2);
    assert!(stderr(&again).contains("no stored sequence is named `hello`"));
}

#[test]
fn the_data_directory_defaults_to_the_variable_then_dot_seqc() {
    let data = tempfile::tempdir().unwrap();
    let from_env = seqc_in(
        &[("SEQC_DATA_DIR", data.path())],
        &["create", "examples/hello.json"],
    );
    assert_eq!(status(&from_env), 0, "{}", stderr(&from_env));
    assert!(data.path().join("sequences/hello.json").is_file());

    let cwd = tempfile::tempdir().unwrap();
    let hello = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello.json");
    let output = common::command()
        .arg("create")
        .arg(&hello)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert!(cwd.path().join(".seqc/sequences/hello.json").is_file());
}

#[test]
fn create_refuses_a_taken_name_unless_replacing() {
    let data = tempfile::tempdir().unwrap();
    assert_eq!(
        status(&seqc(data.path(), &["create", "examples/hello.json"])),
        0
    );
    let twice = seqc(data.path(), &["create", "examples/hello.json"]);
    assert_eq!(status(&twice), 1);
    common::assert_says(stderr(&twice), "pass --replace");
    let replaced = seqc(data.path(), &["create", "examples/hello.json", "--replace"]);
    assert_eq!(status(&replaced), 0, "{}", stderr(&replaced));
}

#[test]
fn create_refuses_a_sequence_with_errors_and_shows_them() {
    let data = tempfile::tempdir().unwrap();
    let output = seqc(data.path(), &["create", &fixture("has-errors.json")]);
    assert_eq!(status(&output), 1);
    common::assert_says(stderr(&output), "error[E0502]");
    assert!(stderr(&output).contains("was not stored: it has errors"));
    assert_eq!(listed(data.path()), serde_json::json!([]));
}

/// The checker runs over the whole store: the second half of a cycle is refused.
#[test]
fn create_refuses_a_cycle_through_the_store() {
    let data = tempfile::tempdir().unwrap();
    let ping = seqc(data.path(), &["create", &fixture("ping.json")]);
    assert_eq!(status(&ping), 0, "{}", stderr(&ping));
    // `#pong` is not stored yet: a warning, printed, not a refusal.
    common::assert_says(stderr(&ping), "warning[W0501]");
    let pong = seqc(data.path(), &["create", &fixture("pong.json")]);
    assert_eq!(status(&pong), 1);
    common::assert_says(stderr(&pong), "error[E0602]");
    let names: Vec<Value> = listed(data.path())
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].clone())
        .collect();
    assert_eq!(names, ["ping"]);
}

#[test]
fn a_sequence_with_errors_is_not_run() {
    let data = tempfile::tempdir().unwrap();
    let file = fixture("has-errors.json");
    let human = seqc(data.path(), &["run", &file, "--args", r#"{"who":"x"}"#]);
    assert_eq!(status(&human), 1);
    assert_eq!(stdout(&human), "", "nothing ran");
    common::assert_says(stderr(&human), "error[E0502]");
    assert!(stderr(&human).contains("1 error, 1 warning in 1 file"));

    // With --format json the diagnostics are `seqc check --format json`'s object.
    let json = seqc(data.path(), &["run", &file, "--format", "json"]);
    assert_eq!(status(&json), 1);
    let diagnostics: Value = serde_json::from_str(stdout(&json)).unwrap();
    assert_eq!(diagnostics["errors"], 1);
    let codes: Vec<&Value> = diagnostics["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["code"])
        .collect();
    assert_eq!(codes, ["W0503", "E0502"]);
}

#[test]
fn a_failed_run_exits_1_and_says_why() {
    let data = tempfile::tempdir().unwrap();
    let output = seqc(data.path(), &["run", &fixture("fails.json")]);
    assert_eq!(status(&output), 1);
    assert_eq!(stdout(&output), "", "the second group is never reached");
    let err = stderr(&output);
    assert!(err.contains("  ✗ cmd_run: failed"), "{err}");
    assert!(err.contains("■ group boom failed in "), "{err}");
    assert!(!err.contains("group after"), "{err}");
    assert!(
        err.contains("✗ fails failed in ") && err.contains(": 1 group failed, 1 not reached"),
        "{err}"
    );
    assert!(
        err.contains("  group `boom`, item 1 `cmd_run`: failed"),
        "{err}"
    );

    let json = seqc(
        data.path(),
        &["run", &fixture("fails.json"), "--format", "json"],
    );
    assert_eq!(status(&json), 1);
    let report: Value = serde_json::from_str(stdout(&json).trim_end()).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["groups"].as_array().unwrap().len(), 1);
    assert_eq!(report["groups"][0]["items"][0]["error"]["reason"], "failed");
}

/// The summary lists a failure tolerated in a group that an item called as it lists one
/// tolerated in the run's own group.
#[test]
fn the_summary_lists_failures_tolerated_in_a_called_group() {
    let data = tempfile::tempdir().unwrap();
    let output = seqc(data.path(), &["run", &fixture("tolerated.json")]);
    let err = stderr(&output);
    assert_eq!(status(&output), 0, "{err}");
    let mut summary = err.lines().skip_while(|l| !l.starts_with("✓ tolerated "));
    let outcome = summary.next().unwrap_or_default();
    assert!(outcome.ends_with(" ms: 1 group partly failed"), "{err}");
    insta::assert_snapshot!("tolerated_summary", summary.collect::<Vec<_>>().join("\n"));
}

#[test]
fn bad_args_are_a_usage_error_in_one_line() {
    let data = tempfile::tempdir().unwrap();
    for args in ["{who", "[1, 2]", "\"world\""] {
        let output = seqc(data.path(), &["run", "examples/hello.json", "--args", args]);
        assert_eq!(status(&output), 2, "{args}");
        assert_eq!(stdout(&output), "");
        assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
        assert!(
            stderr(&output).starts_with("seqc: --args "),
            "{}",
            stderr(&output)
        );
    }
    let missing = seqc(data.path(), &["run", "no/such/file.json"]);
    assert_eq!(status(&missing), 2);
    assert!(stderr(&missing).starts_with("seqc: cannot read no/such/file.json"));
}

/// An argument no group declares stops the run before it starts: exit 1, reason `type`.
#[test]
fn an_undeclared_argument_is_a_failed_run() {
    let data = tempfile::tempdir().unwrap();
    let args = ["run", "examples/hello.json", "--args", r#"{"whom":"x"}"#];
    let output = seqc(data.path(), &args);
    assert_eq!(status(&output), 1);
    common::assert_says(stderr(&output), "✗ hello could not start");
    let json = seqc(data.path(), &[&args[..], &["--format", "json"]].concat());
    let report: Value = serde_json::from_str(stdout(&json).trim_end()).unwrap();
    assert_eq!(report["error"]["reason"], "type");
    assert_eq!(report["error"]["field"], "whom");
}

/// The policy holds at every depth: `#hello`, called from another sequence, may not use
/// `echo` either.
#[test]
fn denied_tools_are_unauthorized_also_through_sequence_calls() {
    let data = tempfile::tempdir().unwrap();
    assert_eq!(
        status(&seqc(data.path(), &["create", "examples/hello.json"])),
        0
    );
    let direct = seqc(
        data.path(),
        &[
            "run",
            "#hello",
            "--args",
            r#"{"who":"x"}"#,
            "--deny",
            "echo",
            "--format",
            "json",
        ],
    );
    assert_eq!(status(&direct), 1);
    let report: Value = serde_json::from_str(stdout(&direct).trim_end()).unwrap();
    assert_eq!(
        report["groups"][0]["items"][0]["error"]["reason"],
        "unauthorized"
    );

    let nested = seqc(
        data.path(),
        &[
            "run",
            &fixture("calls-hello.json"),
            "--allow",
            "seq_*",
            "--allow",
            "output_*",
            "--caller",
            "agent-7",
            "--format",
            "json",
        ],
    );
    assert_eq!(status(&nested), 1);
    assert_eq!(
        stdout(&nested).lines().count(),
        1,
        "nothing printed before the report"
    );
    let report: Value = serde_json::from_str(stdout(&nested).trim_end()).unwrap();
    let first = &report["groups"][0]["items"][0];
    assert_eq!(first["tool"], "seq_call");
    assert_eq!(first["status"], "failed");
    assert!(
        first["error"].to_string().contains("unauthorized"),
        "{first}"
    );
}

#[test]
fn a_stored_sequence_is_called_by_name_from_a_file() {
    let data = tempfile::tempdir().unwrap();
    assert_eq!(
        status(&seqc(data.path(), &["create", "examples/hello.json"])),
        0
    );
    let output = seqc(
        data.path(),
        &["run", &fixture("calls-hello.json"), "--format", "json"],
    );
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let lines: Vec<&str> = stdout(&output).lines().collect();
    assert_eq!(lines[..3], ["Hello, one!", "Hello, two!", "done"]);
    let report: Value = serde_json::from_str(lines[3]).unwrap();
    assert_eq!(
        report["out"]["twice"]["second"],
        serde_json::json!({"greet": {"greeting": "Hello, two!"}})
    );
}

#[test]
fn an_unreadable_stored_file_is_listed_and_left_out() {
    let data = tempfile::tempdir().unwrap();
    assert_eq!(
        status(&seqc(data.path(), &["create", "examples/hello.json"])),
        0
    );
    std::fs::write(data.path().join("sequences/broken.json"), "{ not json").unwrap();
    let rows = listed(data.path());
    assert_eq!(rows[0]["name"], "broken");
    assert!(
        rows[0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot be read")
    );
    assert_eq!(rows[1]["name"], "hello");
    let human = seqc(data.path(), &["list"]);
    common::assert_says(stdout(&human), "broken  unreadable: ");

    let ran = seqc(data.path(), &["run", "#hello", "--args", r#"{"who":"x"}"#]);
    assert_eq!(status(&ran), 0, "{}", stderr(&ran));
    common::assert_says(
        stderr(&ran),
        "seqc: warning: stored sequence `broken` is left out",
    );
}

/// Stored text and what a command printed reach the terminal escaped, as `ls` and `git` show
/// such names: a description that erases the line and writes the clipboard (OSC 52), and a
/// command whose stderr does the same, show their escapes and send none.
#[test]
fn stored_text_and_command_output_are_shown_escaped() {
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("hostile.json");
    let command = r"printf 'bad\033]52;c;eA==\007\n' >&2; exit 4";
    let tools = serde_json::json!({"tool": "cmd_run", "args": {"command": command}}).to_string();
    let sequence = serde_json::json!({
        "name": "hostile",
        "description": "tidy\u{1b}[2K\r\u{1b}]52;c;ZWNobyBwd25lZA==\u{7} up",
        "groups": [{"name": "g", "tools": format!("{tools};")}],
    });
    std::fs::write(&file, sequence.to_string()).unwrap();
    let created = seqc(data.path(), &["create", file.to_str().unwrap()]);
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    let controls = |text: &str| text.chars().any(|c| c.is_control() && c != '\n');

    let human = seqc(data.path(), &["list"]);
    assert!(!controls(stdout(&human)), "{:?}", stdout(&human));
    assert!(
        stdout(&human).contains(r"tidy\e[2K\r\e]52;c;ZWNobyBwd25lZA==\x07 up"),
        "{}",
        stdout(&human)
    );
    // JSON says it with JSON's own escapes.
    assert_eq!(
        listed(data.path())[0]["description"],
        sequence["description"]
    );

    let ran = seqc(data.path(), &["run", "#hostile"]);
    assert_eq!(status(&ran), 1, "{}", stderr(&ran));
    assert!(!controls(stderr(&ran)), "{:?}", stderr(&ran));
    assert!(
        stderr(&ran).contains(r"bad\e]52;c;eA==\x07"),
        "{}",
        stderr(&ran)
    );
}

/// Running a stored sequence is what `seq_run` does, so `--deny seq_run` refuses it before it
/// starts; a sequence file still runs.
#[test]
fn deny_seq_run_refuses_running_a_stored_sequence() {
    let data = tempfile::tempdir().unwrap();
    assert_eq!(
        status(&seqc(data.path(), &["create", "examples/hello.json"])),
        0
    );
    let refused = seqc(
        data.path(),
        &[
            "run",
            "#hello",
            "--args",
            r#"{"who":"x"}"#,
            "--deny",
            "seq_run",
        ],
    );
    assert_eq!(status(&refused), 2);
    let said = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(said.contains("may not use `seq_run`"), "{said}");
    let file = seqc(
        data.path(),
        &[
            "run",
            "examples/hello.json",
            "--args",
            r#"{"who":"x"}"#,
            "--deny",
            "seq_run",
        ],
    );
    assert_eq!(status(&file), 0);
}

/// As `seqc mcp` and `seqc worker` do, `seqc run` refuses a pattern that matches no tool the run
/// can reach: `--deny CMD_RUN` (tool names are case-sensitive) would deny nothing, and the run
/// would go on with `cmd_run` allowed.
#[test]
fn a_policy_pattern_that_matches_nothing_is_refused_before_anything_runs() {
    let data = tempfile::tempdir().unwrap();
    let refused = seqc(
        data.path(),
        &[
            "run",
            "examples/hello.json",
            "--args",
            r#"{"who":"x"}"#,
            "--deny",
            "CMD_RUN",
        ],
    );
    assert_eq!(status(&refused), 2);
    let said = stderr(&refused);
    assert!(
        said.contains("`CMD_RUN` matches no tool known here; did you mean `cmd_run`?"),
        "{said}"
    );
    assert!(stdout(&refused).is_empty(), "{}", stdout(&refused));
}
