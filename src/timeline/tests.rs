//! The timeline: its rows (layout), its SVG's structure (read back as XML), the SVG of a small
//! report (a snapshot), and the picture a viewer would show (rendered to pixels with resvg).
//! With `SEQC_TIMELINE_PNGS=DIR` the pictures are also written there, to be looked at.

use super::layout::{self, Kind, MAX_GROUP_BANDS, MAX_ITEM_ROWS, SHOWN_WHEN_AGGREGATED};
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

/// Every label's text, a wrapped one's lines joined.
fn labels(doc: &roxmltree::Document<'_>) -> Vec<String> {
    with_class(doc, "label")
        .iter()
        .map(|n| {
            n.descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect()
        })
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
    assert!(labels[0].ends_with('…') && labels[0].chars().count() < 200);
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
    let failed = (0..100).filter(|i| i % 7 == 3).count();
    assert!(failed > SHOWN_WHEN_AGGREGATED);
    assert_eq!(
        elements,
        failed + 2,
        "every failure, the one on the slowest path, then the rest"
    );
    let last = chart.rows.last().unwrap();
    assert_eq!(last.kind, Kind::Aggregate);
    assert!(
        last.label.starts_with("85 more elements (")
            && last
                .label
                .ends_with("900 more not reported (771 ok, 129 failed)"),
        "{}",
        last.label
    );
    roxmltree::Document::parse(&draw(&looping(1000, 100))).unwrap();
}

/// 200 serial groups of one item each, five of them failed (past the bound on bands but the
/// first), and one `each` item over 1,000 elements of which six failed, three past the first
/// 100 (reported after them with their index, as the engine reports them).
fn large() -> RunReport {
    let failed_elements = [3u64, 40, 99, 150, 480, 999];
    let mut elements: Vec<Value> = (0..100u64)
        .map(|i| {
            if failed_elements.contains(&i) {
                json!({"status": "failed", "started_ms": 640, "duration_ms": 2,
                       "error": {"reason": "failed", "detail": format!("element {i} broke")}})
            } else {
                json!({"status": "ok", "started_ms": 640, "duration_ms": 1 + i % 5})
            }
        })
        .collect();
    elements.extend(failed_elements.iter().filter(|&&i| i >= 100).map(|i| {
        json!({"index": i, "status": "failed", "started_ms": 641, "duration_ms": 2,
               "error": {"reason": "failed", "detail": format!("element {i} broke")}})
    }));
    let groups: Vec<Value> = (0..200u64)
        .map(|g| {
            let name = format!("group {g}");
            let at = g * 10;
            if g == 64 {
                json!({"name": name, "status": "partial", "parallel": true, "started_ms": at,
                       "duration_ms": 9, "out": {},
                       "items": [{"tool": "files_read", "status": "ok", "started_ms": at,
                                  "duration_ms": 9,
                                  "each": {"count": 1000, "ok": 994, "failed": 6,
                                           "elements": elements, "elements_omitted": 897}}]})
            } else if g % 40 == 25 {
                json!({"name": name, "status": "failed", "parallel": false, "started_ms": at,
                       "duration_ms": 9, "out": {},
                       "error": {"reason": "failed", "detail": format!("exit status {g}")},
                       "items": [{"tool": "cmd_run", "status": "failed", "started_ms": at,
                                  "duration_ms": 9,
                                  "error": {"reason": "failed", "detail": format!("exit status {g}")}}]})
            } else {
                json!({"name": name, "status": "ran", "parallel": false, "started_ms": at,
                       "duration_ms": 9, "out": {}, "items": [item("echo", "ok", at, 9)]})
            }
        })
        .collect();
    report(json!({"ok": false, "out": {}, "groups": groups}))
}

