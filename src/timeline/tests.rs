//! The timeline: its rows (layout), its SVG's structure (read back as XML), the SVG of a small
//! report (a snapshot), and the picture a viewer would show (rendered to pixels with resvg).
//! With `SEQC_TIMELINE_PNGS=DIR` the pictures are also written there, to be looked at.

use super::layout::{self, Kind, MAX_ITEM_ROWS, SHOWN_WHEN_AGGREGATED};
use super::{draw, read_report};
use seq_exec::RunReport;
use seq_exec::engine::ItemStatus;
use serde_json::{Value, json};

fn report(value: Value) -> RunReport {
    serde_json::from_value(value).unwrap()
}

fn item(tool: &str, status: &str, started: u64, duration: u64) -> Value {
    json!({"tool": tool, "status": status, "started_ms": started, "duration_ms": duration})
}

/// A serial group, a parallel one with a slow item, a retried item and a call.
fn small() -> RunReport {
    report(json!({
        "ok": true, "out": {},
        "groups": [
            {"name": "fetch", "status": "ran", "parallel": false, "started_ms": 0, "duration_ms": 120,
             "out": {}, "items": [item("cmd_run", "ok", 1, 70), item("files_read", "ok", 72, 47)]},
            {"name": "probe <all>", "status": "partial", "parallel": true, "started_ms": 121,
             "duration_ms": 400, "out": {},
             "items": [
                item("cmd_run", "ok", 122, 390),
                {"tool": "flaky", "status": "ok", "started_ms": 122, "duration_ms": 250, "retries": 2,
                 "failed_attempts": [{"reason": "failed", "detail": "exit 1"},
                                     {"reason": "timeout", "detail": "took too long"}],
                 "attempts": [{"started_ms": 122, "duration_ms": 40},
                              {"started_ms": 200, "duration_ms": 60},
                              {"started_ms": 300, "duration_ms": 72}]},
                {"tool": "files_read", "status": "failed", "started_ms": 122, "duration_ms": 3,
                 "error": {"reason": "not_found", "detail": "no such file"}}
             ]},
            {"name": "report", "status": "ran", "parallel": false, "started_ms": 522,
             "duration_ms": 80, "out": {},
             "items": [{"tool": "seq_call", "status": "ok", "started_ms": 523, "duration_ms": 78,
                        "called": [{"name": "notify", "sequence": "lib", "status": "ran",
                                    "parallel": false, "started_ms": 524, "duration_ms": 76,
                                    "items": [item("echo", "ok", 525, 74)]}]}]}
        ]
    }))
}

/// One parallel group of 1,000 items, a few of which failed.
fn wide() -> RunReport {
    let items: Vec<Value> = (0..1000u64)
        .map(|i| {
            let status = if i % 250 == 7 { "failed" } else { "ok" };
            item("sleep", status, 2 + i / 10, 50 + (i * 37) % 400)
        })
        .collect();
    report(json!({
        "ok": false, "out": {},
        "groups": [{"name": "fan", "status": "partial", "parallel": true, "started_ms": 0,
                    "duration_ms": 560, "out": {}, "items": items}]
    }))
}

/// An item retried three times with pauses between its attempts.
fn retrying() -> RunReport {
    report(json!({
        "ok": false, "out": {},
        "groups": [{"name": "deploy", "status": "failed", "parallel": false, "started_ms": 0,
                    "duration_ms": 1900, "out": {},
                    "error": {"reason": "failed", "detail": "exit status 2"},
                    "items": [
                        item("cmd_run", "ok", 0, 300),
                        {"tool": "cmd_run", "status": "failed", "started_ms": 301, "duration_ms": 1599,
                         "retries": 3, "error": {"reason": "failed", "detail": "exit status 2"},
                         "failed_attempts": [{"reason": "failed"}, {"reason": "failed"}, {"reason": "timeout"}],
                         "attempts": [{"started_ms": 301, "duration_ms": 200},
                                      {"started_ms": 700, "duration_ms": 210},
                                      {"started_ms": 1110, "duration_ms": 400},
                                      {"started_ms": 1700, "duration_ms": 200}]},
                        item("echo", "skipped", 1900, 0)
                    ]}]
    }))
}

