use super::*;
use crate::JsonType;

#[test]
fn pure_filters_compile() {
    for filter in [
        ".",
        "trim | tonumber",
        "split(\"\\n\") | map(select(length > 0)) | length",
        "fromjson | .items | map(.n) | add",
        "\"\\(.a) and \\(.b)\"",
        "[.[] | ascii_downcase] | join(\",\")",
        "todate",
        "test(\"a+\")",
        "def f: f; f",
        "[range(3)], [range(1; 3)], [range(0; 1; 0.5)]",
        "transpose",
    ] {
        assert_eq!(problems(filter), [], "{filter}");
    }
}

#[test]
fn impure_names_are_unknown() {
    for name in [
        "env",
        "now",
        "input",
        "inputs",
        "debug",
        "stderr",
        "halt",
        "halt_error",
        "localtime",
        "input_filename",
    ] {
        let found = problems(name);
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        assert_eq!(found[0].kind, ProblemKind::Unknown, "{name}");
        assert_eq!(found[0].range, 0..name.len(), "{name}");
        assert!(found[0].help.contains("pure"), "{name}: {}", found[0].help);
    }
    for var in ["$ENV", "$__loc__"] {
        let found = problems(var);
        assert_eq!(found[0].kind, ProblemKind::Unknown, "{var}: {found:?}");
        assert_eq!(found[0].range, 0..var.len(), "{var}");
    }
    let found = problems("1 | $ENV.PATH");
    assert_eq!(found[0].range, 4..8);
}

#[test]
fn problems_point_at_their_bytes() {
    let found = problems(". | lenght");
    assert_eq!(found[0].range, 4..10);
    assert_eq!(found[0].help, "did you mean `length`?");
    let found = problems("map(.a");
    assert_eq!(found[0].kind, ProblemKind::Syntax, "{found:?}");
    let found = problems(".a |");
    assert_eq!(found[0].kind, ProblemKind::Syntax, "{found:?}");
    assert_eq!(found[0].range, 4..4);
    let found = problems("include \"x\"; .");
    assert_eq!(found[0].kind, ProblemKind::Syntax, "{found:?}");
    assert!(found[0].message.contains("import"), "{found:?}");
}

#[test]
fn evident_result_types() {
    use JsonType as J;
    let cases: [(&str, Option<J>); 16] = [
        ("trim | tonumber", Some(J::Number)),
        ("length", Some(J::Integer)),
        ("tostring", Some(J::String)),
        ("split(\"\\n\")", Some(J::Array)),
        ("[.[] | tonumber]", Some(J::Array)),
        ("{a: 1}", Some(J::Object)),
        ("42", Some(J::Integer)),
        ("\"x\\(.)\"", Some(J::String)),
        ("map(tonumber) | add", Some(J::Number)),
        ("split(\",\") | map(tonumber) | add", Some(J::Number)),
        ("[.[] | length] | add", Some(J::Integer)),
        ("map(select(. > 1)) | length", Some(J::Integer)),
        (".a > 1", Some(J::Boolean)),
        ("add", None),
        (".a", None),
        ("def length: \"x\"; length", None),
    ];
    for (filter, expected) in cases {
        assert_eq!(result_type(filter, None), expected, "{filter}");
    }
}

#[test]
fn pieces_cover_words_variables_literals_and_interpolations() {
    let filter = r#"if .n > 1 then map(.a) as $x | "v \(.b)" else 2 end"#;
    let shown: Vec<(&str, Piece)> = pieces(filter)
        .into_iter()
        .map(|(range, piece)| (&filter[range], piece))
        .collect();
    use Piece::*;
    assert_eq!(
        shown,
        [
            ("if", Keyword),
            (".n", Field),
            (">", Operator),
            ("1", Number),
            ("then", Keyword),
            ("map", Function),
            (".a", Field),
            ("as", Keyword),
            ("$x", Variable),
            ("|", Operator),
            ("\"v \\", String),
            (".b", Field),
            ("\"", String),
            ("else", Keyword),
            ("2", Number),
            ("end", Keyword),
        ]
    );
    assert_eq!(pieces("map(("), []);
}

/// The widest filters of each shape that nests without delimiters, and the deepest that nest
/// with them, each just within the bounds: `(filter, tokens it counts)`.
fn deepest_within_bounds() -> Vec<String> {
    let n = MAX_NESTING;
    // Tokens each repeated unit counts.
    let units = |unit_tokens: usize| (MAX_TOKENS - 8) / unit_tokens;
    vec![
        format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        format!("{}1{}", "{a:".repeat(n), "}".repeat(n)),
        format!("{}1{}", "\"\\(".repeat(n), ")\"".repeat(n)),
        format!("1{}", "|1".repeat(units(2))),
        format!("[1{}]", ",1".repeat(units(2))),
        format!("1{}", " + 1".repeat(units(2))),
        format!("{}1", "- ".repeat(units(1))),
        format!("{}1", "try ".repeat(units(1))),
        format!("{}1", ". as $x | ".repeat(units(5))),
        format!("{}1", "def f: ".repeat(units(3))),
        format!(
            "{}1{}",
            "if . then . else ".repeat(units(6)),
            " end".repeat(units(6))
        ),
        format!("{}1", "label $x | ".repeat(units(3))),
        format!("1{}", " as [$a] | 1".repeat(units(7))),
    ]
}

/// Every entry point jaq descends through holds the deepest filters within the bounds on a
/// thread of a tokio worker's stack (2 MiB), in debug builds too: they run on a stack of
/// their own.
#[test]
fn the_deepest_filters_within_the_bounds_fit_any_thread() {
    for filter in deepest_within_bounds() {
        let size = size(&filter);
        assert!(
            size.nesting <= MAX_NESTING && size.tokens <= MAX_TOKENS,
            "{size:?}"
        );
        let shown = filter.chars().take(24).collect::<String>();
        let run = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let found = problems(&filter);
                let _ = result_type(&filter, None);
                let _ = pieces(&filter);
                found
            })
            .unwrap();
        let found = run.join().unwrap();
        assert!(
            found.iter().all(|p| p.kind != ProblemKind::TooBig),
            "{shown}: {found:?}"
        );
    }
}

/// Past a bound, jaq never sees the filter: one problem, at the byte that passed it.
#[test]
fn past_the_bounds_a_filter_is_refused_before_jaq_reads_it() {
    let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
    let found = problems(&deep);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, ProblemKind::TooBig);
    assert_eq!(found[0].range, MAX_NESTING..MAX_NESTING + 1);
    assert!(found[0].message.contains("nests deeper"), "{found:?}");
    let long = format!("1{}", "|1".repeat(MAX_TOKENS));
    let found = problems(&long);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].message.contains("tokens"), "{found:?}");
    assert_eq!(result_type(&deep, None), None);
    assert_eq!(pieces(&deep), []);
    // Strings and comments do not count their text, only their interpolations.
    let quiet = format!("\"{}\" # {}\n", "[".repeat(5000), "(".repeat(5000));
    assert_eq!(size(&quiet).nesting, 0);
    assert!(problems(&quiet).is_empty());
}
