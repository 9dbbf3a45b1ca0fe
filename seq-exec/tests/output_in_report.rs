//! What a run's output channels send is part of its report, through calls too, and the host
//! still delivers every line (docs/reference.md, "A run").

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::builtin::{BuiltinHost, Captured};
use seq_exec::engine::NoSequences;
use seq_exec::engine::RunRequest;
use seq_exec::{Caller, Engine};
use seq_syntax::ast::Sequence;
use serde_json::{Map, json};
use std::sync::Arc;

fn parsed(value: serde_json::Value) -> Sequence {
    seq_test_support::parsed(&value.to_string())
}

#[tokio::test]
async fn the_report_holds_what_the_output_channels_sent() {
    let dir = tempfile::tempdir().unwrap();
    let captured = Arc::new(Captured::new());
    let host = BuiltinHost::new(dir.path()).with_output(captured.clone());
    let engine = Engine::new(Arc::new(host), Arc::new(NoSequences));
    let sequence = parsed(json!({"name": "say", "groups": [
        {"name": "greet", "in": {"who": "string"},
         "tools": r#"{"tool":"output_send__stdout","args":{"text":"hello $args.who"}} ;"#},
        {"name": "main", "parallel": false, "out": {"r": "object"},
         "tools": concat!(
             r#"{"tool":"output_send__stdout","args":{"text":"first"}} ;"#,
             r#"{"tool":"seq_call","args":{"target":"greet","args":{"who":"Ada"}},"as":"r"} ;"#,
             r#"{"tool":"output_send__stdout","args":{"text":"last"}} ;"#,
         )},
    ]}));
    let report = engine
        .run(&sequence, Map::new(), RunRequest::new(&Caller::new("t")))
        .await;
    assert!(report.ok, "{report:#?}");
    assert_eq!(
        serde_json::to_value(&report.output).unwrap(),
        json!({"stdout": ["first", "hello Ada", "last"]})
    );
    assert_eq!(captured.lines(), ["first", "hello Ada", "last"]);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["output"]["stdout"][1], "hello Ada");

    // A run that sends nothing has no `output` at all.
    let quiet = parsed(json!({"name": "quiet", "groups": [
        {"name": "g", "tools": r#"{"tool":"sleep","args":{"ms":1}} ;"#},
    ]}));
    let report = engine
        .run(&quiet, Map::new(), RunRequest::new(&Caller::new("t")))
        .await;
    assert!(
        serde_json::to_value(&report)
            .unwrap()
            .get("output")
            .is_none()
    );
}
