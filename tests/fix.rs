//! End-to-end tests of `seqc check --fix` and `--diff`.
//!
//! Every file in `tests/fixtures/fix/` is copied into a scratch directory and fixed there; the
//! snapshot (`tests/snapshots/fix__*.snap`) holds the exit status, the fixed file and the JSON
//! report: what was fixed (with the pass) and what remains. Fixing again must change nothing.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{status, text};
use seq_test_support::strings_at;
use std::path::{Path, PathBuf};
use std::process::Output;

const FIXTURES: &str = "tests/fixtures/fix";

fn seqc(dir: &Path, args: &[&str]) -> Output {
    common::command()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the seqc binary runs")
}

/// `(name, path)` of every fixture, sorted.
fn fixtures() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES);
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            (name, path)
        })
        .collect();
    found.sort();
    assert!(found.len() >= 5, "fixtures missing in {}", dir.display());
    found
}

/// A scratch directory holding a copy of `fixture` as `NAME.json`.
fn scratch(name: &str, fixture: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture, dir.path().join(format!("{name}.json"))).unwrap();
    dir
}

#[test]
fn each_fixture_is_fixed_and_what_remains_is_reported() {
    for (name, fixture) in fixtures() {
        let dir = scratch(&name, &fixture);
        let file = format!("{name}.json");
        let output = seqc(dir.path(), &["check", "--fix", "--format", "json", &file]);
        assert!(output.stderr.is_empty(), "{name}: {}", text(&output.stderr));
        let fixed = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let snapshot = format!(
            "status: {}\n--- fixed file ---\n{fixed}--- report ---\n{}\n",
            status(&output),
            serde_json::to_string_pretty(&report).unwrap()
        );
        insta::assert_snapshot!(name.as_str(), snapshot);

        // Nothing is left to apply: a second run writes nothing and reports the same.
        let again = seqc(dir.path(), &["check", "--fix", "--format", "json", &file]);
        let report_again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
        assert_eq!(report_again["fixed"], serde_json::json!([]), "{name}");
        assert_eq!(report_again["diagnostics"], report["diagnostics"], "{name}");
        assert_eq!(status(&again), status(&output), "{name}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(&file)).unwrap(),
            fixed,
            "{name}"
        );
        // No temporary file is left beside it.
        let entries = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(entries, 1, "{name}");
    }
}

/// `seqc check --fix --format json` on a copy of the fixture `name`: the report and the file.
fn fix_fixture(name: &str) -> (serde_json::Value, String) {
    let (name, fixture) = fixtures().into_iter().find(|(n, _)| n == name).unwrap();
    let dir = scratch(&name, &fixture);
    let file = format!("{name}.json");
    let output = seqc(dir.path(), &["check", "--fix", "--format", "json", &file]);
    let report = serde_json::from_slice(&output.stdout).unwrap();
    (
        report,
        std::fs::read_to_string(dir.path().join(&file)).unwrap(),
    )
}

fn fixed_codes(report: &serde_json::Value) -> Vec<&str> {
    strings_at(&report["fixed"], "code")
}

