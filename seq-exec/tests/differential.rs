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
//! flowing into a typed input or slot, an unset slot read where the checker warned (W0601).

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use proptest::prelude::*;
use seq_check::{Catalog, Source, ToolDef, check};
use seq_exec::engine::{GroupStatus, RunReport};
use seq_exec::seq_tools::{SeqConfig, SeqTools};
use seq_exec::storage::Storage;
use seq_exec::{BoxFuture, Caller, Reason, ToolError, ToolHost};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::sync::Arc;

/// `echo` only: pure and instant.
struct EchoHost(Option<Arc<ToolDef>>);

impl ToolHost for EchoHost {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.0.clone().filter(|_| name == "echo")
    }

    fn call<'a>(&'a self, name: &'a str, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            match (name, args.get("value")) {
                ("echo", Some(value)) => Ok(value.clone()),
                _ => Err(ToolError::new(Reason::NotFound, format!("no `{name}`"))),
            }
        })
    }

    fn can_use(&self, _caller: &Caller, _tool: &str, _args: &Value) -> bool {
        true
    }
}

const TYPES: &[&str] = &[
    "string", "number", "integer", "bool", "array", "object", "any",
];

#[derive(Clone, Debug)]
struct Item {
    tool: &'static str,
    args: Option<&'static str>,
    output: Option<&'static str>,
    unknown_field: bool,
    semicolon: bool,
}

#[derive(Clone, Debug)]
struct Group {
    name: &'static str,
    inputs: Vec<(&'static str, &'static str)>,
    outputs: Vec<(&'static str, &'static str)>,
    parallel: Option<bool>,
    on_error: Option<&'static str>,
    retries: Option<u32>,
    missing: Option<&'static str>,
    fallback: bool,
    when: Option<&'static str>,
    timeout: Option<&'static str>,
    unknown_field: bool,
    items: Vec<Item>,
}

#[derive(Clone, Debug)]
struct Case {
    name: &'static str,
    groups: Vec<Group>,
    /// Which declared inputs the run passes (a value of the declared type).
    passed: Vec<bool>,
}

/// A choice that is usually fine: `valid` most of the time, one of `broken` otherwise; always
/// `valid` in a clean case.
fn mostly<T: Clone + std::fmt::Debug + 'static>(
    valid: Vec<T>,
    broken: Vec<T>,
    clean: bool,
) -> BoxedStrategy<T> {
    if clean {
        return prop::sample::select(valid).boxed();
    }
    prop_oneof![
        12 => prop::sample::select(valid),
        1 => prop::sample::select(broken),
    ]
    .boxed()
}

/// `true` with probability `p`, never in a clean case (for choices that break the sequence).
fn breaks(p: f64, clean: bool) -> BoxedStrategy<bool> {
    if clean {
        Just(false).boxed()
    } else {
        prop::bool::weighted(p).boxed()
    }
}

