//! A value named many times cannot multiply into gigabytes: an item's arguments are bounded as
//! they are rendered (docs/robustness.md, "Bounds").

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_exec::builtin::BuiltinHost;
use seq_exec::engine::{GroupStatus, ItemStatus};
use seq_exec::{Caller, Engine, Reason, SequenceSource};
use seq_syntax::ast::Sequence;
use serde_json::{Map, json};
use std::sync::Arc;

struct NoSequences;

impl SequenceSource for NoSequences {
    fn sequence(&self, _name: &str) -> Option<Arc<Sequence>> {
        None
    }
}

/// Three `echo` items: a 1 KB value, then 10,000 copies of it (10 MB, within the bound), then
/// 1,000 copies of that (10 GB, which must be refused before it is built).
fn amplifier() -> Sequence {
    let item = |value: String, slot: &str| {
        format!(
            "{} ;",
            json!({"tool": "echo", "args": {"value": value}, "as": slot})
        )
    };
    let tools = [
        item("x".repeat(1000), "a"),
        item("$out.a".repeat(10_000), "b"),
        item("$out.b".repeat(1_000), "c"),
    ]
    .join(" ");
    let text = json!({"name": "amplify", "groups": [{
        "name": "g",
        "parallel": false,
        "out": {"a": "string", "b": "string", "c": "string"},
        "tools": tools,
    }]})
    .to_string();
    let parse = seq_syntax::parse(&text);
    assert!(!parse.has_errors(), "{:#?}", parse.diagnostics);
    parse.sequence.unwrap()
}

#[tokio::test]
async fn rendering_past_the_bound_fails_the_item_not_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::new(
        Arc::new(BuiltinHost::new(dir.path())),
        Arc::new(NoSequences),
    );
    let report = engine
        .run(&amplifier(), Map::new(), &Caller::new("t"))
        .await;
    let group = &report.groups[0];
    assert_eq!(group.status, GroupStatus::Failed, "{report:#?}");
    let statuses: Vec<ItemStatus> = group.items.iter().map(|item| item.status).collect();
    assert_eq!(
        statuses,
        [ItemStatus::Ok, ItemStatus::Ok, ItemStatus::Failed],
        "{report:#?}"
    );
    let error = group.items[2].error.as_ref().unwrap();
    assert_eq!(error.reason, Reason::Failed);
    assert!(
        error
            .detail
            .as_deref()
            .unwrap()
            .contains("more than 16 MiB once their references are filled in"),
        "{error:?}"
    );
}
