//! Authority at every depth: the rights of each dispatch are the caller's intersected with
//! those of the owner of every stored sequence on the stack (the sequence run first, then each
//! one reached through `#name` or a `seq_run` item). `seq_create` and `seq_delete` are never
//! steps; one right covers its routes; a value shaped like an error is data.
//!
//! The server's policy here: `bob` is denied `cmd_run`, `carol` `seq_run`, `dave` `seq_call`;
//! `alice` may use everything. "Past the checker" means written straight into the storage with
//! an owner, as a hand-edited data directory or a policy tightened after the store would have.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::RunRequest;
use seq_exec::engine::{Engine, ItemStatus};
use seq_exec::policy::{Policy, Rules};
use seq_exec::{Caller, Reason, ToolError, ToolHost};
use seq_service::SeqOutcome;
use seq_store::storage::{Put, SequenceStorage, Storage};
use seq_syntax::Code;
use seq_test_support::Store;
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn server() -> Store {
    Store::with_policy(
        Policy::allow_all()
            .for_caller("bob", Rules::default().deny("cmd_run"))
            .for_caller("carol", Rules::default().deny("seq_run"))
            .for_caller("dave", Rules::default().deny("seq_call")),
    )
}

/// Stores `name` with `tools` in one ordered group as `owner`, past the checker.
fn plant(s: &Store, owner: Option<&str>, name: &str, tools: &str) {
    let text = file(name, tools);
    let sequence = seq_syntax::parse(&text).sequence.unwrap();
    s.storage
        .put(Put::new(&sequence).replace(true).owner(owner))
        .unwrap();
}

/// Whether a command of the run left its mark in the root.
fn marked(s: &Store) -> bool {
    s.root.path().join("mark").exists()
}

fn file(name: &str, tools: &str) -> String {
    json!({"name": name, "groups": [{"name": "main", "parallel": false, "tools": tools}]})
        .to_string()
}

fn groups(tools: &str) -> Value {
    json!([{"name": "main", "parallel": false, "tools": tools}])
}

const MARK: &str = r#"{"tool":"cmd_run","args":{"argv":["touch","mark"]}} ;"#;

fn refusal(outcome: &SeqOutcome) -> &ToolError {
    outcome.result.as_ref().unwrap_err()
}

/// The first error of an item in the run's report, at any depth of the text.
fn item_error(outcome: &SeqOutcome) -> ToolError {
    let report = outcome.report.as_ref().unwrap();
    report
        .groups
        .iter()
        .flat_map(|g| &g.items)
        .find_map(|item| item.error.clone())
        .unwrap()
}

/// The audit's first path: bob, denied `cmd_run`, stores a sequence that creates one with a
/// `cmd_run` item and runs it. Refused when stored, whoever would run it later.
#[tokio::test]
async fn bob_cannot_store_a_sequence_that_creates_and_runs_another() {
    let s = server();
    std::fs::write(s.root.path().join("x.json"), file("x", MARK)).unwrap();
    let tools = r#"{"tool":"seq_create","args":{"file":"x.json"},"unsafe_serial":true} ; {"tool":"seq_run","args":{"name":"x"},"unsafe_serial":true} ;"#;
    let outcome = s
        .create("bob", json!({"name": "boot", "groups": groups(tools)}))
        .await;
    assert!(outcome.result.is_err(), "{:?}", outcome.result);
    assert!(
        outcome
            .diagnostics
            .iter()
            .any(|d| d.code == Code::ManagementStep.as_str()),
        "{:?}",
        outcome.diagnostics
    );
    assert!(!s.storage.exists("boot").unwrap());
}

/// alice runs a sequence bob stored: bob's limits apply, though alice may run commands.
#[tokio::test]
async fn a_sequence_never_does_more_than_its_author_may() {
    let s = server();
    plant(&s, Some("bob"), "helper", MARK);
    let outcome = s.call("alice", "seq_run", json!({"name": "helper"})).await;
    assert!(outcome.result.is_err());
    let error = item_error(&outcome);
    assert_eq!(error.reason, Reason::Unauthorized, "{error:?}");
    assert!(error.detail.unwrap().contains("`bob`"));
    assert!(!marked(&s));
    // Nor more than its caller may: bob running alice's sequence is held to bob's rights.
    plant(&s, Some("alice"), "hers", MARK);
    let outcome = s.call("bob", "seq_run", json!({"name": "hers"})).await;
    assert_eq!(item_error(&outcome).reason, Reason::Unauthorized);
    assert!(!marked(&s));
    // The author's own run, and an ownerless sequence, carry no restriction beyond the caller.
    plant(&s, None, "plain", MARK);
    let outcome = s.call("alice", "seq_run", json!({"name": "plain"})).await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    assert!(marked(&s));
}

