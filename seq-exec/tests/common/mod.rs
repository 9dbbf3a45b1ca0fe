//! A scripted tool host for the engine's tests: tools are closures; the host records when each
//! call starts and ends as a global sequence of events (never wall time), counts calls, and
//! can deny tools to callers.

#![allow(dead_code, reason = "each test binary uses part of the kit")]
#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_catalog::Catalog;
use seq_catalog::ToolDef;
use seq_exec::engine::{
    CancellationToken, GroupReport, GroupStatus, ItemReport, ItemStatus, Observer, RunReport,
    RunRequest,
};
use seq_exec::{
    BoxFuture, Caller, Engine, Limits, Reason, SequenceSource, ToolCall, ToolError, ToolHost,
};
use seq_syntax::ast::Sequence;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a tool closure receives.
#[derive(Clone, Debug)]
pub struct Invocation {
    pub args: Value,
    /// 1 for the first call of this tool, 2 for the second, ...
    pub nth: u32,
}

pub type Behavior =
    Arc<dyn Fn(Invocation) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Start(String),
    End(String),
}

#[derive(Default)]
pub struct ScriptedHost {
    tools: Mutex<HashMap<String, (ToolDef, Behavior)>>,
    events: Mutex<Vec<Event>>,
    calls: Mutex<HashMap<String, u32>>,
}

impl std::fmt::Debug for ScriptedHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedHost").finish_non_exhaustive()
    }
}

/// A tool definition read by the real catalog loader.
pub fn def(name: &str, parameters: Value, parallel_safe: bool) -> ToolDef {
    let text = json!([{"name": name, "parameters": parameters, "parallel_safe": parallel_safe}]);
    Catalog::load_json(&text.to_string())
        .unwrap()
        .into_iter()
        .next()
        .unwrap()
}

impl ScriptedHost {
    /// A host with the usual test tools:
    /// - `work {id, ms?, value?}`: sleeps `ms`, returns `value` (or `id`);
    /// - `output_send__chat {text, ms?}` and `output_send__log {text, ms?}`: the same, labelled
    ///   by `text`.
    pub fn new() -> Arc<ScriptedHost> {
        let host = Arc::new(ScriptedHost::default());
        let work_params = json!({"type": "object", "properties": {
            "id": {"type": "string"}, "ms": {"type": "integer"}, "value": {}
        }, "required": ["id"]});
        host.add(def("work", work_params, true), sleeper());
        for channel in ["output_send__chat", "output_send__log"] {
            let params = json!({"type": "object", "properties": {
                "text": {"type": "string"}, "ms": {"type": "integer"}
            }, "required": ["text"]});
            host.add(def(channel, params, true), sleeper());
        }
        host
    }

    pub fn add(&self, def: ToolDef, behavior: Behavior) {
        self.tools
            .lock()
            .unwrap()
            .insert(def.name.clone(), (def, behavior));
    }

    /// A parallel-safe tool taking any arguments.
    pub fn add_simple(&self, name: &str, behavior: Behavior) {
        self.add(def(name, json!({"type": "object"}), true), behavior);
    }

    pub fn remove(&self, name: &str) {
        self.tools.lock().unwrap().remove(name);
    }

    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    pub fn calls(&self, tool: &str) -> u32 {
        self.calls.lock().unwrap().get(tool).copied().unwrap_or(0)
    }

    /// The built-in catalog plus this host's tools, for checking test sequences.
    pub fn catalog(&self) -> Catalog {
        let mut catalog = Catalog::builtin();
        let defs: Vec<ToolDef> = self
            .tools
            .lock()
            .unwrap()
            .values()
            .map(|(d, _)| d.clone())
            .collect();
        catalog.merge(defs);
        catalog
    }

    fn push(&self, event: Event) {
        self.events.lock().unwrap().push(event);
    }

    /// Where `event` stands in the log.
    pub fn at(&self, event: &Event) -> usize {
        let events = self.events();
        events
            .iter()
            .position(|e| e == event)
            .unwrap_or_else(|| panic!("{event:?} not in {events:?}"))
    }

    /// Whether `a` and `b` overlapped: both started before either ended.
    pub fn overlapped(&self, a: &str, b: &str) -> bool {
        let start = |x: &str| self.at(&Event::Start(x.to_owned()));
        let end = |x: &str| self.at(&Event::End(x.to_owned()));
        start(a).max(start(b)) < end(a).min(end(b))
    }

    /// Whether `a` ended before `b` started.
    pub fn before(&self, a: &str, b: &str) -> bool {
        self.at(&Event::End(a.to_owned())) < self.at(&Event::Start(b.to_owned()))
    }
}

