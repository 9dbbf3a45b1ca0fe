//! End-to-end tests of the `seqc` binary.
//!
//! Every file in `tests/fixtures/syntax/` is checked in both formats; the outputs and exit
//! statuses are insta snapshots (`tests/snapshots/`), and the JSON output is also held to the
//! table [`EXPECTED`]: which codes, at which bytes, with which hints. The rest tests exit
//! statuses, input collection and `seqc explain`.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{scratch, seqc, status, stderr, stdout};
use serde::{Deserialize, Serialize};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::Output;

const FIXTURES: &str = "tests/fixtures/syntax";

/// What each fixture must report, in order: the code, and a piece of text that the diagnostic's
/// span in the file must contain (`""`: the span is not pinned). Fixtures named `ok_*` report
/// nothing.
const EXPECTED: &[(&str, &[(&str, &str)])] = &[
    ("err_cjk_escapes_before_error", &[("E0101", "paralell")]),
    ("err_comments", &[("E0002", "//"), ("E0002", "/*")]),
    ("err_crlf_line_endings", &[("E0101", "paralell")]),
    (
        "err_duplicate_keys",
        &[("E0008", "name"), ("E0008", "timeout")],
    ),
    ("err_empty_file", &[("E0001", "")]),
    ("err_empty_item", &[("E0201", ";")]),
    (
        "err_file_unclosed_string",
        &[("E0004", "\""), ("E0001", "\"tools\"")],
    ),
    ("err_file_unclosed_structure", &[("E0001", "")]),
    (
        "err_item_not_object",
        &[("E0205", "\\\"echo\\\""), ("E0205", "[1]")],
    ),
    ("err_item_paralell", &[("E0101", "paralell")]),
    ("err_item_unclosed_string", &[("E0204", "\\\"")]),
    ("err_item_unclosed_structure", &[("E0204", "{")]),
    ("err_item_unquoted_key", &[("E0206", "tool")]),
    ("err_missing_final_semicolon", &[("E0203", "")]),
    ("err_missing_semicolon", &[("E0202", "{")]),
    ("err_not_utf8", &[("E0007", "")]),
    (
        "err_one_line_long",
        &[("E0101", "paralell"), ("E0101", "retires")],
    ),
    (
        "err_several_groups",
        &[
            ("E0202", "{"),
            ("E0101", "on_eror"),
            ("E0104", "ignore"),
            ("E0105", "soon"),
        ],
    ),
    ("err_timeout_number", &[("E0105", "30")]),
    ("err_top_level_array", &[("E0103", "")]),
    ("err_trailing_commas", &[("E0003", ","), ("E0003", ",")]),
    ("err_unknown_field_file", &[("E0101", "descripton")]),
    ("err_unknown_field_group", &[("E0101", "paralell")]),
    ("err_unknown_field_item", &[("E0101", "agrs")]),
    (
        "err_when_operators",
        &[
            ("E0401", "and"),
            ("E0401", "|"),
            ("E0401", "!$args.a"),
            ("E0401", ""),
        ],
    ),
];

/// Fixtures whose hint must contain a text: the "did you mean" and the quoted duration.
const HINTS: &[(&str, &str)] = &[
    ("err_unknown_field_file", "description"),
    ("err_unknown_field_group", "parallel"),
    ("err_unknown_field_item", "args"),
    ("err_several_groups", "on_error"),
    ("err_timeout_number", "\"30s\""),
];