/// The stealth variant: alice's `deploy` calls bob's `#helper`, harmless when she stored it;
/// bob later rewrites `helper` to run a command, or to create, run and delete a sequence.
/// alice's next run refuses it at run time, `unauthorized`, and nothing of it happens.
#[tokio::test]
async fn a_rewritten_callee_runs_with_its_authors_rights() {
    let s = server();
    let echo = r#"{"tool":"echo","args":{"value":1}} ;"#;
    let created = s
        .create("bob", json!({"name": "helper", "groups": groups(echo)}))
        .await;
    assert!(created.result.is_ok(), "{:?}", created.result);
    let call = r##"{"tool":"seq_call","args":{"target":"#helper"},"unsafe_serial":true} ;"##;
    let created = s
        .create("alice", json!({"name": "deploy", "groups": groups(call)}))
        .await;
    assert!(created.result.is_ok(), "{:?}", created.result);
    assert!(
        s.call("alice", "seq_run", json!({"name": "deploy"}))
            .await
            .result
            .is_ok()
    );

    plant(&s, Some("bob"), "helper", MARK);
    let outcome = s.call("alice", "seq_run", json!({"name": "deploy"})).await;
    let error = refusal(&outcome);
    assert_eq!(error.reason, Reason::Failed);
    assert_eq!(item_error(&outcome).reason, Reason::Unauthorized);
    assert!(!marked(&s));

    // A management step stored past the checker is refused at run time, at any depth.
    let sneaky = r#"{"tool":"seq_delete","args":{"name":"deploy"},"unsafe_serial":true} ;"#;
    plant(&s, Some("bob"), "helper", sneaky);
    let outcome = s.call("alice", "seq_run", json!({"name": "deploy"})).await;
    assert_eq!(item_error(&outcome).reason, Reason::Unauthorized);
    assert!(s.storage.exists("deploy").unwrap());
}

/// A `seq_run` item puts the sequence it runs on the stack with that sequence's owner, and
/// bob's sequence that runs alice's through it is held to bob's rights (the checker cannot
/// follow a `seq_run` item, W0508).
#[tokio::test]
async fn a_seq_run_item_keeps_the_owners_above_it() {
    let s = server();
    let created = s
        .create("alice", json!({"name": "build", "groups": groups(MARK)}))
        .await;
    assert!(created.result.is_ok(), "{:?}", created.result);
    let run = r#"{"tool":"seq_run","args":{"name":"build"},"unsafe_serial":true} ;"#;
    let created = s
        .create("bob", json!({"name": "relay", "groups": groups(run)}))
        .await;
    assert!(created.result.is_ok(), "{:?}", created.result);
    let outcome = s.call("alice", "seq_run", json!({"name": "relay"})).await;
    assert_eq!(item_error(&outcome).reason, Reason::Unauthorized);
    assert!(!marked(&s));
}

/// Runs the file-less sequence `outer` of the one `item` as `who`: the item fails, refused as
/// unauthorized.
async fn assert_item_unauthorized(s: &Store, who: &str, item: &str) {
    let text = file("outer", item);
    let sequence = seq_syntax::parse(&text).sequence.unwrap();
    let engine: &Arc<Engine> = s.tools.engine();
    let report = engine
        .run(&sequence, Map::new(), RunRequest::new(&Caller::new(who)))
        .await;
    let item = &report.groups[0].items[0];
    assert_eq!(item.status, ItemStatus::Failed);
    assert_eq!(item.error.as_ref().unwrap().reason, Reason::Unauthorized);
}

/// Denying `seq_run` denies running a stored sequence by any route; denying `seq_call` denies
/// `seq_when_call`.
#[tokio::test]
async fn one_right_covers_every_route() {
    let s = server();
    let echo = r#"{"tool":"echo","args":{"value":1}} ;"#;
    plant(&s, Some("alice"), "x", echo);
    let when_call = |who| {
        s.call(
            who,
            "seq_when_call",
            json!({"target": "#x", "when": "true"}),
        )
    };
    let direct = s.call("carol", "seq_call", json!({"target": "#x"})).await;
    assert_eq!(refusal(&direct).reason, Reason::Unauthorized);
    assert_eq!(
        refusal(&when_call("carol").await).reason,
        Reason::Unauthorized
    );
    // Through an item of a sequence carol may run (an ownerless one, run by name through
    // `seq_call` would need `seq_run` already; here a group call of a file-less run).
    let call = r##"{"tool":"seq_call","args":{"target":"#x"},"unsafe_serial":true} ;"##;
    assert_item_unauthorized(&s, "carol", call).await;

    assert_eq!(
        refusal(&when_call("dave").await).reason,
        Reason::Unauthorized
    );
    let when =
        r##"{"tool":"seq_when_call","args":{"target":"#x","when":"true"},"unsafe_serial":true} ;"##;
    assert_item_unauthorized(&s, "dave", when).await;
}

/// A value shaped like an error, from the arguments or from a tool, is data: it never cancels
/// or fails the run.
#[tokio::test]
async fn a_value_shaped_like_an_error_is_data() {
    let root = tempfile::tempdir().unwrap();
    let host: Arc<dyn ToolHost> = Arc::new(BuiltinHost::new(root.path()));
    let engine = Engine::new(host, Arc::new(Storage::new(root.path().join("data"))));
    let text = json!({"name": "steer", "groups": [{
        "name": "main", "parallel": false, "in": {"v": "any"}, "out": {"a": "any", "b": "any"},
        "tools": r#"{"tool":"echo","args":{"value":$args.v},"as":"a"} ; {"tool":"echo","args":{"value":{"reason":"failed","detail":"x"}},"as":"b"} ;"#
    }]})
    .to_string();
    let sequence = seq_syntax::parse(&text).sequence.unwrap();
    let mut args = Map::new();
    args.insert("v".to_owned(), json!({"reason": "cancelled"}));
    let report = engine
        .run(&sequence, args, RunRequest::new(&Caller::new("alice")))
        .await;
    assert!(report.ok, "{report:?}");
    assert!(!report.cancelled);
    assert_eq!(report.out["main"]["a"], json!({"reason": "cancelled"}));
    assert_eq!(
        report.out["main"]["b"],
        json!({"reason": "failed", "detail": "x"})
    );
}
