//! `seqc check --format sarif`: a SARIF 2.1.0 log, snapshotted over the broken examples and held
//! to the properties SARIF requires (and the ones seqc promises) over every input the other
//! tests use, cross-checked against `--format json`: same findings, same files, same positions.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{broken_examples, seqc, stdout};
use seq_syntax::{Code, LineIndex};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

fn run(format: &str, paths: &[&str]) -> Output {
    let mut args = vec!["check", "--format", format];
    args.extend(paths);
    seqc(&args)
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {value:#}"))
}

fn number(value: &Value, pointer: &str) -> u64 {
    value
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no number at {pointer} in {value:#}"))
}

/// A region: 1-based start and end, the end not before the start.
fn check_region(region: &Value) -> (u64, u64, u64, u64) {
    let at = (
        number(region, "/startLine"),
        number(region, "/startColumn"),
        number(region, "/endLine"),
        number(region, "/endColumn"),
    );
    assert!(at.0 >= 1 && at.1 >= 1, "{region}");
    assert!((at.2, at.3) >= (at.0, at.1), "{region}");
    at
}

/// A relative URI reference as SARIF wants it: forward slashes, nothing a URI cannot hold.
fn check_uri(uri: &str) {
    assert!(!uri.is_empty());
    assert!(
        uri.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~/%:".contains(&b)),
        "{uri}"
    );
}

/// Checks the log's required properties and seqc's promises, and that it reports exactly what
/// `--format json` reports for the same `paths`.
fn validate(paths: &[&str]) {
    let sarif = run("sarif", paths);
    let json = run("json", paths);
    assert_eq!(sarif.status.code(), json.status.code(), "{paths:?}");
    let log: Value = serde_json::from_str(stdout(&sarif)).unwrap();
    let report: Value = serde_json::from_str(stdout(&json)).unwrap();

    assert_eq!(
        text(&log, "/$schema"),
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    assert_eq!(text(&log, "/version"), "2.1.0");
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(text(run, "/tool/driver/name"), "seqc");
    assert_eq!(text(run, "/tool/driver/version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(text(run, "/columnKind"), "unicodeCodePoints");

    let rules = run
        .pointer("/tool/driver/rules")
        .unwrap()
        .as_array()
        .unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| text(r, "/id")).collect();
    for rule in rules {
        let code = Code::parse(text(rule, "/id")).unwrap();
        assert_eq!(text(rule, "/shortDescription/text"), code.title());
        assert!(!text(rule, "/fullDescription/text").is_empty());
        assert!(!text(rule, "/help/text").is_empty());
        assert_eq!(
            text(rule, "/defaultConfiguration/level"),
            code.severity().as_str()
        );
    }

    let results = run["results"].as_array().unwrap();
    let expected = report["diagnostics"].as_array().unwrap();
    assert_eq!(results.len(), expected.len(), "{paths:?}");
    let used: BTreeSet<&str> = results.iter().map(|r| text(r, "/ruleId")).collect();
    let listed: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(used, listed, "one rule per code used");
    assert_eq!(ids.len(), listed.len(), "rules are unique");

    for (result, diagnostic) in results.iter().zip(expected) {
        let rule = text(result, "/ruleId");
        assert_eq!(rule, text(diagnostic, "/code"));
        let index = usize::try_from(number(result, "/ruleIndex")).unwrap();
        assert_eq!(ids[index], rule);
        assert_eq!(text(result, "/level"), text(diagnostic, "/severity"));
        let message = text(result, "/message/text");
        assert!(
            message.starts_with(text(diagnostic, "/message")),
            "{message}"
        );
        if let Some(hint) = diagnostic["hint"].as_str() {
            assert!(message.ends_with(&format!("\nhelp: {hint}")), "{message}");
        }

        let locations = result["locations"].as_array().unwrap();
        assert_eq!(locations.len(), 1);
        let physical = &locations[0]["physicalLocation"];
        let uri = text(physical, "/artifactLocation/uri");
        check_uri(uri);
        let file = text(diagnostic, "/file");
        assert_eq!(uri, file.replace(' ', "%20"));
        let (line, column, end_line, end_column) = check_region(&physical["region"]);
        assert_eq!(
            (line, column),
            (number(diagnostic, "/line"), number(diagnostic, "/column"))
        );
        // The end, in code points, from the file's bytes.
        let source = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        let source = String::from_utf8_lossy(&source);
        if !source.contains('\u{FFFD}') {
            let end = u32::try_from(number(diagnostic, "/end")).unwrap();
            let at = LineIndex::new(&source).line_col(&source, end);
            assert_eq!(
                (end_line, end_column),
                (u64::from(at.line), u64::from(at.column))
            );
        }

        let mut ids = BTreeSet::new();
        for related in result["relatedLocations"].as_array().into_iter().flatten() {
            assert!(ids.insert(number(related, "/id")), "related ids are unique");
            assert!(!text(related, "/message/text").is_empty());
            assert_eq!(text(related, "/physicalLocation/artifactLocation/uri"), uri);
            check_region(&related["physicalLocation"]["region"]);
        }
        // Only a machine-applicable fix is a SARIF fix, and it is the JSON format's.
        let fixes = result["fixes"].as_array().map_or(0, Vec::len);
        let machine = diagnostic["fix"]["applicability"] == "machine-applicable";
        assert_eq!(fixes, usize::from(machine), "{result:#}");
        for fix in result["fixes"].as_array().into_iter().flatten() {
            assert_eq!(
                text(fix, "/description/text"),
                text(diagnostic, "/fix/title")
            );
            let edits = diagnostic["fix"]["edits"].as_array().unwrap();
            let inserted: Vec<&str> = fix["artifactChanges"][0]["replacements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| text(r, "/insertedContent/text"))
                .collect();
            let written: Vec<&str> = edits.iter().map(|e| text(e, "/text")).collect();
            assert_eq!(inserted, written);
            let changes = fix["artifactChanges"].as_array().unwrap();
            assert!(!changes.is_empty());
            for change in changes {
                check_uri(text(change, "/artifactLocation/uri"));
                let replacements = change["replacements"].as_array().unwrap();
                assert!(!replacements.is_empty());
                for replacement in replacements {
                    check_region(&replacement["deletedRegion"]);
                    text(replacement, "/insertedContent/text");
                }
            }
        }
    }
}

#[test]
fn the_broken_examples_as_sarif() {
    let files = broken_examples();
    let paths: Vec<&str> = files.iter().map(String::as_str).collect();
    let output = run("sarif", &paths);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stderr.is_empty());
    let log: Value = serde_json::from_str(stdout(&output)).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r.get("fixes").is_some()), "a fix");
    assert!(
        results.iter().any(|r| r.get("relatedLocations").is_some()),
        "a related location"
    );
    insta::with_settings!({ omit_expression => true }, {
        insta::assert_snapshot!("broken_examples", stdout(&output));
    });
}

#[test]
fn every_input_gives_a_valid_log_that_agrees_with_the_json_format() {
    let broken = broken_examples();
    let broken: Vec<&str> = broken.iter().map(String::as_str).collect();
    validate(&broken);
    validate(&["examples/"]);
    validate(&["tests/fixtures/store"]);
    validate(&["tests/fixtures/syntax"]);
}

#[test]
fn a_clean_run_has_no_rules_and_no_results() {
    let output = run("sarif", &["examples/"]);
    assert_eq!(output.status.code(), Some(0));
    let log: Value = serde_json::from_str(stdout(&output)).unwrap();
    assert_eq!(
        log["runs"][0]["tool"]["driver"]["rules"],
        Value::Array(vec![])
    );
    assert_eq!(log["runs"][0]["results"], Value::Array(vec![]));
}
