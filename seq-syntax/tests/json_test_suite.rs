//! The file-level JSON parser against JSONTestSuite (`test_parsing/`): every `y_` file is
//! accepted without a diagnostic, every `n_` file gets at least one error, and no `i_` file
//! (implementation-defined) makes the parser panic.
#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_syntax::Diagnostic;
use seq_syntax::json::{Mode, Node, NodeKind, parse};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

fn suite() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/testdata/JSONTestSuite/test_parsing");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|err| {
        panic!(
            "JSONTestSuite not found at {} ({err}); it lives in the shared test data",
            dir.display()
        )
    });
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .filter(|(name, _)| name.ends_with(".json"))
        .collect();
    files.sort();
    assert!(
        files.len() > 300,
        "JSONTestSuite looks incomplete: {} files",
        files.len()
    );
    files
}

/// What parsing a file gave: `None` for text that is not UTF-8, else the diagnostics and
/// whether a tree came back; `Err` holds a panic's message.
fn outcome(bytes: &[u8]) -> Result<Option<(bool, Vec<Diagnostic>)>, String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(None);
    };
    catch_unwind(AssertUnwindSafe(|| {
        let (node, diagnostics) = parse(text, Mode::File);
        Some((node.is_some(), diagnostics))
    }))
    .map_err(|panic| {
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default()
    })
}

#[test]
fn json_test_suite() {
    let mut failures = Vec::new();
    let mut counts = [0usize; 3];
    for (name, bytes) in suite() {
        let failure = match (name.get(..2), outcome(&bytes)) {
            (_, Err(panic)) => Some(format!("{name}: panicked: {panic}")),
            (Some("y_"), Ok(result)) => {
                counts[0] += 1;
                match result {
                    None => Some(format!("{name}: not UTF-8")),
                    Some((true, diagnostics)) if diagnostics.is_empty() => {
                        same_as_serde_json(&name, &bytes)
                    }
                    Some((node, diagnostics)) => {
                        Some(format!("{name}: rejected (tree: {node}): {diagnostics:?}"))
                    }
                }
            }
            (Some("n_"), Ok(result)) => {
                counts[1] += 1;
                match result {
                    Some((_, diagnostics)) if !diagnostics.iter().any(Diagnostic::is_error) => {
                        Some(format!("{name}: accepted"))
                    }
                    None | Some(_) => None,
                }
            }
            (Some("i_"), Ok(_)) => {
                counts[2] += 1;
                None
            }
            (_, Ok(_)) => Some(format!("{name}: unexpected file name")),
        };
        failures.extend(failure);
    }
    assert!(
        counts.iter().all(|&n| n > 0),
        "y/n/i files counted: {counts:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The tree read back as a `serde_json::Value` (strings and numbers decoded by serde_json).
fn to_value(node: &Node<'_>) -> Option<serde_json::Value> {
    use serde_json::Value;
    let quoted = |body: &str| serde_json::from_str::<String>(&format!("\"{body}\"")).ok();
    Some(match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Number(n) => serde_json::from_str(n).ok()?,
        NodeKind::String(s) => Value::String(quoted(s)?),
        NodeKind::Array(items) => Value::Array(items.iter().map(to_value).collect::<Option<_>>()?),
        NodeKind::Object(members) => Value::Object(
            members
                .iter()
                .map(|m| Some((quoted(m.key.text()?)?, to_value(&m.value)?)))
                .collect::<Option<_>>()?,
        ),
        NodeKind::Ref(_) | NodeKind::Error => return None,
    })
}

/// An accepted file must also read as serde_json reads it: the same values under the same keys.
fn same_as_serde_json(name: &str, bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let expected: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) => return Some(format!("{name}: serde_json rejects it ({err})")),
    };
    let (node, _) = parse(text, Mode::File);
    let found = node.as_ref().and_then(to_value);
    (found.as_ref() != Some(&expected))
        .then(|| format!("{name}: read as {found:?}, serde_json reads {expected:?}"))
}
