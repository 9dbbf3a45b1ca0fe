//! The call graph (E0601–E0605, `seqc graph`) and slot dataflow (W0601, W0602).
//!
//! Fixtures share the layout of `tests/fixtures.rs`: `tests/fixtures/CODE/fail_*` must report
//! CODE, `pass_*` must not; a directory is a batch of files checked together. Here they are run
//! through the graph and dataflow passes alone, so that the snapshots show exactly what these
//! passes find (with the culprit's text) whatever the other rules say; a `pass_*` fixture must
//! get nothing at all from them.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

use seq_catalog::Catalog;
use seq_check::{Source, check, dataflow, graph};
use seq_syntax::ast::Sequence;
use seq_syntax::{Code, Diagnostic, LineIndex, Span};
use std::fmt::Write;
use std::path::{Path, PathBuf};

const CODES: [Code; 8] = [
    Code::GroupCallCycle,
    Code::SequenceCallCycle,
    Code::CallChainTooDeep,
    Code::UnsafeCallInParallelGroup,
    Code::UnsafeCallNotAcknowledged,
    Code::GroupNestingTooDeep,
    Code::SlotMayBeUnset,
    Code::CallResultFieldMayBeUnset,
];

type Checker = fn(&[&Sequence], &Catalog) -> Vec<Vec<Diagnostic>>;

struct File {
    name: String,
    text: String,
}

fn fixtures(code: Code) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(code.as_str())
}

