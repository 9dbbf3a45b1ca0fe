//! A group's `tools` string written with its quotes unescaped, or its items on several lines, in
//! a clean generated file: one E0004, and its machine-applicable fix gives back the file.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use proptest::prelude::*;
use proptest::sample::Index;
use seq_syntax::Code;
use seq_syntax::apply::apply_fixes;
use seq_syntax::split::split_items;
use serde_json::Value;

/// How the string is broken.
#[derive(Clone, Copy, Debug)]
enum Mistake {
    /// Every `\"` written `"`.
    Quotes,
    /// The items written one a line, with raw line breaks.
    LineBreaks,
    /// Both.
    Both,
}

/// The groups whose `tools` text has no backslash or control character and splits into items:
/// their indices and items.
fn plain_tools(file: &Value) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    for (i, group) in file["groups"].as_array().unwrap().iter().enumerate() {
        let Some(tools) = group["tools"].as_str() else {
            continue;
        };
        if tools.contains(|c: char| c == '\\' || c.is_control()) {
            continue;
        }
        let split = split_items(tools);
        if split.errors.is_empty() && !split.items.is_empty() {
            let items = split.items.iter().map(|r| tools[r.clone()].to_owned());
            found.push((i, items.collect()));
        }
    }
    found
}

fn mistake() -> impl Strategy<Value = Mistake> {
    prop_oneof![
        Just(Mistake::Quotes),
        Just(Mistake::LineBreaks),
        Just(Mistake::Both)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_broken_tools_string_is_one_error_whose_fix_restores_it(
        // Up to 30 KB: a file must reach a group with plain `tools` (one in ten or so), and
        // where the first one falls depends on how the generator draws.
        size in 1_500usize..30_000,
        pretty in any::<bool>(),
        pick in any::<Index>(),
        mistake in mistake(),
    ) {
        let mut file: Value = serde_json::from_str(&seq_gen::sequence_file(size)).unwrap();
        let plain = plain_tools(&file);
        prop_assume!(!plain.is_empty());
        let (at, items) = &plain[pick.index(plain.len())];
        // What the author meant: the items, one a line when they are written on several.
        let separator = match mistake {
            Mistake::Quotes => " ; ",
            Mistake::LineBreaks | Mistake::Both => " ;\n    ",
        };
        let meant_tools = format!("{} ;", items.join(separator));
        file["groups"][*at]["tools"] = Value::String(meant_tools.clone());
        let meant = if pretty {
            serde_json::to_string_pretty(&file).unwrap()
        } else {
            file.to_string()
        };
        prop_assume!(!seq_syntax::parse(&meant).has_errors());
        let literal = serde_json::to_string(&meant_tools).unwrap();
        prop_assume!(meant.matches(&literal).count() == 1);
        let start = meant.find(&literal).unwrap();
        let wrong = match mistake {
            Mistake::Quotes => literal.replace("\\\"", "\""),
            Mistake::LineBreaks => literal.replace("\\n", "\n"),
            Mistake::Both => literal.replace("\\\"", "\"").replace("\\n", "\n"),
        };
        let mut written = meant.clone();
        written.replace_range(start..start + literal.len(), &wrong);

        let parse = seq_syntax::parse(&written);
        let errors: Vec<_> = parse.diagnostics.iter().filter(|d| d.is_error()).collect();
        prop_assert_eq!(errors.len(), 1, "{:#?}", errors);
        prop_assert_eq!(errors[0].code, Code::JsonString);
        let fix = errors[0].fix.as_ref();
        prop_assert!(fix.is_some_and(|f| f.is_machine_applicable()), "{:#?}", errors);
        let span = errors[0].span.range();
        prop_assert!(start < span.start && span.end < start + wrong.len());
        prop_assert_eq!(apply_fixes(&written, &parse.diagnostics).text, meant);
    }
}
