//! Hostile input to the front end: the bounds of `seq_syntax::limits` (each reported as a
//! diagnostic, never a crash or an unbounded wait), and every input the fuzz targets (fuzz/)
//! found breaking it, minimized, with the oracle the target checks: every span of every
//! diagnostic lies inside the file, on character boundaries, start before end.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_syntax::invariants::{span_violations, tree_violations};
use seq_syntax::json::{Mode, parse as parse_json};
use seq_syntax::limits::{
    MAX_DEPTH, MAX_FILE_BYTES, MAX_GROUPS, MAX_ITEMS, MAX_SLOTS, MAX_STRING_BYTES,
};
use seq_syntax::{Code, Diagnostic, Span, parse, parse_bytes};

fn assert_spans(text: &str, diagnostics: &[Diagnostic]) {
    let broken = span_violations(text, diagnostics);
    assert!(broken.is_empty(), "{broken:#?}");
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<Code> {
    diagnostics.iter().map(|d| d.code).collect()
}

/// A file of one group whose `tools` string is `tools`.
fn with_tools(tools: &str) -> String {
    let quoted = serde_json::to_string(tools).unwrap();
    format!(r#"{{"name": "s", "groups": [{{"name": "g", "tools": {quoted}}}]}}"#)
}

/// Inputs the fuzz targets found, minimized (fuzz/artifacts → `cargo fuzz tmin`).
const FOUND_BY_FUZZING: &[&[u8]] = &[
    // `check`: chumsky's recovery gave a syntax error a span that ends before it starts.
    b"{\"\":: ]",
];

/// Found by fuzzing (`item`, a 525-byte timeout, minimized by hand): a trailing unclosed string
/// after unclosed structures made recovery retry every level inside every level. Each segment
/// multiplied the time by ten: this input took hours before the grammar was memoized.
#[test]
fn recovery_inside_unclosed_structures_is_not_exponential() {
    let segment = format!("{}{{\"x\",i", "[".repeat(10));
    let text = format!("{} a\"rgs\\\"", segment.repeat(12));
    let (_, diagnostics) = parse_json(&text, Mode::Item);
    assert!(diagnostics.iter().any(Diagnostic::is_error));
    assert_spans(&text, &diagnostics);
    let file = with_tools(&text);
    assert!(parse(&file).has_errors());
}

#[test]
fn inputs_found_by_fuzzing_keep_every_span_in_the_file() {
    for &bytes in FOUND_BY_FUZZING {
        let parsed = parse_bytes(bytes);
        let text = String::from_utf8_lossy(bytes);
        assert_spans(&text, &parsed.diagnostics);
        let (node, diagnostics) = parse_json(&text, Mode::Item);
        assert_spans(&text, &diagnostics);
        if let Some(node) = &node {
            assert_eq!(tree_violations(&text, node), Vec::<String>::new());
        }
        let file = with_tools(&text);
        assert_spans(&file, &parse(&file).diagnostics);
    }
}

fn has(diagnostics: &[Diagnostic], code: Code) -> bool {
    diagnostics.iter().any(|d| d.code == code)
}

#[test]
fn a_hundred_thousand_nested_brackets_in_the_file_are_reported_not_recursed() {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    for text in [
        format!(r#"{{"name": "s", "groups": {deep}}}"#),
        format!(r#"{{"name": "s", "groups": {}"#, "[".repeat(100_000)),
        "{".repeat(100_000),
    ] {
        let parsed = parse(&text);
        assert!(
            has(&parsed.diagnostics, Code::TooDeep),
            "{:?}",
            codes(&parsed.diagnostics)
        );
        assert_spans(&text, &parsed.diagnostics);
    }
}

#[test]
fn a_hundred_thousand_nested_brackets_in_a_tools_string_are_reported_not_recursed() {
    let n = 100_000;
    for tools in [
        format!(
            r#"{{"tool": "echo", "args": {{"value": {}1{}}}}} ;"#,
            "[".repeat(n),
            "]".repeat(n)
        ),
        format!(
            r#"{{"tool": "echo", "args": {{"value": {}"#,
            r#"{"a": "#.repeat(n)
        ),
    ] {
        let (_, item) = parse_json(&tools, Mode::Item);
        assert!(item.iter().any(Diagnostic::is_error));
        assert_spans(&tools, &item);
        let file = with_tools(&tools);
        let parsed = parse(&file);
        assert!(parsed.has_errors());
        assert_spans(&file, &parsed.diagnostics);
    }
    // Exactly at the bound is fine; one level more is reported. The item's `{` and `args` are
    // two levels.
    let at = |depth: usize| {
        format!(
            r#"{{"tool": "echo", "args": {{"value": {}1{}}}}} ;"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    assert!(!parse(&with_tools(&at(MAX_DEPTH - 2))).has_errors());
    assert_eq!(
        codes(&parse(&with_tools(&at(MAX_DEPTH - 1))).diagnostics),
        [Code::TooDeep]
    );
}

#[test]
fn a_file_past_the_size_bound_is_reported_at_its_start_and_not_parsed() {
    let padding = " ".repeat(MAX_FILE_BYTES);
    let text = format!(r#"{{"name": "s", "groups": []}}{padding}"#);
    for parsed in [parse(&text), parse_bytes(text.as_bytes())] {
        assert!(parsed.sequence.is_none());
        assert_eq!(codes(&parsed.diagnostics), [Code::TooLarge]);
        assert_eq!(parsed.diagnostics[0].span, Span::new(0, 0));
    }
    // Bytes that are not UTF-8 are not even looked at past the bound.
    let mut bytes = text.into_bytes();
    bytes.push(0xff);
    assert_eq!(codes(&parse_bytes(&bytes).diagnostics), [Code::TooLarge]);
}

#[test]
fn a_string_past_the_length_bound_is_reported_at_its_quote() {
    let long = "x".repeat(MAX_STRING_BYTES);
    let text = format!(r#"{{"name": "s", "description": "{long}", "groups": []}}"#);
    let parsed = parse(&text);
    let too_large: Vec<&Diagnostic> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::TooLarge)
        .collect();
    assert_eq!(too_large.len(), 1, "{:?}", codes(&parsed.diagnostics));
    assert_eq!(&text[too_large[0].span.range()], "\"");
    assert_eq!(
        too_large[0].span.start as usize,
        text.find('x').unwrap() - 1
    );
    // One byte less (quotes included) is a string like any other.
    let fits = "x".repeat(MAX_STRING_BYTES - 2);
    let text = format!(r#"{{"name": "s", "description": "{fits}", "groups": []}}"#);
    assert!(!has(&parse(&text).diagnostics, Code::TooLarge));
}

const ITEM: &str = r#"{"tool": "echo", "args": {"value": 1}} ;"#;

#[test]
fn groups_past_the_bound_are_reported_at_the_first_one_too_many() {
    let group = |i: usize| format!(r#"{{"name": "g{i}", "tools": "{{\"tool\":\"echo\"}} ;"}}"#);
    let groups: Vec<String> = (0..=MAX_GROUPS).map(group).collect();
    let text = format!(r#"{{"name": "s", "groups": [{}]}}"#, groups.join(","));
    let parsed = parse(&text);
    assert_eq!(codes(&parsed.diagnostics), [Code::TooLarge]);
    let at = parsed.diagnostics[0].span.range();
    assert_eq!(&text[at], group(MAX_GROUPS));
    assert_eq!(parsed.sequence.unwrap().groups.len(), MAX_GROUPS);
}

#[test]
fn items_past_the_bound_are_reported_at_the_first_one_too_many() {
    let tools = ITEM.repeat(MAX_ITEMS + 1);
    let text = with_tools(&tools);
    let parsed = parse(&text);
    assert_eq!(codes(&parsed.diagnostics), [Code::TooLarge]);
    let item = serde_json::to_string(ITEM.trim_end_matches(" ;")).unwrap();
    let item = &item[1..item.len() - 1];
    assert_eq!(&text[parsed.diagnostics[0].span.range()], item);
    let start = parsed.diagnostics[0].span.start as usize;
    assert_eq!(text[..start].matches("\\\"tool\\\"").count(), MAX_ITEMS);
    assert_eq!(parsed.sequence.unwrap().groups[0].items.len(), MAX_ITEMS);
    // At the bound: no diagnostic.
    assert!(!parse(&with_tools(&ITEM.repeat(MAX_ITEMS))).has_errors());
}

#[test]
fn slots_past_the_bound_are_reported_and_not_declared() {
    let slots: Vec<String> = (0..=MAX_SLOTS)
        .map(|i| format!(r#""s{i}": "any""#))
        .collect();
    let text = format!(
        r#"{{"name": "s", "groups": [{{"name": "g", "in": {{{}}}, "tools": "{{\"tool\":\"echo\"}} ;"}}]}}"#,
        slots.join(",")
    );
    let parsed = parse(&text);
    assert_eq!(codes(&parsed.diagnostics), [Code::TooLarge]);
    let inputs = &parsed.sequence.unwrap().groups[0].inputs;
    assert_eq!(inputs.len(), MAX_SLOTS);
    assert!(
        inputs
            .iter()
            .all(|s| s.name.value != format!("s{MAX_SLOTS}"))
    );
}

#[test]
fn the_ten_megabyte_benchmark_file_is_within_every_bound() {
    let text = seq_gen::sequence_file(10_000_000);
    let parsed = parse(&text);
    assert!(!parsed.has_errors(), "{:?}", codes(&parsed.diagnostics));
    let sequence = parsed.sequence.unwrap();
    assert!(sequence.groups.len() > 10_000);
}

#[test]
fn suggestions_are_bounded_in_length_and_in_candidates() {
    use seq_syntax::diagnostic::did_you_mean;
    use seq_syntax::limits::{MAX_SUGGEST_LEN, MAX_SUGGEST_SCAN};
    // A word past the length bound gets no suggestion, however close.
    let long = "a".repeat(MAX_SUGGEST_LEN + 1);
    let near = "a".repeat(MAX_SUGGEST_LEN) + "b";
    assert_eq!(did_you_mean(&long, [near.as_str()]), None);
    // Among many candidates the typo is still found when it is among those looked at...
    let names: Vec<String> = (0..50_000).map(|i| format!("group-number-{i}")).collect();
    let mut candidates: Vec<&str> = names.iter().map(String::as_str).collect();
    candidates.insert(10, "fetch");
    assert_eq!(
        did_you_mean("fecth", candidates.iter().copied()),
        Some("fetch")
    );
    // ...and never looked for past the first ones.
    candidates.remove(10);
    candidates.insert(MAX_SUGGEST_SCAN, "fetch");
    assert_eq!(did_you_mean("fecth", candidates.iter().copied()), None);
}

#[test]
fn long_lists_in_diagnostics_are_cut() {
    use seq_syntax::diagnostic::list;
    use seq_syntax::limits::MAX_LISTED_BYTES;
    assert_eq!(list(&["a", "b", "c"]), "`a`, `b` or `c`");
    let names: Vec<String> = (0..100_000).map(|i| format!("group-{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let text = list(&names);
    assert!(text.len() <= MAX_LISTED_BYTES + 32, "{} bytes", text.len());
    assert!(text.starts_with("`group-0`, `group-1`, "), "{text}");
    let shown = text.matches('`').count() / 2;
    assert!(
        text.ends_with(&format!(" or {} more", names.len() - shown)),
        "{text}"
    );
}

/// `seq_create`'s parameter form is parsed from pretty JSON while it is small, and from compact
/// JSON past `MAX_PRETTY_VALUE_BYTES`: indentation would multiply a many-group sequence several
/// times over before the parse even starts.
#[test]
fn a_large_parameter_form_is_parsed_compact() {
    let group =
        |i: usize| serde_json::json!({"name": format!("g{i}"), "tools": "{\"tool\":\"echo\"} ;"});
    let small = serde_json::json!({"name": "s", "groups": [group(0)]});
    let (text, parse) = seq_syntax::parse_value(&small);
    assert!(text.contains('\n'), "{text}");
    assert!(parse.diagnostics.is_empty(), "{:?}", parse.diagnostics);
    let many: Vec<_> = (0..30_000).map(group).collect();
    let large = serde_json::json!({"name": "l", "groups": many});
    let (text, parse) = seq_syntax::parse_value(&large);
    assert!(text.len() > seq_syntax::limits::MAX_PRETTY_VALUE_BYTES);
    assert!(!text.contains('\n'));
    assert!(parse.diagnostics.is_empty(), "{:?}", parse.diagnostics);
    assert_eq!(parse.sequence.map(|s| s.groups.len()), Some(30_000));
}
