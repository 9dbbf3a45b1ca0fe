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
