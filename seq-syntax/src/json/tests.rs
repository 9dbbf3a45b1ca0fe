use super::{Key, MAX_DEPTH, Member, Mode, Node, NodeKind, parse};
use crate::code::Code;
use crate::diagnostic::Diagnostic;

fn file(text: &str) -> (Option<Node<'_>>, Vec<Diagnostic>) {
    parse(text, Mode::File)
}

/// The text a diagnostic points at.
fn at<'t>(text: &'t str, diagnostic: &Diagnostic) -> &'t str {
    &text[diagnostic.span.range()]
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<Code> {
    diagnostics.iter().map(|d| d.code).collect()
}

fn members<'a, 'src>(node: &'a Node<'src>) -> &'a [Member<'src>] {
    let NodeKind::Object(members) = &node.kind else {
        panic!("not an object: {node:?}")
    };
    members
}

/// The keys of an object, `!` for an error key.
fn keys<'src>(node: &Node<'src>) -> Vec<&'src str> {
    members(node)
        .iter()
        .map(|m| m.key.text().unwrap_or("!"))
        .collect()
}

/// The text with every fix of `diagnostics` applied (edits never overlap).
fn apply_fixes(text: &str, diagnostics: &[Diagnostic]) -> String {
    let mut edits: Vec<_> = diagnostics
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .flat_map(|fix| fix.edits.iter())
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut fixed = text.to_owned();
    for edit in edits {
        fixed.replace_range(edit.span.range(), &edit.text);
    }
    fixed
}