/// Fixes never change what a sequence means. Quotes of an item's own string left unescaped get
/// no machine-applicable fix, as do quotes unescaped at both levels (which quote ends what cannot
/// be told); a `tools` string with all its quotes raw gets one escape fix; `"parallel": "true"`
/// becomes `true`, and the E0506 that `true` then meets keeps its fix (running the group
/// serially) as a suggestion, not applied.
#[test]
fn fixes_that_would_change_the_meaning_are_not_applied() {
    for name in ["inner_quotes_unescaped", "tools_quotes_nested"] {
        let (report, fixed) = fix_fixture(name);
        assert!(fixed_codes(&report).is_empty(), "{name}: {report:#}");
        let original = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(FIXTURES)
            .join(format!("{name}.json"));
        assert_eq!(fixed, std::fs::read_to_string(original).unwrap(), "{name}");
        for d in report["diagnostics"].as_array().unwrap() {
            assert_ne!(
                d["fix"]["applicability"], "machine-applicable",
                "{name}: {d:#}"
            );
        }
    }

    let (report, fixed) = fix_fixture("tools_quotes_unescaped");
    assert_eq!(fixed_codes(&report), ["E0004"], "{report:#}");
    assert_eq!(report["diagnostics"], serde_json::json!([]));
    assert!(
        fixed.contains(r#""tools": "{\"tool\":\"cmd_run\""#),
        "{fixed}"
    );

    let (report, fixed) = fix_fixture("parallel_as_string");
    assert_eq!(fixed_codes(&report), ["E0103"], "{report:#}");
    assert!(fixed.contains(r#""parallel": true,"#), "{fixed}");
    let remaining = &report["diagnostics"][0];
    assert_eq!(remaining["code"], "E0506");
    assert_eq!(remaining["fix"]["applicability"], "maybe-incorrect");
}

#[test]
fn the_human_report_lists_the_fixes_then_what_remains() {
    let (name, fixture) = fixtures()
        .into_iter()
        .find(|(name, _)| name == "unfixable")
        .unwrap();
    let dir = scratch(&name, &fixture);
    let output = seqc(
        dir.path(),
        &["check", "--fix", "--color", "never", "unfixable.json"],
    );
    assert_eq!(status(&output), 1);
    insta::assert_snapshot!("human_report", text(&output.stdout));
}

#[test]
fn diff_shows_the_changes_and_writes_nothing() {
    let (name, fixture) = fixtures()
        .into_iter()
        .find(|(name, _)| name == "typos")
        .unwrap();
    let dir = scratch(&name, &fixture);
    let before = std::fs::read(dir.path().join("typos.json")).unwrap();
    let output = seqc(dir.path(), &["check", "--diff", "typos.json"]);
    assert_eq!(status(&output), 1, "something to fix");
    assert_eq!(
        std::fs::read(dir.path().join("typos.json")).unwrap(),
        before
    );
    insta::assert_snapshot!(
        "diff",
        format!(
            "--- stdout ---\n{}--- stderr ---\n{}",
            text(&output.stdout),
            text(&output.stderr)
        )
    );

    // The diff is the fix: applied with `--fix`, the file is what the diff says.
    let fixed = seqc(dir.path(), &["check", "--fix", "typos.json"]);
    assert_eq!(status(&fixed), 0);
    let after = std::fs::read_to_string(dir.path().join("typos.json")).unwrap();
    for line in text(&output.stdout).lines() {
        if let Some(added) = line.strip_prefix('+').filter(|l| !l.starts_with("++")) {
            assert!(after.contains(added), "{added} not in\n{after}");
        }
    }

    // A clean file: no diff, status 0.
    let clean = seqc(dir.path(), &["check", "--diff", "typos.json"]);
    assert_eq!(status(&clean), 0);
    assert!(clean.stdout.is_empty(), "{}", text(&clean.stdout));
}

#[test]
fn files_are_fixed_as_one_store_and_only_changed_files_are_written() {
    // `#saver` resolves to the other file: the store's check sees the call, so the E0604 of the
    // parallel group calling it (and its fix) exists only when both files are checked together.
    let dir = tempfile::tempdir().unwrap();
    let caller = r##"{"name": "caller", "groups": [{"name": "main",
  "tools": "{\"tool\":\"seq_call\",\"args\":{\"target\":\"#saver\"}} ;"}]}
"##;
    let saver = r#"{"name": "saver", "groups": [{"name": "write", "parallel": false,
  "tools": "{\"tool\":\"files_write\",\"args\":{\"path\":\"o\",\"content\":\"x\"},\"unsafe_serial\":true} ;"}]}
"#;
    std::fs::write(dir.path().join("caller.json"), caller).unwrap();
    std::fs::write(dir.path().join("saver.json"), saver).unwrap();
    let saved_at = std::fs::metadata(dir.path().join("saver.json"))
        .unwrap()
        .modified()
        .unwrap();
    let output = seqc(
        dir.path(),
        &[
            "check",
            "--fix",
            // Running the group serially may change what it does: only applied when asked.
            "--unsafe-fixes",
            "--format",
            "json",
            "caller.json",
            "saver.json",
        ],
    );
    assert_eq!(status(&output), 0, "{}", text(&output.stdout));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let codes: Vec<&str> = strings_at(&report["fixed"], "code");
    assert_eq!(codes, ["E0604"]);
    let fixed = std::fs::read_to_string(dir.path().join("caller.json")).unwrap();
    assert!(
        fixed.contains(r#""name": "main", "parallel": false"#),
        "{fixed}"
    );
    assert!(fixed.contains(r#"\"unsafe_serial\":true"#), "{fixed}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("saver.json")).unwrap(),
        saver
    );
    let unchanged_at = std::fs::metadata(dir.path().join("saver.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(saved_at, unchanged_at);
}

#[cfg(unix)]
#[test]
fn a_fixed_file_keeps_its_permissions_and_a_link_keeps_pointing_at_it() {
    use std::os::unix::fs::PermissionsExt;
    let (name, fixture) = fixtures()
        .into_iter()
        .find(|(name, _)| name == "typos")
        .unwrap();
    let dir = scratch(&name, &fixture);
    let real = dir.path().join("typos.json");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("typos.json", dir.path().join("link.json")).unwrap();
    let output = seqc(dir.path(), &["check", "--fix", "link.json"]);
    assert_eq!(status(&output), 0, "{}", text(&output.stdout));
    let link = std::fs::symlink_metadata(dir.path().join("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let meta = std::fs::metadata(&real).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    let fixed = std::fs::read_to_string(&real).unwrap();
    assert!(fixed.contains("\"parallel\": false"), "{fixed}");
}