/// A parallel `each` over `count` elements of which the report keeps the first `kept`, every
/// seventh failed after a retry.
fn looping(count: u64, kept: u64) -> RunReport {
    let elements: Vec<Value> = (0..kept)
        .map(|i| {
            if i % 7 == 3 {
                json!({"status": "failed", "started_ms": 1 + i, "duration_ms": 30, "retries": 1,
                       "failed_attempts": [{"reason": "timeout"}],
                       "error": {"reason": "failed", "detail": "exit status 1"}})
            } else {
                json!({"status": "ok", "started_ms": 1 + i, "duration_ms": 20 + (i * 13) % 90})
            }
        })
        .collect();
    let failed = (0..count).filter(|i| i % 7 == 3).count();
    report(json!({
        "ok": true, "out": {},
        "groups": [{"name": "per file", "status": "ran", "parallel": true, "started_ms": 0,
                    "duration_ms": 200, "out": {},
                    "items": [{"tool": "files_read", "status": "ok", "started_ms": 1, "duration_ms": 198,
                               "each": {"count": count, "ok": count as usize - failed, "failed": failed,
                                        "elements": elements, "elements_omitted": count - kept}}]}]
    }))
}

/// The SVG as XML: every element whose `class` has `class`.
fn with_class<'a>(doc: &'a roxmltree::Document<'_>, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split(' ').any(|word| word == class))
        })
        .collect()
}

fn labels(doc: &roxmltree::Document<'_>) -> Vec<String> {
    with_class(doc, "label")
        .iter()
        .filter_map(|n| n.text().map(str::to_owned))
        .collect()
}

/// The picture at its own size, with the machine's fonts.
fn pixels(svg: &str, name: &str) -> resvg::tiny_skia::Pixmap {
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &options).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    if let Some(dir) = std::env::var_os("SEQC_TIMELINE_PNGS") {
        let path = std::path::Path::new(&dir).join(format!("{name}.png"));
        pixmap.save_png(path).unwrap();
    }
    pixmap
}

/// How many pixels have exactly `rgb`.
fn count(pixmap: &resvg::tiny_skia::Pixmap, rgb: (u8, u8, u8)) -> usize {
    pixmap
        .pixels()
        .iter()
        .filter(|p| (p.red(), p.green(), p.blue()) == rgb && p.alpha() == 255)
        .count()
}

#[test]
fn the_svg_of_a_small_run() {
    insta::assert_snapshot!(draw(&small()));
}

#[test]
fn a_small_run_has_a_band_per_group_and_a_bar_per_item() {
    let svg = draw(&small());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(with_class(&doc, "band").len(), 3);
    assert_eq!(
        with_class(&doc, "group").len(),
        4,
        "three groups and a called one"
    );
    assert_eq!(with_class(&doc, "item").len(), 7);
    assert_eq!(
        labels(&doc),
        [
            "fetch",
            "1 cmd_run",
            "2 files_read",
            "probe <all>",
            "1 cmd_run",
            "2 flaky",
            "3 files_read",
            "report",
            "1 seq_call",
            "↳ #lib/notify",
            "1 echo"
        ]
    );
    // The retried item: two attempts that failed and were retried, then the last.
    assert_eq!(with_class(&doc, "attempt").len(), 3);
    assert_eq!(with_class(&doc, "retried").len(), 2);
    // The slowest path: the last item of each group, down into the call.
    let critical: Vec<String> = with_class(&doc, "critical")
        .iter()
        .filter_map(|row| row.children().find(|n| n.has_tag_name("title")))
        .filter_map(|title| title.text().map(str::to_owned))
        .collect();
    assert_eq!(critical.len(), 4, "{critical:?}");
    assert!(
        critical[0].starts_with("item 2 files_read"),
        "{}",
        critical[0]
    );
    assert!(critical[1].starts_with("item 1 cmd_run") && critical[1].contains("390 ms"));
    assert!(critical[2].starts_with("item 1 seq_call"));
    assert!(critical[3].starts_with("item 1 echo"));
    // No script, no external reference.
    assert!(!svg.contains("<script") && !svg.contains("href"));
}