#[test]
fn spans_cover_keys_with_quotes_and_values_exactly() {
    let text = r#"{"a": {"b\"c": [1, "x\n", true]}, "d": null}"#;
    let (node, diagnostics) = file(text);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let node = node.unwrap();
    assert_eq!(node.span, 0..text.len());
    let a = &members(&node)[0];
    assert_eq!(&text[a.key_span.clone()], r#""a""#);
    let inner = &members(&a.value)[0];
    assert_eq!(inner.key, Key::String(r#"b\"c"#), "keys stay raw");
    assert_eq!(&text[inner.key_span.clone()], r#""b\"c""#);
    assert_eq!(&text[inner.value.span.clone()], r#"[1, "x\n", true]"#);
    let NodeKind::Array(items) = &inner.value.kind else {
        panic!("not an array")
    };
    assert_eq!(items[1].kind, NodeKind::String(r"x\n"));
    assert_eq!(&text[items[1].span.clone()], r#""x\n""#);
    assert_eq!(&text[items[2].span.clone()], "true");
    let d = &members(&node)[1];
    assert_eq!(&text[d.value.span.clone()], "null");
}

#[test]
fn duplicate_keys_are_kept_in_order() {
    let (node, diagnostics) = file(r#"{"a": 1, "b": 2, "a": 3}"#);
    assert!(diagnostics.is_empty());
    assert_eq!(keys(&node.unwrap()), ["a", "b", "a"]);
}

#[test]
fn errors_in_two_members_are_both_reported_and_the_rest_kept() {
    let text = r#"{"a": 1, "b": @, "c": 3, "d" 4, "e": 5}"#;
    let (node, diagnostics) = file(text);
    let node = node.unwrap();
    assert_eq!(keys(&node), ["a", "b", "c", "d", "e"]);
    assert_eq!(members(&node)[1].value.kind, NodeKind::Error);
    assert_eq!(members(&node)[3].value.kind, NodeKind::Number("4"));
    assert_eq!(codes(&diagnostics), [Code::JsonSyntax, Code::JsonSyntax]);
    assert_eq!(at(text, &diagnostics[0]), "@");
    assert_eq!(diagnostics[1].message, "expected `:`, found `4`");
}

#[test]
fn junk_in_one_group_does_not_hide_an_error_in_another() {
    let text = r#"[{"name": "g0"} x, {"name": "g1"}, {"name": "g2"}, {"name" "g3"}]"#;
    let (node, diagnostics) = file(text);
    let NodeKind::Array(groups) = node.unwrap().kind else {
        panic!("not an array")
    };
    assert_eq!(groups.len(), 4, "{groups:?}");
    for (i, group) in groups.iter().enumerate() {
        assert_eq!(keys(group), ["name"], "group {i}");
    }
    let found: Vec<_> = diagnostics.iter().map(|d| at(text, d)).collect();
    assert_eq!(found, ["x", r#""g3""#]);
}

#[test]
fn missing_separators_read_expected_x_or_y() {
    let text = r#"{"a": 1 "b": 2}"#;
    let (node, diagnostics) = file(text);
    assert_eq!(keys(&node.unwrap()), ["a", "b"]);
    assert_eq!(diagnostics.len(), 1);
    let d = &diagnostics[0];
    assert_eq!(d.message, r#"expected `,` or `}`, found `"b"`"#);
    assert_eq!(d.help.as_deref(), Some("separate members with `,`"));
    assert_eq!(apply_fixes(text, &diagnostics), r#"{"a": 1, "b": 2}"#);

    let (_, diagnostics) = file("[1 2]");
    assert_eq!(diagnostics[0].message, "expected `,` or `]`, found `2`");
    let (_, diagnostics) = file("[1, 2");
    assert_eq!(
        diagnostics[0].message,
        "expected `,` or `]`, found end of input"
    );
    assert_eq!(diagnostics[0].labels[0].message, "this `[` is never closed");
}

#[test]
fn structures_open_at_the_end_keep_their_members() {
    // Where a cursor typing usually is: a key half written at the end of the text.
    let text = r#"{"name": "x", "groups": [{"in": {"a": "string"}, "ti"#;
    let (node, diagnostics) = file(text);
    let node = node.unwrap();
    assert_eq!(keys(&node), ["name", "groups"]);
    let NodeKind::Array(groups) = &members(&node)[1].value.kind else {
        panic!("not an array")
    };
    assert_eq!(keys(&groups[0]), ["in", "!"]);
    assert_eq!(&text[members(&groups[0])[1].key_span.clone()], r#""ti"#);
    let found: Vec<_> = diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        found,
        ["unterminated string", "expected `:`, found end of input"]
    );

    let text = r#"{"a": 1, "b": [1, 2], "c"#;
    let (node, _) = file(text);
    assert_eq!(keys(&node.unwrap()), ["a", "b", "!"]);
}

#[test]
fn unquoted_keys_are_reported_with_the_quoted_form() {
    let text = r#"{tool:"b"}"#;
    let (_, diagnostics) = file(text);
    assert_eq!(diagnostics.len(), 1);
    let d = &diagnostics[0];
    assert_eq!((d.code, at(text, d)), (Code::JsonSyntax, "tool"));
    assert_eq!(d.help.as_deref(), Some(r#"keys must be quoted: `"tool"`"#));
    assert_eq!(apply_fixes(text, &diagnostics), r#"{"tool":"b"}"#);
}

#[test]
fn trailing_commas_have_their_own_code_and_fix() {
    let text = r#"{ "name": "demo", "groups": [1, 2,], }"#;
    let (node, diagnostics) = file(text);
    assert_eq!(keys(&node.unwrap()), ["name", "groups"]);
    assert_eq!(codes(&diagnostics), [Code::JsonTrailingComma; 2]);
    for d in &diagnostics {
        assert_eq!(at(text, d), ",");
        assert_eq!(
            d.help
                .as_deref()
                .map(|h| h.starts_with("remove the trailing comma")),
            Some(true)
        );
    }
    let fixed = apply_fixes(text, &diagnostics);
    assert_eq!(fixed, r#"{ "name": "demo", "groups": [1, 2] }"#);
    assert!(file(&fixed).1.is_empty());
}

#[test]
fn comments_are_reported_whole_and_skipped() {
    let text = "// about\n{\"a\": /* one */ 1}";
    let (node, diagnostics) = file(text);
    assert_eq!(members(&node.unwrap())[0].value.kind, NodeKind::Number("1"));
    assert_eq!(codes(&diagnostics), [Code::JsonComment; 2]);
    assert_eq!(at(text, &diagnostics[0]), "// about");
    assert_eq!(at(text, &diagnostics[1]), "/* one */");
    assert!(file(&apply_fixes(text, &diagnostics)).1.is_empty());

    let (_, diagnostics) = file("{} /* never closed");
    assert_eq!(codes(&diagnostics), [Code::JsonComment]);
    assert_eq!(diagnostics[0].message, "unclosed comment");
}

#[test]
fn references_are_values_in_items_only() {
    let text = r#"{"tool": "ping", "args": {"host": $args.hosts[0], "n": $out.count}}"#;
    let (node, diagnostics) = parse(text, Mode::Item);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let node = node.unwrap();
    let args = &members(&node)[1].value;
    assert_eq!(members(args)[0].value.kind, NodeKind::Ref("$args.hosts[0]"));
    assert_eq!(&text[members(args)[0].value.span.clone()], "$args.hosts[0]");
    assert_eq!(members(args)[1].value.kind, NodeKind::Ref("$out.count"));

    let (node, diagnostics) = file(text);
    assert_eq!(codes(&diagnostics), [Code::JsonSyntax; 2]);
    assert_eq!(at(text, &diagnostics[0]), "$args.hosts[0]");
    assert!(diagnostics[0].help.as_deref().unwrap().contains("`tools`"));
    let node = node.unwrap();
    assert_eq!(
        members(&members(&node)[1].value)[0].value.kind,
        NodeKind::Error
    );
}

#[test]
fn item_mode_reports_item_syntax_and_malformed_references() {
    let text = r#"{"tool": "x", "args": {"a": $args., "b" 1}}"#;
    let (_, diagnostics) = parse(text, Mode::Item);
    assert_eq!(
        codes(&diagnostics),
        [Code::MalformedReference, Code::ItemSyntax]
    );
    assert_eq!(at(text, &diagnostics[0]), "$args.");
    // Fixes edit the item's own text: lowering escapes them for the enclosing string.
    let (_, diagnostics) = parse(r#"{tool: "x"}"#, Mode::Item);
    assert_eq!(codes(&diagnostics), [Code::ItemSyntax]);
    let fix = diagnostics[0].fix.as_ref().unwrap();
    assert_eq!(fix.edits[0].text, r#""tool""#);
}

#[test]
fn string_errors_point_at_the_bad_bytes() {
    let text = "[\"a\\xb\", \"c\td\", \"\\u12g4\", \"open]";
    let (node, diagnostics) = file(text);
    assert!(node.is_some());
    let found: Vec<_> = diagnostics.iter().map(|d| (d.code, at(text, d))).collect();
    assert_eq!(
        found,
        [
            (Code::JsonString, "\\x"),
            (Code::JsonString, "\t"),
            (Code::JsonString, "\\u12"),
            (Code::JsonString, "\""),
            (Code::JsonSyntax, ""),
        ]
    );
    assert_eq!(diagnostics[0].message, "invalid escape `\\x`");
    assert_eq!(
        diagnostics[1].help.as_deref(),
        Some("control characters must be escaped: write `\\t`")
    );
    assert_eq!(diagnostics[3].message, "unterminated string");
}

#[test]
fn number_errors_suggest_the_json_form() {
    let text = "[01, +1, .5, 1., 0x1F, 1e]";
    let (_, diagnostics) = file(text);
    assert_eq!(codes(&diagnostics), [Code::JsonNumber; 6]);
    let spans: Vec<_> = diagnostics.iter().map(|d| at(text, d)).collect();
    assert_eq!(spans, ["01", "+1", ".5", "1.", "0x1F", "1e"]);
    assert_eq!(
        apply_fixes(text, &diagnostics),
        "[1, 1, 0.5, 1.0, 0x1F, 1e]",
        "only certain repairs are fixes"
    );
}

#[test]
fn words_literals_and_quotes() {
    let text = "[True, NaN, abc, 'q']";
    let (_, diagnostics) = file(text);
    let messages: Vec<_> = diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`True` is not a JSON literal",
            "`NaN` is not a JSON number",
            "unquoted string `abc`",
            "string in single quotes",
        ]
    );
    assert_eq!(
        apply_fixes(text, &diagnostics),
        "[true, NaN, \"abc\", \"q\"]"
    );
}

#[test]
fn exactly_one_value() {
    let (node, diagnostics) = file("");
    assert!(node.is_none());
    assert_eq!(diagnostics[0].message, "expected a JSON value");
    let (node, diagnostics) = file("  // only a comment\n");
    assert!(node.is_none());
    assert_eq!(codes(&diagnostics), [Code::JsonComment, Code::JsonSyntax]);

    let text = r#"{"a": 1} {"b": 2}"#;
    let (node, diagnostics) = file(text);
    assert_eq!(keys(&node.unwrap()), ["a"]);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(at(text, &diagnostics[0]), r#"{"b": 2}"#);
    assert_eq!(
        diagnostics[0].message,
        "unexpected `{` after the end of the JSON value"
    );

    let (node, diagnostics) = file("]");
    assert!(node.is_none());
    assert_eq!(diagnostics[0].message, "expected a JSON value, found `]`");
}

#[test]
fn byte_order_mark_is_reported_and_skipped() {
    let text = "\u{feff}{\"a\": 1}";
    let (node, diagnostics) = file(text);
    assert_eq!(keys(&node.unwrap()), ["a"]);
    assert_eq!(codes(&diagnostics), [Code::JsonSyntax]);
    assert_eq!(at(text, &diagnostics[0]), "\u{feff}");
    assert!(file(&apply_fixes(text, &diagnostics)).1.is_empty());
}

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn nesting_to_the_limit_fits_a_small_stack() {
    let parsed = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let text = nested(MAX_DEPTH);
            let (node, diagnostics) = parse(&text, Mode::File);
            let mut depth = 0;
            let mut node = node.as_ref();
            while let Some(Node {
                kind: NodeKind::Array(items),
                ..
            }) = node
            {
                depth += 1;
                node = items.first();
            }
            (depth, diagnostics.len())
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(parsed, (MAX_DEPTH, 0));
}

#[test]
fn nesting_past_the_limit_is_reported_at_the_first_bracket_too_deep() {
    let text = format!(r#"{{"a": {}, "b": 2}}"#, nested(MAX_DEPTH));
    let (node, diagnostics) = file(&text);
    assert_eq!(codes(&diagnostics), [Code::TooDeep]);
    // The object is one level: the deepest array is the 129th opener, at offset 6 + 127.
    assert_eq!(diagnostics[0].span.range(), 6 + 127..6 + 128);
    assert!(diagnostics[0].help.is_some());
    assert_eq!(keys(&node.unwrap()), ["a", "b"], "the rest is still parsed");
}

#[test]
fn hostile_nesting_never_overflows() {
    let inputs = [
        "[".repeat(100_000),
        "{\"a\":".repeat(100_000),
        "[}".repeat(100_000),
        "{]".repeat(100_000),
        "[{".repeat(50_000) + &"}]".repeat(50_000),
    ];
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for text in &inputs {
                let (_, diagnostics) = parse(text, Mode::File);
                assert!(
                    diagnostics.iter().any(Diagnostic::is_error),
                    "{}",
                    &text[..10]
                );
                let too_deep = diagnostics
                    .iter()
                    .filter(|d| d.code == Code::TooDeep)
                    .count();
                assert!(
                    too_deep <= 1,
                    "{too_deep} reports of one structure too deep"
                );
                assert!(
                    diagnostics.len() < 1000,
                    "{} diagnostics",
                    diagnostics.len()
                );
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

/// The tree as a `serde_json::Value`, strings unescaped by serde_json itself.
fn to_value(node: &Node<'_>) -> serde_json::Value {
    use serde_json::Value;
    match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Number(n) => serde_json::from_str(n).unwrap(),
        NodeKind::String(s) => serde_json::from_str(&format!("\"{s}\"")).unwrap(),
        NodeKind::Array(items) => Value::Array(items.iter().map(to_value).collect()),
        NodeKind::Object(members) => Value::Object(
            members
                .iter()
                .map(|m| {
                    let key: String =
                        serde_json::from_str(&format!("\"{}\"", m.key.text().unwrap())).unwrap();
                    (key, to_value(&m.value))
                })
                .collect(),
        ),
        NodeKind::Ref(_) | NodeKind::Error => panic!("unexpected {node:?}"),
    }
}

#[test]
fn valid_json_reads_as_serde_json_reads_it() {
    let text = r#"
        {"name": "demo", "groups": [
            {"name": "g\u00e9", "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}} ;",
             "n": [-0, 1.5e-3, 12E+2, 0.0], "t": true, "f": false, "z": null, "e": {}, "a": []},
            {"name": "主机", "tools": "\\ \/ \b \f \n \r \t"}
        ]}
    "#;
    let (node, diagnostics) = file(text);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let expected: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(to_value(&node.unwrap()), expected);
}

/// Both grammars on one text: the plain one must accept exactly what the recovering one parses
/// without a diagnostic, and build the same tree from it.
fn assert_grammars_agree(text: &str, mode: Mode) {
    let scanned = super::scan::scan(text, mode, Vec::new(), Vec::new());
    let clean = scanned.diagnostics.is_empty() && scanned.unclosed.is_empty();
    let plain = super::parser::plain(&scanned.tokens);
    let (recovered, diagnostics) = super::parser::recover(text, mode, scanned);
    if let Some(node) = &recovered {
        let broken = crate::invariants::tree_violations(text, node);
        assert!(broken.is_empty(), "{text:?} in {mode:?}: {broken:?}");
    }
    if diagnostics.is_empty() {
        assert!(
            clean,
            "{text:?}: the scan found something, the grammar nothing"
        );
        assert_eq!(plain, recovered, "{text:?} in {mode:?}");
    } else if clean {
        assert_eq!(plain, None, "{text:?}: accepted by the plain grammar only");
    }
}

#[test]
fn plain_and_recovering_grammars_agree_on_json_test_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/testdata/JSONTestSuite/test_parsing");
    let entries = std::fs::read_dir(&dir).unwrap();
    let mut seen = 0;
    for entry in entries {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            assert_grammars_agree(text, Mode::File);
            assert_grammars_agree(text, Mode::Item);
            seen += 1;
        }
    }
    assert!(seen > 250, "only {seen} JSONTestSuite files read");
}

mod grammars_agree {
    use super::{Mode, assert_grammars_agree};
    use proptest::prelude::*;

    /// Tokens and near-tokens, so that most texts are broken somewhere and some are not.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        " ",
        "\"a\"",
        "\"b\\\"c\"",
        "\"主\"",
        "1",
        "-2.5e3",
        "01",
        "true",
        "null",
        "nul",
        "$args.x[0]",
        "$out.",
        "word",
        "'q'",
        "// c\n",
        "/* c */",
        "\"open",
        "=",
    ];

    fn json() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("-0.5".to_owned()),
            Just("\"s\\n\"".to_owned()),
            Just("$args.x".to_owned()),
        ];
        leaf.prop_recursive(6, 48, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-c]", inner), 0..5).prop_map(|v| {
                    let members: Vec<String> =
                        v.iter().map(|(k, v)| format!("\"{k}\" : {v}")).collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn on_token_soup(pieces in prop::collection::vec(prop::sample::select(PIECES), 0..24)) {
            let text = pieces.concat();
            assert_grammars_agree(&text, Mode::File);
            assert_grammars_agree(&text, Mode::Item);
        }

        #[test]
        fn on_generated_values(text in json()) {
            assert_grammars_agree(&text, Mode::File);
            assert_grammars_agree(&text, Mode::Item);
        }
    }
}

/// What the user typed stays in the tree: a member with a malformed key, a missing `:` or a
/// missing value is kept (error key, error value) with the diagnostics unchanged.
#[test]
fn members_recovery_cannot_read_are_kept_with_error_keys_and_values() {
    let cases: &[(&str, &[&str], &str, &str)] = &[
        // text, keys, the last member's key text, its value's text
        (r#"{"a": 1, ti: 2, "b": 3}"#, &["a", "!", "b"], "ti", "2"),
        (r#"{"a": 1, "ti" }"#, &["a", "!"], r#""ti""#, ""),
        (r#"{"a": 1, "ti"}"#, &["a", "!"], r#""ti""#, ""),
        (r#"{"a": 1, 3: 2}"#, &["a", "!"], "3", ": 2"),
        (r#"{"a": 1, "ti": }"#, &["a", "ti"], r#""ti""#, ""),
        (
            r#"{"a": 1, "ti": , "b": 2}"#,
            &["a", "ti", "b"],
            r#""ti""#,
            "",
        ),
    ];
    for &(text, expected, key, value) in cases {
        let (node, diagnostics) = file(text);
        let node = node.unwrap();
        assert!(!diagnostics.is_empty(), "{text}");
        assert_eq!(keys(&node), expected, "{text}");
        assert_eq!(
            crate::invariants::tree_violations(text, &node),
            Vec::<String>::new()
        );
        let kept = members(&node)
            .iter()
            .find(|m| m.key.text() != Some("a") && m.key.text() != Some("b"))
            .unwrap();
        assert_eq!(&text[kept.key_span.clone()], key, "{text}");
        assert_eq!(&text[kept.value.span.clone()], value, "{text}");
    }
}
