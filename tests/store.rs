//! `seqc check` over several files at once (one store: `#name` resolves across them) and with
//! `--catalog` files merged into the built-in catalog.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{scratch, seqc, status, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

const STORE: &str = "tests/fixtures/store";
const CATALOGS: &str = "tests/fixtures/catalogs";
const RELEASE: &str = "tests/fixtures/with_catalog/release.json";

/// `(file, code, culprit text)` of every diagnostic of a `--format json` run.
fn findings(output: &Output) -> Vec<(String, String, String)> {
    let report: Value = serde_json::from_str(stdout(output)).unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = d["file"].as_str().unwrap().to_owned();
            let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(&file)).unwrap();
            let start = usize::try_from(d["start"].as_u64().unwrap()).unwrap();
            let end = usize::try_from(d["end"].as_u64().unwrap()).unwrap();
            let culprit = String::from_utf8_lossy(&bytes[start..end]).into_owned();
            (file, d["code"].as_str().unwrap().to_owned(), culprit)
        })
        .collect()
}

fn finding(file: &str, code: &str, culprit: &str) -> (String, String, String) {
    (file.to_owned(), code.to_owned(), culprit.to_owned())
}

#[test]
fn calls_resolve_across_the_files_checked_together() {
    let nightly = format!("{STORE}/nightly.json");
    // Alone, `#backup` is not in the store.
    let alone = seqc(&["check", "--format", "json", &nightly]);
    assert_eq!(status(&alone), 0, "unknown sequences are warnings");
    assert_eq!(
        findings(&alone),
        [
            finding(&nightly, "W0501", "#backup"),
            finding(&nightly, "W0501", "#backup"),
            finding(&nightly, "W0501", "#weekly-report"),
        ]
    );
    // With the directory, only the sequence that no file defines is left.
    let together = seqc(&["check", "--format", "json", STORE]);
    assert_eq!(status(&together), 0);
    assert_eq!(
        findings(&together),
        [finding(&nightly, "W0501", "#weekly-report")]
    );
    assert!(stderr(&together).is_empty());
}

/// `--data-dir`: the stored sequences join the check as they will join the run, and a file of a
/// stored name stands in for it.
#[test]
fn calls_resolve_to_the_stored_sequences_too() {
    let data = scratch("check_with_stored");
    let data = data.to_str().unwrap();
    let created = seqc(&[
        "create",
        "--data-dir",
        data,
        &format!("{STORE}/backup.json"),
    ]);
    assert_eq!(status(&created), 0, "{}", stderr(&created));
    let nightly = format!("{STORE}/nightly.json");
    let output = seqc(&["check", "--format", "json", "--data-dir", data, &nightly]);
    assert_eq!(status(&output), 0);
    assert_eq!(
        findings(&output),
        [finding(&nightly, "W0501", "#weekly-report")]
    );

    // A cycle through a stored sequence is found before the file is stored or run.
    let deploy = "examples/broken/cycle-deploy.json.broken";
    let rollback = "examples/broken/cycle-rollback.json.broken";
    let stored = seqc(&["create", "--data-dir", data, deploy]);
    assert_eq!(status(&stored), 0, "{}", stderr(&stored));
    let output = seqc(&["check", "--format", "json", "--data-dir", data, rollback]);
    assert_eq!(status(&output), 1);
    assert_eq!(findings(&output), [finding(rollback, "E0602", "#deploy")]);
    // Given as a file too, `deploy` stands in for the stored one: both files get the cycle.
    let output = seqc(&[
        "check",
        "--format",
        "json",
        "--data-dir",
        data,
        rollback,
        deploy,
    ]);
    assert_eq!(findings(&output).len(), 2);
}

#[test]
fn a_cycle_across_files_is_reported_in_each_file() {
    let deploy = "examples/broken/cycle-deploy.json.broken";
    let rollback = "examples/broken/cycle-rollback.json.broken";
    for order in [[deploy, rollback], [rollback, deploy]] {
        let output = seqc(&["check", "--format", "json", order[0], order[1]]);
        assert_eq!(status(&output), 1);
        let mut found = findings(&output);
        found.sort();
        assert_eq!(
            found,
            [
                // The call's whole `target` value, escaped quotes included.
                finding(deploy, "E0602", "#rollback"),
                finding(rollback, "E0602", "#deploy"),
            ],
            "order {order:?}"
        );
    }
    // Each file alone has no cycle, only a call to a sequence it cannot see.
    let alone = seqc(&["check", "--format", "json", deploy]);
    assert_eq!(findings(&alone), [finding(deploy, "W0501", "#rollback")]);
}

#[test]
fn two_files_with_one_sequence_name_are_reported_in_the_second() {
    let dir = scratch("duplicate_sequence");
    let text = |value: &str| {
        format!(
            "{{\"name\": \"deploy\", \"groups\": [{{\"name\": \"g\", \"tools\": \
             \"{{\\\"tool\\\":\\\"echo\\\",\\\"args\\\":{{\\\"value\\\":\\\"{value}\\\"}}}} ;\"}}]}}\n"
        )
    };
    std::fs::write(dir.join("a.json"), text("a")).unwrap();
    std::fs::write(dir.join("b.json"), text("b")).unwrap();
    let root = dir.to_str().unwrap();
    let output = seqc(&["check", "--format", "json", root]);
    assert_eq!(status(&output), 1);
    let report: Value = serde_json::from_str(stdout(&output)).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let first = dir.join("a.json").display().to_string();
    assert_eq!(diagnostics[0]["code"], "E0527");
    assert_eq!(
        diagnostics[0]["file"],
        dir.join("b.json").display().to_string()
    );
    assert!(
        diagnostics[0]["message"].as_str().unwrap().contains(&first),
        "the message names the other file: {diagnostics:#?}"
    );
}