#[test]
fn a_large_run_draws_every_failure_and_says_what_it_folded() {
    let chart = layout::chart(&large());
    let failed_groups: Vec<&str> = chart
        .rows
        .iter()
        .filter(|r| r.depth == 0 && r.kind != Kind::Aggregate)
        .filter(|r| !matches!(r.kind, Kind::Group(seq_exec::engine::GroupStatus::Ran)))
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(
        failed_groups,
        [
            "group 25",
            "group 64",
            "group 65",
            "group 105",
            "group 145",
            "group 185"
        ]
    );
    // The folds between them count what they hold.
    let folds: Vec<&str> = chart
        .rows
        .iter()
        .filter(|r| r.depth == 0 && r.kind == Kind::Aggregate)
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(
        folds,
        [
            "4 more groups (4 ran)",
            "39 more groups (39 ran)",
            "39 more groups (39 ran)",
            "39 more groups (39 ran)",
            "14 more groups (14 ran)"
        ]
    );
    assert_eq!(
        chart.rows.iter().filter(|r| r.depth == 0).count(),
        MAX_GROUP_BANDS + 5 + folds.len()
    );
    // Every failed element, by its index, the three past the first 100 too.
    let elements: Vec<&str> = chart
        .rows
        .iter()
        .filter(|r| r.kind == Kind::Item(ItemStatus::Failed) && r.depth == 2)
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(elements, ["[3]", "[40]", "[99]", "[150]", "[480]", "[999]"]);
    let fold = chart
        .rows
        .iter()
        .find(|r| r.depth == 2 && r.kind == Kind::Aggregate)
        .unwrap();
    assert!(
        fold.label
            .ends_with("91 more elements (91 ok) · 897 more not reported (897 ok)"),
        "{}",
        fold.label
    );

    let svg = draw(&large());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let reasons: Vec<String> = with_class(&doc, "reason")
        .iter()
        .filter_map(|n| n.text().map(str::to_owned))
        .collect();
    for g in [25, 65, 105, 145, 185] {
        assert!(
            reasons
                .iter()
                .any(|r| r == &format!("failed: exit status {g}")),
            "group {g}: {reasons:?}"
        );
    }
    assert!(reasons.iter().any(|r| r == "failed: element 999 broke"));
    // Red in the rows of every failed group (its bar and its item's), as a viewer shows it.
    let pixmap = pixels(&svg, "large");
    let groups = with_class(&doc, "failed");
    let groups = groups
        .iter()
        .filter(|row| row.attribute("data-depth") == Some("0"));
    assert_eq!(groups.clone().count(), 5);
    for row in groups {
        let title = row
            .children()
            .find(|n| n.has_tag_name("title"))
            .and_then(|t| t.text())
            .unwrap();
        let y: f64 = row
            .children()
            .find(|n| n.attribute("class") == Some("bar"))
            .and_then(|bar| bar.attribute("y"))
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            red_in_rows(&pixmap, y as u32, y as u32 + 36) > 20,
            "{title}"
        );
    }
}

/// How many pixels of the rows from `top` to `bottom` are near the failed colour.
fn red_in_rows(pixmap: &resvg::tiny_skia::Pixmap, top: u32, bottom: u32) -> usize {
    let width = pixmap.width();
    (top..bottom.min(pixmap.height()))
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .filter_map(|(x, y)| pixmap.pixel(x, y))
        .filter(|p| p.red() > 180 && p.green() < 100 && p.blue() < 90 && p.alpha() == 255)
        .count()
}

#[test]
fn the_peak_in_flight_counts_an_end_and_a_start_at_one_instant_once() {
    // Waves of 40 side by side, each wave starting as the last ends: never more than 40.
    let items: Vec<Value> = (0..400u64)
        .map(|i| item("sleep", "ok", (i / 40) * 100, 100))
        .collect();
    let chart = layout::chart(&report(json!({
        "ok": true, "out": {},
        "groups": [{"name": "fan", "status": "ran", "parallel": true, "started_ms": 0,
                    "duration_ms": 1000, "out": {}, "items": items}]
    })));
    let aggregate = chart
        .rows
        .iter()
        .find(|r| r.kind == Kind::Aggregate)
        .unwrap();
    assert!(
        aggregate.detail.ends_with("at most 40 in flight"),
        "{}",
        aggregate.detail
    );
    assert_eq!(aggregate.profile.iter().copied().max(), Some(40));
}

#[test]
fn a_long_label_wraps_whole() {
    let name = "collect the release notes from every repository/of the organisation and \
                publish_them_to_the_changelog";
    let svg = draw(&report(json!({
        "ok": true, "out": {},
        "groups": [{"name": name, "status": "ran", "parallel": false, "started_ms": 0,
                    "duration_ms": 5, "out": {}, "items": [item("echo", "ok", 0, 5)]}]
    })));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let label = with_class(&doc, "label")[0];
    let lines: Vec<&str> = label
        .children()
        .filter(|n| n.has_tag_name("tspan"))
        .filter_map(|n| n.text())
        .collect();
    assert!(lines.len() > 1, "{svg}");
    assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
    assert_eq!(lines.concat().replace(' ', ""), name.replace(' ', ""));
}
