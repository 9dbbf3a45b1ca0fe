//! The call graph (E0601–E0605, `seqc graph`) and slot dataflow (W0601, W0602) over fixture
//! stores: `tests/fixtures/graph/` and `tests/fixtures/dataflow/`. A fixture is one `.json` file
//! or a directory of them, checked together as one store. A fixture named `CODE_…` must report
//! CODE; one named `ok_…` must report nothing. Every diagnostic is snapshotted with the text of
//! its culprit.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use seq_check::{Catalog, dataflow, graph};
use seq_syntax::ast::Sequence;
use seq_syntax::{Code, Diagnostic, LineIndex, Span};
use std::fmt::Write;
use std::path::{Path, PathBuf};

const CODES: [Code; 7] = [
    Code::GroupCallCycle,
    Code::SequenceCallCycle,
    Code::CallChainTooDeep,
    Code::UnsafeCallInParallelGroup,
    Code::UnsafeCallNotAcknowledged,
    Code::SlotMayBeUnset,
    Code::CallResultFieldMayBeUnset,
];

type Checker = fn(&[&Sequence], &Catalog) -> Vec<Vec<Diagnostic>>;

struct File {
    name: String,
    text: String,
}

fn fixtures(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(kind)
}

/// The files of a fixture, sorted by name.
fn load(path: &Path) -> Vec<File> {
    let mut paths: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect()
    } else {
        vec![path.to_owned()]
    };
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    paths
        .into_iter()
        .map(|p| File {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&p).unwrap(),
        })
        .collect()
}

fn parse_all(files: &[File]) -> Vec<Sequence> {
    files
        .iter()
        .map(|f| {
            let parse = seq_syntax::parse(&f.text);
            assert!(!parse.has_errors(), "{}: {:#?}", f.name, parse.diagnostics);
            parse.sequence.unwrap()
        })
        .collect()
}

fn run(files: &[File], check: Checker) -> Vec<Vec<Diagnostic>> {
    let sequences = parse_all(files);
    let refs: Vec<&Sequence> = sequences.iter().collect();
    let mut found = check(&refs, &Catalog::builtin());
    for list in &mut found {
        seq_syntax::diagnostic::sort(list);
    }
    found
}

fn position(file: &File, span: Span) -> String {
    let at = LineIndex::new(&file.text).line_col(&file.text, span.start);
    format!("{}:{}", at.line, at.column)
}

fn culprit(file: &File, span: Span) -> &str {
    file.text.get(span.range()).unwrap_or("<bad span>")
}

/// Each diagnostic with its position, the text it points at, its labels, help and fix.
fn render(files: &[File], found: &[Vec<Diagnostic>]) -> String {
    let mut text = String::new();
    for (file, diagnostics) in files.iter().zip(found) {
        for d in diagnostics {
            let _ = writeln!(
                text,
                "{}[{}] {}:{} `{}`\n  {}",
                d.severity.as_str(),
                d.code,
                file.name,
                position(file, d.span),
                culprit(file, d.span),
                d.message
            );
            for label in &d.labels {
                let _ = writeln!(
                    text,
                    "  label {} `{}`: {}",
                    position(file, label.span),
                    culprit(file, label.span),
                    label.message
                );
            }
            if let Some(help) = &d.help {
                let _ = writeln!(text, "  help: {help}");
            }
            if let Some(fix) = &d.fix {
                for edit in &fix.edits {
                    let _ = writeln!(
                        text,
                        "  fix `{}`: at {} replace `{}` with `{}`",
                        fix.title,
                        position(file, edit.span),
                        culprit(file, edit.span),
                        edit.text
                    );
                }
            }
        }
    }
    if text.is_empty() {
        text.push_str("(no diagnostics)\n");
    }
    text
}

fn expected_code(name: &str) -> Option<Code> {
    name.split('_').next().and_then(Code::parse)
}

