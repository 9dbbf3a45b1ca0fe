//! The repository's examples through the `seqc` binary: `examples/*.json` check clean, and each
//! file of `examples/broken/` shows off the diagnostic it was written for. The broken ones end in
//! `.json.broken`, so the directory walk of `seqc check examples/` never picks them up; they are
//! checked by name, together, as a user would (`seqc check examples/broken/*`).

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{broken_examples, seqc, stdout};
use std::path::Path;

/// Each broken example and the code it is there to show.
const BROKEN: &[(&str, &str)] = &[
    ("cycle-deploy", "E0602"),
    ("cycle-rollback", "E0602"),
    ("group-not-target", "E0510"),
    ("out-in-parallel", "E0506"),
    ("parallel-write", "E0504"),
    ("typo-fields", "E0101"),
    ("undeclared-arg", "E0502"),
    ("when-and", "E0401"),
];

#[test]
fn the_examples_check_clean_without_even_a_warning() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let count = std::fs::read_dir(dir)
        .unwrap()
        .filter(|entry| {
            let path = entry.as_ref().unwrap().path();
            path.is_file() && path.extension().is_some_and(|ext| ext == "json")
        })
        .count();
    assert!(count >= 3, "examples went missing");

    let human = seqc(&["check", "--color", "never", "examples/"]);
    assert_eq!(human.status.code(), Some(0), "{}", stdout(&human));
    assert_eq!(
        stdout(&human),
        format!("0 errors, 0 warnings in {count} files\n")
    );
    assert!(human.stderr.is_empty());

    let json = seqc(&["check", "--format", "json", "examples/"]);
    assert_eq!(json.status.code(), Some(0));
    assert_eq!(
        stdout(&json),
        "{\"diagnostics\":[],\"errors\":0,\"warnings\":0}\n"
    );
}

#[test]
fn the_broken_examples_render_their_diagnostics() {
    let files = broken_examples();
    let names: Vec<&str> = files
        .iter()
        .map(|f| {
            f.trim_start_matches("examples/broken/")
                .trim_end_matches(".json.broken")
        })
        .collect();
    let expected: Vec<&str> = BROKEN.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected, "examples/broken/ and BROKEN differ");

    let mut args = vec!["check", "--format", "human", "--color", "never"];
    args.extend(files.iter().map(String::as_str));
    let output = seqc(&args);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stderr.is_empty());
    insta::with_settings!({ omit_expression => true }, {
        insta::assert_snapshot!(
            "broken_examples",
            format!("$ seqc {}\nexit status: 1\n\n{}", args.join(" "), stdout(&output))
        );
    });
}

/// Each broken example reports the code it was written for (among whatever else it trips).
#[test]
fn each_broken_example_shows_its_code() {
    let files = broken_examples();
    let mut args = vec!["check", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let output = seqc(&args);
    let report: serde_json::Value = serde_json::from_str(stdout(&output)).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    for (name, code) in BROKEN {
        let file = format!("examples/broken/{name}.json.broken");
        assert!(
            diagnostics
                .iter()
                .any(|d| d["file"] == file.as_str() && d["code"] == *code),
            "{file} does not report {code}: {diagnostics:#?}"
        );
    }
}