/// The `--format json` output, field by field in the documented order; unknown fields are
/// rejected so that the shape cannot grow unnoticed.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JsonReport {
    diagnostics: Vec<JsonDiagnostic>,
    errors: usize,
    warnings: usize,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JsonDiagnostic {
    file: String,
    severity: String,
    code: String,
    message: String,
    start: usize,
    end: usize,
    line: usize,
    column: usize,
    hint: Option<String>,
    fix: Option<JsonFix>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JsonFix {
    title: String,
    applicability: String,
    edits: Vec<JsonEdit>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JsonEdit {
    start: usize,
    end: usize,
    text: String,
}

/// `(name, path relative to the package)` of every fixture, sorted.
fn fixtures() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES);
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .expect("the fixture directory exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let name = path.file_stem().expect("a file name");
            let name = name.to_str().expect("a UTF-8 name").to_owned();
            let relative = format!("{FIXTURES}/{name}.json");
            (name, relative)
        })
        .collect();
    found.sort();
    assert!(found.len() >= 20, "fixtures went missing: {found:?}");
    found
}

/// Runs `test` on every fixture and reports all failures at the end, so that one run shows (and
/// writes pending snapshots for) every fixture, not just the first that differs.
fn each_fixture(test: impl Fn(&str, &str)) {
    let failed: Vec<String> = fixtures()
        .into_iter()
        .filter(|(name, path)| catch_unwind(AssertUnwindSafe(|| test(name, path))).is_err())
        .map(|(name, _)| name)
        .collect();
    assert!(failed.is_empty(), "fixtures that failed: {failed:?}");
}

fn parse_json_report(output: &Output) -> JsonReport {
    let text = stdout(output);
    assert!(
        text.ends_with('\n') && text.matches('\n').count() == 1,
        "--format json prints one line: {text:?}"
    );
    assert!(text.starts_with("{\"diagnostics\":["), "{text}");
    serde_json::from_str(text).expect("--format json prints the documented object")
}

fn snapshot(name: &str, path: &str, suffix: &str, content: String) {
    insta::with_settings!({
        snapshot_suffix => suffix,
        input_file => path,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, content);
    });
}

#[test]
fn human_output_of_every_fixture() {
    each_fixture(|name, path| {
        let output = seqc(&["check", "--format", "human", "--color", "never", path]);
        assert!(stderr(&output).is_empty(), "{}", stderr(&output));
        let text = stdout(&output);
        assert!(!text.contains('\x1b'), "--color never still coloured");
        let content = format!("exit status: {}\n\n{text}", status(&output));
        snapshot(name, path, "human", content);
    });
}

#[test]
fn json_output_of_every_fixture() {
    each_fixture(|name, path| {
        let output = seqc(&["check", "--format", "json", path]);
        assert!(stderr(&output).is_empty(), "{}", stderr(&output));
        let report = parse_json_report(&output);
        let pretty = serde_json::to_string_pretty(&report).expect("serialisable");
        let content = format!("exit status: {}\n\n{pretty}\n", status(&output));
        snapshot(name, path, "json", content);
    });
}

