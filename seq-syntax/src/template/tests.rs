#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use super::*;
use crate::ast::Reference;
use crate::code::Code;
use crate::escape::{OffsetMap, unescape};
use crate::reference::tests::{Shift, cases, render, show};
use insta::assert_snapshot;
use std::fmt::Write;

/// The parts of a template, each on a line; references as their text in `file`.
fn parts(file: &str, template: &Template) -> String {
    let mut out = String::new();
    for part in &template.parts {
        let _ = match part {
            TemplatePart::Text(text) => writeln!(out, "text {text:?}"),
            TemplatePart::Ref(r) => writeln!(out, "ref  {}", show(file, r)),
        };
    }
    out
}

fn clean(text: &str) -> Template {
    let (template, diagnostics) = parse_template(text, &Shift(0));
    assert!(
        diagnostics.is_empty(),
        "{text}: {}",
        render(text, &diagnostics)
    );
    template
}

fn refs(template: &Template) -> Vec<&Reference> {
    template.references().collect()
}

#[test]
fn interpolates_bare_and_braced_references() {
    let inputs = cases("template/interpolates_bare_and_braced_references.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let _ = writeln!(out, "{text:?}");
        out.push_str(&parts(text, &clean(text)));
    }
    assert_snapshot!(out);
}

#[test]
fn other_dollars_are_literal() {
    for text in [
        "$HOME",
        "${HOME}",
        "echo $$",
        "$1 and $2",
        "costs 5$",
        "$",
        "$argsx",
        "$arguments.x",
        "$args",
        "$args and $out",
        "${args}",
        "${ args.x }",
        "$$args.x",
        "$outx.y",
        "a $ b",
        "${",
        "$.args",
        "$ARGS.x",
    ] {
        let template = clean(text);
        assert_eq!(template.as_literal(), Some(text), "{text}");
        assert_eq!(template.parts.len(), 1, "{text}");
    }
}

#[test]
fn dollar_pairs_are_read_as_pairs() {
    let text = "$$$args.x";
    let template = clean(text);
    assert_eq!(
        parts(text, &template),
        "text \"$$\"\nref  $args.x = Args args | slot x\n"
    );
}

#[test]
fn empty_string_has_no_parts() {
    let template = clean("");
    assert!(template.parts.is_empty());
    assert_eq!(template.as_literal(), Some(""));
}

#[test]
fn a_string_without_references_is_one_text_part() {
    let template = clean("plain text with 主机 and $HOME");
    assert_eq!(
        template,
        Template::literal("plain text with 主机 and $HOME")
    );
}

#[test]
fn malformed_references_are_reported_and_kept_literal() {
    let inputs = cases("template/malformed_references_are_reported_and_kept_literal.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let (template, diagnostics) = parse_template(text, &Shift(0));
        assert_eq!(template.as_literal(), Some(text), "{text}");
        assert!(
            diagnostics
                .iter()
                .all(|d| d.code == Code::MalformedReference)
        );
        let _ = writeln!(out, "{text:?}");
        out.push_str(&render(text, &diagnostics));
    }
    assert_snapshot!(out);
}

#[test]
fn text_around_a_malformed_reference_still_interpolates() {
    let text = "$args.a ${args.b $args.c";
    let (template, diagnostics) = parse_template(text, &Shift(0));
    assert_eq!(
        render(text, &diagnostics),
        "E0301 8..16 `${args.b`: `${args.b` is never closed\n  help: close the reference with `}`: `${args.b}`\n  fix: insert `}` = replace `` with `}`\n"
    );
    assert_eq!(
        parts(text, &template),
        "ref  $args.a = Args args | slot a\ntext \" ${args.b \"\nref  $args.c = Args args | slot c\n"
    );
}

