//! serde_json doing the front end's *logical* work on the same bytes: parse the file, take every
//! group's `tools` string (unescaped by the parse), split it into items with a simple correct
//! splitter, and parse every item as JSON. This is the fair yardstick for a front end that does
//! all of that and more (spans, offset maps, templates, typed AST).
//!
//! Items may hold bare references (`"host": $args.hosts[0]`), which are not JSON. The
//! baseline quotes them into strings (`"$args.hosts[0]"`) before parsing: the item keeps the
//! same number of nodes, every item is really parsed (none counts as a cheap early error), and
//! the extra copy is paid only by the items that have a bare reference. [`Work::failed`] must be
//! zero on generated input; the benchmarks assert it.

use serde_json::Value;

/// What the baseline did; returned so that the work cannot be optimised away.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    pub groups: usize,
    pub items: usize,
    /// Items with bare references, parsed after quoting them.
    pub quoted: usize,
    /// Items serde_json rejected: zero on generated input.
    pub failed: usize,
}

/// serde_json at the file level only: the floor for any front end.
pub fn file_level(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(bytes).ok()
}

/// The same logical work as the front end, on one file. A file that is not JSON counts as one
/// failure.
pub fn same_work(bytes: &[u8]) -> Work {
    let mut work = Work::default();
    let Ok(file) = serde_json::from_slice::<Value>(bytes) else {
        work.failed += 1;
        return work;
    };
    let groups = file.get("groups").and_then(Value::as_array);
    for group in groups.into_iter().flatten() {
        work.groups += 1;
        let Some(tools) = group.get("tools").and_then(Value::as_str) else {
            continue;
        };
        for (item, bare_ref) in split_items(tools) {
            work.items += 1;
            let parsed = if bare_ref {
                work.quoted += 1;
                serde_json::from_str::<Value>(&quote_bare_refs(item))
            } else {
                serde_json::from_str::<Value>(item)
            };
            if parsed.is_err() {
                work.failed += 1;
            }
        }
    }
    work
}

/// Splits an item list on `;` at depth 0 outside strings, in one pass over the bytes. Each item
/// comes with whether it holds a `$` outside strings (a bare reference). Malformed lists are
/// not diagnosed: the baseline only runs on valid input.
pub fn split_items(tools: &str) -> Vec<(&str, bool)> {
    let bytes = tools.as_bytes();
    let mut items = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut bare_ref) = (0usize, false, false, false);
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'$' => bare_ref = true,
            b';' if depth == 0 => {
                let item = tools.get(start..at).unwrap_or_default().trim();
                if !item.is_empty() {
                    items.push((item, bare_ref));
                }
                start = at + 1;
                bare_ref = false;
            }
            _ => {}
        }
    }
    items
}

/// Rewrites each bare reference of an item (`$args.x.y[0]`, outside strings) as a JSON string.
pub fn quote_bare_refs(item: &str) -> String {
    let bytes = item.as_bytes();
    let mut out = String::with_capacity(item.len() + 8);
    let (mut in_string, mut escaped) = (false, false);
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            at += 1;
            continue;
        }
        if byte == b'"' {
            in_string = true;
            at += 1;
            continue;
        }
        if byte != b'$' {
            at += 1;
            continue;
        }
        let end = reference_end(bytes, at + 1);
        out.push_str(item.get(copied..at).unwrap_or_default());
        out.push('"');
        out.push_str(item.get(at..end).unwrap_or_default());
        out.push('"');
        copied = end;
        at = end;
    }
    out.push_str(item.get(copied..).unwrap_or_default());
    out
}

/// The end of a reference's path: identifier bytes (ASCII or any non-ASCII), `.`, and `[N]`.
fn reference_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&byte) = bytes.get(at) {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.' || byte >= 0x80 {
            at += 1;
        } else if byte == b'[' {
            while bytes.get(at).is_some_and(|&b| b != b']') {
                at += 1;
            }
            at += 1;
        } else {
            break;
        }
    }
    at.min(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::{quote_bare_refs, same_work, split_items};

    #[test]
    fn splits_only_at_depth_zero_outside_strings() {
        let tools = r#"{"a":"x; y"} ; {"b":[1,{"c":";"}]};{"d":$args.x} ;"#;
        let items = split_items(tools);
        assert_eq!(
            items,
            vec![
                (r#"{"a":"x; y"}"#, false),
                (r#"{"b":[1,{"c":";"}]}"#, false),
                (r#"{"d":$args.x}"#, true),
            ]
        );
    }

    #[test]
    fn quotes_bare_references_and_leaves_strings_alone() {
        let item = r#"{"h":$args.hosts[0],"s":"$args.x \"$y\"","o":{"k":$args.主机}}"#;
        assert_eq!(
            quote_bare_refs(item),
            r#"{"h":"$args.hosts[0]","s":"$args.x \"$y\"","o":{"k":"$args.主机"}}"#
        );
    }

    #[test]
    fn counts_groups_items_and_failures() {
        let file = r#"{"groups":[{"tools":"{\"a\":1} ; {\"b\":$args.x} ;"},{"tools":"{x} ;"}]}"#;
        let work = same_work(file.as_bytes());
        assert_eq!(
            (work.groups, work.items, work.quoted, work.failed),
            (2, 3, 1, 1)
        );
        assert_eq!(same_work(b"nope").failed, 1);
    }

    #[test]
    fn generated_files_are_fully_parsed() {
        let text = crate::sequence_file(100_000);
        let work = same_work(text.as_bytes());
        assert_eq!(work.failed, 0);
        assert!(work.items > 4 * work.groups, "{work:?}");
        assert!(work.quoted > 0);
    }
}
