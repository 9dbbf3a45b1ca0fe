#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use super::*;
use crate::escape::{OffsetMap, unescape};
use insta::assert_snapshot;
use std::fmt::Write;

/// A map for tests: the text sits in a file at a constant offset.
#[derive(Debug)]
pub(crate) struct Shift(pub u32);

impl MapOffset for Shift {
    fn to_raw(&self, offset: u32) -> u32 {
        offset + self.0
    }
}

/// The inputs of a table-driven test: the JSON array of strings in `tests/cases/NAME`.
pub(crate) fn cases(name: &str) -> Vec<String> {
    let path = format!("{}/tests/cases/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One line per diagnostic, with the culprit's bytes taken from `file` (which the diagnostic's
/// spans point into), then its help and fix.
pub(crate) fn render(file: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let culprit = file.get(d.span.range()).unwrap_or("<out of range>");
        let _ = writeln!(
            out,
            "{} {}..{} `{culprit}`: {}",
            d.code, d.span.start, d.span.end, d.message
        );
        if let Some(help) = &d.help {
            let _ = writeln!(out, "  help: {help}");
        }
        if let Some(fix) = &d.fix {
            for edit in &fix.edits {
                let _ = writeln!(
                    out,
                    "  fix: {} = replace `{}` with `{}`",
                    fix.title,
                    file.get(edit.span.range()).unwrap_or("<out of range>"),
                    edit.text
                );
            }
        }
    }
    out
}

/// The reference as its parts' text in `file`: `$args.x[0]` → `args | x | .y [0]`.
pub(crate) fn show(file: &str, r: &Reference) -> String {
    let text = |s: Span| file.get(s.range()).unwrap_or("<out of range>");
    let mut out = format!(
        "{} = {:?} {} | slot {}",
        text(r.span),
        r.root.value,
        text(r.root.span),
        text(r.slot.span)
    );
    for segment in &r.path {
        let value = match &segment.value {
            Segment::Field(name) => format!("field {name}"),
            Segment::Index(i) => format!("index {i}"),
        };
        let _ = write!(out, " | {value} `{}`", text(segment.span));
    }
    out
}

fn ok(text: &str) -> Reference {
    match parse_reference(text, &Shift(0)) {
        Ok(r) => r,
        Err(d) => panic!("{text}: {}", render(text, &[d])),
    }
}

#[test]
fn parses_paths_with_exact_spans() {
    let inputs = cases("reference/parses_paths_with_exact_spans.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let _ = writeln!(out, "{}", show(text, &ok(text)));
    }
    assert_snapshot!(out);
}

#[test]
fn spans_are_mapped_into_the_file() {
    let file = r#"{"host": $args.hosts[0].主机}"#;
    let start = file.find('$').unwrap();
    let end = file.rfind('}').unwrap();
    let reference =
        parse_reference(&file[start..end], &Shift(u32::try_from(start).unwrap())).unwrap();
    assert_eq!(
        show(file, &reference),
        "$args.hosts[0].主机 = Args args | slot hosts | index 0 `[0]` | field 主机 `.主机`"
    );
    insta::assert_debug_snapshot!(reference);
}

#[test]
fn malformed_references_point_at_the_culprit() {
    let inputs = cases("reference/malformed_references_point_at_the_culprit.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let _ = writeln!(out, "{text:?}");
        match parse_reference(text, &Shift(0)) {
            Ok(r) => {
                let _ = writeln!(out, "  unexpectedly parsed: {}", show(text, &r));
            }
            Err(d) => {
                assert_eq!(d.code, Code::MalformedReference);
                out.push_str(&render(text, &[d]));
            }
        }
    }
    assert_snapshot!(out);
}

#[test]
fn errors_inside_escaped_text_point_at_the_file() {
    // The reference sits in an escaped string; the map goes through the escapes.
    let file = r#""\u0024args.x[\u0061]""#;
    let body = &file[1..file.len() - 1];
    let (unescaped, _) = unescape(body, 1);
    assert_eq!(unescaped.text, "$args.x[a]");
    let d = parse_reference(&unescaped.text, &unescaped.map).unwrap_err();
    assert_eq!(&file[d.span.range()], r"\u0061");
    let r = parse_reference("$args.x", &unescape(r"\u0024args.x", 1).0.map).unwrap();
    assert_eq!(r.span, Span::new(1, 13));
    assert_eq!(r.root.span, Span::new(7, 11));
}

#[test]
fn overflowing_index_is_an_error_not_a_wrap() {
    let d = parse_reference("$args.x[18446744073709551616]", &OffsetMap::identity(10)).unwrap_err();
    assert_eq!(d.span, Span::new(18, 38));
    assert!(d.message.contains("too large"));
}

#[test]
fn identifiers_are_xid() {
    for name in ["x", "_", "_1", "主机", "résumé", "x٣", "αβγ"] {
        assert!(is_identifier(name), "{name}");
    }
    for name in ["", "1x", "a-b", "a b", "a.b", "$a", "٣x", "-"] {
        assert!(!is_identifier(name), "{name}");
    }
}

#[test]
fn the_name_being_typed_starts_after_the_last_non_identifier() {
    assert_eq!(name_start_before("$args.主机", "$args.主机".len()), 6);
    assert_eq!(name_start_before("$args.", 6), 6);
    assert_eq!(name_start_before("$args.x", 99), 99);
}

#[test]
fn scan_reference_reports_the_extent_of_malformed_references() {
    // A caller (the condition lexer) carries on after the extent, so it must cover the culprit
    // and stop at what follows.
    let cases = [
        ("$args.x==1", "$args.x"),
        ("$args.x[-1] == 1", "$args.x[-1]"),
        ("$args.1abc == 2", "$args.1abc"),
        ("$foo.x.y > 1", "$foo.x.y"),
        ("$args&&", "$args"),
        ("$ == 1", "$"),
        ("${args.x} == 1", "${args.x}"),
        ("[$args.a]", "$args.a"),
        ("$args.x[1 == 2", "$args.x[1"),
    ];
    for (text, extent) in cases {
        let start = text.find('$').unwrap();
        let (_, end) = scan_reference(text, start);
        assert_eq!(&text[start..end], extent, "{text}");
    }
}

#[test]
fn scanning_never_panics_on_odd_input() {
    let odd = [
        "$",
        "$$",
        "${",
        "${}",
        "$args.",
        "$args.[",
        "$args.x[",
        "$args.x[é",
        "$args.x.é",
        "$é",
        "${args.x",
        "${args.x é",
        "$args.x[\u{0}]",
        "$out.\u{301}",
    ];
    for text in odd {
        for start in text
            .char_indices()
            .filter(|&(_, c)| c == '$')
            .map(|(i, _)| i)
        {
            let (_, end) = scan_reference(text, start);
            assert!(end > start && end <= text.len(), "{text:?}");
            assert!(text.is_char_boundary(end), "{text:?}");
            if let Some((_, end)) = scan_interpolation(text, start) {
                assert!(end > start && end <= text.len(), "{text:?}");
                assert!(text.is_char_boundary(end), "{text:?}");
            }
        }
        let _ = parse_reference(text, &Shift(0));
    }
}

proptest::proptest! {
    /// The ASCII shortcut of `ident_len` measures what Unicode's classes alone would.
    #[test]
    fn ident_len_agrees_with_unicode_classes(
        parts in proptest::collection::vec(
            proptest::sample::select(&["a", "Z", "_", "0", "9", "-", ".", " ", "主", "é", "\u{300}", "😀", "$"][..]),
            0..12,
        )
    ) {
        let text = parts.concat();
        proptest::prop_assert_eq!(ident_len(&text), unicode_ident_len(&text), "{:?}", text);
    }
}

#[test]
fn lookalikes_are_dollar_names_with_a_dot_that_no_reference_reads() {
    assert_eq!(
        lookalike_names("cp $gather.df ${build.out}/x $HOME $$x.y $args.a ${out.b} $主机.名"),
        ["gather", "build", "主机"]
    );
    assert!(lookalike_names("$ $. ${ $1.2 end$").is_empty());
}
