//! What the CLI's test binaries share: the built `seqc`, started from the package's directory
//! (fixture paths are relative to it), and what it printed.

#![allow(dead_code, reason = "each test binary uses a part of this module")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

/// The binary under test.
pub const SEQC: &str = env!("CARGO_BIN_EXE_seqc");

/// The package's directory, where every `seqc` of these tests starts.
pub const PACKAGE: &str = env!("CARGO_MANIFEST_DIR");

/// `seqc run` of the hello example for `world`, its report printed as JSON: the run most tests
/// of the command line start from.
pub const HELLO_WORLD: [&str; 6] = [
    "run",
    "examples/hello.json",
    "--args",
    r#"{"who":"world"}"#,
    "--format",
    "json",
];

/// `seqc`, started from the package's directory, inheriting neither a data directory,
/// `NO_COLOR` nor an OTLP endpoint (traces) from the environment the tests run in.
pub fn command() -> Command {
    let mut command = Command::new(SEQC);
    command
        .current_dir(PACKAGE)
        .env_remove("SEQC_DATA_DIR")
        .env_remove("NO_COLOR")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    command
}

/// `command` started to be talked to over its stdin and stdout (`seqc mcp` or `seqc lsp` on
/// stdio), its stderr dropped: the child and the two ends.
pub fn spawn_piped(command: &mut Command) -> (Child, ChildStdin, ChildStdout) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the seqc binary starts");
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    (child, stdin, stdout)
}

/// `seqc run FILE --root ROOT --data-dir DATA --format json`, to be started.
pub fn run_in(file: &Path, root: &Path, data: &Path) -> Command {
    let mut command = command();
    command
        .arg("run")
        .arg(file)
        .arg("--root")
        .arg(root)
        .arg("--data-dir")
        .arg(data)
        .args(["--format", "json"]);
    command
}

/// `seqc create FILE ARGS`, which must store the sequence.
pub fn create(file: &Path, args: &[&OsStr]) {
    let output = command()
        .arg("create")
        .arg(file)
        .args(args)
        .output()
        .expect("the seqc binary runs");
    assert_eq!(
        status(&output),
        0,
        "{}: {}",
        file.display(),
        stderr(&output)
    );
}

/// `seqc create FILE --data-dir DATA`, which must store the sequence.
pub fn create_in(file: impl AsRef<Path>, data: impl AsRef<Path>) {
    create(
        file.as_ref(),
        &["--data-dir".as_ref(), data.as_ref().as_os_str()],
    );
}

/// `seqc create FILE --restate INGRESS`, which must store the sequence on that Restate server.
pub fn create_on(file: impl AsRef<Path>, ingress: &str) {
    create(file.as_ref(), &["--restate".as_ref(), ingress.as_ref()]);
}

/// Runs `seqc ARGS` to its end.
pub fn seqc(args: &[&str]) -> Output {
    command().args(args).output().expect("the seqc binary runs")
}

/// Asserts that `text` (what seqc printed) says `what`, showing all of it when it does not.
#[track_caller]
pub fn assert_says(text: &str, what: &str) {
    assert!(text.contains(what), "{text}");
}

pub fn status(output: &Output) -> i32 {
    output.status.code().expect("seqc exits with a status")
}

pub fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("seqc writes UTF-8")
}

pub fn stdout(output: &Output) -> &str {
    text(&output.stdout)
}

pub fn stderr(output: &Output) -> &str {
    text(&output.stderr)
}

/// An empty directory of its own for the test `test`, under cargo's temporary directory.
pub fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    dir
}

/// `examples/broken/*.json.broken`, relative to the package, sorted.
pub fn broken_examples() -> Vec<String> {
    let dir = Path::new(PACKAGE).join("examples/broken");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("examples/broken is there")
        .map(|entry| entry.expect("examples/broken can be listed").path())
        .filter(|path| path.to_string_lossy().ends_with(".json.broken"))
        .map(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            format!("examples/broken/{}", name.unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

/// A run report with every timing (`duration_ms`, `started_ms`) set to 0: what two runs of one
/// sequence share.
pub fn redact_durations(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                if key == "duration_ms" || key == "started_ms" {
                    *member = Value::from(0);
                } else {
                    redact_durations(member);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_durations),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}