/// The files of a fixture, sorted by name.
fn load(path: &Path) -> Vec<File> {
    let mut paths: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
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

/// Both passes, as the checker runs them.
fn graph_and_dataflow(sequences: &[&Sequence], catalog: &Catalog) -> Vec<Vec<Diagnostic>> {
    let mut found = graph::check_graph(sequences, catalog);
    for (mine, more) in found
        .iter_mut()
        .zip(dataflow::check_dataflow(sequences, catalog))
    {
        mine.extend(more);
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

#[test]
fn fixtures_of_the_graph_and_dataflow_codes() {
    for code in CODES {
        let mut names: Vec<String> = std::fs::read_dir(fixtures(code))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let (mut failing, mut passing) = (0, 0);
        for name in &names {
            let files = load(&fixtures(code).join(name));
            let found = run(&files, graph_and_dataflow);
            let shown = render(&files, &found);
            let all: Vec<&Diagnostic> = found.iter().flatten().collect();
            let stem = name.trim_end_matches(".json");
            if stem.starts_with("fail_") {
                failing += 1;
                let hit = all.iter().any(|d| d.code == code);
                assert!(hit, "{code}/{name} should report {code}:\n{shown}");
            } else {
                assert!(
                    stem.starts_with("pass_"),
                    "{code}/{name}: name fixtures fail_* or pass_*"
                );
                passing += 1;
                assert!(all.is_empty(), "{code}/{name} should be clean:\n{shown}");
            }
            insta::assert_snapshot!(format!("{code}__{stem}"), shown);
        }
        assert!(
            failing > 0 && passing > 0,
            "{code} needs a fail_ and a pass_ fixture"
        );
    }
}

/// A sequence's name and its groups, each a name and raw item JSON.
type Spec<'a> = (&'a str, Vec<(&'a str, Vec<String>)>);

fn batch(sequences: &[Spec<'_>]) -> Vec<File> {
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
            File {
                name: format!("{name}.json"),
                text: serde_json::to_string_pretty(&value).unwrap(),
            }
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
    found
        .iter()
        .map(|l| l.iter().map(|d| d.code.as_str()).collect())
        .collect()
}

/// A chain of `calls` nested `#` calls: s0 → s1 → … → s{calls}.
fn chain(calls: usize) -> Vec<File> {
    let names: Vec<String> = (0..=calls).map(|i| format!("s{i}")).collect();
    let sequences: Vec<Spec<'_>> = names
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
    batch(&sequences)
}

#[test]
fn four_nested_calls_are_legal_and_five_are_not() {
    assert_eq!(seq_syntax::limits::MAX_CALL_DEPTH, 4);
    let legal = run(&chain(4), graph::check_graph);
    assert!(
        legal.iter().all(Vec::is_empty),
        "{}",
        render(&chain(4), &legal)
    );

    let files = chain(5);
    let too_deep = run(&files, graph::check_graph);
    // Every calling file shows the error, the last caller (s4) being the fifth call.
    let expected: Vec<Vec<&str>> = (0..6)
        .map(|i| if i < 5 { vec!["E0603"] } else { vec![] })
        .collect();
    assert_eq!(codes(&too_deep), expected);
    let fifth = &too_deep[4][0];
    assert_eq!(culprit(&files[4], fifth.span), "#s5");
    assert!(fifth.message.contains("call 5 of 5"), "{}", fifth.message);
    assert!(
        fifth.message.ends_with("#s0 → #s1 → #s2 → #s3 → #s4 → #s5"),
        "{}",
        fifth.message
    );
}

/// One sequence of `groups` groups, each calling the next.
fn group_chain(groups: usize) -> Vec<File> {
    let names: Vec<String> = (0..groups).map(|i| format!("g{i}")).collect();
    let spec: Vec<(&str, Vec<String>)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let items = match names.get(i + 1) {
                Some(next) => vec![call(next)],
                None => vec![echo()],
            };
            (name.as_str(), items)
        })
        .collect();
    batch(&[("chain", spec)])
}

#[test]
fn thirty_two_nested_groups_are_legal_and_a_longer_chain_is_reported_once() {
    assert_eq!(seq_syntax::limits::MAX_NESTED_GROUPS, 32);
    let legal = run(&group_chain(32), graph::check_graph);
    assert!(legal.iter().all(Vec::is_empty), "{legal:?}");

    for groups in [33, 34, 1_000] {
        let files = group_chain(groups);
        let found = run(&files, graph::check_graph);
        // Reported once, at the call that enters the 33rd group (`g31` calling `g32`), however
        // much deeper the chain goes; the message stays short.
        assert_eq!(codes(&found), vec![vec!["E0606"]], "{groups} groups");
        let d = &found[0][0];
        assert_eq!(culprit(&files[0], d.span), "g32");
        assert!(d.message.contains("g0 → g1"), "{}", d.message);
        assert!(d.message.contains("→ g31 → g32"), "{}", d.message);
        assert!(d.message.len() < 300, "{}", d.message);
    }
}

#[test]
fn a_longer_chain_reports_the_first_call_past_the_bound_once() {
    let files = chain(8);
    let found = run(&files, graph::check_graph);
    let all: Vec<&Diagnostic> = found.iter().flatten().collect();
    // One chain of five calls (s0 … s5): the calls past s5 are deeper still, but the first
    // call past the bound is the one to report, with a chain of bounded length.
    assert_eq!(all.len(), 5, "{}", render(&files, &found));
    assert!(
        all.iter()
            .all(|d| d.message.ends_with("#s0 → #s1 → #s2 → #s3 → #s4 → #s5"))
    );
}

#[test]
fn a_sequence_call_reaches_every_group_of_the_callee() {
    // `#b` runs b's groups in order; the second one calls `#c`: two nested calls, which with
    // three more makes five.
    let files = batch(&[
        ("a", vec![("g", vec![call("#b")])]),
        (
            "b",
            vec![("first", vec![echo()]), ("second", vec![call("#c")])],
        ),
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
    let files = batch(&[
        (
            "a",
            vec![
                ("top", vec![call("mid")]),
                ("mid", vec![call("low")]),
                ("low", vec![call("#b")]),
            ],
        ),
        ("b", vec![("g", vec![call("#c")])]),
        ("c", vec![("g", vec![call("#d")])]),
        ("d", vec![("g", vec![call("#e")])]),
        ("e", vec![("g", vec![echo()])]),
    ]);
    let found = run(&files, graph::check_graph);
    assert!(
        found.iter().all(Vec::is_empty),
        "{}",
        render(&files, &found)
    );
}

#[test]
fn diamonds_are_not_cycles() {
    let files = batch(&[
        (
            "a",
            vec![("g", vec![call("#b"), call("#c")]), ("h", vec![call("#b")])],
        ),
        ("b", vec![("g", vec![call("#d")])]),
        ("c", vec![("g", vec![call("#d"), call("#b")])]),
        ("d", vec![("g", vec![echo()])]),
    ]);
    let found = run(&files, graph::check_graph);
    assert!(
        found.iter().all(Vec::is_empty),
        "{}",
        render(&files, &found)
    );
}

#[test]
fn unknown_targets_are_left_to_other_rules() {
    let files = batch(&[(
        "a",
        vec![("g", vec![call("#nowhere"), call("nothing"), call("g2")])],
    )]);
    let found = run(&files, graph::check_graph);
    assert!(
        found.iter().all(Vec::is_empty),
        "{}",
        render(&files, &found)
    );
}

#[test]
fn a_cycle_is_reported_the_same_whatever_the_order_of_the_files() {
    let mut files = batch(&[
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
    assert!(
        messages(&first)
            .iter()
            .all(|m| m.ends_with("#a → #b → #c → #a"))
    );
}

/// 2,000 sequences: pairs that call each other (a cycle each), the pairs in a chain, and in
/// every sequence two groups that call each other and a parallel group calling the next
/// sequence, whose last one writes a file. Every finding is reported once, and no message grows
/// with the batch.
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
    let files = batch(&sequences);
    let found = run(&files, graph::check_graph);
    let count = |code: Code| found.iter().flatten().filter(|d| d.code == code).count();
    assert_eq!(count(Code::GroupCallCycle), N);
    assert_eq!(count(Code::SequenceCallCycle), N);
    // Each sequence's `forward` group is parallel and reaches the last one's `files_write`.
    assert_eq!(count(Code::UnsafeCallInParallelGroup), N + N / 2 - 1);
    // The pairs are cycles, so depth through them is not measured again.
    assert_eq!(count(Code::CallChainTooDeep), 0);
    let longest = found
        .iter()
        .flatten()
        .map(|d| d.message.len())
        .max()
        .unwrap();
    assert!(longest < 400, "a message of {longest} bytes");
}

#[test]
fn a_long_cycle_is_cut_in_the_middle() {
    const N: usize = 2_000;
    let names: Vec<String> = (0..N).map(|i| format!("s{i:04}")).collect();
    let sequences: Vec<Spec<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            (
                name.as_str(),
                vec![("g", vec![call(&format!("#{}", names[(i + 1) % N]))])],
            )
        })
        .collect();
    let files = batch(&sequences);
    let found = run(&files, graph::check_graph);
    let all: Vec<&Diagnostic> = found.iter().flatten().collect();
    assert_eq!(all.len(), N);
    let expected = "calls across sequences form a cycle: #s0000 → #s0001 → #s0002 → #s0003 → #s0004 → … \
                    (1993 more) … → #s1998 → #s1999 → #s0000";
    assert!(
        all.iter().all(|d| d.message == expected),
        "{}",
        all[0].message
    );
}

#[test]
fn a_long_path_to_an_unsafe_tool_is_cut_in_the_middle() {
    // s0 → s1 → … → s11, whose group writes a file: every call on the way is unsafe.
    let names: Vec<String> = (0..12).map(|i| format!("s{i}")).collect();
    let write = r#"{"tool":"files_write","args":{"path":"p","content":"c"}}"#;
    let sequences: Vec<Spec<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let item = names
                .get(i + 1)
                .map_or(write.to_owned(), |next| call(&format!("#{next}")));
            (name.as_str(), vec![("g", vec![item])])
        })
        .collect();
    let files = batch(&sequences);
    let found = run(&files, graph::check_graph);
    let unsafe_call = |seq: usize| {
        let d = found[seq]
            .iter()
            .find(|d| d.code == Code::UnsafeCallInParallelGroup)
            .unwrap();
        d.message.split(": ").nth(1).unwrap().to_owned()
    };
    assert_eq!(
        unsafe_call(0),
        "seq_call → #s1/g → #s2/g → #s3/g → #s4/g → #s5/g → #s6/g → … → #s11/g → files_write"
    );
    // A cut that would hide nothing is not made.
    assert_eq!(
        unsafe_call(4),
        "seq_call → #s5/g → #s6/g → #s7/g → #s8/g → #s9/g → #s10/g → #s11/g → files_write"
    );
    assert_eq!(unsafe_call(10), "seq_call → #s11/g → files_write");
}

#[test]
fn the_graph_renders_as_dot_and_json() {
    // CJK names, a quote and a backslash in a name, a conditional call, a call whose target is
    // not in the batch, and a sequence without groups.
    let when_call = r##"{"tool":"seq_when_call","args":{"target":"#报告","when":"true"}}"##;
    let mut files = batch(&[
        (
            "巡检",
            vec![
                ("拉取单台", vec![echo()]),
                (
                    "巡检全部",
                    vec![call("拉取单台"), when_call.to_owned(), call("#外部")],
                ),
            ],
        ),
        ("报告", vec![(r#"say "hi" \ bye"#, vec![echo()])]),
    ]);
    files.push(File {
        name: "empty.json".to_owned(),
        text: r#"{"name": "empty", "groups": []}"#.to_owned(),
    });
    let sequences = parse_all(&files);
    let refs: Vec<&Sequence> = sequences.iter().collect();
    insta::assert_snapshot!("render_dot", graph::to_dot(&refs));
    insta::assert_json_snapshot!("render_json", graph::to_json(&refs));
}

/// Every machine fix, applied alone, leaves a file that parses and one diagnostic of its code
/// fewer.
#[test]
fn fixes_apply_cleanly_and_remove_their_diagnostic() {
    let mut applied = 0;
    for code in CODES {
        for entry in std::fs::read_dir(fixtures(code)).unwrap() {
            let files = load(&entry.unwrap().path());
            let found = run(&files, graph_and_dataflow);
            for (i, diagnostics) in found.iter().enumerate() {
                let count =
                    |found: &[Vec<Diagnostic>]| found[i].iter().filter(|d| d.code == code).count();
                for fix in diagnostics
                    .iter()
                    .filter(|d| d.code == code)
                    .filter_map(|d| d.fix.as_ref())
                {
                    let mut edits = fix.edits.clone();
                    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
                    let mut fixed: Vec<File> = files
                        .iter()
                        .map(|f| File {
                            name: f.name.clone(),
                            text: f.text.clone(),
                        })
                        .collect();
                    for edit in edits {
                        fixed[i].text.replace_range(edit.span.range(), &edit.text);
                    }
                    let again = run(&fixed, graph_and_dataflow);
                    assert!(
                        count(&again) < count(&found),
                        "{code}: `{}` leaves:\n{}",
                        fix.title,
                        fixed[i].text
                    );
                    applied += 1;
                }
            }
        }
    }
    assert!(applied >= 3, "only {applied} fixes were tried");
}

/// The ```json block under `## {heading}`.
fn json_block<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let section = markdown.split(&format!("## {heading}\n")).nth(1).unwrap();
    let start = section.find("```json\n").unwrap() + "```json\n".len();
    let end = section[start..].find("```").unwrap() + start;
    &section[start..end]
}

/// The files an explanation without a one-file example shows, as `NAME.json: {...}` lines.
fn shown_files(markdown: &str) -> Vec<Source> {
    markdown
        .lines()
        .filter_map(|line| line.split_once(".json: "))
        .map(|(name, text)| Source::new(format!("{name}.json"), text))
        .collect()
}

#[test]
fn explanations_show_examples_that_raise_their_code_and_fixes_that_check_clean() {
    let catalog = Catalog::builtin();
    for code in CODES {
        let markdown = code.explanation();
        assert!(
            markdown.starts_with(&format!("# {code}: {}\n", code.title())),
            "{code}"
        );
        if markdown.contains("<!-- no-example:") {
            let sources = shown_files(markdown);
            assert!(sources.len() > 1, "{code}: show the files of the example");
            let result = check(&sources, &catalog);
            let found: Vec<Code> = result
                .files
                .iter()
                .flat_map(|f| &f.diagnostics)
                .map(|d| d.code)
                .collect();
            assert!(
                !found.is_empty() && found.iter().all(|&c| c == code),
                "{code}: {found:?}"
            );
            continue;
        }
        let example = check(
            &[Source::new("example.json", json_block(markdown, "Example"))],
            &catalog,
        );
        let found: Vec<Code> = example.files[0]
            .diagnostics
            .iter()
            .map(|d| d.code)
            .collect();
        assert!(
            !found.is_empty() && found.iter().all(|&c| c == code),
            "{code}: the example raises {:#?}",
            example.files[0].diagnostics
        );
        let fixed = check(
            &[Source::new("fix.json", json_block(markdown, "Fix"))],
            &catalog,
        );
        assert!(
            !fixed.has_errors(),
            "{code}: the fix has errors: {:#?}",
            fixed.files[0].diagnostics
        );
    }
}
