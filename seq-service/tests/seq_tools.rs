//! The six `seq_*` tools: creation checked against the whole storage, listing,
//! deletion, runs and direct calls, and the combined host.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::Catalog;
use seq_catalog::SEQ_TOOLS;
use seq_exec::builtin::{BuiltinHost, Captured};
use seq_exec::engine::RunRequest;
use seq_exec::policy::{Policy, Rules};
use seq_exec::{Caller, Reason, ToolError, ToolHost};
use seq_service::{SeqConfig, SeqHost, SeqOutcome, SeqTools};
use seq_store::storage::{Put, SequenceStorage, Storage};
use seq_syntax::Code;
use seq_test_support::{assert_field, strings_at};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use tempfile::TempDir;

struct Fixture {
    data: TempDir,
    root: TempDir,
    output: Arc<Captured>,
    builtin: Arc<BuiltinHost>,
    tools: SeqTools,
    caller: Caller,
}

fn fixture() -> Fixture {
    fixture_with(Policy::allow_all())
}

fn fixture_with(policy: Policy) -> Fixture {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let output = Arc::new(Captured::new());
    let policy = Arc::new(policy);
    let builtin = Arc::new(BuiltinHost::new(root.path()).with_output(output.clone()));
    let mut config = SeqConfig::new(Storage::new(data.path()), root.path());
    config.authorizer = seq_exec::Authorizer::new(policy);
    let tools = SeqTools::assemble(builtin.clone(), config, |engine| engine);
    Fixture {
        data,
        root,
        output,
        builtin,
        tools,
        caller: Caller::new("tester"),
    }
}

