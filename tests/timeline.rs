//! `seqc run --timeline` and `seqc timeline` end to end: a real run drawn as it finishes, and the
//! same picture drawn again from its saved report.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use common::{status, stderr};

#[test]
fn a_run_draws_its_timeline_and_its_saved_report_draws_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let drawn = dir.path().join("run.svg");
    let output = common::command()
        .args([
            "run",
            "examples/hello.json",
            "--args",
            r#"{"who":"world"}"#,
            "--format",
            "json",
            "--timeline",
        ])
        .arg(&drawn)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let svg = std::fs::read_to_string(&drawn).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(common::stdout(&output).lines().last().unwrap()).unwrap();
    let items: usize = report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["items"].as_array().unwrap().len())
        .sum();
    let rows = |class: &str| {
        doc.descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.split(' ').any(|w| w == class))
            })
            .count()
    };
    assert_eq!(rows("band"), report["groups"].as_array().unwrap().len());
    assert!(rows("item") >= items, "{svg}");

    // The whole stdout, as saved: the sequence's lines, then the report.
    let saved = dir.path().join("report.json");
    std::fs::write(&saved, &output.stdout).unwrap();
    let again = dir.path().join("again.svg");
    let output = common::command()
        .arg("timeline")
        .arg(&saved)
        .arg("-o")
        .arg(&again)
        .output()
        .unwrap();
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), svg);
}

#[test]
fn a_file_that_is_no_report_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("report.json");
    std::fs::write(&saved, r#"{"rows": []}"#).unwrap();
    let output = common::command()
        .arg("timeline")
        .arg(&saved)
        .arg("-o")
        .arg(dir.path().join("out.svg"))
        .output()
        .unwrap();
    assert_eq!(status(&output), 2);
    assert!(
        stderr(&output).contains("not a run report"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.path().join("out.svg").exists());
}

#[test]
fn a_real_each_draws_its_elements_under_its_item() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("each.json");
    std::fs::write(
        &file,
        r#"{"name": "each", "groups": [{"name": "g", "out": {"r": "array"}, "on_error": "continue",
            "tools": "{\"tool\": \"sleep\", \"each\": [1, 2, -1], \"args\": {\"ms\": $each}, \"as\": \"r\"} ;"}]}"#,
    )
    .unwrap();
    let drawn = dir.path().join("run.svg");
    let output = common::command()
        .arg("run")
        .arg(&file)
        .arg("--timeline")
        .arg(&drawn)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let svg = std::fs::read_to_string(&drawn).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("label"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(labels, ["g", "1 sleep ×3", "[0]", "[1]", "[2]"], "{svg}");
    // The element given a negative pause failed; the others did not.
    let failed = doc
        .descendants()
        .filter(|n| n.attribute("data-depth") == Some("2"))
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.starts_with("row item failed"))
        })
        .count();
    assert_eq!(failed, 1, "{svg}");
}