/// The JSON output, held to the fixture table and to its own invariants: counts, exit status,
/// byte offsets inside the file, 1-based line and character column of `start`.
#[test]
fn every_fixture_reports_what_the_table_says() {
    let names: Vec<String> = fixtures().into_iter().map(|(name, _)| name).collect();
    for (name, _) in EXPECTED {
        assert!(names.iter().any(|n| n == name), "no fixture {name}");
    }
    each_fixture(|name, path| {
        let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
            .expect("fixture readable");
        let output = seqc(&["check", "--format", "json", path]);
        let report = parse_json_report(&output);

        let expected: &[(&str, &str)] = match EXPECTED.iter().find(|(n, _)| *n == name) {
            Some((_, expected)) => expected,
            None => {
                assert!(name.starts_with("ok_"), "{name} is missing from EXPECTED");
                &[]
            }
        };
        let codes: Vec<&str> = report.diagnostics.iter().map(|d| d.code.as_str()).collect();
        let expected_codes: Vec<&str> = expected.iter().map(|(code, _)| *code).collect();
        assert_eq!(codes, expected_codes, "{name}: codes");

        let errors = report
            .diagnostics
            .iter()
            .filter(|d| d.severity == "error")
            .count();
        assert_eq!(report.errors, errors, "{name}: error count");
        assert_eq!(report.warnings, report.diagnostics.len() - errors);
        assert_eq!(
            status(&output),
            i32::from(errors > 0),
            "{name}: exit status"
        );

        for (diagnostic, (code, culprit)) in report.diagnostics.iter().zip(expected) {
            assert_eq!(diagnostic.file, path);
            assert!(
                diagnostic.severity == "error" || diagnostic.severity == "warning",
                "{diagnostic:?}"
            );
            let span = diagnostic.start..diagnostic.end;
            assert!(
                span.start <= span.end && span.end <= bytes.len(),
                "{name}: {span:?}"
            );
            let found = String::from_utf8_lossy(&bytes[span.clone()]);
            assert!(
                found.contains(culprit),
                "{name}: {code} at {span:?} covers {found:?}, not {culprit:?}"
            );
            let before = String::from_utf8_lossy(&bytes[..span.start]);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            assert_eq!(
                (diagnostic.line, diagnostic.column),
                (line, column),
                "{name}: position of {code}"
            );
            assert!(
                diagnostic
                    .hint
                    .as_deref()
                    .is_some_and(|h| !h.trim().is_empty()),
                "{name}: {code} has no hint"
            );
            if let Some(fix) = &diagnostic.fix {
                assert!(
                    ["machine-applicable", "maybe-incorrect", "has-placeholders"]
                        .contains(&fix.applicability.as_str()),
                    "{name}: {fix:?}"
                );
                assert!(!fix.title.is_empty() && !fix.edits.is_empty(), "{name}");
                for edit in &fix.edits {
                    assert!(edit.start <= edit.end && edit.end <= bytes.len(), "{name}");
                }
            }
        }
        if let Some((_, hint)) = HINTS.iter().find(|(n, _)| *n == name) {
            assert!(
                report
                    .diagnostics
                    .iter()
                    .any(|d| d.hint.as_deref().is_some_and(|h| h.contains(hint))),
                "{name}: no hint mentions {hint:?}"
            );
        }
    });
}

/// Both formats agree on what they report, and the human one names each code in a header.
#[test]
fn human_and_json_formats_agree() {
    each_fixture(|name, path| {
        let json = seqc(&["check", "--format", "json", path]);
        let human = seqc(&["check", "--color", "never", path]);
        assert_eq!(status(&json), status(&human), "{name}");
        let report = parse_json_report(&json);
        let text = stdout(&human);
        let mut rest = text;
        for diagnostic in &report.diagnostics {
            let header = format!(
                "{}[{}]: {}",
                diagnostic.severity, diagnostic.code, diagnostic.message
            );
            let at = rest
                .find(&header)
                .unwrap_or_else(|| panic!("{name}: no {header:?} in order"));
            rest = &rest[at + header.len()..];
        }
        let summary = text.lines().last().expect("a summary line");
        let errors = match report.errors {
            1 => "1 error".to_owned(),
            n => format!("{n} errors"),
        };
        assert!(summary.starts_with(&errors), "{name}: {summary}");
        assert!(summary.ends_with(" in 1 file"), "{name}: {summary}");
    });
}

#[test]
fn the_span_inside_tools_lands_on_the_misspelt_key_despite_escapes() {
    let path = format!("{FIXTURES}/err_cjk_escapes_before_error.json");
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(&path)).unwrap();
    let report = parse_json_report(&seqc(&["check", "--format", "json", &path]));
    let [diagnostic] = report.diagnostics.as_slice() else {
        panic!("one diagnostic expected: {report:?}");
    };
    let culprit = std::str::from_utf8(&bytes[diagnostic.start..diagnostic.end]).unwrap();
    // The key as written in the file, with or without its escaped quotes.
    assert!(
        ["paralell", "\\\"paralell\\\""].contains(&culprit),
        "span covers {culprit:?}"
    );
}