impl Fixture {
    async fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        self.tools
            .call(tool, args, RunRequest::new(&self.caller))
            .await
            .into_result()
    }

    async fn full(&self, tool: &str, args: Value) -> SeqOutcome {
        self.tools
            .call(tool, args, RunRequest::new(&self.caller))
            .await
    }

    async fn names(&self) -> Vec<String> {
        let listed = self.call("seq_list", json!({})).await.unwrap();
        listed
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// The groups of `hello` (examples/hello.json).
fn hello_groups() -> Value {
    json!([{
        "name": "greet",
        "in": {"who": "string"},
        "out": {"greeting": "string"},
        "parallel": false,
        "tools": r#"{"tool":"echo","args":{"value":"Hello, ${args.who}!"},"as":"greeting"} ; {"tool":"output_send__stdout","args":{"text":"$out.greeting"}} ;"#
    }])
}

/// A sequence whose one group calls `#callee` (or nothing when `None`).
fn calling(name: &str, callee: Option<&str>) -> Value {
    let tools = match callee {
        Some(callee) => format!(r##"{{"tool":"seq_call","args":{{"target":"#{callee}"}}}} ;"##),
        None => r#"{"tool":"echo","args":{"value":1}} ;"#.to_owned(),
    };
    json!({"name": name, "groups": [{"name": "main", "tools": tools}]})
}

fn codes(findings: &[seq_service::Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.code).collect()
}

#[test]
fn definitions_are_the_catalogs() {
    let catalog = Catalog::builtin();
    let definitions = seq_service::definitions();
    let names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, SEQ_TOOLS);
    for definition in &definitions {
        assert_eq!(Some(definition), catalog.get(&definition.name));
    }
}

/// The execution contract, told where a model decides how to write and run a sequence.
#[test]
fn descriptions_state_the_execution_contract() {
    for name in ["seq_create", "seq_run", "seq_call"] {
        let description = &seq_service::definition(name).unwrap().description;
        for needle in [
            "run at the same time",
            "`\"parallel\": false`",
            "calls to the same `output_send__<channel>` keep their order",
            "not parallel-safe never run concurrently",
        ] {
            assert!(
                description.contains(needle),
                "{name} does not say {needle:?}: {description}"
            );
        }
        assert!(!description.contains("  "), "{description}");
    }
    let create = &seq_service::definition("seq_create").unwrap().description;
    assert!(create.contains("no item sees a sibling's output"));
}

#[tokio::test]
async fn create_stores_a_checked_sequence_and_list_shows_it() {
    let f = fixture();
    let created = f
        .call(
            "seq_create",
            json!({"name": "hello", "description": "greets", "groups": hello_groups()}),
        )
        .await
        .unwrap();
    assert_eq!(
        created,
        json!({"name": "hello", "groups": 1, "items": 2, "warnings": []})
    );
    assert_eq!(
        f.call("seq_list", json!({})).await.unwrap(),
        json!([{"name": "hello", "groups": 1, "items": 2, "description": "greets", "args": {"who": "string"}, "owner": "tester"}])
    );
    assert!(f.data.path().join("sequences/hello.json").exists());
}

#[tokio::test]
async fn create_refuses_errors_with_every_finding() {
    let f = fixture();
    let mut groups = hello_groups();
    groups[0]["paralell"] = json!(false);
    groups[0]["tools"] =
        json!(r#"{"tool":"echo","args":{"value":"$args.whom"},"as":"greeting"} ;"#);
    let outcome = f
        .full(
            "seq_create",
            json!({"name": "bad", "groups": groups.clone()}),
        )
        .await;
    // Without the structured channel, the detail carries the findings as lines.
    let plain = f
        .call("seq_create", json!({"name": "bad", "groups": groups}))
        .await
        .unwrap_err();
    assert!(
        plain.detail.as_deref().is_some_and(|d| d.starts_with(
            "the sequence has 2 errors (listed in `diagnostics`)\n- error E0101 at `paralell`"
        )),
        "{plain:?}"
    );
    let error = outcome.result.unwrap_err();
    assert_field(&error, Reason::ArgError, "groups");
    // Every independent mistake at once: the misspelt field does not hide the undeclared input.
    assert_eq!(
        codes(&outcome.diagnostics),
        [
            Code::UnusedInput.as_str(),
            Code::UnknownField.as_str(),
            Code::UndeclaredInput.as_str()
        ]
    );
    let finding = &outcome.diagnostics[1];
    assert_eq!(finding.excerpt.as_deref(), Some("paralell"));
    assert_eq!(
        finding.line, None,
        "the parameter form has no text of its own"
    );
    assert_eq!(
        finding.hint.as_deref().map(|h| h.contains("parallel")),
        Some(true)
    );
    // The findings are beside the error, so its detail only counts them; a reader of text
    // gets them as lines.
    assert_eq!(
        error.detail.as_deref(),
        Some("the sequence has 2 errors (listed in `diagnostics`)")
    );
    let lines = seq_service::finding_lines(&outcome.diagnostics);
    assert!(
        lines.starts_with("\n- error E0101 at `paralell` in group `greet` (groups[0]): "),
        "{lines}"
    );
    // Inside `tools`, where it is as the model wrote it: the item and the field.
    let undeclared = &outcome.diagnostics[2];
    assert_eq!(
        undeclared.path.as_deref(),
        Some("group `greet` (groups[0]), item 1 (`echo`), args.value")
    );
    assert_eq!(undeclared.excerpt.as_deref(), Some("$args.whom"));
    assert!(f.names().await.is_empty(), "nothing is stored");
}

#[tokio::test]
async fn create_returns_warnings() {
    let f = fixture();
    let mut groups = hello_groups();
    groups[0]["in"]["unused"] = json!("string");
    let outcome = f
        .full("seq_create", json!({"name": "hello", "groups": groups}))
        .await;
    let value = outcome.result.unwrap();
    assert_eq!(codes(&outcome.diagnostics), [Code::UnusedInput.as_str()]);
    assert_eq!(value["warnings"][0]["code"], json!("W0503"));
    assert_eq!(value["warnings"][0]["severity"], json!("warning"));
    assert_eq!(f.names().await, ["hello"]);
}

#[tokio::test]
async fn create_takes_exactly_one_of_groups_and_file() {
    let f = fixture();
    let neither = f
        .call("seq_create", json!({"name": "x"}))
        .await
        .unwrap_err();
    assert_field(&neither, Reason::Required, "groups");
    let both = f
        .call(
            "seq_create",
            json!({"name": "x", "groups": hello_groups(), "file": "x.json"}),
        )
        .await
        .unwrap_err();
    assert_field(&both, Reason::ArgError, "file");
}

#[tokio::test]
async fn create_needs_replace_to_overwrite() {
    let f = fixture();
    let args = json!({"name": "hello", "groups": hello_groups()});
    f.call("seq_create", args.clone()).await.unwrap();
    let taken = f.call("seq_create", args).await.unwrap_err();
    assert_field(&taken, Reason::ArgError, "name");
    let mut two = hello_groups();
    two[0]["tools"] = json!(r#"{"tool":"echo","args":{"value":"${args.who}"},"as":"greeting"} ;"#);
    let replaced = f
        .call(
            "seq_create",
            json!({"name": "hello", "groups": two, "replace": "true"}),
        )
        .await
        .unwrap();
    assert_eq!(replaced["items"], json!(1));
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn create_from_a_file_under_the_root() {
    let f = fixture();
    let hello = json!({"name": "hello", "groups": hello_groups()});
    write(
        f.root.path(),
        "seqs/hello.json",
        &serde_json::to_string_pretty(&hello).unwrap(),
    );
    let created = f
        .call(
            "seq_create",
            json!({"name": "hello", "file": "seqs/hello.json"}),
        )
        .await
        .unwrap();
    assert_eq!(created["items"], json!(2));

    // Errors in a file have positions in it.
    write(
        f.root.path(),
        "broken.json",
        "{\n  \"name\": \"broken\",\n  \"groupz\": []\n}",
    );
    let outcome = f
        .full(
            "seq_create",
            json!({"name": "broken", "file": "broken.json"}),
        )
        .await;
    let error = outcome.result.unwrap_err();
    assert_field(&error, Reason::ArgError, "file");
    let unknown = outcome
        .diagnostics
        .iter()
        .find(|d| d.code == Code::UnknownField.as_str())
        .unwrap();
    assert_eq!((unknown.line, unknown.column), (Some(3), Some(4)));
    assert!(seq_service::finding_lines(&outcome.diagnostics).contains("E0101 at 3:4"));

    let mismatch = f
        .call(
            "seq_create",
            json!({"name": "other", "file": "seqs/hello.json"}),
        )
        .await
        .unwrap_err();
    assert_field(&mismatch, Reason::ArgError, "name");
    let described = f
        .call(
            "seq_create",
            json!({"name": "hello", "file": "seqs/hello.json", "description": "d", "replace": true}),
        )
        .await
        .unwrap_err();
    assert_eq!(described.field.as_deref(), Some("description"));
    let missing = f
        .call("seq_create", json!({"name": "x", "file": "nope.json"}))
        .await
        .unwrap_err();
    // Read as `files_read` reads: a file that is not there is `absent`.
    assert_field(&missing, Reason::Absent, "file");
}

#[tokio::test]
async fn create_refuses_files_outside_the_root() {
    let f = fixture();
    let outside = f.data.path().join("outside.json");
    std::fs::write(&outside, calling("outside", None).to_string()).unwrap();
    for path in ["../outside.json", outside.to_str().unwrap()] {
        let error = f
            .call("seq_create", json!({"name": "outside", "file": path}))
            .await
            .unwrap_err();
        assert_field(&error, Reason::ArgError, "file");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, f.root.path().join("link.json")).unwrap();
        let error = f
            .call(
                "seq_create",
                json!({"name": "outside", "file": "link.json"}),
            )
            .await
            .unwrap_err();
        assert_field(&error, Reason::Unauthorized, "file");
    }
    assert!(f.names().await.is_empty());
}

#[tokio::test]
async fn create_refuses_a_cycle_across_the_store() {
    let f = fixture();
    let a = f.full("seq_create", calling("a", Some("b"))).await;
    assert!(a.result.is_ok());
    assert_eq!(codes(&a.diagnostics), [Code::UnknownSequence.as_str()]);
    let b = f.full("seq_create", calling("b", Some("a"))).await;
    let error = b.result.unwrap_err();
    assert_eq!(error.reason, Reason::ArgError);
    let cycle = b
        .diagnostics
        .iter()
        .find(|d| d.code == Code::SequenceCallCycle.as_str() && d.sequence.is_none())
        .unwrap();
    assert!(cycle.message.contains("#b"), "{}", cycle.message);
    assert_eq!(f.names().await, ["a"]);
}

/// `#s1 → … → #s5` is stored with `#s5` calling the absent `#s6`; creating `#s6` makes the
/// chain from `#s1` five calls deep. `#s6` has no call of its own: the errors are in the stored
/// sequences, and they are the ones that refuse it.
#[tokio::test]
async fn create_refuses_what_breaks_other_stored_sequences() {
    let f = fixture();
    for i in (1..=5).rev() {
        let next = format!("s{}", i + 1);
        let created = f
            .call("seq_create", calling(&format!("s{i}"), Some(&next)))
            .await;
        assert!(created.is_ok(), "s{i}: {created:?}");
    }
    let outcome = f.full("seq_create", calling("s6", None)).await;
    let error = outcome.result.unwrap_err();
    assert_eq!(error.reason, Reason::ArgError);
    assert!(!outcome.diagnostics.is_empty());
    for finding in &outcome.diagnostics {
        assert_eq!(finding.code, Code::CallChainTooDeep.as_str());
        assert!(finding.sequence.is_some(), "{finding:?}");
    }
    assert!(seq_service::finding_lines(&outcome.diagnostics).contains("E0603 in `#s"));
    assert!(!f.names().await.contains(&"s6".to_owned()));
}

#[tokio::test]
async fn delete_and_list_report_what_is_there() {
    let f = fixture();
    f.call("seq_create", calling("one", None)).await.unwrap();
    std::fs::write(f.data.path().join("sequences/torn.json"), "{\"format\"").unwrap();
    let listed = f.call("seq_list", json!({})).await.unwrap();
    assert_eq!(
        listed[0],
        json!({"name": "one", "groups": 1, "items": 1, "args": {}, "owner": "tester"})
    );
    assert_eq!(listed[1]["name"], json!("torn"));
    assert!(
        listed[1]["error"]
            .as_str()
            .unwrap()
            .contains("cannot be read")
    );

    assert_eq!(
        f.call("seq_delete", json!({"name": "one"})).await.unwrap(),
        json!({"deleted": "one"})
    );
    let again = f
        .call("seq_delete", json!({"name": "one"}))
        .await
        .unwrap_err();
    assert_field(&again, Reason::NotFound, "name");
    let escape = f
        .call("seq_delete", json!({"name": "../sequences/torn"}))
        .await
        .unwrap_err();
    assert_field(&escape, Reason::ArgError, "name");
}

#[tokio::test]
async fn parameters_and_policy_are_checked_first() {
    let f =
        fixture_with(Policy::allow_all().for_caller("guest", Rules::default().deny("seq_create")));
    let unknown = f
        .call("seq_list", json!({"verbose": true}))
        .await
        .unwrap_err();
    assert_field(&unknown, Reason::Type, "verbose");
    let wrong = f.call("seq_delete", json!({"name": 7})).await.unwrap_err();
    assert_field(&wrong, Reason::Type, "name");
    let guest = Caller::new("guest");
    let refused = f
        .tools
        .call("seq_create", calling("x", None), RunRequest::new(&guest))
        .await
        .into_result()
        .unwrap_err();
    assert_eq!(refused.reason, Reason::Unauthorized);
    let other = f
        .call("cmd_run", json!({"command": "true"}))
        .await
        .unwrap_err();
    assert_eq!(other.reason, Reason::NotFound);
}

#[tokio::test]
async fn seq_run_runs_a_stored_sequence() {
    let f = fixture();
    f.call(
        "seq_create",
        json!({"name": "hello", "groups": hello_groups()}),
    )
    .await
    .unwrap();
    let outcome = f
        .full("seq_run", json!({"name": "hello", "args": {"who": "Ada"}}))
        .await;
    let value = outcome.result.unwrap();
    assert_eq!(value["ok"], json!(true));
    assert_eq!(value["out"], json!({"greet": {"greeting": "Hello, Ada!"}}));
    assert_eq!(value["groups"][0]["parallel"], json!(false));
    assert_eq!(f.output.lines(), ["Hello, Ada!"]);
    assert!(outcome.report.unwrap().ok);

    let hashed = f
        .call("seq_run", json!({"name": "#hello"}))
        .await
        .unwrap_err();
    assert_eq!(
        (hashed.reason, hashed.hint.as_deref()),
        (Reason::ArgError, Some("pass `hello`"))
    );
    let missing = f
        .call("seq_run", json!({"name": "nope"}))
        .await
        .unwrap_err();
    assert_field(&missing, Reason::NotFound, "name");
}

#[tokio::test]
async fn seq_run_checks_a_stored_sequence_again_and_runs_none_with_errors() {
    let f = fixture();
    // Stored past `seq_create` (by hand, say): `$args.whom` reads an input no group declares.
    let text = r#"{"name": "typo", "groups": [{"name": "g", "in": {"who": "string"},
        "tools": "{\"tool\":\"output_send__stdout\",\"args\":{\"text\":\"$args.who $args.whom\"}} ;"}]}"#;
    let sequence = seq_syntax::parse(text).sequence.unwrap();
    Storage::new(f.data.path())
        .put(Put::new(&sequence))
        .unwrap();
    let outcome = f
        .full("seq_run", json!({"name": "typo", "args": {"who": "Ada"}}))
        .await;
    let error = outcome.result.unwrap_err();
    assert_field(&error, Reason::Failed, "name");
    let lines = seq_service::finding_lines(&outcome.diagnostics);
    assert!(lines.contains("error E0502 in `#typo`"), "{lines}");
    assert_eq!(codes(&outcome.diagnostics), ["E0502"]);
    assert!(outcome.report.is_none(), "nothing ran");
    assert!(f.output.lines().is_empty(), "nothing ran");
}