fn label(tool: &str, args: &Value) -> String {
    ["id", "text"]
        .iter()
        .find_map(|key| args.get(key).and_then(Value::as_str))
        .map_or_else(|| tool.to_owned(), str::to_owned)
}

impl ToolHost for ScriptedHost {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.tools
            .lock()
            .unwrap()
            .get(name)
            .map(|(d, _)| Arc::new(d.clone()))
    }

    fn call<'a>(&'a self, _caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        Box::pin(async move {
            let behavior = self.tools.lock().unwrap().get(name).map(|(_, b)| b.clone());
            let Some(behavior) = behavior else {
                return Err(ToolError::new(Reason::NotFound, format!("{name} vanished")));
            };
            let nth = {
                let mut calls = self.calls.lock().unwrap();
                let n = calls.entry(name.to_owned()).or_default();
                *n += 1;
                *n
            };
            let label = label(name, &args);
            self.push(Event::Start(label.clone()));
            let result = behavior(Invocation { args, nth }).await;
            self.push(Event::End(label));
            result
        })
    }
}

/// Sleeps `ms` (default 0), then returns `value`, or the label.
pub fn sleeper() -> Behavior {
    Arc::new(|call: Invocation| {
        Box::pin(async move {
            let ms = call.args.get("ms").and_then(Value::as_u64).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(call
                .args
                .get("value")
                .cloned()
                .unwrap_or_else(|| Value::String(label("", &call.args))))
        })
    })
}

/// Returns `value` at once.
pub fn returns(value: Value) -> Behavior {
    Arc::new(move |_| {
        let value = value.clone();
        Box::pin(async move { Ok(value) })
    })
}

/// Returns its arguments.
pub fn echo_args() -> Behavior {
    Arc::new(|call: Invocation| Box::pin(async move { Ok(call.args) }))
}

/// Fails with `reason` for the first `times` calls, then returns `"ok"`.
pub fn fails(times: u32, reason: Reason) -> Behavior {
    Arc::new(move |call: Invocation| {
        Box::pin(async move {
            if call.nth <= times {
                Err(ToolError::new(
                    reason,
                    format!("attempt {} failed", call.nth),
                ))
            } else {
                Ok(json!("ok"))
            }
        })
    })
}

/// Sets its flag when dropped: proves a cancelled call was really dropped.
#[derive(Debug)]
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Never finishes; `dropped` becomes true when the call is cancelled.
pub fn hangs(dropped: Arc<AtomicBool>) -> Behavior {
    Arc::new(move |_| {
        let guard = DropFlag(dropped.clone());
        Box::pin(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(Value::Null)
        })
    })
}

/// The engine's source of `#name` sequences, in memory: sequences by name, replaceable at any
/// time (stored sequences change between checks).
#[derive(Debug, Default)]
pub struct MemorySource {
    sequences: Mutex<HashMap<String, Arc<Sequence>>>,
}

impl MemorySource {
    pub fn new() -> Arc<MemorySource> {
        Arc::new(MemorySource::default())
    }

    pub fn put(&self, sequence: Sequence) {
        self.sequences
            .lock()
            .unwrap()
            .insert(sequence.name.value.clone(), Arc::new(sequence));
    }

    pub fn remove(&self, name: &str) {
        self.sequences.lock().unwrap().remove(name);
    }
}

impl SequenceSource for MemorySource {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        self.sequences.lock().unwrap().get(name).cloned()
    }
}

/// A group: `fields` plus `tools` built from item texts (each gets its `;`). Items are the item
/// language, so bare references such as `$args.hosts[0]` may stand unquoted.
pub fn group(fields: Value, items: &[&str]) -> Value {
    let mut group = fields;
    let tools: Vec<String> = items.iter().map(|item| format!("{item} ;")).collect();
    group["tools"] = Value::String(tools.join(" "));
    group
}

/// The file text of a sequence.
pub fn file(name: &str, groups: Vec<Value>) -> String {
    serde_json::to_string_pretty(&json!({"name": name, "groups": groups})).unwrap()
}

/// Parses and checks the files as one batch against the host's catalog; panics on any error.
pub fn checked(host: &ScriptedHost, files: &[String]) -> Vec<Sequence> {
    seq_test_support::checked(files, &host.catalog())
}

/// One checked sequence.
pub fn one(host: &ScriptedHost, text: String) -> Sequence {
    checked(host, &[text]).into_iter().next().unwrap()
}