/// Runs every fixture of `kind`, checks its name's promise and snapshots its diagnostics.
fn check_fixtures(kind: &str, check: Checker) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures(kind))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in &names {
        let files = load(&fixtures(kind).join(name));
        let found = run(&files, check);
        let all: Vec<&Diagnostic> = found.iter().flatten().collect();
        let stem = name.trim_end_matches(".json");
        match expected_code(stem) {
            Some(code) => assert!(
                all.iter().any(|d| d.code == code),
                "{name} should report {code}:\n{}",
                render(&files, &found)
            ),
            None => {
                assert!(stem.starts_with("ok_"), "{name}: a fixture is named CODE_… or ok_…");
                assert!(all.is_empty(), "{name} should be clean:\n{}", render(&files, &found));
            }
        }
        for d in &all {
            assert!(CODES.contains(&d.code), "{name}: unexpected {}", d.code);
        }
        insta::assert_snapshot!(format!("{kind}__{stem}"), render(&files, &found));
    }
    names
}

#[test]
fn graph_fixtures() {
    check_fixtures("graph", graph::check_graph);
}

#[test]
fn dataflow_fixtures() {
    check_fixtures("dataflow", dataflow::check_dataflow);
}

#[test]
fn every_code_has_a_failing_and_a_passing_fixture() {
    let mut names = Vec::new();
    for kind in ["graph", "dataflow"] {
        for entry in std::fs::read_dir(fixtures(kind)).unwrap() {
            names.push(entry.unwrap().file_name().to_string_lossy().into_owned());
        }
    }
    for code in CODES {
        let code = code.as_str();
        assert!(names.iter().any(|n| n.starts_with(&format!("{code}_"))), "no failing fixture for {code}");
        assert!(names.iter().any(|n| n.starts_with(&format!("ok_{code}_"))), "no passing fixture for {code}");
    }
}

/// A store given as (name, groups) where each group is (name, parallel, items) and items are
/// raw item JSON.
fn store(sequences: &[(&str, Vec<(&str, Vec<String>)>)]) -> Vec<File> {
    sequences
        .iter()
        .map(|(name, groups)| {
            let groups: Vec<serde_json::Value> = groups
                .iter()
                .map(|(group, items)| {
                    let tools: String = items.iter().map(|i| format!("{i} ; ")).collect();
                    serde_json::json!({ "name": group, "tools": tools.trim_end() })
                })
                .collect();
            let value = serde_json::json!({ "name": name, "groups": groups });
            File { name: format!("{name}.json"), text: serde_json::to_string_pretty(&value).unwrap() }
        })
        .collect()
}

fn call(target: &str) -> String {
    format!(r#"{{"tool":"seq_call","args":{{"target":"{target}"}}}}"#)
}

fn echo() -> String {
    r#"{"tool":"echo","args":{"value":1}}"#.to_owned()
}

fn codes(found: &[Vec<Diagnostic>]) -> Vec<Vec<&'static str>> {
    found.iter().map(|l| l.iter().map(|d| d.code.as_str()).collect()).collect()
}

/// A chain of `calls` nested `#` calls: s0 → s1 → … → s{calls}.
fn chain(calls: usize) -> Vec<File> {
    let names: Vec<String> = (0..=calls).map(|i| format!("s{i}")).collect();
    let sequences: Vec<(&str, Vec<(&str, Vec<String>)>)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let items = match names.get(i + 1) {
                Some(next) => vec![call(&format!("#{next}"))],
                None => vec![echo()],
            };
            (name.as_str(), vec![("g", items)])
        })
        .collect();
    store(&sequences)
}

