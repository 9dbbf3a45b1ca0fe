//! MCP on the command line, against real servers: `seqc check --mcp` with a live catalog,
//! `seqc run --mcp` / `--mcp-config`, and `seqc mcp` driven by the Python SDK's stdio client.
//!
//! The servers (npm) and the Python client (PyPI) are pinned in `tests/mcp/` and installed by
//! `.ci/run`; a test that cannot find them fails and says how to install them.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::text;
use seq_test_support::strings_at;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

fn installed(relative: &str, how: &str) -> String {
    let path = mcp_dir().join(relative);
    assert!(
        path.is_file(),
        "{} is missing: {how} (.ci/run does)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// `node .../server-filesystem/dist/index.js ROOT`, as words.
fn filesystem(root: &Path) -> Vec<String> {
    let entry = installed(
        "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
        "run `npm ci --prefix tests/mcp`",
    );
    vec![
        "node".to_owned(),
        entry,
        root.to_string_lossy().into_owned(),
    ]
}

fn command_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn seqc(args: &[&str]) -> Output {
    common::command()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// A root with `a.txt` and `b.txt`, by its canonical path (server-filesystem resolves links).
fn root() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta").unwrap();
    let path = dir
        .path()
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    (dir, path)
}

#[test]
fn check_sees_the_live_catalog() {
    let (dir, _) = root();
    let server = format!("fs={}", command_line(&filesystem(dir.path())));
    let file = "tests/fixtures/mcp/write-parallel.json";
    let checked = seqc(&["check", "--format", "json", "--mcp", &server, file]);
    assert_eq!(checked.status.code(), Some(1), "{}", text(&checked.stderr));
    let report: Value = serde_json::from_str(text(&checked.stdout)).unwrap();
    let codes: Vec<&str> = strings_at(&report["diagnostics"], "code");
    assert_eq!(codes, ["E0504"]);
    // Offline, nothing knows `fs.write_file`: a warning only.
    let offline = seqc(&["check", "--format", "json", file]);
    assert_eq!(offline.status.code(), Some(0), "{}", text(&offline.stdout));
}

#[test]
fn run_reaches_a_server_given_on_the_command_line_or_in_a_config_file() {
    let (dir, path) = root();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let args = json!({"dir": path}).to_string();
    let file = "tests/fixtures/mcp/read-two.json";
    let server = format!("fs={}", command_line(&filesystem(dir.path())));
    let run_with = |server: &[&str]| {
        let rest = [
            "--args",
            args.as_str(),
            "--format",
            "json",
            "--data-dir",
            data_dir,
        ];
        seqc(&[&["run", file][..], server, &rest[..]].concat())
    };
    let by_flag = run_with(&["--mcp", &server]);
    assert_eq!(by_flag.status.code(), Some(0), "{}", text(&by_flag.stderr));
    let report: Value =
        serde_json::from_str(text(&by_flag.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(report["out"]["read"]["a"], json!({"content": "alpha"}));
    assert_eq!(text(&by_flag.stderr), "", "no warnings");

    let words = filesystem(dir.path());
    let config = json!({"mcpServers": {"files": {
        "command": words[0], "args": &words[1..], "prefix": "fs"
    }}});
    let config_path = data.path().join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let by_config = run_with(&["--mcp-config", config_path.to_str().unwrap()]);
    assert_eq!(
        by_config.status.code(),
        Some(0),
        "{}",
        text(&by_config.stderr)
    );
    let again: Value = serde_json::from_str(text(&by_config.stdout)).unwrap();
    assert_eq!(again["out"], report["out"]);
}

#[test]
fn a_clash_with_the_embedded_host_is_a_command_problem_naming_both() {
    let entry = installed(
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "run `npm ci --prefix tests/mcp`",
    );
    let server = format!("node '{entry}' stdio");
    let ran = seqc(&[
        "run",
        "examples/hello.json",
        "--mcp",
        &server,
        "--args",
        r#"{"who": "x"}"#,
    ]);
    assert_eq!(ran.status.code(), Some(2));
    let stderr = text(&ran.stderr);
    assert!(
        stderr.starts_with(&format!(
            "seqc: tool `echo` is offered by the embedded host and by MCP server `node {entry} stdio`; give one of the servers a prefix"
        )),
        "{stderr}"
    );
    let bad = seqc(&["run", "examples/hello.json", "--mcp", "fs=node 'unclosed"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("cannot be split into words"));
}

#[test]
fn a_python_mcp_client_creates_and_runs_sequences_through_seqc_mcp() {
    let python = installed(
        ".venv/bin/python",
        "create it with `python3 -m venv tests/mcp/.venv && tests/mcp/.venv/bin/pip install --require-hashes -r tests/mcp/requirements.txt`",
    );
    let (dir, path) = root();
    let data = tempfile::tempdir().unwrap();
    let output = Command::new(python)
        .arg(mcp_dir().join("client.py"))
        .args([common::SEQC, data.path().to_str().unwrap(), &path])
        .args(filesystem(dir.path()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let seen: Value = serde_json::from_str(text(&output.stdout)).unwrap();
    assert_eq!(seen["server"], "seqc");
    assert_eq!(
        seen["tools"]["seq_list"],
        json!({"read_only": true, "destructive": false, "required": []})
    );
    assert_eq!(seen["tools"]["seq_delete"]["destructive"], true);
    assert_eq!(seen["tools"]["seq_create"]["required"], json!(["name"]));
    assert_eq!(seen["create_lists_downstream"], true);

    let broken = &seen["broken"];
    assert_eq!(broken["is_error"], true);
    assert_eq!(
        broken["structured"]["diagnostics"],
        json!([{
            "severity": "error",
            "code": "E0101",
            "message": "unknown field `paralell` in a group",
            "excerpt": "paralell",
            "path": "group `read` (groups[0])",
            "hint": "did you mean `parallel`? The fields of a group are `name`, `description`, `in`, `out`, `local`, `tools`, `when`, `parallel`, `timeout`, `on_error`, `retries`, `retry_delay`, `retry_backoff`, `missing`, `fallback` or `max_parallel`"
        }])
    );
    assert_eq!(broken["structured"]["error"]["reason"], "arg_error");

    assert_eq!(seen["good"]["is_error"], false);
    assert_eq!(seen["good"]["structured"]["items"], 3);
    let run = &seen["run"];
    assert_eq!(run["is_error"], false, "{run}");
    assert_eq!(run["structured"]["ok"], true);
    assert_eq!(run["structured"]["groups"][0]["parallel"], true);
    assert_eq!(
        run["structured"]["out"]["read"]["b"],
        json!({"content": "beta"})
    );
    assert_eq!(seen["list"]["structured"]["result"][0]["name"], "read-two");

    // The language taught besides `tools/list`: the prompt carries `seq_create`'s guide with
    // the tools of this server, the resource the whole reference.
    assert_eq!(seen["prompts"], json!(["write_sequence"]));
    let prompt = seen["prompt"][0].as_str().unwrap();
    assert!(prompt.contains(r#"\"tool\":\"files_list\""#), "{prompt}");
    assert!(prompt.contains("`fs.read_text_file`"), "{prompt}");
    assert!(prompt.contains("seqc://docs/reference.md"), "{prompt}");
    assert_eq!(seen["resources"], json!(["seqc://docs/reference.md"]));
    assert_eq!(
        seen["reference"].as_str().unwrap(),
        std::fs::read_to_string(Path::new(common::PACKAGE).join("docs/reference.md")).unwrap()
    );
}

/// A name that is not the one prompt or resource is an error that names the right one.
#[test]
fn an_unknown_prompt_or_resource_is_an_error_naming_the_one_there_is() {
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let args = ["--root", &root, "--data-dir", data.path().to_str().unwrap()];
    let answers = serve(
        &args,
        &[
            json!({"method": "prompts/get", "params": {"name": "other"}}),
            json!({"method": "resources/read", "params": {"uri": "seqc://nothing"}}),
        ],
    );
    assert!(
        answers[0]["message"]
            .as_str()
            .unwrap()
            .contains("`write_sequence`"),
        "{answers:?}"
    );
    assert!(
        answers[1]["message"]
            .as_str()
            .unwrap()
            .contains("`seqc://docs/reference.md`"),
        "{answers:?}"
    );
}

/// `seqc mcp ARGS` driven by hand: initialize, then each request in turn, waiting for its answer.
/// Returns the answers' `result`s (or `error`s), in order.
fn serve(args: &[&str], requests: &[Value]) -> Vec<Value> {
    use std::io::{BufRead, Write};
    let (mut child, mut stdin, stdout) =
        common::spawn_piped(common::command().arg("mcp").args(args));
    let mut lines = std::io::BufReader::new(stdout).lines();
    // A message without an `id` is a notification: nothing comes back.
    let mut ask = |message: Value| -> Value {
        writeln!(stdin, "{message}").unwrap();
        let Some(id) = message.get("id").cloned() else {
            return Value::Null;
        };
        loop {
            let line = lines.next().unwrap().unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let answers = requests
        .iter()
        .enumerate()
        .map(|(i, request)| {
            let mut message = request.clone();
            message["jsonrpc"] = json!("2.0");
            message["id"] = json!(i + 1);
            let answer = ask(message);
            answer.get("result").unwrap_or(&answer["error"]).clone()
        })
        .collect();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    answers
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

#[test]
fn seqc_mcp_without_a_root_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let refused = seqc(&["mcp", "--data-dir", data.path().to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        text(&refused.stderr),
        "seqc: seqc mcp needs --root DIR: the directory the client's file tools and commands are confined to\n"
    );
    assert!(refused.stdout.is_empty());
}

#[test]
fn seqc_mcp_refuses_a_root_that_contains_its_data_dir() {
    let (dir, root) = root();
    // The data dir not created yet, and spelt through `..`: compared as it will resolve.
    let inside = format!("{root}/sub/../.seqc");
    let refused = seqc(&["mcp", "--root", &root, "--data-dir", &inside]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        text(&refused.stderr),
        format!(
            "seqc: --root {root} contains the data directory {root}/.seqc: the file tools could \
             rewrite the stored sequences; give a --data-dir outside the root\n"
        )
    );
    // The default data dir `./.seqc` under a root of `.`, spelt another way.
    let same = common::command()
        .args(["mcp", "--root", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(2));
    common::assert_says(
        text(&same.stderr),
        &format!("contains the data directory {root}/.seqc"),
    );
    // The root itself as the data dir is inside it too.
    let itself = seqc(&["mcp", "--root", &root, "--data-dir", &root]);
    assert_eq!(itself.status.code(), Some(2));
    assert!(!Path::new(&root).join("sequences").exists());
}

#[test]
fn cmd_run_is_refused_under_seqc_mcp_unless_enabled() {
    let (_dir, root) = root();
    let sequence = json!({"name": "shell", "groups": [{"name": "g",
        "tools": json!({"tool": "cmd_run", "args": {"command": "echo hi > made.txt"}}).to_string() + " ;"}]});
    let requests = [
        json!({"method": "tools/list"}),
        call("seq_create", sequence),
        call("seq_run", json!({"name": "shell"})),
    ];
    let policy_dir = tempfile::tempdir().unwrap();
    let policy_file = policy_dir.path().join("policy.json");
    std::fs::write(&policy_file, r#"{"enable": ["cmd_run"]}"#).unwrap();
    let by_file = ["--policy", policy_file.to_str().unwrap()];
    for (enable, flags) in [
        (false, &[][..]),
        (true, &["--enable", "cmd_run"][..]),
        (true, &by_file[..]),
    ] {
        let data = tempfile::tempdir().unwrap();
        let mut args = vec!["--root", &root, "--data-dir", data.path().to_str().unwrap()];
        args.extend(flags);
        let answers = serve(&args, &requests);
        let tools = answers[0]["tools"].as_array().unwrap();
        let description = |name: &str| {
            tools.iter().find(|t| t["name"] == name).unwrap()["description"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        for name in ["seq_create", "seq_run"] {
            assert_eq!(
                // `seq_create` lists signatures (and its guide names `cmd_run` regardless).
                description(name).contains(if name == "seq_create" {
                    "`cmd_run` {"
                } else {
                    "`cmd_run`"
                }),
                enable,
                "{name}: {}",
                description(name)
            );
            assert!(description(name).contains("`files_read`"));
            assert!(!description(name).contains("`files_write`"));
        }
        let run = &answers[2];
        let made = Path::new(&root).join("made.txt");
        if enable {
            assert_eq!(run["isError"], false, "{run}");
            assert_eq!(run["structuredContent"]["ok"], true, "{run}");
            assert_eq!(std::fs::read_to_string(&made).unwrap(), "hi\n");
            std::fs::remove_file(&made).unwrap();
        } else {
            // Refused at creation, saying how to turn the tool on; so nothing is there to run.
            let created = &answers[1];
            assert_eq!(created["isError"], true, "{created}");
            assert_eq!(
                created["structuredContent"]["error"]["reason"], "unauthorized",
                "{created}"
            );
            let shown = created["content"].to_string();
            assert!(shown.contains("E0901"), "{created}");
            assert!(shown.contains("`--enable cmd_run`"), "{created}");
            assert_eq!(run["isError"], true, "{run}");
            assert!(!made.exists());
        }
    }
}

/// A sequence stored before the server started (by `seqc create`, which is not bound by the
/// server's policy) can still reach a tool that is off. The engine refuses it at run time, and
/// the refusal says what turns the tool on, in the words of `seq_create`'s refusal (E0901).
#[test]
fn a_tool_off_at_run_time_is_refused_with_how_to_turn_it_on() {
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let sequence = json!({"name": "shell", "groups": [{"name": "g",
        "tools": json!({"tool": "cmd_run", "args": {"command": "echo hi > made.txt"}}).to_string() + " ;"}]});
    let file = data.path().join("shell.json");
    std::fs::write(&file, sequence.to_string()).unwrap();
    let created = seqc(&["create", file.to_str().unwrap(), "--data-dir", data_dir]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let mut again = sequence.clone();
    again["name"] = json!("shell2");
    let answers = serve(
        &["--root", &root, "--data-dir", data_dir],
        &[
            call("seq_run", json!({"name": "shell"})),
            call("seq_create", again),
        ],
    );
    let run = &answers[0];
    assert_eq!(run["isError"], true, "{run}");
    let report = &run["structuredContent"]["report"];
    assert_eq!(report["ok"], false, "{run}");
    let error = &report["groups"][0]["items"][0]["error"];
    assert_eq!(error["reason"], "unauthorized", "{run}");
    let hint = error["hint"].as_str().unwrap();
    assert_eq!(
        hint,
        "`cmd_run` is off here; whoever starts the server turns it on with `--enable cmd_run` \
         (or `\"enable\": [\"cmd_run\"]` in its policy file)"
    );
    assert!(!Path::new(&root).join("made.txt").exists());
    // `seq_create`'s refusal of the same sequence says the same.
    let refused = &answers[1];
    assert_eq!(refused["isError"], true, "{refused}");
    let shown: String = refused["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(shown.contains("E0901"), "{refused}");
    assert!(shown.contains(hint), "{refused}");
}

/// Whether `text` cites the design: a `§` or a decision such as `D-10`.
fn cites_the_design(text: &str) -> bool {
    text.contains('§')
        || text.match_indices("D-").any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + 2..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && after.is_some_and(|c| c.is_ascii_digit())
        })
}

/// The whole `tools/list` answer of `seqc mcp` is an interface: a model writes sequences from it
/// alone. Its default tools (`cmd_run` and `files_write` off), reviewed as a snapshot.
#[test]
fn the_tools_list_of_seqc_mcp() {
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let args = ["--root", &root, "--data-dir", data.path().to_str().unwrap()];
    let enabled = [
        &args[..],
        &["--enable", "cmd_run", "--enable", "files_write"],
    ]
    .concat();
    for (name, args) in [
        ("tools_list", &args[..]),
        ("tools_list_enabled", &enabled[..]),
    ] {
        let answers = serve(args, &[json!({"method": "tools/list"})]);
        let listed = &answers[0];
        assert!(!cites_the_design(&listed.to_string()), "{listed}");
        // What a model reads before its first call: the whole list, compact, under 32 KB.
        let size = listed.to_string().len();
        assert!(size < 32 * 1024, "{name}: tools/list is {size} bytes");
        insta::assert_json_snapshot!(name, listed);
    }
}

/// The TypeScript SDK's `Client.callTool` checks every answer's structured content against the
/// tool's `outputSchema`, failures included: each seq tool's successes and failures pass (a
/// refused sequence's diagnostics and a failed run's report arrive, not -32602). A run's answer
/// carries each value once, and past the message bound leaves the largest values out, saying so.
#[test]
fn the_typescript_client_accepts_every_answer_against_its_schema() {
    installed(
        "node_modules/@modelcontextprotocol/sdk/package.json",
        "run `npm ci --prefix tests/mcp`",
    );
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let output = Command::new("node")
        .arg(mcp_dir().join("schema-client.mjs"))
        .args([common::SEQC, &root, data.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let seen: Value = serde_json::from_str(text(&output.stdout)).unwrap();
    let brief = |is_error: bool, keys: &[&str]| json!({"is_error": is_error, "keys": keys});
    let failure = brief(true, &["error"]);
    let expected = [
        ("create_broken", brief(true, &["diagnostics", "error"])),
        (
            "create_fails",
            brief(false, &["groups", "items", "name", "warnings"]),
        ),
        ("run_fails", brief(true, &["error", "report"])),
        (
            "create_big",
            brief(false, &["groups", "items", "name", "warnings"]),
        ),
        ("run_big", brief(false, &["groups", "ok", "out"])),
        (
            "create_huge",
            brief(false, &["groups", "items", "name", "warnings"]),
        ),
        ("run_huge", brief(false, &["cut", "groups", "ok", "out"])),
        ("run_missing", failure.clone()),
        ("run_bad_args", brief(true, &["error", "report"])),
        ("call_fails", failure.clone()),
        ("call_big", brief(false, &["g"])),
        ("list", brief(false, &["result"])),
        ("delete_missing", failure.clone()),
        ("delete", brief(false, &["deleted"])),
        ("create_bad_args", failure),
    ];
    for (call, want) in expected {
        let got = &seen[call];
        assert_eq!(got["thrown"], Value::Null, "{call}: {got}");
        assert_eq!(got["is_error"], want["is_error"], "{call}: {got}");
        assert_eq!(got["keys"], want["keys"], "{call}: {got}");
    }
    assert!(
        !seen["create_broken"]["codes"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{seen}"
    );
    assert_eq!(seen["run_fails"]["report_ok"], false, "{seen}");
    // A 5 MB slot: the value once, the text a summary.
    let big = &seen["run_big"];
    assert_eq!(big["value_bytes"], 5_000_000, "{big}");
    let bytes = big["bytes"].as_u64().unwrap();
    assert!(bytes < 6_000_000, "the answer is {bytes} bytes");
    assert!(
        big["text"]
            .as_str()
            .unwrap()
            .contains("`g.big` (5000002 bytes)"),
        "{big}"
    );
    // Four of them: within the bound, the values left out listed.
    let huge = &seen["run_huge"];
    let bytes = huge["bytes"].as_u64().unwrap();
    assert!(bytes < 16 * 1024 * 1024, "the answer is {bytes} bytes");
    assert_eq!(huge["cut"].as_array().unwrap().len(), 2, "{huge}");
    assert_eq!(huge["kept"], 2, "{huge}");
}

#[test]
fn a_policy_file_enables_only_tools_that_are_off() {
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let policy = data.path().join("policy.json");
    std::fs::write(&policy, r#"{"enable": ["echo"]}"#).unwrap();
    let refused = seqc(&[
        "mcp",
        "--root",
        &root,
        "--data-dir",
        data.path().join("store").to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        text(&refused.stderr),
        "seqc: the policy file enables `echo`, which is not off by default: `enable` takes `cmd_run`, `files_write`\n"
    );
}

/// `seqc mcp` in `root` on `data`, initialized, to be written raw lines: the child, its stdin, and
/// the next answer, read on a thread so that an answer that never comes fails the test within a
/// minute instead of hanging it.
fn raw_session(
    root: &str,
    data: &Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    impl Fn() -> Value,
) {
    use std::io::{BufRead, Write};
    let (child, mut stdin, stdout) = common::spawn_piped(
        common::command()
            .args(["mcp", "--root", root, "--data-dir"])
            .arg(data),
    );
    let lines = std::io::BufReader::new(stdout).lines();
    let (sender, answers) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let next = move || -> Value {
        let line = answers
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("an answer within a minute");
        serde_json::from_str(&line).unwrap()
    };
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}})
    )
    .unwrap();
    assert_eq!(next()["id"], 0);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    (child, stdin, next)
}

/// A request past the 16 MiB bound gets an error under its own id (placed last here, as some
/// clients write it), and the session reads on.
#[test]
fn a_17_mb_request_to_seqc_mcp_is_answered() {
    use std::io::Write;
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let (mut child, mut stdin, next) = raw_session(&root, data.path());
    let pad = "x".repeat(17_000_000);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"seq_list","arguments":{{"pad":"{pad}"}}}},"id":"big"}}"#
    )
    .unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#).unwrap();
    // Answers may come in either order.
    let (first, second) = (next(), next());
    let (answer, listed) = if first["id"] == "big" {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(answer["id"], "big", "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("17000103 bytes"), "{message}");
    assert!(message.contains("16 MiB"), "{message}");
    assert_eq!(listed["id"], 2);
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// A failed `seq_run` answers with its report once, structured, beside a one-line error.
#[test]
fn a_failed_run_carries_its_report_once() {
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let args = [
        "--root",
        &root,
        "--data-dir",
        data.path().to_str().unwrap(),
        "--enable",
        "cmd_run",
    ];
    let failing = r#"{"tool":"cmd_run","args":{"command":"echo half; exit 3"}} ;"#;
    let answers = serve(
        &args,
        &[
            call(
                "seq_create",
                json!({"name": "f", "groups": [{"name": "g", "tools": failing}]}),
            ),
            call("seq_run", json!({"name": "f"})),
        ],
    );
    let run = &answers[1];
    assert_eq!(run["isError"], true, "{run}");
    let structured = &run["structuredContent"];
    assert_eq!(structured["report"]["groups"][0]["status"], "failed");
    let detail = structured["error"]["detail"].as_str().unwrap();
    assert_eq!(
        detail,
        "sequence `f` did not succeed: group `g` failed: item 1 `cmd_run`: exit status 3, nothing on stderr; stdout ends: half"
    );
    let text = run["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("\"groups\""), "{text}");
    assert_eq!(
        // A group's field, once per report of its one group.
        run.to_string().matches("\"parallel\"").count(),
        1,
        "{run}"
    );
}

/// A failed `seq_run`'s error names a failure tolerated in a group that an item called, as it
/// names one tolerated in a group of the run.
#[test]
fn a_failed_runs_error_names_a_failure_tolerated_in_a_called_group() {
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let data = data.path().to_str().unwrap();
    let args = ["--root", &root, "--data-dir", data, "--enable", "cmd_run"];
    let exit = |n: u32| format!(r#"{{"tool":"cmd_run","args":{{"command":"exit {n}"}}}} ;"#);
    let sequence = json!({"name": "t", "groups": [
        {"name": "main", "tools": r#"{"tool":"seq_call","args":{"target":"helper"}} ;"#},
        {"name": "helper", "on_error": "continue", "tools": exit(5)},
        {"name": "last", "tools": exit(7)}]});
    let answers = serve(
        &args,
        &[
            call("seq_create", sequence),
            call("seq_run", json!({"name": "t"})),
        ],
    );
    let run = &answers[1];
    assert_eq!(run["isError"], true, "{run}");
    let detail = run["structuredContent"]["error"]["detail"]
        .as_str()
        .unwrap();
    assert_eq!(
        detail,
        "sequence `t` did not succeed: \
         group `helper` (called from `main`) partly failed: item 1 `cmd_run`: exit status 5, with no output; \
         group `last` failed: item 1 `cmd_run`: exit status 7, with no output"
    );
}

/// Every request gets an answer: a line that is not JSON (malformed, invalid UTF-8, nested past
/// the parser's depth) a parse error with a null id, a batch an invalid request, and
/// `arguments: []` invalid params under its id; the session reads on after each.
#[test]
fn broken_requests_to_seqc_mcp_are_answered() {
    use std::io::Write;
    let (_dir, root) = root();
    let data = tempfile::tempdir().unwrap();
    let (mut child, mut stdin, next) = raw_session(&root, data.path());
    let deep = format!("{}{}", "[".repeat(126), "]".repeat(126));
    let broken: Vec<(Vec<u8>, Value, i64)> = vec![
        (br#"{"jsonrpc":"2.0","id":1,"method":"#.to_vec(), Value::Null, -32700),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"x\":\"\xff\"}".to_vec(),
            Value::Null,
            -32700,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"seq_list","arguments":{{"a":{deep}}}}}}}"#)
                .into_bytes(),
            Value::Null,
            -32700,
        ),
        (br#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#.to_vec(), Value::Null, -32600),
        (
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"seq_list","arguments":[]}}"#
                .to_vec(),
            json!(5),
            -32602,
        ),
    ];
    for (line, id, code) in broken {
        stdin.write_all(&line).unwrap();
        stdin.write_all(b"\n").unwrap();
        let answer = next();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":6,"method":"tools/list"}}"#).unwrap();
    let listed = next();
    assert_eq!(listed["id"], 6);
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