#[test]
fn colour_follows_the_color_flag() {
    let path = format!("{FIXTURES}/err_unknown_field_group.json");
    let always = seqc(&["check", "--color", "always", &path]);
    assert!(
        stdout(&always).contains("\x1b["),
        "--color always has no colour"
    );
    // Piped output is not a terminal: `auto` stays plain.
    let auto = seqc(&["check", &path]);
    assert!(!stdout(&auto).contains('\x1b'), "auto coloured a pipe");
    let mut plain = stdout(&always).to_owned();
    while let Some(start) = plain.find('\x1b') {
        let end = plain[start..]
            .find('m')
            .map_or(plain.len(), |m| start + m + 1);
        plain.replace_range(start..end, "");
    }
    assert_eq!(plain, stdout(&auto), "colour changed more than colour");
}

#[test]
fn a_missing_file_is_one_line_on_stderr_and_status_2() {
    for format in ["human", "json"] {
        let output = seqc(&["check", "--format", format, "no/such/file.json"]);
        assert_eq!(status(&output), 2);
        assert_eq!(
            stderr(&output),
            "seqc: cannot read no/such/file.json: No such file or directory\n"
        );
        assert!(stdout(&output).is_empty());
    }
}

#[test]
fn a_missing_file_among_good_ones_still_fails_with_2() {
    let good = format!("{FIXTURES}/ok_minimal.json");
    let output = seqc(&["check", &good, "missing.json", &good]);
    assert_eq!(status(&output), 2);
    assert_eq!(
        stderr(&output),
        "seqc: cannot read missing.json: No such file or directory\n"
    );
}

/// One file that cannot be read does not hide the mistakes of the others: they are checked and
/// reported, and the status (2) says that something was not.
#[test]
fn an_unreadable_file_does_not_hide_its_siblings_mistakes() {
    let broken = format!("{FIXTURES}/err_unknown_field_group.json");
    for format in ["human", "json"] {
        let output = seqc(&["check", "--format", format, "missing.json", &broken]);
        assert_eq!(status(&output), 2);
        assert!(stderr(&output).contains("cannot read missing.json"));
        common::assert_says(stdout(&output), "E0101");
    }
    // `--fix` writes nothing unless every input could be read.
    let dir = scratch("unreadable_sibling_fix");
    let copy = dir.join("broken.json");
    std::fs::copy(&broken, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let output = seqc(&["check", "--fix", "missing.json", copy.to_str().unwrap()]);
    assert_eq!(status(&output), 2);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

#[test]
fn usage_errors_exit_with_2() {
    for args in [
        &["check"][..],
        &["check", "--format", "yaml", "x.json"],
        &["check", "--color", "sometimes", "x.json"],
        &["check", "--catalog"],
        &["check", "--format", "sarif"],
        &["frobnicate"],
        &[],
        &["explain"],
        &["explain", "E0101", "--list"],
    ] {
        let output = seqc(args);
        assert_eq!(status(&output), 2, "seqc {args:?}");
        assert!(!stderr(&output).is_empty(), "seqc {args:?} said nothing");
        assert!(stdout(&output).is_empty(), "seqc {args:?}");
    }
}

#[test]
fn help_and_version_exit_with_0() {
    for args in [&["--help"][..], &["check", "--help"], &["--version"]] {
        let output = seqc(args);
        assert_eq!(status(&output), 0, "seqc {args:?}");
        assert!(!stdout(&output).is_empty());
    }
}

#[test]
fn a_directory_means_every_sequence_file_below_it_sorted() {
    let dir = scratch("directory_walk");
    // A sequence of its own name with one error (an unknown field).
    let broken = |n: usize| {
        format!(
            r#"{{"name": "s{n}", "groups": [{{"name": "g", "paralel": true,
                "tools": "{{\"tool\":\"echo\",\"args\":{{\"value\":1}}}} ;"}}]}}"#
        )
    };
    let files = [
        "b/x.json",
        "a.json",
        "c/d/y.json",
        "c/a.json",
        // The file set leaves these out, as the language server does.
        ".git/objects.json",
        "node_modules/pkg/seq.json",
        "target/debug/seq.json",
        ".seqc/sequences/s.json",
    ];
    for (n, file) in files.into_iter().enumerate() {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, broken(n)).unwrap();
    }
    std::fs::write(dir.join("notes.txt"), "not a sequence").unwrap();
    std::fs::write(dir.join("c/readme.md"), "").unwrap();
    std::fs::write(dir.join("package.json"), r#"{"name": "app"}"#).unwrap();
    std::fs::write(dir.join("seq-catalog.json"), "[]").unwrap();

    let root = dir.to_str().unwrap();
    let output = seqc(&["check", "--format", "json", root]);
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    let files: Vec<String> = parse_json_report(&output)
        .diagnostics
        .into_iter()
        .map(|d| d.file)
        .collect();
    let expected: Vec<String> = ["a.json", "b/x.json", "c/a.json", "c/d/y.json"]
        .iter()
        .map(|f| dir.join(f).display().to_string())
        .collect();
    assert_eq!(files, expected);

    let human = seqc(&["check", "--color", "never", root]);
    let summary = stdout(&human).lines().last().unwrap().to_owned();
    assert_eq!(summary, "4 errors, 0 warnings in 4 files");
}