#[test]
fn four_nested_calls_are_legal_and_five_are_not() {
    assert_eq!(graph::MAX_DEPTH, 4);
    let legal = run(&chain(4), graph::check_graph);
    assert!(legal.iter().all(Vec::is_empty), "{}", render(&chain(4), &legal));

    let files = chain(5);
    let too_deep = run(&files, graph::check_graph);
    // Every calling file shows the error, the last caller (s4) being the fifth call.
    let expected: Vec<Vec<&str>> = (0..6).map(|i| if i < 5 { vec!["E0603"] } else { vec![] }).collect();
    assert_eq!(codes(&too_deep), expected);
    let fifth = &too_deep[4][0];
    assert_eq!(culprit(&files[4], fifth.span), r##"\"#s5\""##);
    assert!(fifth.message.contains("call 5 of 5"), "{}", fifth.message);
    assert!(fifth.message.ends_with("#s0 → #s1 → #s2 → #s3 → #s4 → #s5"), "{}", fifth.message);
}

#[test]
fn a_longer_chain_reports_the_first_call_past_the_bound_once() {
    let files = chain(8);
    let found = run(&files, graph::check_graph);
    let all: Vec<&Diagnostic> = found.iter().flatten().collect();
    // One chain of five calls (s0 … s5): the calls past s5 are deeper still, but the first
    // call past the bound is the one to report, with a chain of bounded length.
    assert_eq!(all.len(), 5, "{}", render(&files, &found));
    assert!(all.iter().all(|d| d.message.ends_with("#s0 → #s1 → #s2 → #s3 → #s4 → #s5")));
}

#[test]
fn a_sequence_call_reaches_every_group_of_the_callee() {
    // `#b` runs b's groups in order; the second one calls `#c`: two nested calls, which with
    // three more makes five.
    let files = store(&[
        ("a", vec![("g", vec![call("#b")])]),
        ("b", vec![("first", vec![echo()]), ("second", vec![call("#c")])]),
        ("c", vec![("g", vec![call("#d")])]),
        ("d", vec![("g", vec![call("#e")])]),
        ("e", vec![("g", vec![call("#f")])]),
        ("f", vec![("g", vec![echo()])]),
    ]);
    let found = run(&files, graph::check_graph);
    assert_eq!(codes(&found)[4], ["E0603"], "{}", render(&files, &found));
}

#[test]
fn group_calls_do_not_count_but_lead_to_calls_that_do() {
    // a/top → a/mid → a/low → #b: one nested call, however many group calls lead to it.
    let files = store(&[
        ("a", vec![("top", vec![call("mid")]), ("mid", vec![call("low")]), ("low", vec![call("#b")])]),
        ("b", vec![("g", vec![call("#c")])]),
        ("c", vec![("g", vec![call("#d")])]),
        ("d", vec![("g", vec![call("#e")])]),
        ("e", vec![("g", vec![echo()])]),
    ]);
    let found = run(&files, graph::check_graph);
    assert!(found.iter().all(Vec::is_empty), "{}", render(&files, &found));
}

#[test]
fn diamonds_are_not_cycles() {
    let files = store(&[
        ("a", vec![("g", vec![call("#b"), call("#c")]), ("h", vec![call("#b")])]),
        ("b", vec![("g", vec![call("#d")])]),
        ("c", vec![("g", vec![call("#d"), call("#b")])]),
        ("d", vec![("g", vec![echo()])]),
    ]);
    let found = run(&files, graph::check_graph);
    assert!(found.iter().all(Vec::is_empty), "{}", render(&files, &found));
}

#[test]
fn unknown_targets_are_left_to_other_rules() {
    let files = store(&[("a", vec![("g", vec![call("#nowhere"), call("nothing"), call("g2")])])]);
    let found = run(&files, graph::check_graph);
    assert!(found.iter().all(Vec::is_empty), "{}", render(&files, &found));
}

#[test]
fn a_cycle_is_reported_the_same_whatever_the_order_of_the_files() {
    let mut files = store(&[
        ("b", vec![("g", vec![call("#c")])]),
        ("a", vec![("g", vec![call("#b")])]),
        ("c", vec![("g", vec![call("#a")])]),
    ]);
    let first = run(&files, graph::check_graph);
    files.reverse();
    let mut second = run(&files, graph::check_graph);
    second.reverse();
    let messages = |found: &[Vec<Diagnostic>]| -> Vec<String> {
        found.iter().flatten().map(|d| d.message.clone()).collect()
    };
    assert_eq!(messages(&first), messages(&second));
    assert!(messages(&first).iter().all(|m| m.ends_with("#a → #b → #c → #a")));
}

/// 2,000 sequences: pairs that call each other (a cycle each), the pairs in a chain, and in
/// every sequence two groups that call each other and a parallel group calling the next
/// sequence, whose last one writes a file. Every finding is reported once, and no message grows
/// with the store.
#[test]
fn a_big_store_reports_each_finding_once_with_bounded_messages() {
    const N: usize = 2_000;
    let names: Vec<String> = (0..N).map(|i| format!("s{i:04}")).collect();
    let mut sequences = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let mut groups = vec![("ping", vec![call("pong")]), ("pong", vec![call("ping")])];
        let mut forward = Vec::new();
        if let Some(next) = names.get(i + 1) {
            forward.push(call(&format!("#{next}")));
        } else {
            forward.push(r#"{"tool":"files_write","args":{"path":"p","content":"c"}}"#.to_owned());
        }
        if i % 2 == 1 {
            forward.push(call(&format!("#{}", names[i - 1])));
        }
        groups.push(("forward", forward));
        sequences.push((name.as_str(), groups));
    }
    let files = store(&sequences);
    let found = run(&files, graph::check_graph);
    let count = |code: Code| found.iter().flatten().filter(|d| d.code == code).count();
    assert_eq!(count(Code::GroupCallCycle), N);
    assert_eq!(count(Code::SequenceCallCycle), N);
    // Each sequence's `forward` group is parallel and reaches the last one's `files_write`.
    assert_eq!(count(Code::UnsafeCallInParallelGroup), N + N / 2 - 1);
    // The pairs are cycles, so depth through them is not measured again.
    assert_eq!(count(Code::CallChainTooDeep), 0);
    let longest = found.iter().flatten().map(|d| d.message.len()).max().unwrap();
    assert!(longest < 400, "a message of {longest} bytes");
}

#[test]
fn a_long_cycle_is_cut_in_the_middle() {
    const N: usize = 2_000;
    let names: Vec<String> = (0..N).map(|i| format!("s{i:04}")).collect();
    let sequences: Vec<(&str, Vec<(&str, Vec<String>)>)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), vec![("g", vec![call(&format!("#{}", names[(i + 1) % N]))])]))
        .collect();
    let files = store(&sequences);
    let found = run(&files, graph::check_graph);
    let all: Vec<&Diagnostic> = found.iter().flatten().collect();
    assert_eq!(all.len(), N);
    let expected = "calls across sequences form a cycle: #s0000 → #s0001 → #s0002 → #s0003 → #s0004 → … \
                    (1993 more) … → #s1998 → #s1999 → #s0000";
    assert!(all.iter().all(|d| d.message == expected), "{}", all[0].message);
}

#[test]
fn the_graph_renders_as_dot_and_json() {
    let files = load(&fixtures("graph").join("ok_render"));
    let sequences = parse_all(&files);
    let refs: Vec<&Sequence> = sequences.iter().collect();
    insta::assert_snapshot!("render_dot", graph::to_dot(&refs));
    insta::assert_json_snapshot!("render_json", graph::to_json(&refs));
}

#[test]
fn the_fix_adds_unsafe_serial_inside_the_tools_string() {
    let files = load(&fixtures("graph").join("E0605_serial.json"));
    let found = run(&files, graph::check_graph);
    let fix = found[0][0].fix.clone().unwrap();
    let mut text = files[0].text.clone();
    for edit in fix.edits.iter().rev() {
        text.replace_range(edit.span.range(), &edit.text);
    }
    let fixed = [File { name: "fixed.json".to_owned(), text }];
    let after = run(&fixed, graph::check_graph);
    assert!(after.iter().all(Vec::is_empty), "{}", render(&fixed, &after));
}
