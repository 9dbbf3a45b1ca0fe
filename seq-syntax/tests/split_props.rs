//! Properties of the `tools` splitter: well-formed lists round-trip, and no input loses an
//! item without an error (silently swallowing a tool is the worst failure a splitter can have).

use proptest::prelude::*;
use proptest::sample::Index;
use seq_syntax::split::{Split, split_items};
use serde_json::Value;
use std::ops::Range;

/// Text fragments that trouble a naive splitter, plus anything.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => prop::sample::select(vec![
            ";", "{", "}", "[", "]", "\"", "\\", "\\\"", "\\\\", " ; ", "主机", "é", "😀",
            "echo a; echo b", "$args.x", "\n", "\t",
        ])
        .prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
        2 => "[a-z0-9 ]{0,6}",
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        tricky_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((tricky_text(), inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// One item: a JSON object, compact or pretty (whitespace and newlines inside).
fn item() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((tricky_text(), json_value()), 0..4),
        any::<bool>(),
    )
        .prop_map(|(members, pretty)| {
            let object = Value::Object(members.into_iter().collect());
            let text = if pretty {
                serde_json::to_string_pretty(&object)
            } else {
                serde_json::to_string(&object)
            };
            text.unwrap_or_default()
        })
}

fn whitespace() -> impl Strategy<Value = String> {
    "[ \t\r\n]{0,3}"
}

/// A well-formed list: each item followed by `;`, whitespace around; with the items' ranges.
fn item_list() -> impl Strategy<Value = (String, Vec<Range<usize>>)> {
    (
        prop::collection::vec((whitespace(), item(), whitespace()), 0..5),
        whitespace(),
    )
        .prop_map(|(items, tail)| {
            let mut text = String::new();
            let mut ranges = Vec::new();
            for (before, item, after) in items {
                text.push_str(&before);
                ranges.push(text.len()..text.len() + item.len());
                text.push_str(&item);
                text.push_str(&after);
                text.push(';');
            }
            text.push_str(&tail);
            (text, ranges)
        })
}

/// A well-formed list with one character deleted, inserted or duplicated; with its item count.
fn near_valid_list() -> impl Strategy<Value = (String, usize)> {
    let structural = prop::sample::select(vec!['{', '}', '[', ']', '"', '\\', ';', ' ', 'x']);
    (item_list(), 0..3u8, any::<Index>(), structural).prop_map(|((text, ranges), op, at, ch)| {
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let mut mutated = text.clone();
        if chars.is_empty() {
            mutated.push(ch);
        } else {
            let (i, old) = chars[at.index(chars.len())];
            match op {
                0 => {
                    mutated.remove(i);
                }
                1 => mutated.insert(i, ch),
                _ => mutated.insert(i, old),
            }
        }
        (mutated, ranges.len())
    })
}

/// Strings weighted towards the splitter's structural characters.
fn structural_noise() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        8 => prop::sample::select(vec!['{', '}', '[', ']', '"', ';', '\\', ' ', '\n', 'a', ':', ',']),
        2 => any::<char>(),
    ];
    prop::collection::vec(ch, 0..64).prop_map(|chars| chars.into_iter().collect())
}

/// An independent reading of a list without errors: whitespace, then `{…}` (a balanced group,
/// strings skipped) and `;`, repeated. `None` if the text is not such a list.
fn reference_items(text: &str) -> Option<Vec<Range<usize>>> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut pos = skip_whitespace(bytes, 0);
    while pos < bytes.len() {
        if bytes[pos] != b'{' {
            return None;
        }
        let end = group_end(bytes, pos)?;
        items.push(pos..end);
        pos = skip_whitespace(bytes, end);
        if bytes.get(pos) != Some(&b';') {
            return None;
        }
        pos = skip_whitespace(bytes, pos + 1);
    }
    Some(items)
}

fn skip_whitespace(bytes: &[u8], mut pos: usize) -> usize {
    while matches!(bytes.get(pos), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        pos += 1;
    }
    pos
}

/// The end of the group opened at `open` (recursively), `None` if unbalanced.
fn group_end(bytes: &[u8], open: usize) -> Option<usize> {
    let close = if bytes[open] == b'{' { b'}' } else { b']' };
    let mut pos = open + 1;
    loop {
        match *bytes.get(pos)? {
            b'"' => {
                pos += 1;
                while *bytes.get(pos)? != b'"' {
                    pos += if bytes[pos] == b'\\' { 2 } else { 1 };
                }
                pos += 1;
            }
            b'{' | b'[' => pos = group_end(bytes, pos)?,
            b if b == close => return Some(pos + 1),
            b'}' | b']' => return None,
            _ => pos += 1,
        }
    }
}

fn without_whitespace(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\r' | '\n'))
        .collect()
}

/// Spans are in bounds and on character boundaries; an error-free split is exactly the list's
/// top-level objects, and re-joining them with `;` gives the input back modulo whitespace.
fn check_complete(text: &str, split: &Split) -> Result<(), TestCaseError> {
    for range in split
        .items
        .iter()
        .chain(split.errors.iter().map(|e| &e.span))
    {
        prop_assert!(text.get(range.clone()).is_some(), "bad range {range:?}");
    }
    if split.errors.is_empty() {
        prop_assert_eq!(Some(split.items.clone()), reference_items(text));
        let joined: String = split
            .items
            .iter()
            .map(|r| format!("{};", &text[r.clone()]))
            .collect();
        prop_assert_eq!(without_whitespace(&joined), without_whitespace(text));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_lists_round_trip((text, ranges) in item_list()) {
        let split = split_items(&text);
        prop_assert_eq!(&split.errors, &[]);
        prop_assert_eq!(&split.items, &ranges);
        check_complete(&text, &split)?;
    }

    #[test]
    fn near_valid_lists_never_lose_an_item_silently((text, count) in near_valid_list()) {
        let split = split_items(&text);
        check_complete(&text, &split)?;
        // A mutation can re-balance the text so that two items read as one (a deleted quote
        // makes `};{` part of a string): that item is not JSON, and the item parser reports it.
        let items_are_json = split
            .items
            .iter()
            .all(|r| serde_json::from_str::<Value>(&text[r.clone()]).is_ok());
        if split.errors.is_empty() && items_are_json {
            prop_assert_eq!(split.items.len(), count);
        }
    }

    #[test]
    fn noise_is_complete_or_reported(text in structural_noise()) {
        check_complete(&text, &split_items(&text))?;
    }

    #[test]
    fn arbitrary_strings_are_complete_or_reported(text in any::<String>()) {
        check_complete(&text, &split_items(&text))?;
    }
}
