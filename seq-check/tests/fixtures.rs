//! Data-driven tests of every code the front end and the checker's rules emit.
//! `tests/fixtures/CODE/` holds files named `fail_*.json` (which must raise CODE) and
//! `pass_*.json` (which must not). A directory `fail_*/` or `pass_*/` is a batch: its files are
//! checked together. The call graph's codes (E06xx, W06xx) have their own harness
//! (tests/graph.rs); catalog files' codes (E08xx, W08xx) are not about sequences.
//!
//! `tests/first_attempts/` holds sequences as agents write them on a first try, several
//! mistakes each: their diagnostics are snapshotted the same way, then `fix_all`'s safe fixes
//! (those of `seqc check --fix`) are applied: the result must check clean, or each error left
//! must carry a hint a user can follow (no citation of a design text).
//!
//! Each fixture's diagnostics are snapshotted compactly, with the culprit's bytes sliced from the
//! file, so a reviewer sees exactly what is underlined. Each machine fix is applied and the
//! result re-checked: it must still parse, and the diagnostic must be gone.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use seq_catalog::Catalog;
use seq_check::{Check, Source, check};
use seq_syntax::diagnostic::Applicability;
use seq_syntax::{Code, Diagnostic, Span};
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixture's files: itself, or the `*.json` files of a batch directory, sorted.
fn sources(path: &Path) -> Vec<Source> {
    let files = if path.is_dir() {
        common::json_files(path)
    } else {
        vec![path.to_owned()]
    };
    files
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            Source::new(name, std::fs::read_to_string(f).unwrap())
        })
        .collect()
}

fn slice(text: &str, span: Span) -> &str {
    text.get(span.range()).unwrap_or("<not a char boundary>")
}

fn render(sources: &[Source], result: &Check) -> String {
    let mut out = String::new();
    for (source, file) in sources.iter().zip(&result.files) {
        if sources.len() > 1 {
            writeln!(out, "== {}", source.path).unwrap();
        }
        for d in &file.diagnostics {
            render_one(&mut out, &source.text, d);
        }
    }
    out
}

fn render_one(out: &mut String, text: &str, d: &Diagnostic) {
    let s = d.span;
    writeln!(
        out,
        "{} {} {}..{} {:?}: {}",
        d.code,
        d.severity.as_str(),
        s.start,
        s.end,
        slice(text, s),
        d.message
    )
    .unwrap();
    for label in &d.labels {
        let l = label.span;
        writeln!(
            out,
            "  label {}..{} {:?}: {}",
            l.start,
            l.end,
            slice(text, l),
            label.message
        )
        .unwrap();
    }
    if let Some(help) = &d.help {
        writeln!(out, "  help: {help}").unwrap();
    }
    if let Some(fix) = &d.fix {
        // Only fixes that are not machine-applicable say so, in brackets.
        match fix.applicability {
            Applicability::MachineApplicable => writeln!(out, "  fix: {}", fix.title),
            other @ (Applicability::MaybeIncorrect | Applicability::HasPlaceholders) => {
                writeln!(out, "  fix [{}]: {}", other.as_str(), fix.title)
            }
        }
        .unwrap();
        for edit in &fix.edits {
            let e = edit.span;
            writeln!(
                out,
                "    {}..{} {:?} -> {:?}",
                e.start,
                e.end,
                slice(text, e),
                edit.text
            )
            .unwrap();
        }
    }
}

fn apply(text: &str, fix: &seq_syntax::diagnostic::Fix) -> String {
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut fixed = text.to_owned();
    for edit in edits {
        fixed.replace_range(edit.span.range(), &edit.text);
    }
    fixed
}

/// Applies each fix of `code` in `file` alone and re-checks the batch: the result must be free
/// of syntax errors and hold one diagnostic of `code` fewer.
fn check_fixes(name: &str, code: Code, sources: &[Source], result: &Check, catalog: &Catalog) {
    for (i, file) in result.files.iter().enumerate() {
        let count = |c: &Check| {
            c.files[i]
                .diagnostics
                .iter()
                .filter(|d| d.code == code)
                .count()
        };
        for d in file.diagnostics.iter().filter(|d| d.code == code) {
            let Some(fix) = &d.fix else { continue };
            let mut fixed = sources.to_vec();
            fixed[i].text = apply(&sources[i].text, fix);
            let parse = seq_syntax::parse(&fixed[i].text);
            // A syntax error's fix may leave others of its code (a second trailing comma).
            let breaks = parse
                .diagnostics
                .iter()
                .any(|d| d.is_error() && !(front_end(code) && d.code == code));
            assert!(
                !breaks,
                "{name}: fix `{}` breaks the file:\n{}\n{:#?}",
                fix.title, fixed[i].text, parse.diagnostics
            );
            let again = check(&fixed, catalog);
            assert!(
                count(&again) < count(result),
                "{name}: fix `{}` leaves {code} in place:\n{}",
                fix.title,
                fixed[i].text
            );
            if fix.is_machine_applicable() {
                assert_only_fewer(name, fix, &file.diagnostics, &again.files[i].diagnostics);
            }
        }
    }
}