#[tokio::test]
async fn a_failed_run_is_a_failed_call_with_its_report() {
    let f = fixture();
    let groups = json!([{
        "name": "check",
        "tools": r#"{"tool":"cmd_run","args":{"command":"echo broken >&2; exit 4"}} ;"#
    }]);
    f.call("seq_create", json!({"name": "fails", "groups": groups}))
        .await
        .unwrap();
    let outcome = f.full("seq_run", json!({"name": "fails"})).await;
    let error = outcome.result.unwrap_err();
    assert_eq!(error.reason, Reason::Failed);
    let detail = error.detail.unwrap();
    assert!(detail.contains("group `check` failed"), "{detail}");
    assert!(detail.contains("exit status 4: broken"), "{detail}");
    let report = outcome.report.unwrap();
    assert!(!report.ok);
    assert_eq!(
        report.groups[0].items[0].error.as_ref().unwrap().reason,
        Reason::Failed
    );

    // A run that cannot start answers the run's own error.
    let undeclared = f
        .call("seq_run", json!({"name": "fails", "args": {"nobody": 1}}))
        .await
        .unwrap_err();
    assert_eq!(undeclared.reason, Reason::Type);
}

#[tokio::test]
async fn direct_calls_take_sequences_only() {
    let f = fixture();
    f.call(
        "seq_create",
        json!({"name": "hello", "groups": hello_groups()}),
    )
    .await
    .unwrap();
    let value = f
        .call(
            "seq_call",
            json!({"target": "#hello", "args": {"who": "Bo"}}),
        )
        .await
        .unwrap();
    assert_eq!(value, json!({"greet": {"greeting": "Hello, Bo!"}}));
    let group = f
        .call("seq_call", json!({"target": "greet"}))
        .await
        .unwrap_err();
    assert_field(&group, Reason::ArgError, "target");
    let skipped = f
        .call(
            "seq_when_call",
            json!({"target": "#hello", "args": {"who": "Cy"}, "when": "$args.who == \"Ada\""}),
        )
        .await
        .unwrap();
    assert_eq!(skipped, Value::Null);
    assert_eq!(
        f.output.lines(),
        ["Hello, Bo!"],
        "the false `when` ran nothing"
    );
    let ran = f
        .call(
            "seq_when_call",
            json!({"target": "#hello", "args": {"who": "Ada"}, "when": "$args.who == \"Ada\""}),
        )
        .await
        .unwrap();
    assert_eq!(ran, json!({"greet": {"greeting": "Hello, Ada!"}}));
}

