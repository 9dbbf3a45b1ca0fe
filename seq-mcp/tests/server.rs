//! The seq tools served over MCP, driven in-process by rmcp's own client.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

mod support;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use seq_exec::builtin::Captured;
use seq_exec::policy::Policy;
use seq_exec::{Caller, ToolHost};
use seq_mcp::{McpHost, SeqServer};
use seq_store::storage::Storage;
use serde_json::{Value, json};
use std::sync::Arc;
use support::{changing, connect, eventually, filesystem, fixture};

struct Session {
    client: RunningService<RoleClient, ()>,
    _data: tempfile::TempDir,
    root: tempfile::TempDir,
}

async fn session(policy: Policy, mcp: Option<Arc<McpHost>>) -> Session {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let policy = Arc::new(policy);
    let mcp = mcp.unwrap_or_else(|| Arc::new(McpHost::none()));
    let server = SeqServer::assemble(
        Storage::new(data.path()),
        root.path().to_path_buf(),
        Caller::new("agent"),
        policy,
        mcp,
        Arc::new(Captured::new()),
    );
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.unwrap();
        running.waiting().await.unwrap();
    });
    let client = ().serve(client_end).await.unwrap();
    Session {
        client,
        _data: data,
        root,
    }
}

async fn call(session: &Session, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!() };
    session
        .client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

