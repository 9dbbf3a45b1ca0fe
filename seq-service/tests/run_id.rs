//! `seq_run`'s `run_id` in process: the same id with the same caller, sequence and arguments
//! runs once and answers the same report; anything else under it is refused, saying which
//! differs.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::builtin::{BuiltinHost, Captured};
use seq_exec::engine::RunRequest;
use seq_exec::{Caller, Reason};
use seq_service::{SeqConfig, SeqOutcome, SeqTools};
use seq_store::storage::Storage;
use seq_test_support::assert_field;
use serde_json::{Value, json};
use std::sync::Arc;
use tempfile::TempDir;

struct Fixture {
    _data: TempDir,
    _root: TempDir,
    output: Arc<Captured>,
    tools: SeqTools,
}

async fn fixture() -> Fixture {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let output = Arc::new(Captured::new());
    let builtin = Arc::new(BuiltinHost::new(root.path()).with_output(output.clone()));
    let config = SeqConfig::new(Storage::new(data.path()), root.path());
    let tools = SeqTools::assemble(builtin, config, |engine| engine);
    let f = Fixture {
        _data: data,
        _root: root,
        output,
        tools,
    };
    for name in ["hello", "other"] {
        let created = f
            .run_as(
                "tester",
                "seq_create",
                json!({"name": name, "groups": [{
                    "name": "greet",
                    "in": {"who": "string"},
                    "tools": r#"{"tool":"output_send__stdout","args":{"text":"Hello, ${args.who}!"}} ;"#
                }]}),
            )
            .await;
        created.result.unwrap();
    }
    f
}

impl Fixture {
    async fn run_as(&self, caller: &str, tool: &str, args: Value) -> SeqOutcome {
        let caller = Caller::new(caller);
        self.tools.call(tool, args, RunRequest::new(&caller)).await
    }
}

#[tokio::test]
async fn the_same_run_id_runs_once_and_answers_the_same_report() {
    let f = fixture().await;
    let args = json!({"name": "hello", "args": {"who": "Ada"}, "run_id": "greet-1"});
    let first = f.run_as("tester", "seq_run", args.clone()).await;
    let again = f.run_as("tester", "seq_run", args.clone()).await;
    assert_eq!(first.result.unwrap(), again.result.unwrap());
    assert_eq!(first.report, again.report);
    assert_eq!(f.output.lines(), ["Hello, Ada!"]);
    // At the same time: one run, both answered its report.
    let args = json!({"name": "hello", "args": {"who": "Bo"}, "run_id": "greet-2"});
    let (one, two) = tokio::join!(
        f.run_as("tester", "seq_run", args.clone()),
        f.run_as("tester", "seq_run", args.clone())
    );
    assert_eq!(one.report, two.report);
    assert_eq!(f.output.lines(), ["Hello, Ada!", "Hello, Bo!"]);
    // Without an id, every call is a run.
    let plain = json!({"name": "hello", "args": {"who": "Ada"}});
    f.run_as("tester", "seq_run", plain.clone())
        .await
        .result
        .unwrap();
    f.run_as("tester", "seq_run", plain).await.result.unwrap();
    assert_eq!(f.output.lines().len(), 4);
}

#[tokio::test]
async fn another_caller_sequence_or_arguments_under_a_run_id_is_refused_saying_which() {
    let f = fixture().await;
    // `name` run for `who` as `caller`, under the run id `greet-1`.
    let greet = |caller: &'static str, name: &str, who: &str| {
        let args = json!({"name": name, "args": {"who": who}, "run_id": "greet-1"});
        f.run_as(caller, "seq_run", args)
    };
    greet("tester", "hello", "Ada").await.result.unwrap();
    let refused = |outcome: SeqOutcome| {
        let error = outcome.result.unwrap_err();
        assert_field(&error, Reason::ArgError, "run_id");
        error.detail.unwrap()
    };
    let args = refused(greet("tester", "hello", "Eve").await);
    assert!(
        args.contains("was submitted with other arguments"),
        "{args}"
    );
    assert!(!args.contains("Ada") && !args.contains("Eve"), "{args}");
    let caller = refused(greet("mallory", "hello", "Ada").await);
    assert!(
        caller.contains("was submitted by another caller"),
        "{caller}"
    );
    assert!(
        !caller.contains("tester") && !caller.contains("hello"),
        "{caller}"
    );
    let sequence = refused(greet("tester", "other", "Ada").await);
    assert!(
        sequence.contains("runs sequence `hello`, not `other`"),
        "{sequence}"
    );
    // The members' order is no difference.
    f.run_as(
        "tester",
        "seq_run",
        json!({"args": {"who": "Ada"}, "run_id": "greet-1", "name": "hello"}),
    )
    .await
    .result
    .unwrap();
    assert_eq!(f.output.lines(), ["Hello, Ada!"]);
}

#[tokio::test]
async fn a_malformed_run_id_is_refused() {
    let f = fixture().await;
    let long = "x".repeat(129);
    for id in ["", ".hidden", "a/b", "spaced id", long.as_str()] {
        let error = f
            .run_as(
                "tester",
                "seq_run",
                json!({"name": "hello", "args": {"who": "Ada"}, "run_id": id}),
            )
            .await
            .result
            .unwrap_err();
        assert_field(&error, Reason::ArgError, "run_id");
    }
    assert!(f.output.lines().is_empty());
}
