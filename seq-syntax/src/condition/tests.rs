#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use super::*;
use crate::escape::unescape;
use crate::limits::{MAX_CONDITION_DEPTH, MAX_CONDITION_TESTS};
use crate::reference::tests::{Shift, cases, render, show};
use insta::{assert_debug_snapshot, assert_snapshot};
use std::fmt::Write;

fn operand(file: &str, operand: &Operand) -> String {
    let text = file.get(operand.span.range()).unwrap_or("<out of range>");
    match &operand.kind {
        OperandKind::Ref(r) => format!("ref {}", show(file, r)),
        OperandKind::Null => format!("null `{text}`"),
        OperandKind::Bool(b) => format!("bool {b} `{text}`"),
        OperandKind::Number(n) => format!("number {n} `{text}`"),
        OperandKind::String(s) => format!("string {s:?} `{text}`"),
    }
}

/// The condition's parts, with their text in `file`.
fn shape(file: &str, c: &Condition) -> String {
    let ConditionKind::Test(t) = &c.kind else {
        return tree(file, c, 1);
    };
    let mut out = format!("  lhs {}\n", operand(file, &t.lhs));
    if let Some(cmp) = &t.comparison {
        let op = file.get(cmp.op.span.range()).unwrap_or("<out of range>");
        let _ = writeln!(out, "  op  {:?} `{op}`", cmp.op.value);
        let _ = writeln!(out, "  rhs {}", operand(file, &cmp.rhs));
    }
    out
}

/// A condition as an indented tree, each node with its text in `file`.
fn tree(file: &str, c: &Condition, depth: usize) -> String {
    let text = |span: Span| {
        file.get(span.range())
            .unwrap_or("<out of range>")
            .to_owned()
    };
    let pad = "  ".repeat(depth);
    match &c.kind {
        ConditionKind::Test(t) => {
            let mut out = format!("{pad}test `{}`: {}", text(c.span), operand(file, &t.lhs));
            if let Some(cmp) = &t.comparison {
                let _ = write!(out, " {} {}", text(cmp.op.span), operand(file, &cmp.rhs));
            }
            out + "\n"
        }
        ConditionKind::Not(op, inner) => {
            format!("{pad}not `{}` at `{}`\n", text(c.span), text(*op))
                + &tree(file, inner, depth + 1)
        }
        ConditionKind::Logic { op, lhs, rhs } => {
            format!(
                "{pad}{:?} `{}` at `{}`\n",
                op.value,
                text(c.span),
                text(op.span)
            ) + &tree(file, lhs, depth + 1)
                + &tree(file, rhs, depth + 1)
        }
    }
}

fn comparison_op(c: Option<Condition>) -> CmpOp {
    match c.map(|c| c.kind) {
        Some(ConditionKind::Test(Test {
            comparison: Some(cmp),
            ..
        })) => cmp.op.value,
        other => panic!("{other:?}"),
    }
}

fn parse(text: &str) -> (Option<Condition>, Vec<Diagnostic>) {
    parse_condition(text, &Shift(0))
}

/// `text` parsed without diagnostics, its span the whole text.
fn clean(text: &str) -> Condition {
    let (condition, diagnostics) = parse(text);
    assert!(
        diagnostics.is_empty(),
        "{text}: {}",
        render(text, &diagnostics)
    );
    let condition = condition.unwrap();
    assert_eq!(condition.span, Span::from_range(0..text.len()));
    condition
}

#[test]
fn parses_level_l1_and_l2_conditions() {
    let inputs = cases("condition/parses_level_l1_and_l2_conditions.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let condition = clean(text);
        let _ = writeln!(out, "{text}");
        out.push_str(&shape(text, &condition));
    }
    assert_snapshot!(out);
}

#[test]
fn contains_is_a_keyword_only_in_operator_position() {
    let (condition, diagnostics) = parse("$args.contains contains $args.contains");
    assert!(diagnostics.is_empty());
    assert_eq!(comparison_op(condition), CmpOp::Contains);
    let (condition, diagnostics) = parse("contains == 1");
    assert!(condition.is_none());
    assert_eq!(
        render("contains == 1", &diagnostics),
        "E0401 0..8 `contains`: `contains` is not a value\n  help: did you mean `$args.contains`? Inputs are read as `$args.NAME`; a string is written in double quotes\n  fix: read the input `contains` = replace `` with `$args.`\n"
    );
}

/// `!` binds tightest, then the comparisons, then `&&`, then `||`; parentheses group, and a
/// parenthesised part's span covers its parentheses.
#[test]
fn operators_combine_by_precedence() {
    let inputs = cases("condition/operators_combine_by_precedence.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let condition = clean(text);
        let _ = writeln!(out, "{text}");
        out.push_str(&tree(text, &condition, 1));
    }
    assert_snapshot!(out);
}

/// What other languages write for the operators, and structures that are no condition.
#[test]
fn combining_mistakes_point_at_the_token() {
    let inputs = cases("condition/combining_mistakes_point_at_the_token.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let (condition, diagnostics) = parse(text);
        assert!(condition.is_none(), "{text}");
        let _ = writeln!(out, "{text}");
        out.push_str(&render(text, &diagnostics));
    }
    assert_snapshot!(out);
}

#[test]
fn conditions_past_the_bounds_are_refused_without_recursing() {
    let deep = format!("{}$args.a{}", "(".repeat(100_000), ")".repeat(100_000));
    let nots = format!("{}$args.a", "!".repeat(100_000));
    let long = vec!["$args.a"; 10_000].join(" && ");
    for text in [deep, nots, long] {
        let (condition, diagnostics) = parse(&text);
        assert!(condition.is_none());
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(diagnostics[0].code, Code::TooLarge);
    }
    let within = format!(
        "{}$args.a{}",
        "(".repeat(MAX_CONDITION_DEPTH),
        ")".repeat(MAX_CONDITION_DEPTH)
    );
    assert!(parse(&within).1.is_empty());
    let within = vec!["$args.a"; MAX_CONDITION_TESTS].join(" || ");
    assert!(parse(&within).1.is_empty());
}

