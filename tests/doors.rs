//! One corpus of broken files through every door that checks a sequence — `seqc check`, `seqc
//! create`, `seqc run FILE`, `seq_create` and the language server's diagnostics — and the same
//! diagnostics out of each: they are adapters over one admission (`seq_check::admit`).
//!
//! The corpus: `tests/fixtures/doors/*.json` (syntax errors beside rule errors, rule errors
//! alone) and `examples/broken/*.json.broken`. Every door is compared with `seqc check
//! --format json` on the same file, with no stored sequences.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::{PACKAGE, command, scratch, status, stderr, stdout};
use seq_catalog::Catalog;
use seq_catalog::SEQ_CREATE;
use seq_service::{SeqConfig, StorageTools};
use seq_store::storage::Storage;
use seq_syntax::LineIndex;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

/// One diagnostic as every door can say it: severity, code, 1-based line and column, message.
type Said = (String, String, u32, u32, String);

fn corpus() -> Vec<String> {
    let dir = Path::new(PACKAGE).join("tests/fixtures/doors");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .map(|name| format!("tests/fixtures/doors/{name}"))
        .collect();
    files.sort();
    // The two `cycle-*` examples are wrong only together (each alone calls a sequence that
    // does not exist yet: a warning); every other one is broken on its own.
    files.extend(
        common::broken_examples()
            .into_iter()
            .filter(|f| !f.contains("/cycle-")),
    );
    assert!(files.len() >= 9, "the corpus went missing: {files:?}");
    files
}

fn from_json(report: &Value) -> Vec<Said> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["severity"].as_str().unwrap().to_owned(),
                d["code"].as_str().unwrap().to_owned(),
                u32::try_from(d["line"].as_u64().unwrap()).unwrap(),
                u32::try_from(d["column"].as_u64().unwrap()).unwrap(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `seqc` with `args`, the data directory `data`, and `file` last.
fn seqc_on(args: &[&str], data: &Path, file: &str) -> std::process::Output {
    command()
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .arg(file)
        .output()
        .unwrap()
}

/// `seqc check --format json FILE`, the reference every door is held to.
fn check_json(file: &str, data: &Path) -> Value {
    let output = seqc_on(&["check", "--format", "json"], data, file);
    assert_eq!(status(&output), 1, "{file}: {}", stderr(&output));
    serde_json::from_str(stdout(&output)).unwrap()
}

#[test]
fn seqc_run_file_reports_what_seqc_check_reports() {
    let data = scratch("doors_run");
    for file in corpus() {
        let checked = check_json(&file, &data);
        let output = seqc_on(&["run", "--format", "json"], &data, &file);
        assert_eq!(status(&output), 1, "{file}: {}", stderr(&output));
        let ran: Value = serde_json::from_str(stdout(&output)).unwrap();
        assert_eq!(ran, checked, "{file}");
    }
}

#[test]
fn seqc_create_reports_what_seqc_check_reports() {
    let data = scratch("doors_create");
    for file in corpus() {
        let check = seqc_on(&["check", "--color", "never"], &data, &file);
        let create = seqc_on(&["create"], &data, &file);
        assert_eq!(status(&create), 1, "{file}: {}", stderr(&create));
        // The same rendering, totals included; `create` then says why it stored nothing.
        let rendered = stdout(&check).trim_end();
        let (shown, last) = stderr(&create).trim_end().rsplit_once('\n').unwrap();
        assert_eq!(shown.trim_end(), rendered, "{file}");
        assert_eq!(
            last,
            format!("seqc: {file} was not stored: it has errors"),
            "{file}"
        );
    }
}

#[test]
fn seq_create_reports_what_seqc_check_reports() {
    let data = scratch("doors_seq_create");
    let tools = StorageTools::new(SeqConfig::new(Storage::new(&data), PACKAGE));
    for file in corpus() {
        let expected = from_json(&check_json(&file, &data));
        let outcome = tools.call_blocking(SEQ_CREATE, &json!({"file": file}), None);
        assert!(outcome.result.is_err(), "{file}");
        let said: Vec<Said> = outcome
            .diagnostics
            .iter()
            .map(|f| {
                (
                    f.severity.as_str().to_owned(),
                    f.code.to_owned(),
                    f.line.unwrap(),
                    f.column.unwrap(),
                    f.message.clone(),
                )
            })
            .collect();
        assert_eq!(said, expected, "{file}");
    }
}

#[test]
fn the_language_server_reports_what_seqc_check_reports() {
    let data = scratch("doors_lsp");
    for file in corpus() {
        let expected = from_json(&check_json(&file, &data));
        let text = std::fs::read_to_string(Path::new(PACKAGE).join(&file)).unwrap();
        let analysis = seq_lsp::ide::Analysis::new(
            vec![(file.clone(), text.clone())],
            Arc::new(Catalog::builtin()),
        );
        let id = analysis.files().next().unwrap();
        let index = LineIndex::new(&text);
        let said: Vec<Said> = analysis
            .diagnostics(id)
            .iter()
            .map(|d| {
                let at = index.line_col(&text, d.span.start);
                (
                    d.severity.as_str().to_owned(),
                    d.code.as_str().to_owned(),
                    at.line,
                    at.column,
                    d.message.clone(),
                )
            })
            .collect();
        assert_eq!(said, expected, "{file}");
    }
}