#[tokio::test]
async fn the_engines_host_offers_the_store_tools_to_sequences() {
    let f = fixture();
    f.call("seq_create", calling("one", None)).await.unwrap();
    let groups = json!([{
        "name": "look",
        "out": {"all": "any"},
        "tools": r#"{"tool":"seq_list","as":"all"} ;"#
    }]);
    f.call("seq_create", json!({"name": "lister", "groups": groups}))
        .await
        .unwrap();
    let value = f.call("seq_run", json!({"name": "lister"})).await.unwrap();
    let all = &value["out"]["look"]["all"];
    let names: Vec<&str> = strings_at(all, "name");
    assert_eq!(names, ["lister", "one"]);
}

#[tokio::test]
async fn seq_host_offers_the_seq_tools_in_front_of_the_inner_host() {
    let f = fixture_with(Policy::allow_all().deny("seq_delete").deny("cmd_run"));
    let storage_only = SeqHost::new(f.tools.storage_tools().clone(), f.builtin.clone());
    for name in ["seq_create", "seq_list", "seq_delete", "echo"] {
        assert!(storage_only.lookup(name).is_some(), "{name}");
    }
    for name in ["seq_run", "seq_call", "seq_when_call", "nope"] {
        assert!(storage_only.lookup(name).is_none(), "{name}");
    }
    let refused = storage_only
        .call(&f.caller, "seq_run", json!({"name": "x"}))
        .await
        .unwrap_err();
    assert_eq!(refused.reason, Reason::NotFound);
    assert_eq!(
        storage_only
            .call(&f.caller, "echo", json!({"value": 3}))
            .await
            .unwrap(),
        json!(3)
    );
    // The host offers; the authorizer the seq tools and their engine share decides.
    let authorizer = f.tools.storage_tools().authorizer();
    assert!(!authorizer.allows(&f.caller, "seq_delete"));
    assert!(!authorizer.allows(&f.caller, "cmd_run"));
    assert!(authorizer.allows(&f.caller, "seq_create"));
    assert!(std::ptr::eq(
        authorizer.policy().as_ref(),
        f.tools.engine().authorizer().policy().as_ref()
    ));

    let running = f.tools.host_for(f.builtin.clone());
    assert_eq!(
        running.lookup("seq_run").as_deref(),
        Catalog::builtin().get("seq_run")
    );
    running
        .call(
            &f.caller,
            "seq_create",
            json!({"name": "hello", "groups": hello_groups()}),
        )
        .await
        .unwrap();
    let report = running
        .call(
            &f.caller,
            "seq_run",
            json!({"name": "hello", "args": {"who": "Di"}}),
        )
        .await
        .unwrap();
    assert_eq!(report["ok"], json!(true));
    assert_eq!(f.output.lines(), ["Hello, Di!"]);
}

#[tokio::test]
async fn a_sequence_cannot_reach_a_tool_its_caller_may_not_use() {
    let f = fixture_with(
        Policy::allow_all().for_caller("quiet", Rules::default().deny("output_send__*")),
    );
    f.call(
        "seq_create",
        json!({"name": "hello", "groups": hello_groups()}),
    )
    .await
    .unwrap();
    let quiet = Caller::new("quiet");
    let outcome = f
        .tools
        .call(
            "seq_call",
            json!({"target": "#hello", "args": {"who": "Ed"}}),
            RunRequest::new(&quiet),
        )
        .await;
    assert_eq!(outcome.result.unwrap_err().reason, Reason::Unauthorized);
    assert!(f.output.lines().is_empty());
}