#[test]
fn a_small_run_shows_each_status_in_its_colour() {
    let pixmap = pixels(&draw(&small()), "small");
    assert!(count(&pixmap, (0x3b, 0x9b, 0x5b)) > 100, "ok bars");
    assert!(count(&pixmap, (0xd1, 0x45, 0x3b)) > 20, "the failed bar");
}

#[test]
fn a_thousand_items_are_the_telling_ones_and_an_aggregate() {
    let chart = layout::chart(&wide());
    let items = chart
        .rows
        .iter()
        .filter(|r| matches!(r.kind, Kind::Item(_)))
        .count();
    assert_eq!(items, SHOWN_WHEN_AGGREGATED);
    // Every failure is among those shown.
    let failed = chart
        .rows
        .iter()
        .filter(|r| r.kind == Kind::Item(ItemStatus::Failed))
        .count();
    assert_eq!(failed, 4);
    // The item the group waited for is shown, outlined, whatever its status.
    assert_eq!(chart.rows.iter().filter(|r| r.critical).count(), 1);
    let aggregate: Vec<_> = chart
        .rows
        .iter()
        .filter(|r| r.kind == Kind::Aggregate)
        .collect();
    assert_eq!(aggregate.len(), 1);
    assert!(
        aggregate[0].label.starts_with("988 more items (988 ok)"),
        "{}",
        aggregate[0].label
    );
    assert!(aggregate[0].profile.iter().copied().max().unwrap_or(0) > 100);
    let svg = draw(&wide());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(with_class(&doc, "profile").len(), 1);
    let pixmap = pixels(&svg, "wide");
    assert!(count(&pixmap, (0x4a, 0x78, 0xb5)) > 0 || pixmap.height() > 0);
}

#[test]
fn a_group_at_the_bound_is_drawn_whole() {
    let items: Vec<Value> = (0..MAX_ITEM_ROWS as u64)
        .map(|i| item("echo", "ok", i, 5))
        .collect();
    let chart = layout::chart(&report(json!({
        "ok": true, "out": {},
        "groups": [{"name": "g", "status": "ran", "parallel": true, "started_ms": 0,
                    "duration_ms": 30, "out": {}, "items": items}]
    })));
    assert_eq!(chart.rows.len(), 1 + MAX_ITEM_ROWS);
    assert!(chart.rows.iter().all(|r| r.kind != Kind::Aggregate));
}

#[test]
fn retried_attempts_are_drawn_apart() {
    let svg = draw(&retrying());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(with_class(&doc, "attempt").len(), 4);
    assert_eq!(with_class(&doc, "retried").len(), 3);
    let pixmap = pixels(&svg, "retrying");
    assert!(count(&pixmap, (0xd1, 0x45, 0x3b)) > 50);
}

#[test]
fn labels_are_cut_to_their_column_and_escaped() {
    let long = "a".repeat(200);
    let svg = draw(&report(json!({
        "ok": true, "out": {},
        "groups": [{"name": long, "status": "ran", "parallel": false, "started_ms": 0,
                    "duration_ms": 0, "out": {}, "items": [item("x&y\"<z>", "ok", 0, 0)]}]
    })));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let labels = labels(&doc);
    assert!(labels[0].ends_with('…') && labels[0].chars().count() < 60);
    assert_eq!(labels[1], "1 x&y\"<z>");
}

