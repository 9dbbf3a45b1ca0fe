//! Runs tested from fixtures: each directory `tests/runs/NAME/` is one run of the engine on a
//! scripted host, and its expected report. Adding a run is adding a directory:
//!
//! - `sequence.json` — the sequence to run. It is checked first against the built-in catalog
//!   plus the host's tools, and must check without errors.
//! - `stored/*.json` (optional) — other sequences, found by `#name` calls (checked with it).
//! - `case.json` (optional, every member optional) — the run's set-up:
//!   ```json
//!   {
//!     "args": {"who": "world"},
//!     "caller": "alice",
//!     "deny": ["tool_the_caller_may_not_use"],
//!     "limits": {"tool_timeout_steps": 5, "max_depth": 4},
//!     "tools": {
//!       "fetch": {
//!         "parallel_safe": true,
//!         "parameters": {"type": "object"},
//!         "calls": [
//!           {"steps": 2, "error": {"reason": "failed", "detail": "busy"}},
//!           {"steps": 1, "ok": {"body": "hello"}}
//!         ]
//!       },
//!       "mirror": {"calls": [{"echo": true}]},
//!       "stuck": {"calls": [{"hang": true}]}
//!     }
//!   }
//!   ```
//!   Each tool answers its n-th call with its n-th answer, the last one repeating; with no
//!   `calls` it answers `null`. An answer waits `steps` logical steps first (default 0), then
//!   gives `ok` (a value), `error` (a `ToolError`: `reason`, `detail`, `field`, `hint`), its
//!   arguments (`echo`), or never answers (`hang`: only a timeout or a failure beside it ends
//!   it). `parallel_safe` defaults to true, `parameters` to any object. `unchecked_tools` (a
//!   list) are tools the host has but the checker's catalog does not (a tool added after the
//!   check); `removed_tools` are in the catalog but not on the host (one removed since).
//! - `report.snap` — the expected result, an insta snapshot (`INSTA_UPDATE=always` writes it;
//!   read it before committing): the run report with its timings redacted (a `duration_ms` as
//!   the logical steps it took, `[2 steps]`; any other `*_ms` as `[ms]`), and the host's log of
//!   the starts and ends of calls (`start fetch#1`, `end fetch#1`; a call cut off by a timeout
//!   or a cancellation ends when it is dropped).
//!
//! Time is logical: the run goes on tokio's paused clock, where one step is one virtual second
//! (so a group `"timeout": "2s"` ends a call of three steps) and the clock only moves when
//! every task waits, so the log's order is the order of the steps, never of the machine's
//! load. No test here sleeps or reads the wall clock.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::{Catalog, ToolDef};
use seq_check::Source;
use seq_exec::engine::RunRequest;
use seq_exec::policy::Policy;
use seq_exec::{Authorizer, Caller, Engine, Limits, SequenceSource, ToolCall, ToolError, ToolHost};
use seq_syntax::ast::Sequence;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One logical step on the paused clock.
const STEP: Duration = Duration::from_secs(1);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[serde(default)]
    args: Map<String, Value>,
    #[serde(default)]
    caller: Option<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    limits: CaseLimits,
    #[serde(default)]
    tools: BTreeMap<String, Tool>,
    #[serde(default)]
    unchecked_tools: Vec<String>,
    #[serde(default)]
    removed_tools: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseLimits {
    tool_timeout_steps: Option<u64>,
    max_depth: Option<u32>,
    max_nested_groups: Option<u32>,
    max_result_bytes: Option<usize>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    #[serde(default = "yes")]
    parallel_safe: bool,
    #[serde(default = "any_object")]
    parameters: Value,
    #[serde(default)]
    calls: Vec<Answer>,
}

fn yes() -> bool {
    true
}

fn any_object() -> Value {
    json!({"type": "object"})
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    #[serde(default)]
    steps: u64,
    #[serde(default)]
    ok: Option<Value>,
    #[serde(default)]
    error: Option<ToolError>,
    #[serde(default)]
    echo: bool,
    #[serde(default)]
    hang: bool,
}

/// The host a case describes: answers by script, a log of starts and ends.
#[derive(Debug)]
struct FixtureHost {
    tools: HashMap<String, (Arc<ToolDef>, Vec<Answer>)>,
    calls: Mutex<HashMap<String, usize>>,
    log: Mutex<Vec<String>>,
}

fn definition(name: &str, tool: &Tool) -> ToolDef {
    let text =
        json!([{"name": name, "parameters": tool.parameters, "parallel_safe": tool.parallel_safe}]);
    Catalog::load_json(&text.to_string())
        .unwrap()
        .into_iter()
        .next()
        .unwrap()
}