fn item(clean: bool) -> impl Strategy<Value = Item> {
    let echo = mostly(
        vec![
            r#"{"value": 1}"#,
            r#"{"value": "text"}"#,
            r#"{"value": "hello $args.x"}"#,
            r#"{"value": $args.x}"#,
            r#"{"value": {"k": $args.x, "l": [1, "two"]}}"#,
            r#"{"value": 1, "extra": true}"#,
        ],
        vec![
            r#"{"value": "$args.q"}"#,
            r#"{"value": $out.r}"#,
            r#"{"value": "$out.s!"}"#,
            r#"{"value": $args.x.field}"#,
            r#"{}"#,
        ],
        clean,
    );
    let call = mostly(
        vec![
            r#"{"target": "b"}"#,
            r#"{"target": "c"}"#,
            r#"{"target": "c", "args": {"x": "$args.x"}}"#,
        ],
        vec![
            r#"{"target": "a"}"#,
            r##"{"target": "#diff"}"##,
            r#"{"target": "zz"}"#,
            r#"{"target": ""}"#,
            r#"{"target": "b", "args": {"nope": 1}}"#,
            r#"{"target": "c", "args": {"x": 1}}"#,
        ],
        clean,
    );
    let tool_args = prop_oneof![
        12 => echo.prop_map(|a| ("echo", Some(a))),
        3 => call.prop_map(|a| ("seq_call", Some(a))),
        1 => Just(("cmd_run", Some(r#"{"command": "true"}"#))),
        1 => Just(("nope_tool", None)),
    ];
    // A clean case writes only `r`, which it always declares.
    let output = if clean {
        prop_oneof![10 => Just(None), 4 => Just(Some("r"))].boxed()
    } else {
        prop_oneof![
            10 => Just(None),
            4 => Just(Some("r")),
            1 => Just(Some("s")),
            1 => Just(Some("zz")),
        ]
        .boxed()
    };
    (
        tool_args,
        output,
        breaks(0.03, clean),
        breaks(0.03, clean).prop_map(|missing| !missing),
    )
        .prop_map(|((tool, args), output, unknown_field, semicolon)| Item {
            tool,
            args,
            output,
            unknown_field,
            semicolon,
        })
}

/// `first` declared with a type (rarely an unknown one) most of the time, `second` sometimes.
fn slots(
    first: &'static str,
    second: &'static str,
    clean: bool,
) -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    let ty = || mostly(TYPES.to_vec(), vec!["strng"], clean);
    (
        breaks(0.1, clean).prop_map(|left_out| !left_out),
        ty(),
        prop::bool::weighted(0.3),
        ty(),
    )
        .prop_map(move |(has_first, first_ty, has_second, second_ty)| {
            let mut slots = Vec::new();
            if has_first {
                slots.push((first, first_ty));
            }
            if has_second {
                slots.push((second, second_ty));
            }
            slots
        })
}

/// Usually absent, else one of `values`, or (in a clean case) of the first `valid` of them.
fn rarely<T: Clone + std::fmt::Debug + 'static>(
    values: Vec<T>,
    valid: usize,
    clean: bool,
) -> impl Strategy<Value = Option<T>> {
    let values = if clean {
        values.into_iter().take(valid).collect()
    } else {
        values
    };
    prop_oneof![
        3 => Just(None),
        1 => prop::sample::select(values).prop_map(Some),
    ]
}

fn group(name: &'static str, clean: bool) -> impl Strategy<Value = Group> {
    (
        (slots("x", "y", clean), slots("r", "s", clean)),
        prop::option::of(any::<bool>()),
        rarely(
            vec!["abort", "continue", "continue", "retry", "retyr"],
            4,
            clean,
        ),
        prop_oneof![8 => Just(None), 1 => (0u32..=2).prop_map(Some)],
        rarely(vec!["fail", "skip", "skip", "degrade", "skipp"], 4, clean),
        (prop::bool::weighted(0.1), breaks(0.03, clean)),
        rarely(
            vec![
                "$args.x == 1",
                "$args.x != null",
                "$args.x != null",
                "$args.q == 1",
                "$out.r == 1",
                "$args.x ==",
                "$args.x && true",
            ],
            3,
            clean,
        ),
        rarely(vec!["30s", "1m30s", "30s", "30"], 3, clean),
        prop::collection::vec(item(clean), 1..=2),
    )
        .prop_map(
            move |(
                (inputs, outputs),
                parallel,
                on_error,
                retries,
                missing,
                (fallback, unknown_field),
                when,
                timeout,
                items,
            )| Group {
                name,
                inputs,
                outputs,
                parallel,
                on_error,
                retries,
                missing,
                fallback,
                when,
                timeout,
                unknown_field,
                items,
            },
        )
}

/// A case: one in three clean (nothing broken on purpose, every group a call may name present),
/// so that the engine's side of the property runs often; the others slightly broken.
fn case() -> impl Strategy<Value = Case> {
    prop_oneof![1 => case_of(true), 2 => case_of(false)]
}

fn case_of(clean: bool) -> impl Strategy<Value = Case> {
    let names = if clean {
        Just(vec!["a", "b", "c"]).boxed()
    } else {
        prop_oneof![
            12 => Just(vec!["a", "b", "c"]),
            1 => Just(vec!["a", "a", "b"]),
        ]
        .boxed()
    };
    let counts = if clean { 3..=3usize } else { 1..=3usize };
    (
        mostly(vec!["diff"], vec!["bad/name"], clean),
        names.prop_flat_map(move |names| {
            counts.clone().prop_flat_map(move |n| {
                names[..n]
                    .iter()
                    .map(|&name| group(name, clean))
                    .collect::<Vec<_>>()
            })
        }),
        prop::collection::vec(any::<bool>(), 6),
    )
        .prop_map(move |(name, groups, passed)| {
            let case = Case {
                name,
                groups,
                passed,
            };
            if clean { tidy(case) } else { case }
        })
}

/// Makes a clean case valid where independent choices combine into a mistake: `retries` only
/// with `on_error: retry`, `missing: degrade` only with a `fallback`, and calls only to later
/// groups (a call back would be a cycle).
fn tidy(mut case: Case) -> Case {
    let names: Vec<&str> = case.groups.iter().map(|g| g.name).collect();
    for (index, group) in case.groups.iter_mut().enumerate() {
        if group.on_error != Some("retry") {
            group.retries = None;
        }
        if group.missing == Some("degrade") {
            group.fallback = true;
        }
        for item in &mut group.items {
            let target = item.args.and_then(|args| {
                names
                    .iter()
                    .position(|n| args.contains(&format!(r#""target": "{n}""#)))
            });
            if item.tool == "seq_call" && target.is_none_or(|t| t <= index) {
                item.tool = "echo";
                item.args = Some(r#"{"value": 1}"#);
            }
        }
    }
    case
}

fn render_item(item: &Item) -> String {
    let mut text = format!(r#"{{"tool": "{}""#, item.tool);
    if let Some(args) = item.args {
        write!(text, r#", "args": {args}"#).unwrap();
    }
    if let Some(slot) = item.output {
        write!(text, r#", "as": "{slot}""#).unwrap();
    }
    if item.unknown_field {
        text.push_str(r#", "arg": {}"#);
    }
    text.push('}');
    if item.semicolon {
        text.push_str(" ;");
    }
    text
}

fn render(case: &Case) -> String {
    let groups: Vec<Value> = case
        .groups
        .iter()
        .map(|g| {
            let mut group = Map::new();
            group.insert("name".into(), json!(g.name));
            let decls = |slots: &[(&str, &str)]| {
                Value::Object(
                    slots
                        .iter()
                        .map(|(n, t)| (n.to_string(), json!(t)))
                        .collect(),
                )
            };
            if !g.inputs.is_empty() {
                group.insert("in".into(), decls(&g.inputs));
            }
            if !g.outputs.is_empty() {
                group.insert("out".into(), decls(&g.outputs));
            }
            let mut put = |key: &str, value: Option<Value>| {
                if let Some(value) = value {
                    group.insert(key.into(), value);
                }
            };
            put("parallel", g.parallel.map(Value::Bool));
            put("on_error", g.on_error.map(|v| json!(v)));
            put("retries", g.retries.map(|v| json!(v)));
            put("missing", g.missing.map(|v| json!(v)));
            put("fallback", g.fallback.then(|| json!({"r": 1})));
            put("when", g.when.map(|v| json!(v)));
            put("timeout", g.timeout.map(|v| json!(v)));
            put("paralel", g.unknown_field.then_some(Value::Bool(true)));
            let items: Vec<String> = g.items.iter().map(render_item).collect();
            put("tools", Some(json!(items.join(" "))));
            Value::Object(group)
        })
        .collect();
    serde_json::to_string_pretty(&json!({"name": case.name, "groups": groups})).unwrap()
}

/// A value of `ty`.
fn value_of(ty: &str) -> Value {
    match ty {
        "string" => json!("a"),
        "number" => json!(1.5),
        "integer" => json!(1),
        "bool" => json!(true),
        "array" => json!(["a", "b"]),
        "object" => json!({"field": 1}),
        _ => json!(1),
    }
}

/// The run's arguments: each input declared (with one type) that the case passes.
fn run_args(case: &Case) -> Map<String, Value> {
    let mut args = Map::new();
    let mut declared: Vec<(&str, &str)> = Vec::new();
    for group in &case.groups {
        declared.extend(group.inputs.iter().copied());
    }
    for (i, (name, ty)) in declared.iter().enumerate() {
        let agreed = declared.iter().all(|(n, t)| n != name || t == ty);
        if agreed && case.passed.get(i).copied().unwrap_or(false) {
            args.insert((*name).to_owned(), value_of(ty));
        }
    }
    args
}

/// Why `error` is a failure the checker should have ruled out, if it is one (module comment).
fn check_time(error: &ToolError) -> Option<&'static str> {
    let field = error.field.as_deref().unwrap_or("");
    match error.reason {
        Reason::Cycle | Reason::Depth => Some("a cycle or chain visible in the text"),
        Reason::ArgError => Some("a malformed target or argument visible in the text"),
        Reason::NotFound if field == "target" => Some("a call to a group that is not there"),
        Reason::Required
        | Reason::Type
        | Reason::Unauthorized
        | Reason::Timeout
        | Reason::NotFound
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
        let echo = Arc::new(EchoHost(catalog.get("echo").cloned().map(Arc::new)));
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
        let created = self.runtime.block_on(self.tools.call(
            "seq_create",
            json!({"name": case.name, "file": "diff.json", "replace": true}),
            &caller,
        ));
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
        let report =
            self.runtime
                .block_on(self.tools.engine().run(&sequence, run_args(case), &caller));
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
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let harness = Harness::new();
    // A fixed seed: the counts below are facts about the generator, not about a lucky draw.
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..300 {
        let case = case().new_tree(&mut runner).unwrap().current();
        *seen.entry(harness.case(&case)).or_insert(0) += 1;
    }
    eprintln!("outcomes of 300 generated sequences: {seen:?}");
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.values().all(|&n| n >= 10), "{seen:?}");
}