#[test]
fn noncharacters_in_an_error_keep_the_svg_well_formed() {
    let svg = draw(&report(json!({
        "ok": false, "out": {},
        "groups": [{"name": "g\u{fffe}", "status": "failed", "parallel": false, "started_ms": 0,
                    "duration_ms": 5, "out": {},
                    "items": [{"tool": "cmd_run", "status": "failed", "started_ms": 0,
                               "duration_ms": 5,
                               "error": {"reason": "failed",
                                         "detail": "stderr: \u{ffff}\u{fffe}\u{1}"}}]}]
    })));
    roxmltree::Document::parse(&svg).unwrap();
    assert!(!svg.contains(['\u{fffe}', '\u{ffff}', '\u{1}']));
}

#[test]
fn times_near_the_end_of_u64_end_the_axis() {
    let last = u64::MAX - 3;
    let svg = draw(&report(json!({
        "ok": true, "out": {},
        "groups": [{"name": "g", "status": "ran", "parallel": false, "started_ms": 0,
                    "duration_ms": last, "out": {}, "items": [item("echo", "ok", 0, last)]}]
    })));
    roxmltree::Document::parse(&svg).unwrap();
}

#[test]
fn an_empty_run_is_a_picture_too() {
    let svg = draw(&report(json!({"ok": false, "out": {}, "groups": [],
        "error": {"reason": "type", "detail": "bad arguments"}})));
    roxmltree::Document::parse(&svg).unwrap();
    pixels(&svg, "empty");
}

#[test]
fn a_report_is_read_from_what_saves_one() {
    let report = serde_json::to_string(&small()).unwrap();
    // `seqc run --format json`: the sequence's own lines, then the report.
    let printed = format!("hello\nworld\n{report}\n");
    assert_eq!(read_report(&printed).unwrap(), small());
    // A `seq_run` result, alone or in its JSON-RPC response.
    let result = format!(r#"{{"content": [], "structuredContent": {report}}}"#);
    assert_eq!(read_report(&result).unwrap(), small());
    let response = format!(r#"{{"jsonrpc": "2.0", "id": 3, "result": {result}}}"#);
    assert_eq!(read_report(&response).unwrap(), small());
    let error = read_report(r#"{"rows": []}"#).unwrap_err();
    assert!(error.contains("not a run report"), "{error}");
    assert!(read_report("nothing").unwrap_err().starts_with("not JSON"));
}

#[test]
fn each_elements_are_rows_under_their_item() {
    let chart = layout::chart(&looping(5, 5));
    let labels: Vec<&str> = chart.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "per file",
            "1 files_read ×5",
            "[0]",
            "[1]",
            "[2]",
            "[3]",
            "[4]"
        ]
    );
    assert!(
        chart.rows[1]
            .detail
            .contains("each over 5 elements: 4 ok, 1 failed")
    );
    let failed = &chart.rows[5];
    assert_eq!(failed.kind, Kind::Item(ItemStatus::Failed));
    assert!(
        failed.detail.contains("1 retry") && failed.detail.contains("exit status 1"),
        "{}",
        failed.detail
    );
    // The item is on the slowest path, and so is the element it waited for.
    assert!(chart.rows[1].critical);
    assert_eq!(chart.rows.iter().filter(|r| r.critical).count(), 2);
    let pixmap = pixels(&draw(&looping(5, 5)), "each");
    assert!(
        count(&pixmap, (0xd1, 0x45, 0x3b)) > 20,
        "the failed element"
    );
}

#[test]
fn many_elements_are_the_telling_ones_and_an_aggregate() {
    let chart = layout::chart(&looping(1000, 100));
    let elements = chart.rows.iter().filter(|r| r.depth == 2).count();
    assert_eq!(elements, SHOWN_WHEN_AGGREGATED + 1, "shown, then the rest");
    let last = chart.rows.last().unwrap();
    assert_eq!(last.kind, Kind::Aggregate);
    assert!(
        last.label.starts_with("88 more elements (")
            && last.label.ends_with("900 more not reported"),
        "{}",
        last.label
    );
    roxmltree::Document::parse(&draw(&looping(1000, 100))).unwrap();
}