impl ToolHost for FixtureHost {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.tools.get(name).map(|(def, _)| Arc::clone(def))
    }

    fn call<'a>(&'a self, _caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        Box::pin(async move {
            let (_, answers) = self.tools.get(name).unwrap();
            let nth = {
                let mut calls = self.calls.lock().unwrap();
                let n = calls.entry(name.to_owned()).or_default();
                *n += 1;
                *n
            };
            let answer = answers
                .get(nth - 1)
                .or(answers.last())
                .cloned()
                .unwrap_or_default();
            let label = format!("{name}#{nth}");
            self.log.lock().unwrap().push(format!("start {label}"));
            // Logged when the call ends however it ends (a timeout drops it mid-wait).
            let _end = EndOnDrop(&self.log, label);
            tokio::time::sleep(STEP * u32::try_from(answer.steps).unwrap()).await;
            if answer.hang {
                std::future::pending::<()>().await;
            }
            match (answer.error, answer.echo) {
                (Some(error), _) => Err(error),
                (None, true) => Ok(args),
                (None, false) => Ok(answer.ok.unwrap_or(Value::Null)),
            }
        })
    }
}

struct EndOnDrop<'a>(&'a Mutex<Vec<String>>, String);

impl Drop for EndOnDrop<'_> {
    fn drop(&mut self) {
        let end = format!("end {}", self.1);
        if let Ok(mut log) = self.0.lock() {
            log.push(end);
        }
    }
}

/// The stored sequences, by name.
#[derive(Debug, Default)]
struct Stored(HashMap<String, Arc<Sequence>>);

impl SequenceSource for Stored {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        self.0.get(name).cloned()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `*_ms` member (timings) replaced, at any depth: a duration by the logical steps it
/// took (exact on the paused clock), any other (a point in time) by `[ms]`.
fn redact(value: &mut Value) {
    match value {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                if key == "duration_ms"
                    && let Some(ms) = member.as_u64()
                {
                    let step = u64::try_from(STEP.as_millis()).unwrap();
                    let steps = (ms + step / 2) / step;
                    let word = if steps == 1 { "step" } else { "steps" };
                    *member = Value::String(format!("[{steps} {word}]"));
                } else if key.ends_with("_ms") && member.is_number() {
                    *member = Value::String("[ms]".to_owned());
                } else {
                    redact(member);
                }
            }
        }
        Value::Array(values) => values.iter_mut().for_each(redact),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn run_fixture(dir: &Path) -> Value {
    let case_path = dir.join("case.json");
    let case: Case = if case_path.exists() {
        serde_json::from_str(&read(&case_path))
            .unwrap_or_else(|e| panic!("{}: {e}", case_path.display()))
    } else {
        Case::default()
    };
    let defs: BTreeMap<&str, ToolDef> = case
        .tools
        .iter()
        .map(|(name, tool)| (name.as_str(), definition(name, tool)))
        .collect();
    let mut catalog = Catalog::builtin();
    catalog.merge(
        defs.iter()
            .filter(|(name, _)| !case.unchecked_tools.iter().any(|u| u == *name))
            .map(|(_, def)| def.clone()),
    );
    let host = Arc::new(FixtureHost {
        tools: case
            .tools
            .iter()
            .filter(|(name, _)| !case.removed_tools.contains(name))
            .map(|(name, tool)| {
                (
                    name.clone(),
                    (Arc::new(defs[name.as_str()].clone()), tool.calls.clone()),
                )
            })
            .collect(),
        calls: Mutex::default(),
        log: Mutex::default(),
    });

    let main = dir.join("sequence.json");
    let mut sources = vec![Source::new(main.display().to_string(), read(&main))];
    let stored_dir = dir.join("stored");
    if stored_dir.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&stored_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            sources.push(Source::new(file.display().to_string(), read(&file)));
        }
    }
    let mut sequences = seq_test_support::checked_sources(&sources, &catalog).into_iter();
    let sequence = sequences.next().unwrap();
    let stored = Stored(
        sequences
            .map(|s| (s.name.value.to_string(), Arc::new(s)))
            .collect(),
    );

    let mut limits = Limits::default();
    if let Some(steps) = case.limits.tool_timeout_steps {
        limits.tool_timeout = STEP * u32::try_from(steps).unwrap();
    }
    if let Some(depth) = case.limits.max_depth {
        limits.max_depth = depth;
    }
    if let Some(nested) = case.limits.max_nested_groups {
        limits.max_nested_groups = nested;
    }
    if let Some(bytes) = case.limits.max_result_bytes {
        limits.max_result_bytes = bytes;
    }
    let engine = Engine::new(Arc::clone(&host) as Arc<dyn ToolHost>, Arc::new(stored))
        .with_limits(limits)
        .with_authorizer(Authorizer::new(
            case.deny
                .iter()
                .fold(Policy::allow_all(), |policy, tool| policy.deny(tool)),
        ));
    let caller = Caller::new(case.caller.as_deref().unwrap_or("alice"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let report = runtime.block_on(engine.run(&sequence, case.args, RunRequest::new(&caller)));
    let mut report = serde_json::to_value(&report).unwrap();
    redact(&mut report);
    let log = host.log.lock().unwrap().clone();
    json!({"report": report, "log": log})
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_run_fixture_gives_its_report() {
    let dirs = fixtures();
    assert!(
        dirs.len() >= 40,
        "run fixtures went missing: {}",
        dirs.len()
    );
    for dir in dirs {
        let result = run_fixture(&dir);
        insta::with_settings!({
            snapshot_path => dir.clone(),
            prepend_module_to_snapshot => false,
            input_file => dir.join("sequence.json"),
            omit_expression => true,
        }, {
            insta::assert_json_snapshot!("report", result);
        });
    }
}