/// The sequence `s` of `groups`, checked against the host's catalog: what most tests run.
pub fn one_s(host: &ScriptedHost, groups: Vec<Value>) -> Sequence {
    one(host, file("s", groups))
}

pub fn args(value: Value) -> Map<String, Value> {
    let Value::Object(map) = value else {
        panic!("not an object: {value}");
    };
    map
}

pub fn engine(host: &Arc<ScriptedHost>, source: &Arc<MemorySource>) -> Engine {
    Engine::new(host.clone(), source.clone())
}

pub fn engine_with(host: &Arc<ScriptedHost>, source: &Arc<MemorySource>, limits: Limits) -> Engine {
    engine(host, source).with_limits(limits)
}

pub fn alice() -> Caller {
    Caller::new("alice")
}

/// A source holding `sequences`.
pub fn source_of(sequences: Vec<Sequence>) -> Arc<MemorySource> {
    let source = MemorySource::new();
    for sequence in sequences {
        source.put(sequence);
    }
    source
}

/// Runs `seq` for alice with `args` on `host`, `#name`s read from `source`.
pub async fn run_on(
    host: &Arc<ScriptedHost>,
    source: &Arc<MemorySource>,
    seq: &Sequence,
    args: Map<String, Value>,
) -> RunReport {
    engine(host, source)
        .run(seq, args, RunRequest::new(&alice()))
        .await
}

/// Checks `files` as one batch, stores them all and runs the last for alice without arguments:
/// what a test of stored sequences calling each other does.
pub async fn run_last(host: &Arc<ScriptedHost>, files: &[String]) -> RunReport {
    let sequences = checked(host, files);
    let last = sequences.last().cloned().unwrap();
    run_on(host, &source_of(sequences), &last, Map::new()).await
}

/// Runs the sequence `s` of `groups` for alice without arguments, on an empty source: what most
/// tests do with a host and a few groups.
pub async fn run_groups(host: &Arc<ScriptedHost>, groups: Vec<Value>) -> RunReport {
    run_on(host, &MemorySource::new(), &one_s(host, groups), Map::new()).await
}

/// Like [`run_groups`], with the run arguments `args` (a JSON object).
pub async fn run_groups_with(
    host: &Arc<ScriptedHost>,
    groups: Vec<Value>,
    run_args: Value,
) -> RunReport {
    let seq = one_s(host, groups);
    run_on(host, &MemorySource::new(), &seq, args(run_args)).await
}

/// Asserts what a run cancelled while a call hung leaves: the run, its group and its item
/// cancelled, nothing written (not even an `error_as` slot), and the hung call dropped.
pub fn assert_cancelled_and_dropped(report: &RunReport, dropped: &AtomicBool) {
    assert!(report.cancelled && !report.ok, "{report:#?}");
    let g = &report.groups[0];
    assert_eq!(g.status, GroupStatus::Cancelled);
    assert_eq!(g.items[0].status, ItemStatus::Cancelled);
    assert!(g.out.is_empty(), "{:?}", g.out);
    assert!(dropped.load(Ordering::SeqCst));
}

/// Like [`run_groups`], cancelled 10 ms (of the paused clock) after it starts.
pub async fn run_groups_cancelled(host: &Arc<ScriptedHost>, groups: Vec<Value>) -> RunReport {
    let source = MemorySource::new();
    let seq = one_s(host, groups);
    let cancel = CancellationToken::new();
    let engine = engine(host, &source);
    let caller = alice();
    let run = engine.run(&seq, Map::new(), RunRequest::new(&caller).cancel(&cancel));
    let stop = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        cancel.cancel();
    };
    let (report, ()) = tokio::join!(run, stop);
    report
}

/// Records observer callbacks as lines.
#[derive(Debug, Default)]
pub struct Recorder {
    pub lines: Mutex<Vec<String>>,
}

impl Observer for Recorder {
    fn group_started(&self, sequence: &str, group: &str, parallel: bool) {
        self.push(format!(
            "group_started {sequence}/{group} parallel={parallel}"
        ));
    }
    fn item_started(&self, group: &str, index: usize, tool: &str) {
        self.push(format!("item_started {group}[{index}] {tool}"));
    }
    fn item_finished(&self, group: &str, index: usize, report: &ItemReport) {
        self.push(format!(
            "item_finished {group}[{index}] {:?}",
            report.status
        ));
    }
    fn group_finished(&self, report: &GroupReport) {
        self.push(format!(
            "group_finished {} {:?}",
            report.name, report.status
        ));
    }
}

impl Recorder {
    fn push(&self, line: String) {
        self.lines.lock().unwrap().push(line);
    }
}
