//! The store against its callers: `seq_create` refuses a sequence that reaches a tool its creator
//! may not use (E0901, `unauthorized`), stored sequences have owners whom only a store
//! administrator can overrule, and `seq_create(file=...)` needs `files_read` and never echoes
//! a file that is not a sequence.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::policy::{Policy, Rules};
use seq_exec::{Caller, Reason, ToolError};
use seq_service::{SeqOutcome, finding_lines};
use seq_store::storage::{Put, SequenceStorage};
use seq_test_support::{Store, stored};
use serde_json::{Value, json};

/// `admin` may use everything; `low` is denied `cmd_run` (the issue's `--deny cmd_run
/// --caller low`); `lead` holds the store administrator permission.
fn store() -> Store {
    Store::with_policy(
        Policy::allow_all()
            .for_caller("low", Rules::default().deny("cmd_run"))
            .for_caller("lead", Rules::default().allow("*").allow("seq_admin")),
    )
}

/// The stored sequence `name`, as text to compare.
fn stored_text(s: &Store, name: &str) -> String {
    format!("{:?}", stored(&s.storage, name).unwrap())
}

fn groups(tools: &str) -> Value {
    json!([{"name": "main", "tools": tools}])
}

const CMD: &str = r#"{"tool":"cmd_run","args":{"argv":["make","deploy"]}} ;"#;
const ECHO: &str = r#"{"tool":"echo","args":{"value":1}} ;"#;

fn refusal(outcome: &SeqOutcome) -> &ToolError {
    outcome.result.as_ref().unwrap_err()
}

/// Stores the sequence `name` of one group running `tools`, as `admin` (who may).
async fn admin_stores(s: &Store, name: &str, tools: &str) {
    let created = s
        .create("admin", json!({"name": name, "groups": groups(tools)}))
        .await;
    created.result.unwrap();
}

/// Replaces the stored `deploy` by one group running `tools`, as `who`, who may.
async fn replace_deploy(s: &Store, who: &str, tools: &str) {
    let args = json!({"name": "deploy", "replace": true, "groups": groups(tools)});
    s.create(who, args).await.result.unwrap();
}

/// The refusal's detail and its findings, as a reader of text gets them.
fn detail(outcome: &SeqOutcome) -> String {
    refusal(outcome).detail.clone().unwrap_or_default() + &finding_lines(&outcome.diagnostics)
}

#[tokio::test]
async fn a_caller_cannot_store_a_tool_it_may_not_use() {
    let s = store();
    let plant = json!({"name": "plant", "groups": groups(&format!("{ECHO}{CMD}"))});
    let outcome = s.create("low", plant).await;
    assert_eq!(refusal(&outcome).reason, Reason::Unauthorized);
    let codes: Vec<&str> = outcome.diagnostics.iter().map(|f| f.code).collect();
    assert_eq!(codes, ["E0901"]);
    assert_eq!(outcome.diagnostics[0].excerpt.as_deref(), Some("cmd_run"));
    assert!(detail(&outcome).contains("caller `low` may not use `cmd_run`"));
    assert!(stored(&s.storage, "plant").unwrap().is_none());
    // The same sequence from a caller who may run it is stored.
    admin_stores(&s, "plant", &format!("{ECHO}{CMD}")).await;
}

