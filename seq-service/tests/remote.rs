//! The seq tools with their runs elsewhere ([`Remote`], what `seqc mcp --restate` gives them):
//! `seq_run` hands the checked stored sequence and the stored sequences beside it to the remote
//! and answers its report as a local run's; a run reaching a tool the caller may not use is
//! refused before it is handed over (the remote's workers do not know this policy); `seq_call`
//! and `seq_when_call` made directly are not offered.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::CancellationToken;
use seq_exec::engine::RunRequest;
use seq_exec::policy::{Policy, Rules};
use seq_exec::{BoxFuture, Caller, Engine, Reason, RunReport, ToolError, ToolHost};
use seq_service::{Remote, RemoteRun, SeqConfig, SeqTools};
use seq_store::storage::Storage;
use seq_syntax::ast::Sequence;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Runs what it is handed on an engine of its own, over the sequences it was handed only, and
/// keeps the names of those.
#[derive(Debug)]
struct Elsewhere {
    host: Arc<BuiltinHost>,
    handed: Mutex<Vec<Vec<String>>>,
}

impl Remote for Elsewhere {
    fn run<'a>(
        &'a self,
        run: RemoteRun<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<RunReport, ToolError>> {
        Box::pin(async move {
            let names = run
                .sequences
                .iter()
                .map(|s| s.name.value.to_string())
                .collect();
            self.handed.lock().unwrap().push(names);
            let source: HashMap<String, Arc<Sequence>> = run
                .sequences
                .into_iter()
                .map(|stored| (stored.name.value.to_string(), Arc::new(stored)))
                .collect();
            let host: Arc<dyn ToolHost> = self.host.clone();
            // As a worker: held to the policy that travelled with the run.
            let engine = Engine::new(host, Arc::new(source))
                .with_authorizer(seq_exec::Authorizer::new(run.policy));
            Ok(engine
                .run(
                    run.sequence,
                    run.args,
                    RunRequest::new(run.caller).owner(run.owner).cancel(cancel),
                )
                .await)
        })
    }
}

struct Setup {
    _data: tempfile::TempDir,
    _root: tempfile::TempDir,
    local: SeqTools,
    remote: SeqTools,
    elsewhere: Arc<Elsewhere>,
}

/// One storage; the same seq tools twice, one running in process, the other elsewhere.
/// `low` may not use `cmd_run`.
fn setup() -> Setup {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let policy = Arc::new(Policy::allow_all().for_caller("low", Rules::default().deny("cmd_run")));
    let host = Arc::new(BuiltinHost::new(root.path()));
    let config = || {
        let mut config = SeqConfig::new(Storage::new(data.path()), root.path());
        config.authorizer = seq_exec::Authorizer::new(Arc::clone(&policy));
        config
    };
    let local = SeqTools::assemble(host.clone(), config(), |engine| engine);
    let elsewhere = Arc::new(Elsewhere {
        host: host.clone(),
        handed: Mutex::new(Vec::new()),
    });
    let remote = SeqTools::assemble(host, config(), |engine| engine)
        .with_remote(elsewhere.clone() as Arc<dyn Remote>);
    Setup {
        _data: data,
        _root: root,
        local,
        remote,
        elsewhere,
    }
}

fn one_group(name: &str, tools: &str) -> Value {
    json!({"name": name, "description": "A sequence.", "groups": [{"name": "g",
        "description": "One group.", "out": {"v": "any"}, "tools": tools}]})
}

#[tokio::test]
async fn seq_run_hands_the_stored_sequences_over_and_answers_the_local_report() {
    let s = setup();
    let admin = Caller::new("admin");
    let inner = one_group(
        "inner",
        r#"{"tool":"echo","args":{"value":"deep"},"as":"v"} ;"#,
    );
    let outer = one_group(
        "outer",
        r##"{"tool":"seq_call","args":{"target":"#inner"},"as":"v"} ;"##,
    );
    for created in [inner, outer] {
        s.remote
            .call("seq_create", created, RunRequest::new(&admin))
            .await
            .into_result()
            .unwrap();
    }
    let there = s
        .remote
        .call("seq_run", json!({"name": "outer"}), RunRequest::new(&admin))
        .await;
    let here = s
        .local
        .call("seq_run", json!({"name": "outer"}), RunRequest::new(&admin))
        .await;
    let (there, here) = (there.report.unwrap(), here.report.unwrap());
    // Timings aside, the same report.
    let outline = |report: &RunReport| {
        let groups: Vec<_> = report
            .groups
            .iter()
            .map(|g| (g.name.clone(), g.status))
            .collect();
        (report.ok, report.out.clone(), groups)
    };
    assert_eq!(outline(&there), outline(&here));
    assert_eq!(there.out["g"]["v"]["g"]["v"], "deep", "{:?}", there.out);
    assert_eq!(
        *s.elsewhere.handed.lock().unwrap(),
        [["inner".to_owned(), "outer".to_owned()]]
    );
}

#[tokio::test]
async fn a_run_reaching_a_refused_tool_is_not_handed_over() {
    let s = setup();
    let command = one_group(
        "command",
        r#"{"tool":"cmd_run","args":{"command":"true"},"as":"v"} ;"#,
    );
    let calls = one_group(
        "calls",
        r##"{"tool":"seq_call","args":{"target":"#command"},"as":"v"} ;"##,
    );
    let admin = Caller::new("admin");
    for created in [command, calls] {
        s.remote
            .call("seq_create", created, RunRequest::new(&admin))
            .await
            .into_result()
            .unwrap();
    }
    let refused = s
        .remote
        .call(
            "seq_run",
            json!({"name": "calls"}),
            RunRequest::new(&Caller::new("low")),
        )
        .await;
    let error = refused.result.unwrap_err();
    assert_eq!(error.reason, Reason::Unauthorized, "{error}");
    assert_eq!(refused.diagnostics.len(), 1, "{:?}", refused.diagnostics);
    assert_eq!(refused.diagnostics[0].code, "E0901");
    assert!(s.elsewhere.handed.lock().unwrap().is_empty());
    // Through the engine in process, the same run is refused at its dispatch instead.
    let local = s
        .local
        .call(
            "seq_run",
            json!({"name": "calls"}),
            RunRequest::new(&Caller::new("low")),
        )
        .await;
    assert!(local.result.is_err());
}

#[tokio::test]
async fn calls_made_directly_are_not_offered_when_runs_are_elsewhere() {
    let s = setup();
    for tool in ["seq_call", "seq_when_call"] {
        assert!(s.local.offers(tool));
        assert!(!s.remote.offers(tool));
        let error = s
            .remote
            .call(
                tool,
                json!({"target": "#x", "when": "true"}),
                RunRequest::new(&Caller::new("admin")),
            )
            .await
            .into_result()
            .unwrap_err();
        assert_eq!(error.reason, Reason::NotFound, "{error}");
        assert!(error.hint.unwrap().contains("seq_run"));
    }
    assert!(s.remote.offers("seq_run"));
}