#[test]
fn the_fixture_directory_checks_every_sequence_fixture() {
    let output = seqc(&["check", "--format", "json", FIXTURES]);
    assert_eq!(status(&output), 1);
    let mut files: Vec<String> = parse_json_report(&output)
        .diagnostics
        .into_iter()
        .map(|d| d.file)
        .collect();
    files.dedup();
    // An empty file and a top-level array are not sequence files to a directory walk (nor to
    // the editor); named on the command line, they are checked (the fixtures' own test).
    let not_sequences = ["err_empty_file", "err_top_level_array"];
    let errors: Vec<String> = fixtures()
        .into_iter()
        .filter(|(name, _)| !name.starts_with("ok_") && !not_sequences.contains(&name.as_str()))
        .map(|(_, path)| path)
        .collect();
    assert_eq!(files, errors);
}

#[test]
fn a_directory_without_sequence_files_is_status_2() {
    let dir = scratch("empty_directory");
    std::fs::write(dir.join("notes.txt"), "").unwrap();
    let root = dir.to_str().unwrap();
    let output = seqc(&["check", root]);
    assert_eq!(status(&output), 2);
    assert_eq!(
        stderr(&output),
        format!("seqc: no sequence files in directory {root}\n")
    );
}

#[test]
fn valid_files_pass_with_status_0() {
    let files: Vec<String> = fixtures()
        .into_iter()
        .filter(|(name, _)| name.starts_with("ok_"))
        .map(|(_, path)| path)
        .collect();
    let mut args = vec!["check", "--color", "never"];
    args.extend(files.iter().map(String::as_str));
    let output = seqc(&args);
    assert_eq!(status(&output), 0, "{}", stdout(&output));
    assert_eq!(
        stdout(&output),
        format!("0 errors, 0 warnings in {} files\n", files.len())
    );
}

#[test]
fn explain_prints_every_code() {
    for &code in seq_syntax::Code::ALL {
        for spelling in [code.as_str().to_owned(), code.as_str().to_lowercase()] {
            let output = seqc(&["explain", &spelling]);
            assert_eq!(status(&output), 0, "explain {spelling}");
            let text = stdout(&output);
            assert!(
                !text.trim().is_empty(),
                "explain {spelling} printed nothing"
            );
            assert_eq!(text.trim_end(), code.explanation().trim_end());
        }
    }
}