#[tokio::test]
async fn a_call_to_a_stored_sequence_reaches_its_tools_transitively() {
    let s = store();
    admin_stores(&s, "deploy", CMD).await;
    admin_stores(
        &s,
        "wrap",
        r##"{"tool":"seq_call","args":{"target":"#deploy"}} ;"##,
    )
    .await;
    // `low` may call `wrap`, but through it `#deploy` runs `cmd_run`.
    let outcome = s
        .create("low", json!({"name": "mine", "groups": groups(&format!(r##"{ECHO}{{"tool":"seq_call","args":{{"target":"#wrap"}}}} ;"##))}))
        .await;
    assert_eq!(refusal(&outcome).reason, Reason::Unauthorized);
    assert_eq!(outcome.diagnostics.len(), 1, "{:#?}", outcome.diagnostics);
    assert_eq!(outcome.diagnostics[0].code, "E0901");
    assert_eq!(
        outcome.diagnostics[0].message,
        "`#wrap` reaches `cmd_run`, which caller `low` may not use"
    );
    // A group called through `seq_call` is one of the sequence's own: its item is found too.
    let outcome = s
        .create(
            "low",
            json!({"name": "mine", "groups": [
                {"name": "main", "tools": r#"{"tool":"seq_call","args":{"target":"inner"}} ;"#},
                {"name": "inner", "tools": CMD},
            ]}),
        )
        .await;
    assert_eq!(refusal(&outcome).reason, Reason::Unauthorized);
    let codes: Vec<&str> = outcome.diagnostics.iter().map(|f| f.code).collect();
    assert_eq!(codes, ["E0901"]);
}

#[tokio::test]
async fn the_planted_store_low_cannot_replace_or_delete_what_admin_owns() {
    let s = store();
    admin_stores(&s, "deploy", CMD).await;
    let before = stored_text(&s, "deploy");
    // Even with only tools `low` may use, the sequence is not `low`'s to replace.
    let outcome = s
        .create(
            "low",
            json!({"name": "deploy", "replace": true, "groups": groups(ECHO)}),
        )
        .await;
    let error = refusal(&outcome);
    assert_eq!(error.reason, Reason::Unauthorized);
    assert_eq!(
        error.detail.as_deref(),
        Some("`deploy` belongs to `admin`; caller `low` may not replace it")
    );
    let outcome = s.call("low", "seq_delete", json!({"name": "deploy"})).await;
    assert_eq!(refusal(&outcome).reason, Reason::Unauthorized);
    assert!(detail(&outcome).contains("belongs to `admin`"));
    assert_eq!(stored_text(&s, "deploy"), before);
    // Its owner may; `seq_list` shows who that is.
    let listed = s.call("admin", "seq_list", json!({})).await.result.unwrap();
    assert_eq!(listed[0]["owner"], "admin");
    replace_deploy(&s, "admin", CMD).await;
    // So may the store administrator, who then owns it.
    replace_deploy(&s, "lead", ECHO).await;
    let listed = s.call("lead", "seq_list", json!({})).await.result.unwrap();
    assert_eq!(listed[0]["owner"], "lead");
    s.call("lead", "seq_delete", json!({"name": "deploy"}))
        .await
        .result
        .unwrap();
    assert!(stored(&s.storage, "deploy").unwrap().is_none());
}

#[tokio::test]
async fn an_ownerless_sequence_changes_only_by_an_administrator() {
    let s = store();
    // As `seqc create` and older versions store: no owner.
    let parsed = seq_syntax::parse_value(&json!({"name": "deploy", "groups": groups(ECHO)})).1;
    s.storage.put(Put::new(&parsed.sequence.unwrap())).unwrap();
    let listed = s.call("admin", "seq_list", json!({})).await.result.unwrap();
    assert_eq!(listed[0].get("owner"), None);
    for who in ["low", "admin"] {
        let outcome = s.call(who, "seq_delete", json!({"name": "deploy"})).await;
        assert_eq!(refusal(&outcome).reason, Reason::Unauthorized, "{who}");
        assert!(detail(&outcome).contains("has no owner"), "{who}");
    }
    replace_deploy(&s, "lead", ECHO).await;
}

#[test]
fn the_administrator_permission_is_granted_by_its_name_only() {
    let lead = Caller::new("lead");
    for (policy, admin) in [
        (Policy::allow_all(), false),
        (Policy::allow_all().allow("*"), false),
        (Policy::allow_all().allow("seq_*"), false),
        (Policy::allow_all().allow("*").allow("seq_admin"), true),
        (
            Policy::allow_all().for_caller("lead", Rules::default().allow("seq_admin")),
            true,
        ),
        (
            Policy::allow_all()
                .allow("seq_admin")
                .for_caller("lead", Rules::default().deny("seq_*")),
            false,
        ),
    ] {
        assert_eq!(policy.is_store_admin(&lead), admin, "{policy:?}");
    }
}

#[tokio::test]
async fn a_file_that_is_not_a_sequence_is_not_echoed() {
    let s = store();
    std::fs::write(s.root.path().join(".env"), "DB_PASSWORD=hunter2\n").unwrap();
    std::fs::write(s.root.path().join("key.json"), "[\"hunter2\"]\n").unwrap();
    for file in [".env", "key.json"] {
        let outcome = s.create("admin", json!({"name": "x", "file": file})).await;
        let error = refusal(&outcome);
        assert_eq!(error.reason, Reason::ArgError);
        assert_eq!(error.field.as_deref(), Some("file"));
        let everything = format!("{:?}", outcome.result) + &format!("{:?}", outcome.diagnostics);
        assert!(!everything.contains("hunter2"), "{everything}");
        assert!(detail(&outcome).contains("is not a sequence file"));
    }
}

#[tokio::test]
async fn create_from_a_file_needs_the_right_to_read_files() {
    let s = Store::with_policy(
        Policy::allow_all().for_caller("blind", Rules::default().deny("files_*")),
    );
    std::fs::write(
        s.root.path().join("hello.json"),
        json!({"name": "hello", "groups": groups(ECHO)}).to_string(),
    )
    .unwrap();
    let outcome = s
        .create("blind", json!({"name": "hello", "file": "hello.json"}))
        .await;
    let error = refusal(&outcome);
    assert_eq!(error.reason, Reason::Unauthorized);
    assert_eq!(error.field.as_deref(), Some("file"));
    assert!(stored(&s.storage, "hello").unwrap().is_none());
    s.create("admin", json!({"name": "hello", "file": "hello.json"}))
        .await
        .result
        .unwrap();
}

#[tokio::test]
async fn a_tool_that_is_off_says_how_to_turn_it_on() {
    let s = Store::with_policy(Policy::allow_all().turn_off("cmd_run", "`--enable cmd_run`"));
    let outcome = s
        .create("admin", json!({"name": "x", "groups": groups(CMD)}))
        .await;
    assert_eq!(refusal(&outcome).reason, Reason::Unauthorized);
    let hint = outcome.diagnostics[0].hint.clone().unwrap();
    assert!(hint.contains("`--enable cmd_run`"), "{hint}");
    assert!(detail(&outcome).contains("--enable cmd_run"));
}
