//! `seqc run --timeline` and `seqc timeline` end to end: a real run drawn as it finishes, and the
//! same picture drawn again from its saved report; a durable run's saved report drawn too.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/restate.rs"]
mod restate;

use common::{status, stderr};
use serde_json::json;

#[test]
fn a_run_draws_its_timeline_and_its_saved_report_draws_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let drawn = dir.path().join("run.svg");
    let output = common::command()
        .args(common::HELLO_WORLD)
        .arg("--timeline")
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

/// A durable run's report (`seqc run --restate --format json`, on a real Restate server) draws
/// as a local one's does: a band per group, a row per item, the retried item's attempts, the
/// called group nested under its call.
#[test]
fn a_durable_runs_saved_report_draws_its_timeline() {
    let restate::Setup {
        restate,
        root,
        data,
        worker: _worker,
    } = restate::Setup::start();
    let item = |value: serde_json::Value| value.to_string() + " ;";
    let sequence = json!({
        "name": "drawn",
        "groups": [
            {"name": "probe", "in": {"host": "string"}, "out": {"said": "any"},
             "tools": item(json!({"tool": "echo", "args": {"value": "$args.host"}, "as": "said"}))},
            {"name": "fan", "parallel": true,
             "tools": item(json!({"tool": "echo", "args": {"value": "a"}}))
                + &item(json!({"tool": "echo", "args": {"value": "b"}}))},
            {"name": "flaky", "on_error": "retry", "retries": 2,
             "tools": item(json!({"tool": "cmd_run",
                "args": {"command": "test -e tried || { touch tried; exit 3; }"}}))},
            {"name": "calls",
             "tools": item(json!({"tool": "seq_call",
                "args": {"target": "probe", "args": {"host": "h1"}}}))},
        ],
    });
    let file = root.path().join("drawn.json");
    std::fs::write(&file, sequence.to_string()).unwrap();
    let output = restate.run(data.path(), &[file.to_str().unwrap()]);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let saved = root.path().join("report.json");
    std::fs::write(&saved, &output.stdout).unwrap();
    let drawn = root.path().join("drawn.svg");
    let timeline = common::command()
        .arg("timeline")
        .arg(&saved)
        .arg("-o")
        .arg(&drawn)
        .output()
        .unwrap();
    assert_eq!(status(&timeline), 0, "{}", stderr(&timeline));

    let svg = std::fs::read_to_string(&drawn).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let with_class = |class: &str| {
        doc.descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.split(' ').any(|w| w == class))
            })
            .collect::<Vec<_>>()
    };
    // The three groups a run runs (`probe` is only called).
    assert_eq!(with_class("band").len(), 3, "{svg}");
    let items = with_class("item");
    assert!(items.len() >= 4, "{svg}");
    // The retried command: its first attempt failed, drawn beside the last.
    assert!(
        doc.descendants().any(|n| n
            .attribute("class")
            .is_some_and(|c| c.starts_with("attempt"))),
        "{svg}"
    );
    // The called group, one level under its call.
    assert!(
        with_class("group")
            .iter()
            .any(|n| n.attribute("data-depth").is_some_and(|d| d != "0")),
        "{svg}"
    );
    // And it renders: the picture has its bars' colours, not only the white ground.
    let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let painted = pixmap
        .pixels()
        .iter()
        .filter(|p| (p.red(), p.green(), p.blue()) != (255, 255, 255))
        .count();
    assert!(painted > 1000, "{painted} pixels painted");
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
    common::assert_says(stderr(&output), "not a run report");
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