#[test]
fn explain_of_an_unknown_code_is_one_line_and_status_2() {
    let output = seqc(&["explain", "E9999"]);
    assert_eq!(status(&output), 2);
    assert!(stdout(&output).is_empty());
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains("E9999") && message.contains("--list"),
        "{message}"
    );
}

#[test]
fn explain_list_names_every_code_with_its_title() {
    let output = seqc(&["explain", "--list"]);
    assert_eq!(status(&output), 0);
    let lines: Vec<&str> = stdout(&output).lines().collect();
    assert_eq!(lines.len(), seq_syntax::Code::ALL.len());
    for (line, code) in lines.iter().zip(seq_syntax::Code::ALL) {
        assert_eq!(*line, format!("{code}  {}", code.title()));
    }
}

/// A sequence on one line with thousands of mistakes: the human report draws a bounded window
/// of each of the first few and counts the rest, while the summary and the JSON stay exact.
#[test]
fn a_one_line_file_with_many_mistakes_gets_a_bounded_report() {
    let fields: String = (0..2_000)
        .map(|i| format!(", \"unknown_{i}\": {i}"))
        .collect();
    let text = format!(
        "{{\"name\": \"many\", \"groups\": [{{\"name\": \"g\", \"tools\": \"{{\\\"tool\\\":\\\"echo\\\",\\\"args\\\":{{\\\"value\\\":\\\"hi\\\"}}}} ;\"{fields}}}]}}"
    );
    assert_eq!(text.lines().count(), 1);
    let dir = scratch("one_line_many");
    let path = dir.join("many.json");
    std::fs::write(&path, &text).unwrap();
    let path = path.to_str().unwrap();

    let human = seqc(&["check", path]);
    assert_eq!(status(&human), 1);
    let out = stdout(&human);
    assert_eq!(out.matches("error[E0101]").count(), 50);
    assert!(out.contains(&format!(
        "... and 1950 more in {path} (1950 errors, 0 warnings)"
    )));
    assert!(out.ends_with("2000 errors, 0 warnings in 1 file\n"));
    // Every drawn line is a window, not the 60 KB line (help text, which lists the fields,
    // wraps where the terminal does).
    assert!(
        out.lines()
            .filter(|line| !line.contains("Help:"))
            .all(|line| line.chars().count() < 200),
        "a line was drawn whole"
    );
    // The location is the file's own, past the window.
    let last = text.find("\"unknown_49\"").unwrap() + 2;
    assert!(out.contains(&format!("{path}:1:{last}")));

    let json = parse_json_report(&seqc(&["check", "--format", "json", path]));
    assert_eq!((json.diagnostics.len(), json.errors), (2_000, 2_000));
}

/// A literal `jq` filter nested 1,000 deep (2 KB) is an E1004 diagnostic, not a crash of the
/// checker: jaq's parser never sees it.
#[test]
fn a_deeply_nested_jq_filter_is_a_diagnostic_not_a_crash() {
    let dir = common::scratch("deep-jq-filter");
    for (name, filter) in [
        (
            "brackets",
            format!("{}.{}", "[".repeat(1000), "]".repeat(1000)),
        ),
        (
            "parentheses",
            format!("{}.{}", "(".repeat(1000), ")".repeat(1000)),
        ),
        ("pipes", format!(".{}", "|.".repeat(5000))),
    ] {
        let tools = serde_json::json!({"tool": "jq", "args": {"filter": filter}, "as": "v"})
            .to_string()
            + " ;";
        let file = dir.join(format!("{name}.json"));
        let text = serde_json::json!({"name": "deep", "groups": [
            {"name": "g", "out": {"v": "any"}, "tools": tools}
        ]});
        std::fs::write(&file, text.to_string()).unwrap();
        let output = common::seqc(&["check", file.to_str().unwrap()]);
        assert_eq!(common::status(&output), 1, "{name}: {output:?}");
        let said = format!("{}{}", common::stdout(&output), common::stderr(&output));
        assert!(said.contains("E1004"), "{name}: {said}");
    }
}