fn hints(tool: &Tool) -> (Option<bool>, Option<bool>) {
    let annotations = tool.annotations.as_ref().unwrap();
    (annotations.read_only_hint, annotations.destructive_hint)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_six_tools_are_listed_with_honest_annotations() {
    let s = session(Policy::allow_all(), None).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, seq_catalog::SEQ_TOOLS);
    let by_name = |name: &str| tools.iter().find(|t| t.name == name).unwrap();
    assert_eq!(hints(by_name("seq_list")), (Some(true), Some(false)));
    assert_eq!(hints(by_name("seq_delete")), (Some(false), Some(true)));
    assert_eq!(hints(by_name("seq_run")), (Some(false), Some(true)));
    let create = by_name("seq_create");
    assert_eq!(create.input_schema["required"], json!(["name"]));
    let description = create.description.as_deref().unwrap();
    assert!(
        description.contains("`files_write` {path, content} -> {bytes, path} (Writes")
            && description.contains("`echo` {value} -> any, parallel-safe")
            && description.contains("`files_list` {path} -> [string], parallel-safe"),
        "{description}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_policy_hides_and_refuses_tools() {
    let s = session(Policy::allow_all().deny("seq_delete").deny("cmd_run"), None).await;
    let tools = s.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "seq_delete"));
    let create = tools.iter().find(|t| t.name == "seq_create").unwrap();
    // Not listed as available, and not taught: the guide says nothing of `cmd_run`.
    let guide = create.description.as_deref().unwrap();
    assert!(!guide.contains("cmd_run"), "{guide}");
    // Where it is on, the guide says what `ok_exit` is.
    let on = session(Policy::allow_all(), None).await;
    let tools = on.client.list_all_tools().await.unwrap();
    let guide = tools
        .iter()
        .find(|t| t.name == "seq_create")
        .and_then(|t| t.description.as_deref())
        .unwrap();
    assert!(guide.contains("`cmd_run` {"), "{guide}");
    assert!(
        guide.contains("Its `ok_exit` is an array of integers")
            && guide.contains("outside `ok_exit` (default [0]) fails the call"),
        "{guide}"
    );
    // One rule for a path that does not exist, said once; `seq_when_call`'s `when` shown.
    assert_eq!(guide.matches("a missing field").count(), 1, "{guide}");
    assert!(
        guide.contains(
            r#"{"tool":"seq_when_call","args":{"target":"report","when":"$out.e != null""#
        ),
        "{guide}"
    );
    let refused = call(&s, "seq_delete", json!({"name": "x"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.structured_content.unwrap()["error"]["reason"],
        "unauthorized"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn seq_create_answers_a_broken_sequence_with_its_diagnostics() {
    let s = session(Policy::allow_all(), None).await;
    let broken = json!({"name": "broken", "groups": [{
        "name": "g", "paralell": true,
        "tools": "{\"tool\":\"echo\",\"args\":{\"value\":1}} ;"
    }]});
    let result = call(&s, "seq_create", broken).await;
    assert_eq!(result.is_error, Some(true));
    insta::assert_json_snapshot!("broken_create", result.structured_content.unwrap());
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(
        text.starts_with("arg_error `groups`: the sequence has 1 error"),
        "{text}"
    );

    // A file under the root gets line and column.
    std::fs::write(
        s.root.path().join("broken.json"),
        fixture("broken-file.json"),
    )
    .unwrap();
    let result = call(
        &s,
        "seq_create",
        json!({"name": "broken-file", "file": "broken.json"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    insta::assert_json_snapshot!(
        "broken_file_create",
        result.structured_content.unwrap()["diagnostics"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sequence_created_over_mcp_runs_downstream_mcp_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta").unwrap();
    let mcp = connect(vec![filesystem(dir.path(), None)]).await;
    let s = session(Policy::allow_all(), Some(mcp.clone())).await;
    let create = s.client.list_all_tools().await.unwrap();
    let description = create
        .iter()
        .find(|t| t.name == "seq_create")
        .unwrap()
        .description
        .clone()
        .unwrap();
    assert!(description.contains("`read_text_file` {"), "{description}");

    let sequence: Value = serde_json::from_str(&fixture("fs-read-parallel.json")).unwrap();
    let created = call(&s, "seq_create", sequence).await;
    assert_eq!(created.is_error, Some(false), "{created:?}");
    assert_eq!(
        created.structured_content.unwrap()["name"],
        "fs-read-parallel"
    );

    let listed = call(&s, "seq_list", json!({})).await;
    assert_eq!(
        listed.structured_content.unwrap()["result"][0]["name"],
        "fs-read-parallel"
    );

    let dir_arg = dir.path().canonicalize().unwrap();
    let ran = call(
        &s,
        "seq_run",
        json!({"name": "fs-read-parallel", "args": {"dir": dir_arg}}),
    )
    .await;
    assert_eq!(ran.is_error, Some(false), "{ran:?}");
    let report = ran.structured_content.unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["out"]["read"]["b"], json!({"content": "beta"}));

    // A run that fails is an error result carrying its report.
    let failed = call(
        &s,
        "seq_run",
        json!({"name": "fs-read-parallel", "args": {"dir": "/nowhere"}}),
    )
    .await;
    assert_eq!(failed.is_error, Some(true));
    let structured = failed.structured_content.unwrap();
    assert_eq!(structured["error"]["reason"], "failed");
    assert_eq!(structured["report"]["ok"], false);
    mcp.shutdown().await;
}

/// The worked example of `seq_create`'s description is stored without a finding and runs: the
/// guide's one example is a sequence that works.
#[tokio::test(flavor = "multi_thread")]
async fn the_example_in_seq_creates_description_is_accepted_and_runs() {
    let s = session(Policy::allow_all(), None).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let create = tools.iter().find(|t| t.name == "seq_create").unwrap();
    let description = create.description.as_deref().unwrap();
    let example = seq_catalog::GUIDE_EXAMPLE;
    assert!(description.contains(example), "{description}");
    std::fs::write(s.root.path().join("notes.txt"), "buy milk").unwrap();
    let created = call(&s, "seq_create", serde_json::from_str(example).unwrap()).await;
    assert_eq!(created.is_error, Some(false), "{created:?}");
    let created = created.structured_content.unwrap();
    assert_eq!(created["warnings"], json!([]), "{created}");
    let run = call(
        &s,
        "seq_run",
        json!({"name": "notes", "args": {"file": "notes.txt"}}),
    )
    .await;
    assert_eq!(run.is_error, Some(false), "{run:?}");
    let report = run.structured_content.unwrap();
    assert_eq!(report["out"]["report"]["g"]["text"], "buy milk", "{report}");
    // `any` keeps `files_list`'s array as it is.
    assert_eq!(
        report["out"]["report"]["g"]["names"],
        json!(["notes.txt"]),
        "{report}"
    );
}

/// The guide's `jq` item, quoted as a `tools` string in `seq_create`'s `groups`, is stored
/// without a finding and gives what its filter says.
#[tokio::test(flavor = "multi_thread")]
async fn the_jq_quoting_example_in_seq_creates_description_is_accepted_and_runs() {
    let s = session(Policy::allow_all(), None).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let create = tools.iter().find(|t| t.name == "seq_create").unwrap();
    let example = seq_catalog::GUIDE_JQ;
    assert!(create.description.as_deref().unwrap().contains(example));
    let sequence = format!(
        r#"{{"name":"names","groups":[{{"name":"g","in":{{"rows":"array"}},"out":{{"csv":"string"}},{example}}}]}}"#
    );
    let created = call(&s, "seq_create", serde_json::from_str(&sequence).unwrap()).await;
    assert_eq!(created.is_error, Some(false), "{created:?}");
    assert_eq!(created.structured_content.unwrap()["warnings"], json!([]));
    let rows = json!([{"name": "a"}, {"name": "b"}]);
    let run = call(
        &s,
        "seq_run",
        json!({"name": "names", "args": {"rows": rows}}),
    )
    .await;
    assert_eq!(run.is_error, Some(false), "{run:?}");
    assert_eq!(run.structured_content.unwrap()["out"]["g"]["csv"], "a,b");
}

/// Every seq tool whose result has one schema declares it as `outputSchema`, shaped as the
/// structured content is (a non-object under `result`), or a failure.
#[tokio::test(flavor = "multi_thread")]
async fn the_seq_tools_declare_their_result_schemas() {
    let s = session(Policy::allow_all(), None).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let output = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap()
            .output_schema
            .as_ref()
            .map(|schema| Value::Object(schema.as_ref().clone()))
    };
    // A success or a failure (`{error, ...}`), both objects.
    let list = output("seq_list").unwrap();
    assert_eq!(list["type"], "object");
    assert_eq!(list["anyOf"][0]["properties"]["result"]["type"], "array");
    assert_eq!(list["anyOf"][1]["required"], json!(["error"]));
    let run = output("seq_run").unwrap();
    assert_eq!(run["anyOf"][0], json!({"$ref": "#/$defs/RunReport"}));
    assert_eq!(
        run["$defs"]["RunReport"]["required"],
        json!(["ok", "groups", "out"])
    );
    assert_eq!(output("seq_when_call"), None);
    let listed = call(&s, "seq_list", json!({})).await;
    assert_eq!(listed.structured_content.unwrap(), json!({"result": []}));
}

/// What a client was told of a call's progress.
#[derive(Clone, Default)]
struct Progressed(Arc<std::sync::Mutex<Vec<(f64, String)>>>);

impl rmcp::ClientHandler for Progressed {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let message = params.message.unwrap_or_default();
        self.0.lock().unwrap().push((params.progress, message));
    }
}

#[tokio::test]
async fn seq_call_and_seq_when_call_report_progress_as_items_and_groups_finish() {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let policy = Arc::new(Policy::allow_all());
    let server = SeqServer::assemble(
        Storage::new(data.path()),
        root.path().to_path_buf(),
        Caller::new("agent"),
        policy,
        Arc::new(McpHost::none()),
        Arc::new(Captured::new()),
    );
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.unwrap();
        running.waiting().await.unwrap();
    });
    let seen = Progressed::default();
    let client = seen.clone().serve(client_end).await.unwrap();
    let nap = r#"{"tool":"sleep","args":{"ms":1}} ;"#;
    let Value::Object(create) = json!({"name": "two", "groups": [
        {"name": "first", "parallel": false, "tools": format!("{nap} {nap}")},
        {"name": "second", "tools": nap}]})
    else {
        panic!()
    };
    let created = client
        .call_tool(CallToolRequestParams::new("seq_create").with_arguments(create))
        .await
        .unwrap();
    assert_ne!(created.is_error, Some(true), "{created:?}");
    for (tool, args) in [
        ("seq_call", json!({"target": "#two"})),
        ("seq_when_call", json!({"target": "#two", "when": "true"})),
    ] {
        seen.0.lock().unwrap().clear();
        let Value::Object(args) = args else { panic!() };
        let mut request = CallToolRequestParams::new(tool).with_arguments(args);
        rmcp::model::RequestParamsMeta::set_progress_token(
            &mut request,
            rmcp::model::ProgressToken(rmcp::model::NumberOrString::String(tool.into())),
        );
        let answer = client.call_tool(request).await.unwrap();
        assert_ne!(answer.is_error, Some(true), "{answer:?}");
        let told = seen.0.lock().unwrap().clone();
        // Every notification came before the answer, each further than the one before.
        assert!(told.windows(2).all(|w| w[0].0 < w[1].0), "{told:?}");
        let finished = seq_test_support::finished(&told);
        assert_eq!(
            finished,
            [
                "item 1 `sleep` of group `first` succeeded",
                "item 2 `sleep` of group `first` succeeded",
                finished[2],
                "item 1 `sleep` of group `second` succeeded",
                finished[4],
            ],
            "{tool}"
        );
        assert!(
            finished[2].starts_with("group `first` ran in"),
            "{finished:?}"
        );
        assert!(
            finished[4].starts_with("group `second` ran in"),
            "{finished:?}"
        );
    }
}

/// What a client was sent as log messages: each one's level and `data.message`.
#[derive(Clone, Default)]
struct Logged(Arc<std::sync::Mutex<Vec<(String, String)>>>);

#[allow(deprecated, reason = "MCP logging is what clients implement today")]
impl rmcp::ClientHandler for Logged {
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        assert_eq!(params.logger.as_deref(), Some("seqc"));
        let level = serde_json::to_value(params.level).unwrap();
        let message = params.data["message"].as_str().unwrap_or_default();
        self.0
            .lock()
            .unwrap()
            .push((level.as_str().unwrap().to_owned(), message.to_owned()));
    }
}

/// `logging` is declared; nothing is sent before `logging/setLevel`, then a run's events at
/// the level asked and above, all before the call's answer.
#[tokio::test]
#[allow(deprecated, reason = "MCP logging is what clients implement today")]
async fn a_runs_events_are_logged_at_the_level_the_client_set() {
    use rmcp::model::{LoggingLevel, SetLevelRequestParams};
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let server = SeqServer::assemble(
        Storage::new(data.path()),
        root.path().to_path_buf(),
        Caller::new("agent"),
        Policy::allow_all(),
        Arc::new(McpHost::none()),
        Arc::new(Captured::new()),
    );
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.unwrap();
        running.waiting().await.unwrap();
    });
    let seen = Logged::default();
    let client = seen.clone().serve(client_end).await.unwrap();
    let info = client.peer_info().unwrap();
    assert!(info.capabilities.logging.is_some(), "{info:?}");
    let Value::Object(create) = json!({"name": "log", "groups": [
        {"name": "first", "parallel": false,
         "tools": r#"{"tool":"sleep","args":{"ms":1}} ; {"tool":"files_read","args":{"path":"missing.txt"}} ;"#}]})
    else {
        panic!()
    };
    let created = client
        .call_tool(CallToolRequestParams::new("seq_create").with_arguments(create))
        .await
        .unwrap();
    assert_ne!(created.is_error, Some(true), "{created:?}");
    let run = || async {
        let Value::Object(args) = json!({"target": "#log"}) else {
            panic!()
        };
        let answer = client
            .call_tool(CallToolRequestParams::new("seq_call").with_arguments(args))
            .await
            .unwrap();
        assert_eq!(answer.is_error, Some(true), "{answer:?}");
        std::mem::take(&mut *seen.0.lock().unwrap())
    };
    assert_eq!(run().await, [], "nothing before setLevel");

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    let told = run().await;
    let levels: Vec<&str> = told.iter().map(|(level, _)| level.as_str()).collect();
    assert_eq!(levels, ["info", "error", "error"], "{told:?}");
    assert_eq!(told[0].1, "item 1 `sleep` of group `first` succeeded");
    assert!(
        told[1]
            .1
            .starts_with("item 2 `files_read` of group `first` failed: "),
        "{told:?}"
    );
    assert!(
        told[2].1.starts_with("group `first` failed in "),
        "{told:?}"
    );

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    let told = run().await;
    assert_eq!(told.len(), 6, "the starts too: {told:?}");
    assert_eq!(
        told[0],
        (
            "debug".to_owned(),
            "group `first` started, its items in order".to_owned()
        )
    );

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Error))
        .await
        .unwrap();
    assert_eq!(run().await.len(), 2, "the failures only");
}

/// `seq_create` admits against the tools as the downstream servers list them now: a tool a
/// server adds (and says so with `tools/list_changed`) is known to the next admission, as to
/// `seq_create`'s description; and the hint of a tool no catalog knows names only the tools
/// offered here, not one turned off.
#[tokio::test(flavor = "multi_thread")]
async fn seq_create_admits_against_the_live_catalog() {
    let mcp = connect(vec![changing(None)]).await;
    let policy = Policy::allow_all().turn_off("cmd_run", "--enable cmd_run");
    let s = session(policy, Some(mcp.clone())).await;
    let warnings = |created: &CallToolResult| -> Vec<Value> {
        assert_ne!(created.is_error, Some(true), "{created:?}");
        let structured = created.structured_content.clone().unwrap();
        structured["warnings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let uses = |tool: &str| {
        json!({"name": "x", "replace": true, "groups": [
            {"name": "g", "tools": format!(r#"{{"tool":"{tool}","args":{{"word":"hi"}}}} ;"#)}]})
    };

    let before = warnings(&call(&s, "seq_create", uses("extra")).await);
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["code"], "W0505");
    let hint = before[0]["hint"].as_str().unwrap();
    assert!(hint.contains("`grow`"), "{hint}");
    assert!(
        !hint.contains("cmd_run"),
        "a tool turned off is not offered: {hint}"
    );

    mcp.call(&Caller::new("agent"), "grow", json!({}))
        .await
        .unwrap();
    let seen = Arc::clone(&mcp);
    eventually("`extra` to appear", move || seen.lookup("extra").is_some()).await;

    assert_eq!(
        warnings(&call(&s, "seq_create", uses("extra")).await),
        [] as [Value; 0]
    );
    let tools = s.client.list_all_tools().await.unwrap();
    let description = tools
        .iter()
        .find(|t| t.name == "seq_create")
        .and_then(|t| t.description.clone())
        .unwrap();
    assert!(description.contains("`extra` {word}"), "{description}");
    let ran = call(&s, "seq_run", json!({"name": "x"})).await;
    assert_eq!(ran.is_error, Some(false), "{ran:?}");
    mcp.shutdown().await;
}
