//! The file set (`seq_check::file_set`) over a fixture directory, `tests/file_set/`: which files
//! `seqc check DIR` and the language server both take for sequence files.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_check::file_set::{is_candidate, is_sequence_document, walk};
use std::path::Path;

#[test]
fn the_walk_skips_dependencies_build_output_hidden_directories_and_the_catalog() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/file_set");
    let found = walk(&root);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    let files: Vec<String> = found
        .files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    // Not `node_modules/`, `target/`, `.hidden/`, `notes/readme.txt` (not `*.json`) nor the
    // catalog at the top; a `seq-catalog.json` below the top is an ordinary file name.
    assert_eq!(
        files,
        [
            "a.json",
            "nested/b.json",
            "nested/being_typed.json",
            "nested/deeper/c.json",
            "nested/seq-catalog.json",
            "package.json",
        ]
    );
    for file in &found.files {
        assert!(is_candidate(&root, file), "{}", file.display());
    }
    assert!(!is_candidate(&root, &root.join("node_modules/pkg/d.json")));
    assert!(!is_candidate(&root, &root.join(".hidden/f.json")));
    assert!(!is_candidate(&root, &root.join("seq-catalog.json")));
}

#[test]
fn the_content_decides_among_the_candidates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/file_set");
    let sequences: Vec<String> = walk(&root)
        .files
        .iter()
        .filter(|f| is_sequence_document(&std::fs::read_to_string(f).unwrap()))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    // `package.json` and a catalog are JSON but not sequences; a file being typed is one.
    assert_eq!(
        sequences,
        [
            "a.json",
            "nested/b.json",
            "nested/being_typed.json",
            "nested/deeper/c.json",
        ]
    );
}
