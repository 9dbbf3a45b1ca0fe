//! Every mistake in one pass: each file of `tests/onepass/` holds two to five independent
//! mistakes at different levels (file, group, item, condition, call graph), and one check must
//! report all of them. `NAME.codes` lists the codes expected, one a line, in the order reported;
//! the snapshot holds each diagnostic with the bytes it underlines.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use seq_catalog::Catalog;
use seq_check::{Source, check};
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/onepass");
    common::json_files(&dir)
}

#[test]
fn every_independent_mistake_is_reported_in_one_check() {
    let catalog = Catalog::builtin();
    let files = files();
    assert!(files.len() >= 5, "the corpus is missing");
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = std::fs::read_to_string(path.with_extension("codes")).unwrap();
        let expected: Vec<&str> = expected.lines().filter(|l| !l.is_empty()).collect();
        assert!(
            (2..=8).contains(&expected.len()),
            "{name}: a corpus file holds several mistakes"
        );
        let result = check(&[Source::new(&name, text.as_str())], &catalog);
        let found = &result.files[0].diagnostics;
        let codes: Vec<&str> = found.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, expected, "{name}");
        let mut out = String::new();
        for d in found {
            let underlined = text.get(d.span.range()).unwrap_or("<not a char boundary>");
            writeln!(out, "{} {:?}: {}", d.code, underlined, d.message).unwrap();
        }
        insta::assert_snapshot!(name.as_str(), out);
    }
}
