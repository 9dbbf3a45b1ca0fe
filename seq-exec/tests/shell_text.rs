//! Values in `cmd_run`'s shell text (docs/reference.md, "Shell text"): whatever a value holds, it
//! reaches the command as literal text, in each quoting context; `argv` runs without a shell.
//! Every test runs the real `sh`.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod common;

use common::MemorySource;
use proptest::prelude::*;
use seq_catalog::Catalog;
use seq_check::Source;
use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::Engine;
use seq_exec::engine::{RunReport, RunRequest};
use seq_exec::{Caller, Reason};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;

/// Values that would be code if pasted as they are.
const HOSTILE: &[&str] = &[
    "a; touch pwned",
    "a && touch pwned",
    "a | touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    "it's'; touch pwned; '",
    "say \"hi\"; touch pwned \"",
    "back\\slash\\",
    "line\ntouch pwned",
    "*",
    "?[a]*",
    "~",
    "$HOME ${HOME}",
    "> pwned",
    "",
    "-n",
    "a  b\tc",
];

/// The sequence: one group reading input `x`, running `item` into slot `r`.
fn sequence(item: &str) -> seq_syntax::ast::Sequence {
    let text = serde_json::to_string(&json!({
        "name": "s",
        "groups": [{"name": "g", "in": {"x": "string"}, "out": {"r": "object"},
                    "tools": format!("{item} ;")}],
    }))
    .unwrap();
    let check = seq_check::check(&[Source::new("s.json", text)], &Catalog::builtin());
    let file = check.files.into_iter().next().unwrap();
    let errors: Vec<_> = file.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{item}: {errors:#?}");
    file.sequence.unwrap()
}

/// Runs the item with `x` = `value` on the built-in tools in `root`.
async fn run_with_x(root: &Path, item: &str, value: &str) -> RunReport {
    let engine = Engine::new(Arc::new(BuiltinHost::new(root)), MemorySource::new());
    let mut args = Map::new();
    args.insert("x".to_owned(), Value::String(value.to_owned()));
    engine
        .run(
            &sequence(item),
            args,
            RunRequest::new(&Caller::new("alice")),
        )
        .await
}

/// Runs the item with `x` = `value` in `root`; the command's stdout.
async fn stdout_of(root: &Path, item: &str, value: &str) -> String {
    let report = run_with_x(root, item, value).await;
    let group = &report.groups[0];
    assert!(
        report.ok,
        "{item} with {value:?}: {:#?}",
        group.items[0].error
    );
    group.out["r"]["stdout"].as_str().unwrap().to_owned()
}

fn command_item(command: &str) -> String {
    let args = json!({"command": command});
    format!(r#"{{"tool":"cmd_run","args":{args},"as":"r"}}"#)
}

/// Each context with the literal text around the value, and what `printf` prints of it.
fn contexts() -> Vec<(String, &'static str, &'static str)> {
    vec![
        ("printf %s $args.x".to_owned(), "", ""),
        ("printf %s <$args.x>".to_owned(), "<", ">"),
        ("printf %s \"<$args.x>\"".to_owned(), "<", ">"),
        ("printf %s '<'\"$args.x\"'>'".to_owned(), "<", ">"),
        ("printf %s \"$(printf %s $args.x)\"".to_owned(), "", ""),
        ("printf %s \"a'$args.x'b\"".to_owned(), "a'", "'b"),
        ("printf %s 'a\"'\"$args.x\"'\"b'".to_owned(), "a\"", "\"b"),
        (
            "case $args.x in $args.x) printf %s \"<$args.x>\";; esac".to_owned(),
            "<",
            ">",
        ),
        ("x=$args.x; printf %s \"<$x>\"".to_owned(), "<", ">"),
    ]
}

#[tokio::test]
async fn hostile_values_reach_the_command_as_text_in_every_context() {
    let dir = tempfile::tempdir().unwrap();
    for (command, before, after) in contexts() {
        // `<$args.x>` outside quotes would be a redirection: only the quoted contexts use it.
        if command.contains(" <$") {
            continue;
        }
        let item = command_item(&command);
        for value in HOSTILE {
            // `$(printf %s ...)` drops trailing newlines, as command substitution does.
            let expected = if command.contains("$(") {
                value.trim_end_matches('\n').to_owned()
            } else {
                format!("{before}{value}{after}")
            };
            assert_eq!(
                stdout_of(dir.path(), &item, value).await,
                expected,
                "{command} with {value:?}"
            );
        }
    }
    assert!(
        !dir.path().join("pwned").exists(),
        "a value ran as a command"
    );
}

/// `$$` is the shell's process id, read as a pair by the template as by the shell: `$$args.x`
/// holds no reference (the id, then the text `args.x`), and `$$$args.x` is the id followed by
/// the value, which stays data.
#[tokio::test]
async fn dollar_pairs_are_the_process_id_and_the_value_stays_data() {
    let dir = tempfile::tempdir().unwrap();
    let pid_then = |out: &str, rest: &str| {
        out.strip_suffix(rest)
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    };
    for (command, rest) in [
        ("printf %s $$args.x", "args.x"),
        ("printf %s \"$$args.x\"", "args.x"),
        ("printf %s $$$args.x", "$(touch pwned) 'a b'"),
        ("printf %s \"$$$args.x\"", "$(touch pwned) 'a b'"),
    ] {
        let out = stdout_of(dir.path(), &command_item(command), "$(touch pwned) 'a b'").await;
        assert!(pid_then(&out, rest), "{command}: {out:?}");
    }
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn a_bare_reference_as_the_command_is_one_word_not_code() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_with_x(
        dir.path(),
        r#"{"tool":"cmd_run","args":{"command":$args.x},"as":"r"}"#,
        "touch pwned",
    )
    .await;
    let error = report.groups[0].items[0].error.as_ref().unwrap();
    assert_eq!(error.reason, Reason::Failed, "{error:?}");
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn a_value_holding_a_nul_byte_is_refused_not_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_with_x(dir.path(), &command_item("printf %s $args.x"), "a\u{0}b").await;
    let error = report.groups[0].items[0].error.as_ref().unwrap();
    assert_eq!(error.reason, Reason::ArgError, "{error:?}");
    assert!(
        error.detail.as_deref().unwrap_or("").contains("NUL"),
        "{error:?}"
    );
}

#[tokio::test]
async fn env_sets_variables_and_refuses_what_the_environment_cannot_hold() {
    use seq_exec::ToolHost;
    let dir = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(dir.path());
    let caller = Caller::new("local");
    let ran = host
        .call(
            &caller,
            "cmd_run",
            json!({"command": "printf %s \"$A\"", "env": {"A": "x; $(touch pwned)"}}),
        )
        .await
        .unwrap();
    assert_eq!(ran["stdout"], "x; $(touch pwned)");
    for env in [
        json!({"A=B": "x"}),
        json!({"A": "x\u{0}"}),
        json!({"A": 1}),
        json!("A"),
    ] {
        let error = host
            .call(&caller, "cmd_run", json!({"command": "true", "env": env}))
            .await
            .unwrap_err();
        assert_eq!(error.reason, Reason::Type, "{env}");
    }
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn argv_runs_without_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let item = r#"{"tool":"cmd_run","args":{"argv":["printf","%s","$args.x"]},"as":"r"}"#;
    for value in HOSTILE {
        assert_eq!(stdout_of(dir.path(), item, value).await, *value);
    }
    assert!(!dir.path().join("pwned").exists());
}

#[tokio::test]
async fn argv_and_command_together_or_neither_are_refused_by_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let host = BuiltinHost::new(dir.path());
    use seq_exec::ToolHost;
    let both = host
        .call(
            &Caller::new("local"),
            "cmd_run",
            json!({"command": "true", "argv": ["true"]}),
        )
        .await
        .unwrap_err();
    assert_eq!(both.reason, Reason::ArgError);
    let neither = host
        .call(&Caller::new("local"), "cmd_run", json!({}))
        .await
        .unwrap_err();
    assert_eq!(neither.reason, Reason::Required);
    let empty = host
        .call(&Caller::new("local"), "cmd_run", json!({"argv": []}))
        .await
        .unwrap_err();
    assert_eq!(empty.reason, Reason::Type);
}

fn value_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            proptest::sample::select(vec![
                ";", "&&", "|", "$(", ")", "`", "'", "\"", "\\", "\n", "*", "?", "[", "]", "$",
                "{", "}", "#", "<", ">", "~", " ", "\t", "!", "&",
            ]),
            proptest::sample::select(vec!["a", "Z", "0", "-", "=", "é", "touch pwned"]),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The shell receives the template with the value as literal text, whatever the context.
    #[test]
    fn every_value_is_literal_text(
        value in value_strategy(),
        context in 0usize..3,
        before in "[a-z ]{0,3}",
        after in "[a-z ]{0,3}",
    ) {
        let (open, close) = [("", ""), ("\"", "\""), ("'", "'")][context];
        // Outside quotes the text around the value would split words: keep it glued.
        let (before, after) = if context == 0 {
            (before.replace(' ', ""), after.replace(' ', ""))
        } else {
            (before, after)
        };
        // Inside single quotes a value stands between closed quotes (`'a'"$v"'b'`).
        let command = if context == 2 {
            format!("printf %s {open}{before}'\"${{args.x}}\"'{after}{close}")
        } else {
            format!("printf %s {open}{before}${{args.x}}{after}{close}")
        };
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let got = runtime.block_on(stdout_of(dir.path(), &command_item(&command), &value));
        prop_assert_eq!(got, format!("{before}{value}{after}"));
        prop_assert!(!dir.path().join("pwned").exists());
    }
}
