//! The checker never panics, whatever the input: every fixture, cut short or with one byte
//! removed at every position, is checked to the end (the front end recovers; the rules must cope
//! with whatever AST it builds), and every diagnostic it makes keeps the front end's span promise
//! (`seq_syntax::invariants`): spans, labels and fixes' edits inside the file, on character
//! boundaries, edits not overlapping.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::Catalog;
use seq_check::{Source, check};
use seq_syntax::invariants::span_violations;
use std::path::{Path, PathBuf};

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

#[test]
fn damaged_fixtures_never_panic() {
    let mut files = Vec::new();
    json_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        &mut files,
    );
    files.sort();
    let catalog = Catalog::builtin();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let cuts = text.char_indices().map(|(i, _)| i);
        for at in cuts.step_by(4) {
            let mut removed = text.clone();
            removed.remove(at);
            let truncated = &text[..at];
            let sources = [
                Source::new("removed.json", removed),
                Source::new("truncated.json", truncated),
            ];
            // Checked together, so that calls between damaged files resolve too.
            let result = check(&sources, &catalog);
            assert_eq!(result.files.len(), 2, "{}", path.display());
            for (source, file) in sources.iter().zip(&result.files) {
                let broken = span_violations(&source.text, &file.diagnostics);
                assert!(broken.is_empty(), "{}: {broken:#?}", path.display());
            }
        }
    }
}