#[test]
fn not_equal_is_an_operator_not_a_negation() {
    let (condition, diagnostics) = parse("$args.a != $args.b");
    assert!(diagnostics.is_empty());
    assert_eq!(comparison_op(condition), CmpOp::Ne);
}

#[test]
fn syntax_errors_point_at_the_token() {
    let inputs = cases("condition/syntax_errors_point_at_the_token.json");
    let mut out = String::new();
    for text in inputs.iter().map(String::as_str) {
        let (condition, diagnostics) = parse(text);
        assert!(condition.is_none(), "{text}");
        assert!(!diagnostics.is_empty(), "{text}");
        let _ = writeln!(out, "{text:?}");
        out.push_str(&render(text, &diagnostics));
    }
    assert_snapshot!(out);
}

#[test]
fn condition_spans_go_through_the_file_s_escapes() {
    // As written in the file: quotes escaped, and a `\u` escape inside the reference's name.
    let file = r#"{"when": "$args.\u4e3b\u673a contains \"a\\\"b\" "}"#;
    let body_start = file.find("$args").unwrap();
    let body_end = file.rfind('"').unwrap();
    let (unescaped, lone) = unescape(&file[body_start..body_end], body_start as u32);
    assert!(lone.is_empty());
    assert_eq!(unescaped.text, r#"$args.主机 contains "a\"b" "#);
    let (condition, diagnostics) = parse_condition(&unescaped.text, &unescaped.map);
    assert!(diagnostics.is_empty());
    let condition = condition.unwrap();
    assert_eq!(&file[condition.span.range()], &file[body_start..body_end]);
    assert_eq!(
        shape(file, &condition),
        "  lhs ref $args.\\u4e3b\\u673a = Args args | slot \\u4e3b\\u673a\n  op  Contains `contains`\n  rhs string \"a\\\"b\" `\\\"a\\\\\\\"b\\\"`\n"
    );
    assert_debug_snapshot!(condition);
}

#[test]
fn diagnostics_go_through_the_file_s_escapes() {
    let file = r#"{"when": "$args.a == \"x\" and \u0021$args.b == 'y'"}"#;
    let body_start = file.find("$args").unwrap();
    let body_end = file.rfind('"').unwrap();
    let (unescaped, _) = unescape(&file[body_start..body_end], body_start as u32);
    let (condition, diagnostics) = parse_condition(&unescaped.text, &unescaped.map);
    assert!(condition.is_none());
    let culprits: Vec<(&str, Code)> = diagnostics
        .iter()
        .map(|d| (&file[d.span.range()], d.code))
        .collect();
    assert_eq!(
        culprits,
        [
            ("and", Code::ConditionSyntax),
            ("'y'", Code::ConditionSyntax),
            // `!` binds tighter than `==`: the negation is what is compared.
            (r"\u0021$args.b", Code::ConditionSyntax),
        ]
    );
    // A parsed condition's operators land on their escapes too.
    let file = r#"{"when": "\u0021$args.a \u0026\u0026 $args.b"}"#;
    let body_start = file.find("\\u0021").unwrap();
    let body_end = file.rfind('"').unwrap();
    let (unescaped, _) = unescape(&file[body_start..body_end], body_start as u32);
    let (condition, diagnostics) = parse_condition(&unescaped.text, &unescaped.map);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_snapshot!(tree(file, &condition.unwrap(), 0));
}

#[test]
fn bare_word_fix_inserts_the_root_in_the_file() {
    let file = r#""verbose == true""#;
    let (_, diagnostics) = parse_condition(&file[1..file.len() - 1], &Shift(1));
    let [d] = diagnostics.as_slice() else {
        panic!("{diagnostics:?}")
    };
    assert_eq!(d.code, Code::ConditionSyntax);
    assert_eq!(d.span, Span::new(1, 8));
    let edit = &d.fix.as_ref().unwrap().edits[0];
    assert_eq!((edit.span, edit.text.as_str()), (Span::new(1, 1), "$args."));
}

#[test]
fn odd_input_never_panics() {
    for text in [
        "\"",
        "\"\\",
        "\"\\u",
        "\"\\ud83d\\u",
        "'",
        "$",
        "${",
        "$args.x[",
        "é",
        "😀 == 😀",
        "\u{0}",
        "1e",
        "-",
        "--1",
        "\"\\ud83d\\ude0\"",
        "$args.x == \"é\\",
    ] {
        let (condition, diagnostics) = parse(text);
        assert!(condition.is_none() || diagnostics.is_empty(), "{text:?}");
        for d in &diagnostics {
            assert!(d.span.end as usize <= text.len(), "{text:?}");
        }
    }
}

proptest::proptest! {
    /// Any text yields a condition or diagnostics (never both, never neither), with spans on
    /// character boundaries of the text.
    #[test]
    fn any_text_gets_an_answer(text in r#"(\$args\.x|\$|\.|==|=|!|&&|&|\|\||\||\(|\)|"|\\|'|1|-|e|true|and|contains|主| ){0,12}"#) {
        let (condition, diagnostics) = parse(&text);
        proptest::prop_assert!(condition.is_some() == diagnostics.is_empty(), "{:?}", text);
        for d in &diagnostics {
            proptest::prop_assert!(text.get(d.span.range()).is_some(), "{:?}", text);
        }
    }
}
