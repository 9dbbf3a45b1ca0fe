//! Machine-applicable fixes keep the meaning the author evidently had: `tests/fix_meaning/`
//! holds files with mistakes, `NAME.json`, each beside the file its author meant,
//! `NAME.intended.json`. Fixing `NAME.json` as `seqc check --fix` does (machine-applicable fixes
//! only, to a fixed point) must give a sequence equal to the intended one but for spans, and one
//! that checks with only the codes `NAME.remains` lists (one a line; none when the file is
//! absent): the independent mistakes no fix may touch. A file without an intended one is a
//! mistake that has no machine-applicable fix: fixing must leave it as it is.
//!
//! Every code that carries a machine-applicable fix anywhere the tests look (the rule fixtures,
//! the one-pass corpus, the explanations' examples, these files) must have a pair here in which
//! a fix of that code is applied, so that a new machine-applicable fix cannot come without one.
//! The snapshot of each file lists the fixes applied and what remains.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::Catalog;
use seq_check::{Check, Fixes, Source, check, fix_all};
use seq_syntax::Code;
use seq_syntax::ast::Sequence;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The `*.json` files under `dir`, at any depth, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The broken files of the pairs: every `*.json` of `tests/fix_meaning/` but the intended ones.
fn broken_files() -> Vec<PathBuf> {
    json_files(&tests_dir().join("fix_meaning"))
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".intended.json"))
        .collect()
}

fn read(path: &Path) -> Source {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    Source::new(name, std::fs::read_to_string(path).unwrap())
}

/// `path` with its `.json` replaced by `suffix`.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let stem = path.file_stem().unwrap().to_string_lossy();
    path.with_file_name(format!("{stem}{suffix}"))
}

/// The sequence as data without its spans: what it means, not where it was written.
fn meaning(sequence: Option<&Sequence>) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|key, _| key != "span" && !key.ends_with("_span"));
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    let mut value = serde_json::to_value(sequence).unwrap();
    strip(&mut value);
    value
}

fn codes(result: &Check) -> Vec<Code> {
    result.files[0].diagnostics.iter().map(|d| d.code).collect()
}

/// The codes whose diagnostics carry a machine-applicable fix in `sources`, first check or any
/// pass of the fixing.
fn machine_fixed_codes(sources: &[Source], catalog: &Catalog) -> BTreeSet<Code> {
    let mut found: BTreeSet<Code> = check(sources, catalog)
        .files
        .iter()
        .flat_map(|f| &f.diagnostics)
        .filter(|d| d.fix.as_ref().is_some_and(|f| f.is_machine_applicable()))
        .map(|d| d.code)
        .collect();
    let fixing = fix_all(sources, &[], catalog, Fixes::Safe);
    found.extend(fixing.files.iter().flat_map(|f| &f.fixes).map(|f| f.code));
    found
}

/// The body of the first ```json block under `## Example` of an explanation.
fn example(markdown: &str) -> Option<String> {
    let start = markdown.find("## Example")?;
    let body = markdown[start..].split("```json\n").nth(1)?;
    Some(body.split("\n```").next()?.to_owned())
}

/// Every code with a machine-applicable fix in a sequence the tests hold.
fn codes_with_machine_fixes(catalog: &Catalog) -> BTreeSet<Code> {
    let mut found = BTreeSet::new();
    for dir in ["fixtures", "onepass", "fix_meaning"] {
        for path in json_files(&tests_dir().join(dir)) {
            found.extend(machine_fixed_codes(&[read(&path)], catalog));
        }
    }
    for &code in Code::ALL {
        // Catalog files' codes show catalogs, not sequences.
        let catalogs = code.as_str().get(1..3) == Some("08");
        if let (false, Some(text)) = (catalogs, example(code.explanation())) {
            found.extend(machine_fixed_codes(
                &[Source::new("example.json", text)],
                catalog,
            ));
        }
    }
    found
}

#[test]
fn machine_applicable_fixes_give_the_intended_sequence() {
    let catalog = Catalog::builtin();
    let files = broken_files();
    assert!(files.len() >= 10, "the pairs are missing");
    let mut covered: BTreeSet<Code> = BTreeSet::new();
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let source = read(&path);
        let remains: Vec<Code> = std::fs::read_to_string(beside(&path, ".remains"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| Code::parse(l).unwrap_or_else(|| panic!("{name}: {l} is not a code")))
            .collect();
        let fixing = fix_all(std::slice::from_ref(&source), &[], &catalog, Fixes::Safe);
        assert!(fixing.settled, "{name}: the fixes do not settle");
        let fixed = &fixing.files[0];
        let mut out = String::new();
        for fix in &fixed.fixes {
            writeln!(out, "pass {} {}: {}", fix.pass, fix.code, fix.title).unwrap();
            covered.insert(fix.code);
        }
        let after = codes(&fixing.check);
        assert_eq!(after, remains, "{name}: what remains\n{}", fixed.text);
        for code in &remains {
            writeln!(out, "remains {code}").unwrap();
        }
        let intended = beside(&path, ".intended.json");
        if intended.exists() {
            assert!(fixed.changed(), "{name}: nothing was fixed");
            let intended = read(&intended);
            let meant = check(std::slice::from_ref(&intended), &catalog);
            assert_eq!(
                codes(&meant),
                remains,
                "{name}: the intended file has other mistakes"
            );
            assert_eq!(
                meaning(fixing.check.files[0].sequence.as_ref()),
                meaning(meant.files[0].sequence.as_ref()),
                "{name}: the fixed sequence means something else than the intended one\n{}",
                fixed.text
            );
        } else {
            assert!(
                !fixed.changed(),
                "{name}: a fix was applied where none should be:\n{}",
                fixed.text
            );
            out.push_str("no machine-applicable fix\n");
        }
        insta::assert_snapshot!(name.as_str(), out);
    }
    let wanted = codes_with_machine_fixes(&catalog);
    let missing: Vec<&str> = wanted.difference(&covered).map(|c| c.as_str()).collect();
    assert!(
        missing.is_empty(),
        "codes with a machine-applicable fix but no pair in tests/fix_meaning/ \
         (NAME.json and NAME.intended.json): {missing:?}"
    );
}