#[test]
fn every_malformed_reference_is_reported() {
    let text = "$args. and $out.1 and ${args.x";
    let (_, diagnostics) = parse_template(text, &Shift(0));
    let culprits: Vec<&str> = diagnostics.iter().map(|d| &text[d.span.range()]).collect();
    assert_eq!(culprits, ["$args.", "1", "${args.x"]);
}

#[test]
fn spans_go_through_the_escapes_into_the_file() {
    // The string as written in a file: escapes before, inside and between the references.
    let file = r#"{"command": "say \"${args.主机}\" \u0024args.x\t$out.r[0].\u540d done"}"#;
    let body_start = file.find("say").unwrap();
    let body_end = file.rfind('"').unwrap();
    let (unescaped, lone) = unescape(&file[body_start..body_end], body_start as u32);
    assert!(lone.is_empty());
    assert_eq!(
        unescaped.text,
        "say \"${args.主机}\" $args.x\t$out.r[0].名 done"
    );
    let (template, diagnostics) = parse_template(&unescaped.text, &unescaped.map);
    assert!(diagnostics.is_empty());
    let shown: Vec<String> = refs(&template).iter().map(|r| show(file, r)).collect();
    assert_eq!(
        shown,
        [
            "${args.主机} = Args args | slot 主机",
            r"\u0024args.x = Args args | slot x",
            r"$out.r[0].\u540d = Out out | slot r | index 0 `[0]` | field 名 `.\u540d`",
        ]
    );
    assert_eq!(
        template.parts.first(),
        Some(&TemplatePart::Text("say \"".into()))
    );
}

#[test]
fn diagnostics_go_through_the_escapes_into_the_file() {
    let file = r#""a\n${args.x\ty}""#;
    let (unescaped, _) = unescape(&file[1..file.len() - 1], 1);
    let (_, diagnostics) = parse_template(&unescaped.text, &unescaped.map);
    assert_eq!(
        render(file, &diagnostics),
        "E0301 14..15 `y`: unexpected `y` inside `${args.x…}`\n  help: `${…}` holds exactly one reference: write `${args.x}` and put other text outside the braces\n  fix: remove the extra text = replace `\\ty` with ``\n"
    );
}

#[test]
fn identity_map_with_a_base_shifts_spans() {
    let (template, _) = parse_template("x $out.y", &OffsetMap::identity(100));
    let r = refs(&template)[0];
    assert_eq!(r.span, crate::span::Span::new(102, 108));
    assert_eq!(r.slot.span, crate::span::Span::new(107, 108));
}

proptest::proptest! {
    /// Text parts and the source text of references rebuild the input exactly, whatever it is.
    #[test]
    fn parts_rebuild_the_input(text in r"(\$|\{|\}|\[|\]|\.|args|out|x|主|1|-| ){0,24}") {
        let (template, diagnostics) = parse_template(&text, &Shift(0));
        let mut rebuilt = String::new();
        for part in &template.parts {
            match part {
                TemplatePart::Text(t) => {
                    proptest::prop_assert!(!t.is_empty());
                    rebuilt.push_str(t);
                }
                TemplatePart::Ref(r) => rebuilt.push_str(&text[r.span.range()]),
            }
        }
        proptest::prop_assert_eq!(&rebuilt, &text);
        for pair in template.parts.windows(2) {
            let both_text = matches!(pair, [TemplatePart::Text(_), TemplatePart::Text(_)]);
            proptest::prop_assert!(!both_text);
        }
        for d in &diagnostics {
            proptest::prop_assert!(text.get(d.span.range()).is_some());
        }
    }

    /// The owned entry point builds what the borrowed one builds.
    #[test]
    fn owned_and_borrowed_texts_build_the_same_template(text in r"(\$|\{|\}|args|\.|x|主| ){0,16}") {
        let borrowed = parse_template(&text, &Shift(0));
        let owned = super::parse_template_cow(std::borrow::Cow::Owned(text.clone()), &Shift(0));
        proptest::prop_assert_eq!(owned, borrowed);
    }
}