/// A machine-applicable fix brings nothing new: what remains after it is a part of what was
/// there before (by code), the file checks clean or with only the other mistakes.
fn assert_only_fewer(
    name: &str,
    fix: &seq_syntax::diagnostic::Fix,
    before: &[Diagnostic],
    after: &[Diagnostic],
) {
    let mut left: Vec<Code> = before.iter().map(|d| d.code).collect();
    for d in after {
        let Some(at) = left.iter().position(|&c| c == d.code) else {
            panic!(
                "{name}: machine-applicable fix `{}` brings {} {:?}",
                fix.title, d.code, d.message
            );
        };
        left.swap_remove(at);
    }
}

/// Whether `code` is the front end's (E00xx–E04xx): its fixtures are about syntax errors.
fn front_end(code: Code) -> bool {
    code.as_str() < "E0500" && code.as_str().starts_with('E')
}

/// The codes this harness covers. E0007 needs bytes that are not UTF-8, and fixtures are text
/// (seq-syntax's own tests cover it). Of the E09xx codes, only E0902 is the checker's: E0901
/// needs a caller's policy (seq-exec's store tests).
fn checker_codes() -> Vec<Code> {
    Code::ALL
        .iter()
        .copied()
        .filter(|&c| {
            c != Code::NotUtf8
                && (front_end(c)
                    || c == Code::ManagementStep
                    || ["E05", "W05", "E07", "W07", "E10"]
                        .iter()
                        .any(|p| c.as_str().starts_with(p)))
        })
        .collect()
}

#[test]
fn fixtures() {
    let catalog = Catalog::builtin();
    let mut seen = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let code_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let code = Code::parse(&code_name).unwrap_or_else(|| panic!("{code_name} is not a code"));
        // The call graph's codes have their own harness (tests/graph.rs).
        if !checker_codes().contains(&code) {
            continue;
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let name = format!("{code_name}__{stem}");
            let sources = sources(&path);
            let result = check(&sources, &catalog);
            // A rule's fixture tests the rule, not the front end: it must parse cleanly.
            let syntax: Vec<_> = result
                .files
                .iter()
                .flat_map(|f| &f.diagnostics)
                .filter(|d| !front_end(code) && front_end(d.code))
                .collect();
            assert!(
                syntax.is_empty(),
                "{name}: fixtures must parse cleanly: {syntax:#?}"
            );
            let hits = result
                .files
                .iter()
                .flat_map(|f| &f.diagnostics)
                .filter(|d| d.code == code)
                .count();
            if stem.starts_with("fail_") {
                assert!(
                    hits > 0,
                    "{name}: expected {code}\n{}",
                    render(&sources, &result)
                );
                seen.push((code, true));
            } else if stem.starts_with("pass_") {
                assert_eq!(
                    hits,
                    0,
                    "{name}: unexpected {code}\n{}",
                    render(&sources, &result)
                );
                seen.push((code, false));
            } else {
                panic!("{name}: fixtures are named fail_* or pass_*");
            }
            check_fixes(&name, code, &sources, &result, &catalog);
            insta::assert_snapshot!(name, render(&sources, &result));
        }
    }
    for code in checker_codes() {
        // A code no longer emitted keeps only `pass_` fixtures: what it once rejected.
        let retired = matches!(code, Code::UnsupportedOperator | Code::ShellReparsed);
        for fail in [!retired, false] {
            assert!(
                seen.contains(&(code, fail)),
                "{code} has no {} fixture",
                if fail { "fail_" } else { "pass_" }
            );
        }
    }
}

/// Whether a hint cites what no user can read: a section sign or a decision (`D-` and a digit).
fn cites(text: &str) -> bool {
    text.contains('§')
        || text
            .match_indices("D-")
            .any(|(i, _)| text[i + 2..].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn first_attempts_are_fixed_or_each_error_says_what_to_do() {
    let catalog = Catalog::builtin();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/first_attempts");
    let files = common::json_files(&dir);
    assert!(files.len() >= 30, "the corpus of first attempts is missing");
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let sources = sources(&path);
        let result = check(&sources, &catalog);
        assert!(
            !result.files[0].diagnostics.is_empty(),
            "{name}: a first attempt has a mistake to find"
        );
        let mut out = render(&sources, &result);
        let fixing = seq_check::fix_all(&sources, &[], &catalog, seq_check::Fixes::Safe);
        let fixed = &fixing.files[0];
        for fix in &fixed.fixes {
            writeln!(out, "fixed: {} {}", fix.code, fix.title).unwrap();
        }
        // Warnings too: a sequence accepted with one still does what its author did not mean.
        let left = &fixing.check.files[0].diagnostics;
        if left.iter().any(Diagnostic::is_error) {
            writeln!(out, "after the safe fixes:").unwrap();
        } else {
            writeln!(out, "after the safe fixes: accepted").unwrap();
        }
        for d in left {
            let help = d.help.as_deref().unwrap_or_default();
            assert!(
                !help.trim().is_empty(),
                "{name}: {} is left after the safe fixes without a hint: {}",
                d.code,
                d.message
            );
            assert!(
                !cites(help) && !cites(&d.message),
                "{name}: {} cites the design: {} / {help}",
                d.code,
                d.message
            );
            writeln!(out, "  {} {}\n    help: {help}", d.code, d.message).unwrap();
        }
        insta::assert_snapshot!(format!("first_attempt__{name}"), out);
    }
}
