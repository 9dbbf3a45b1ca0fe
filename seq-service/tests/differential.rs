//! The checker and the engine never disagree about the language. Generated sequences,
//! valid and slightly broken (undeclared inputs and slots, bad enums and types, unknown fields,
//! `$out` in parallel groups, calls to unknown groups or with undeclared arguments, cycles,
//! broken item syntax), go through three doors:
//!
//! 1. `seq_check::check` of the text;
//! 2. `seq_create` of the same text as a file (fresh storage): it refuses exactly what the
//!    checker rejects, with `arg_error` on `file`, and stores exactly what it accepts;
//! 3. for what was accepted, a run on a host whose only tool is a pure `echo`, with arguments of
//!    the declared types. The run must end without a *check-time* failure.
//!
//! A check-time failure is one the checker was in a position to rule out, because everything it
//! is about is literal in the generated text:
//! - reason `cycle` or `depth` (every call target is literal: cycles are E0601/E0602, and the
//!   chains generated are far below the run-time nesting bound);
//! - reason `arg_error` (no `__arg_error` is generated; a malformed target is E0511);
//! - reason `not_found` on field `target` (every target is a group of the sequence, or `#` and
//!   its own name: E0512);
//! - any failure whose field is a name the generator only ever writes *undeclared*: the input
//!   `q` (`$args.q`, E0502), the slot `zz` (`"as": "zz"`, E0501), the call argument `nope`
//!   (E0513).
//!
//! Everything else may legitimately fail at run time and is allowed: a tool the host lacks
//! (`cmd_run`, `nope_tool`: W0505, existence is a run-time property), a value of type `any`
//! flowing into a typed input or slot, an unset slot read where the checker warned (W0601), an
//! input `retries` is taken from that the run or a call does not pass (reason `type` on that
//! input: its value is known only when the group's inputs are admitted).
//!
//! The generator is `seq_gen::differential`, shared with the in-process–durable differential
//! test of the `seqc` package.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use proptest::prelude::*;
use seq_catalog::Catalog;
use seq_check::{Source, check};
use seq_exec::engine::RunRequest;
use seq_exec::engine::{GroupStatus, RunReport};
use seq_exec::{Caller, Reason, ToolError};
use seq_gen::differential::{Case, case, render, run_args};
use seq_service::{SeqConfig, SeqTools};
use seq_store::storage::Storage;
use seq_test_support::EchoHost;
use serde_json::json;
use std::sync::Arc;

/// Why `error` is a failure the checker should have ruled out, if it is one (module comment).
fn check_time(error: &ToolError) -> Option<&'static str> {
    let field = error.field.as_deref().unwrap_or("");
    match error.reason {
        Reason::Cycle | Reason::Depth => Some("a cycle or chain visible in the text"),
        Reason::ArgError => Some("a malformed target or argument visible in the text"),
        Reason::NotFound if field == "target" => Some("a call to a group that is not there"),
        // A run's size is known only when it runs.
        Reason::Budget => None,
        Reason::Required
        | Reason::Type
        | Reason::Unauthorized
        | Reason::Timeout
        | Reason::NotFound
        | Reason::Absent
        | Reason::Failed
        | Reason::Cancelled => {
            let undeclared = ["q", "$args.q", "zz", "$out.zz", "nope"];
            undeclared
                .contains(&field)
                .then_some("a name that is never declared")
        }
    }
}

fn assert_no_check_time_failure(report: &RunReport, text: &str) {
    let errors = report
        .error
        .iter()
        .chain(report.groups.iter().filter_map(|g| g.error.as_ref()))
        .chain(
            report
                .groups
                .iter()
                .flat_map(|g| g.items.iter().filter_map(|i| i.error.as_ref())),
        );
    for error in errors {
        if let Some(why) = check_time(error) {
            panic!("the checker accepted, the run failed on {why}: {error}\n{text}");
        }
    }
}

struct Harness {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: std::path::PathBuf,
    tools: SeqTools,
    catalog: Catalog,
    runtime: tokio::runtime::Runtime,
}

impl Harness {
    fn new() -> Harness {
        let data = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let catalog = Catalog::builtin();
        let echo = Arc::new(EchoHost::new());
        let config = SeqConfig::new(Storage::new(data.path()), root.path());
        let tools = SeqTools::assemble(echo, config, |engine| engine);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        Harness {
            root: root.path().to_path_buf(),
            _dirs: (data, root),
            tools,
            catalog,
            runtime,
        }
    }

    fn case(&self, case: &Case) -> Outcome {
        let text = render(case);
        let checked = check(&[Source::new("diff.json", text.clone())], &self.catalog);
        let file = checked.files.into_iter().next().unwrap();
        let rejected = file.diagnostics.iter().any(|d| d.is_error());

        std::fs::write(self.root.join("diff.json"), &text).unwrap();
        let caller = Caller::new("prop");
        let created = self
            .runtime
            .block_on(self.tools.call(
                "seq_create",
                json!({"name": case.name, "file": "diff.json", "replace": true}),
                RunRequest::new(&caller),
            ))
            .into_result();
        match (&created, rejected) {
            (Err(error), true) => {
                assert_eq!(error.reason, Reason::ArgError, "{error}\n{text}");
                assert_eq!(error.field.as_deref(), Some("file"), "{error}\n{text}");
                return Outcome::Rejected;
            }
            (Ok(_), false) => {}
            (Err(error), false) => {
                panic!("the checker accepted, `seq_create` refused: {error}\n{text}")
            }
            (Ok(_), true) => panic!(
                "the checker rejected ({:?}), `seq_create` stored it\n{text}",
                file.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>()
            ),
        }

        let sequence = file.sequence.unwrap();
        let report = self.runtime.block_on(self.tools.engine().run(
            &sequence,
            run_args(case),
            RunRequest::new(&caller),
        ));
        assert!(report.groups.len() <= sequence.groups.len());
        let failed = report
            .groups
            .iter()
            .any(|g| g.status == GroupStatus::Failed);
        assert_eq!(report.ok, report.error.is_none() && !failed, "{report:?}");
        assert_no_check_time_failure(&report, &text);
        if report.ok {
            Outcome::Ran
        } else {
            Outcome::Failed
        }
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Rejected,
    Ran,
    Failed,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn checker_seq_create_and_engine_agree(cases in prop::collection::vec(case(), 4)) {
        let harness = Harness::new();
        for case in &cases {
            harness.case(case);
        }
    }
}

/// The generator reaches all three outcomes, so the property above is not vacuous.
#[test]
fn the_generator_reaches_rejection_success_and_failure() {
    let harness = Harness::new();
    // A fixed seed: the counts below are facts about the generator, not about a lucky draw.
    let mut seen = std::collections::BTreeMap::new();
    for case in seq_gen::differential::sample(300) {
        *seen.entry(harness.case(&case)).or_insert(0) += 1;
    }
    eprintln!("outcomes of 300 generated sequences: {seen:?}");
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.values().all(|&n| n >= 10), "{seen:?}");
}
