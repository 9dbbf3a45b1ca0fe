//! The repository's own examples (`examples/*.json`, checked together as one batch) are clean:
//! no rule fires on them, not even a warning.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use seq_catalog::Catalog;
use seq_check::{Source, check};
use std::path::Path;

#[test]
fn examples_check_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let paths = common::json_files(&dir);
    assert!(!paths.is_empty(), "no examples in {}", dir.display());
    let sources: Vec<Source> = paths
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            Source::new(name, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let result = check(&sources, &Catalog::builtin());
    for file in &result.files {
        assert!(
            file.diagnostics.is_empty(),
            "{}: {:#?}",
            file.path,
            file.diagnostics
        );
    }
}