/// A file that is not UTF-8 gets E0007 and stays out of the store; the others are checked as
/// usual, and the files keep the order they were given in.
#[test]
fn a_file_that_is_not_utf8_is_reported_beside_the_store() {
    let not_utf8 = "tests/fixtures/syntax/err_not_utf8.json";
    let notify = format!("{STORE}/notify.json");
    let nightly = format!("{STORE}/nightly.json");
    let output = seqc(&["check", "--format", "json", &nightly, not_utf8, &notify]);
    assert_eq!(status(&output), 1);
    let codes: Vec<(String, String)> = findings(&output)
        .into_iter()
        .map(|(file, code, _)| (file, code))
        .collect();
    let expected: Vec<(String, String)> = [
        (nightly.as_str(), "W0501"),
        (nightly.as_str(), "W0501"),
        (nightly.as_str(), "W0501"),
        (not_utf8, "E0007"),
    ]
    .iter()
    .map(|(f, c)| ((*f).to_owned(), (*c).to_owned()))
    .collect();
    assert_eq!(codes, expected);
}

#[test]
fn a_catalog_teaches_the_checker_a_host_s_tools() {
    let without = seqc(&["check", "--format", "json", RELEASE]);
    assert_eq!(status(&without), 0, "unknown tools are only warnings");
    assert_eq!(
        findings(&without),
        [
            finding(RELEASE, "W0505", "status"),
            finding(RELEASE, "W0505", "deploy"),
        ]
    );

    let host = format!("{CATALOGS}/deploy-host.json");
    let with = seqc(&["check", "--format", "json", "--catalog", &host, RELEASE]);
    assert_eq!(status(&with), 1, "{}", stdout(&with));
    assert_eq!(findings(&with), [finding(RELEASE, "E0504", "deploy")]);
    assert!(stderr(&with).is_empty(), "{}", stderr(&with));
}

#[test]
fn catalogs_merge_in_order_and_built_in_seq_tools_are_kept_with_a_warning() {
    let host = format!("{CATALOGS}/deploy-host.json");
    let mcp = format!("{CATALOGS}/mcp-tools.json");
    let output = seqc(&[
        "check",
        "--format",
        "json",
        "--catalog",
        &host,
        "--catalog",
        &mcp,
        RELEASE,
    ]);
    assert_eq!(status(&output), 1);
    assert_eq!(findings(&output), [finding(RELEASE, "E0504", "deploy")]);
    assert_eq!(
        stderr(&output),
        format!(
            "seqc: {mcp}:14:15: warning[W0801]: `seq_call` is a built-in tool; \
             the built-in definition is kept and this one ignored\n"
        )
    );
}

#[test]
fn a_catalog_that_cannot_be_loaded_is_one_line_with_its_position_and_status_2() {
    let broken = format!("{CATALOGS}/broken-syntax.json");
    let output = seqc(&["check", "--catalog", &broken, RELEASE]);
    assert_eq!(status(&output), 2);
    assert!(stdout(&output).is_empty());
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.starts_with(&format!(
            "seqc: {broken}:3:22: error[E0802]: the catalog is not valid JSON"
        )),
        "{message}"
    );

    let shape = format!("{CATALOGS}/not-a-catalog.json");
    let output = seqc(&["check", "--catalog", &shape, RELEASE]);
    assert_eq!(status(&output), 2);
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.starts_with(&format!("seqc: {shape}:1:1: error[E0803]: a catalog is ")),
        "{message}"
    );

    let output = seqc(&["check", "--catalog", "no/such/catalog.json", RELEASE]);
    assert_eq!(status(&output), 2);
    assert_eq!(
        stderr(&output),
        "seqc: cannot read catalog no/such/catalog.json: No such file or directory\n"
    );
}

#[test]
fn a_catalog_that_is_not_utf8_points_at_the_first_bad_byte() {
    let dir = scratch("catalog_not_utf8");
    let path = dir.join("latin1.json");
    std::fs::write(&path, b"[\n  {\"name\": \"caf\xe9\"}\n]\n").unwrap();
    let path = path.to_str().unwrap();
    let output = seqc(&["check", "--catalog", path, RELEASE]);
    assert_eq!(status(&output), 2);
    assert_eq!(
        stderr(&output),
        format!("seqc: {path}:2:16: error[E0801]: the catalog file is not UTF-8\n")
    );
}

#[test]
fn every_problem_with_inputs_and_catalogs_is_reported_before_stopping() {
    let output = seqc(&[
        "check",
        "--catalog",
        "no/such/catalog.json",
        "no/such/file.json",
    ]);
    assert_eq!(status(&output), 2);
    assert_eq!(
        stderr(&output),
        "seqc: cannot read no/such/file.json: No such file or directory\n\
         seqc: cannot read catalog no/such/catalog.json: No such file or directory\n"
    );
}
