//! No cascades, no masking: adding an unknown field, a bad enum value or a broken item anywhere
//! in a clean generated sequence never removes a diagnostic that an independent mistake
//! produced. The clean sequences come from `seq-gen`; the mistakes are made in its JSON tree.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use proptest::prelude::*;
use seq_catalog::Catalog;
use seq_check::{Source, check};
use serde_json::{Value, json};

/// The mistake whose diagnostics must survive, made in one group.
#[derive(Clone, Copy, Debug)]
enum Independent {
    /// An item calling a tool no catalog knows (W0505).
    UnknownTool,
    /// An item reading an input its group does not declare (E0502).
    UndeclaredInput,
    /// An item writing a slot its group does not declare (E0501).
    UndeclaredOutput,
    /// `retries` without `on_error: retry` (E0523).
    RetriesWithoutRetry,
}

/// The mistake added afterwards, anywhere.
#[derive(Clone, Copy, Debug)]
enum Added {
    UnknownFieldInSequence,
    UnknownFieldInGroup,
    UnknownFieldInItem,
    /// `missing` set to a value it cannot take.
    BadEnum,
    /// A bad duration in `timeout`.
    BadDuration,
    /// An item whose JSON is broken (a missing `,`).
    BrokenItem,
    /// A group that is not an object.
    BrokenGroup,
    /// A group's `tools` string written with its quotes unescaped (made in the text).
    RawQuotes,
}

fn groups(file: &mut Value) -> &mut Vec<Value> {
    file["groups"].as_array_mut().unwrap()
}

fn push_item(group: &mut Value, item: &str) {
    let tools = group["tools"].as_str().unwrap().to_owned();
    group["tools"] = Value::String(format!("{tools} {item} ;"));
}

fn make(file: &mut Value, at: usize, mistake: Independent) {
    let group = &mut groups(file)[at];
    match mistake {
        Independent::UnknownTool => push_item(group, r#"{"tool":"zz_no_such_tool","args":{}}"#),
        Independent::UndeclaredInput => push_item(
            group,
            r#"{"tool":"echo","args":{"value":"$args.zz_undeclared"}}"#,
        ),
        Independent::UndeclaredOutput => push_item(
            group,
            r#"{"tool":"echo","args":{"value":1},"as":"zz_slot"}"#,
        ),
        Independent::RetriesWithoutRetry => {
            group["on_error"] = json!("continue");
            group["retries"] = json!(1);
        }
    }
}

fn add(file: &mut Value, at: usize, mistake: Added) {
    let count = groups(file).len();
    let group = &mut groups(file)[at % count];
    match mistake {
        Added::UnknownFieldInSequence => file["zz_field"] = json!(1),
        Added::UnknownFieldInGroup => group["zz_field"] = json!(1),
        Added::UnknownFieldInItem => {
            push_item(group, r#"{"tool":"echo","args":{"value":1},"zz_field":1}"#)
        }
        Added::BadEnum => group["missing"] = json!("skipp"),
        Added::BadDuration => group["timeout"] = json!("1.5s"),
        Added::BrokenItem => push_item(group, r#"{"tool":"echo" "args":{"value":1}}"#),
        Added::BrokenGroup => groups(file).insert(at % count, json!(42)),
        // Made in the text, by `written`.
        Added::RawQuotes => {}
    }
}

/// The file's text with the added mistake, if it is one made in the text: the `tools` string of
/// group `at` with its quotes unescaped (`None` when its items hold escapes of their own).
fn written(file: &mut Value, at: usize, mistake: Added) -> Option<String> {
    let text = file.to_string();
    let Added::RawQuotes = mistake else {
        return Some(text);
    };
    let count = groups(file).len();
    let tools = groups(file)[at % count]["tools"].as_str()?.to_owned();
    if tools.contains(|c: char| c == '\\' || c.is_control()) {
        return None;
    }
    let literal = serde_json::to_string(&tools).unwrap();
    (text.matches(&literal).count() == 1)
        .then(|| text.replace(&literal, &literal.replace("\\\"", "\"")))
}

/// The diagnostics by what they say (spans move when text is added before them).
fn said(text: &str) -> Vec<(String, String)> {
    let result = check(&[Source::new("s.json", text)], &Catalog::builtin());
    let mut said: Vec<(String, String)> = result.files[0]
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str().to_owned(), d.message.clone()))
        .collect();
    said.sort();
    said
}

fn independent() -> impl Strategy<Value = Independent> {
    prop_oneof![
        Just(Independent::UnknownTool),
        Just(Independent::UndeclaredInput),
        Just(Independent::UndeclaredOutput),
        Just(Independent::RetriesWithoutRetry),
    ]
}

fn added() -> impl Strategy<Value = Added> {
    prop_oneof![
        Just(Added::UnknownFieldInSequence),
        Just(Added::UnknownFieldInGroup),
        Just(Added::UnknownFieldInItem),
        Just(Added::BadEnum),
        Just(Added::BadDuration),
        Just(Added::BrokenItem),
        Just(Added::BrokenGroup),
        Just(Added::RawQuotes),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn an_added_mistake_hides_no_independent_one(
        size in 1_500usize..6_000,
        first in any::<prop::sample::Index>(),
        mistake in independent(),
        second in any::<prop::sample::Index>(),
        more in added(),
    ) {
        let mut file: Value = serde_json::from_str(&seq_gen::sequence_file(size)).unwrap();
        prop_assume!(said(&file.to_string()).is_empty());
        let count = groups(&mut file).len();
        let at = first.index(count);
        make(&mut file, at, mistake);
        let before = said(&file.to_string());
        prop_assert!(!before.is_empty(), "{mistake:?} is reported");
        add(&mut file, second.index(count), more);
        let text = written(&mut file, second.index(count), more);
        prop_assume!(text.is_some());
        let after = said(&text.unwrap_or_default());
        for found in &before {
            prop_assert!(
                after.contains(found),
                "{more:?} hides {found:?} of {mistake:?}; now {after:#?}"
            );
        }
        prop_assert!(after.len() > before.len(), "{more:?} is reported");
    }
}
