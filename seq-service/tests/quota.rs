//! Quotas held by `seq_create`: a caller past its count or its bytes is refused, naming the
//! limit; replacing stays within it; ownerless sequences count for no one.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::{Caller, Reason};
use seq_service::{SeqConfig, StorageTools};
use seq_store::quota::{Quota, Quotas};
use seq_store::storage::{Put, Storage};
use seq_test_support::{hello, hello_json};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;

fn tools_with(data: &Path, quotas: Quotas) -> StorageTools {
    let root = data.join("root");
    fs::create_dir_all(&root).unwrap();
    let mut config = SeqConfig::new(Storage::new(data), &root);
    config.quotas = quotas;
    StorageTools::new(config)
}

fn create(tools: &StorageTools, who: &str, name: &str) -> Result<Value, seq_exec::ToolError> {
    let args = hello_json(name);
    tools
        .call_blocking("seq_create", &args, Some(&Caller::new(who)))
        .result
}

#[test]
fn a_caller_past_its_quota_is_refused_naming_the_limit() {
    let data = tempfile::tempdir().unwrap();
    let quotas = Quotas {
        global: Quota {
            sequences: 2,
            bytes: 1 << 20,
        },
        callers: [(
            "small".to_owned(),
            Quota {
                sequences: 100,
                bytes: 10,
            },
        )]
        .into(),
    };
    let tools = tools_with(data.path(), quotas);
    create(&tools, "alice", "a1").unwrap();
    create(&tools, "alice", "a2").unwrap();
    let refused = create(&tools, "alice", "a3").unwrap_err();
    assert_eq!(refused.reason, Reason::Failed);
    assert!(
        refused
            .to_string()
            .contains("already owns 2 stored sequences, the quota of 2 per caller"),
        "{refused}"
    );
    // Replacing one of them stays within it; another caller has a quota of its own.
    let args = json!({"name": "a1", "replace": true,
        "groups": [{"name": "one", "tools": r#"{"tool":"echo","args":{"value":"ho"}} ;"#}]});
    tools
        .call_blocking("seq_create", &args, Some(&Caller::new("alice")))
        .result
        .unwrap();
    create(&tools, "bob", "b1").unwrap();
    // A caller's own layer sets its quota: 10 bytes hold no sequence.
    let refused = create(&tools, "small", "s1").unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("past the quota of 10 bytes per caller"),
        "{refused}"
    );
    // The command line's own (ownerless) sequences count for no one.
    tools.storage().put(Put::new(&hello("local"))).unwrap();
    create(&tools, "bob", "b2").unwrap();
}
