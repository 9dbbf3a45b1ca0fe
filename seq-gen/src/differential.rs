//! The differential generator: sequences in the language's words, valid and slightly broken
//! (undeclared inputs and slots, bad enums and types, unknown fields, `$out` in parallel groups,
//! calls to unknown groups or with undeclared arguments, cycles, broken item syntax), with
//! compound conditions (`!`, `&&`, `||`, parentheses) and declared inputs (a `default`,
//! `required`, a `description`, and rarely `required` with a `default`), `local` slots,
//! `retries` taken from an `integer` input, `seq_when_call` with and without `else`, and `each`
//! items fanned out with `max_parallel` in serial and parallel groups, as a
//! proptest strategy ([`case`]), rendered to a file's text ([`render`]) with the arguments a run
//! passes ([`run_args`]).
//!
//! Shared by the checker–engine differential test (seq-store) and the in-process–durable one
//! (the `seqc` package's tests): both draw from the same sequences. Every tool is `echo` (pure),
//! a `seq_call` or `seq_when_call` of a group of the case, `cmd_run` of `true`, or `nope_tool`,
//! which no host has.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The slot types a declaration picks from (`any` included).
pub const TYPES: &[&str] = &[
    "string", "number", "integer", "bool", "array", "object", "any",
];

/// One item of a `tools` string: its tool, its `args` text, its `as` slot, the array of an
/// `each` and its `max_parallel`; broken by an unknown field or a missing `;`.
#[derive(Clone, Debug)]
pub struct Item {
    pub tool: &'static str,
    pub args: Option<&'static str>,
    pub output: Option<&'static str>,
    pub each: Option<&'static str>,
    pub max_parallel: Option<&'static str>,
    pub unknown_field: bool,
    pub semicolon: bool,
}

/// One group, each field absent when `None` (or `false`, or empty).
#[derive(Clone, Debug)]
pub struct Group {
    pub name: &'static str,
    pub inputs: Vec<(&'static str, &'static str)>,
    pub outputs: Vec<(&'static str, &'static str)>,
    /// `local`: the slot `t` (rarely `r`, which may be an output too: an error, E0560).
    pub locals: Vec<(&'static str, &'static str)>,
    pub parallel: Option<bool>,
    pub on_error: Option<&'static str>,
    pub retries: Option<Retries>,
    pub missing: Option<&'static str>,
    pub fallback: bool,
    pub when: Option<&'static str>,
    /// How input `x` is declared, when it is.
    pub x_form: InputForm,
    pub timeout: Option<&'static str>,
    pub unknown_field: bool,
    pub items: Vec<Item>,
}

/// A group's `retries`: a count, or `"$args.NAME"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retries {
    Count(u32),
    /// The input `NAME`: [`RETRIES_INPUT`], which the group then declares `integer`, or (an
    /// error, E0561, unless it happens to be declared `integer`) another one.
    From(&'static str),
}

/// The input a group's `retries` is taken from when it is valid.
pub const RETRIES_INPUT: &str = "n";

/// How an input is declared: by its type name, or as an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputForm {
    Name,
    Default,
    Required,
    Described,
    /// An error (E0545).
    RequiredWithDefault,
}

/// One generated sequence.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: &'static str,
    pub groups: Vec<Group>,
    /// Which declared inputs the run passes (a value of the declared type).
    pub passed: Vec<bool>,
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
            // Valid after a write of the local `t` in a serial group (`settle` sees to it).
            r#"{"value": $out.t}"#,
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
    let when_call = mostly(
        vec![
            r#"{"target": "b", "when": "$args.x == null"}"#,
            r#"{"target": "b", "when": "$args.x != null", "else": "c"}"#,
            r#"{"target": "c", "args": {"x": $args.x}, "when": "!($args.x == null)", "else": "b", "else_args": {"x": $args.x}}"#,
            r#"{"target": "c", "when": "$args.x == null", "else": "b", "else_args": {"x": $args.x}}"#,
        ],
        vec![
            r#"{"target": "b", "when": "$args.x == 1", "else": "zz"}"#,
            r#"{"target": "b", "when": "true", "else": "a"}"#,
            r#"{"target": "c", "when": "$args.x ==", "else": "b"}"#,
            r#"{"target": "c", "when": "true", "else": "b", "else_args": {"nope": 1}}"#,
        ],
        clean,
    );
    let tool_args = prop_oneof![
        12 => echo.prop_map(|a| ("echo", Some(a))),
        3 => call.prop_map(|a| ("seq_call", Some(a))),
        2 => when_call.prop_map(|a| ("seq_when_call", Some(a))),
        1 => Just(("cmd_run", Some(r#"{"command": "true"}"#))),
        1 => Just(("nope_tool", None)),
    ];
    // A clean case writes `r`, which it always declares, and `t` where it declares it local
    // (`settle` sees to it).
    let output = if clean {
        prop_oneof![10 => Just(None), 4 => Just(Some("r")), 2 => Just(Some("t"))].boxed()
    } else {
        prop_oneof![
            10 => Just(None),
            4 => Just(Some("r")),
            2 => Just(Some("t")),
            1 => Just(Some("s")),
            1 => Just(Some("zz")),
        ]
        .boxed()
    };
    // Rarely not an array, an error.
    let each = (
        rarely(vec![r#"["a", "b"]"#, "[]"], 2, clean),
        breaks(0.03, clean),
    )
        .prop_map(|(each, string)| each.map(|each| if string { r#""a""# } else { each }));
    // `max_parallel` fans an `each` out, in a serial group too (`tidy` keeps it to `each`);
    // rarely out of range or without `each`, both errors.
    let max_parallel = prop_oneof![
        1 => Just(None),
        1 => mostly(vec!["2", "1"], vec!["0"], clean).prop_map(Some),
    ];
    let lone = breaks(0.05, clean);
    (
        tool_args,
        output,
        (each, max_parallel, lone),
        breaks(0.03, clean),
        breaks(0.03, clean).prop_map(|missing| !missing),
    )
        .prop_map(
            |((tool, args), output, (each, max_parallel, lone), unknown_field, semicolon)| Item {
                tool,
                args,
                output,
                each,
                max_parallel: max_parallel.filter(|_| each.is_some() || lone),
                unknown_field,
                semicolon,
            },
        )
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

/// `local`: usually none, else `t` of some type (rarely, broken, `r`, an output's name too).
fn locals(clean: bool) -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    let ty = mostly(TYPES.to_vec(), vec!["strng"], clean);
    (rarely(vec!["t"], 1, clean), breaks(0.1, clean), ty).prop_map(|(name, r, ty)| {
        name.map(|name| (if r { "r" } else { name }, ty))
            .into_iter()
            .collect()
    })
}

/// `retries`: now and then a count, or an input's value.
fn retries(clean: bool) -> impl Strategy<Value = Option<Retries>> {
    let from = mostly(vec![RETRIES_INPUT], vec!["x", "q"], clean);
    prop_oneof![
        14 => Just(None),
        1 => (0u32..=2).prop_map(|n| Some(Retries::Count(n))),
        1 => from.prop_map(|name| Some(Retries::From(name))),
    ]
}

fn group(name: &'static str, clean: bool) -> impl Strategy<Value = Group> {
    (
        (
            slots("x", "y", clean),
            slots("r", "s", clean),
            locals(clean),
        ),
        prop::option::of(any::<bool>()),
        rarely(
            vec!["abort", "continue", "continue", "retry", "retyr"],
            4,
            clean,
        ),
        retries(clean),
        rarely(vec!["fail", "skip", "skip", "degrade", "skipp"], 4, clean),
        (prop::bool::weighted(0.1), breaks(0.03, clean)),
        rarely(
            vec![
                "$args.x == 1",
                "$args.x != null",
                "$args.x != null",
                "$args.x != null && $args.x == 1",
                "!($args.x == null) || false",
                "$args.q == 1",
                "$out.r == 1",
                "$args.x ==",
                "$args.x && true",
            ],
            5,
            clean,
        ),
        (
            rarely(vec!["30s", "1m30s", "30s", "30"], 3, clean),
            mostly(
                vec![
                    InputForm::Name,
                    InputForm::Name,
                    InputForm::Default,
                    InputForm::Required,
                    InputForm::Described,
                ],
                vec![InputForm::RequiredWithDefault],
                clean,
            ),
        ),
        prop::collection::vec(item(clean), 1..=2),
    )
        .prop_map(
            move |(
                (mut inputs, outputs, locals),
                parallel,
                on_error,
                retries,
                missing,
                (fallback, unknown_field),
                when,
                (timeout, x_form),
                items,
            )| {
                if retries == Some(Retries::From(RETRIES_INPUT)) {
                    inputs.push((RETRIES_INPUT, "integer"));
                }
                Group {
                    name,
                    inputs,
                    outputs,
                    locals,
                    parallel,
                    on_error,
                    retries,
                    missing,
                    fallback,
                    when,
                    x_form,
                    timeout,
                    unknown_field,
                    items,
                }
            },
        )
}

/// `count` cases drawn from [`case`] with proptest's fixed seed: the same ones on every run.
pub fn sample(count: usize) -> Vec<Case> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = case();
    (0..count)
        .filter_map(|_| strategy.new_tree(&mut runner).ok())
        .map(|tree| tree.current())
        .collect()
}

/// A case: one in three clean (nothing broken on purpose, every group a call may name present),
/// so that the engine's side of the property runs often; the others slightly broken.
pub fn case() -> impl Strategy<Value = Case> {
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
        // Up to three inputs in each of three groups.
        prop::collection::vec(any::<bool>(), 9),
    )
        .prop_map(move |(name, groups, passed)| {
            let case = Case {
                name,
                groups,
                passed,
            };
            let case = settle(case);
            if clean { tidy(case) } else { case }
        })
}

/// Keeps the local `t` and `each` results from breaking every case that holds them, clean or
/// not (their broken uses would crowd out the rest), and has `t` used where it is declared: `t`
/// is written only where it is declared, and once (by the first item, unless that is an
/// `each`); in a serial group the last item, an `echo`, reads it; `$out.t` is read only after
/// that write, in a serial group; an `each` item writes no slot (its result is an array, which
/// few slots are declared).
fn settle(mut case: Case) -> Case {
    for group in &mut case.groups {
        let serial = group.parallel == Some(false);
        let declares_t = group.locals.iter().any(|(name, _)| *name == "t");
        if declares_t {
            if let Some(first) = group.items.first_mut() {
                first.output = Some("t");
            }
            if let Some(last) = group.items.last_mut().filter(|item| item.tool == "echo")
                && serial
            {
                last.args = Some(r#"{"value": $out.t}"#);
            }
        }
        let mut t_written = false;
        for item in &mut group.items {
            let args = item.args.unwrap_or_default();
            if args.contains("$out.t") && !(serial && t_written) {
                item.args = Some(r#"{"value": 1}"#);
            }
            if item.each.is_some() {
                item.output = None;
            }
            if item.output == Some("t") {
                if declares_t && !t_written {
                    t_written = true;
                } else {
                    item.output = None;
                }
            }
        }
    }
    case
}

/// Makes a clean case valid where independent choices combine into a mistake: `retries` only
/// with `on_error: retry` (set where no `on_error` is), `missing: degrade` only with a
/// `fallback`, calls (both targets of a `seq_when_call`) only to later groups (a call back would
/// be a cycle), and `max_parallel` only on an `each` of `echo` (parallel-safe).
fn tidy(mut case: Case) -> Case {
    let names: Vec<&str> = case.groups.iter().map(|g| g.name).collect();
    let later = |args: &str, key: &str, index: usize| {
        names
            .iter()
            .position(|n| args.contains(&format!(r#""{key}": "{n}""#)))
            .is_some_and(|t| t > index)
    };
    for (index, group) in case.groups.iter_mut().enumerate() {
        // `retries` bring `on_error: retry` with them, unless another `on_error` is set.
        match group.on_error {
            None if group.retries.is_some() => group.on_error = Some("retry"),
            Some("retry") | None => {}
            Some(_) => group.retries = None,
        }
        if group.missing == Some("degrade") {
            group.fallback = true;
        }
        for item in &mut group.items {
            let args = item.args.unwrap_or_default();
            let call_ok = match item.tool {
                "seq_call" => later(args, "target", index),
                "seq_when_call" => {
                    later(args, "target", index)
                        && (!args.contains(r#""else":"#) || later(args, "else", index))
                }
                _ => true,
            };
            if !call_ok {
                item.tool = "echo";
                item.args = Some(r#"{"value": 1}"#);
            }
            if item.tool != "echo" || item.each.is_none() {
                item.max_parallel = None;
            }
        }
    }
    case
}

fn render_item(item: &Item) -> String {
    let mut text = format!(r#"{{"tool": "{}""#, item.tool);
    if let Some(args) = item.args {
        text.push_str(&format!(r#", "args": {args}"#));
    }
    if let Some(each) = item.each {
        text.push_str(&format!(r#", "each": {each}"#));
    }
    if let Some(max_parallel) = item.max_parallel {
        text.push_str(&format!(r#", "max_parallel": {max_parallel}"#));
    }
    if let Some(slot) = item.output {
        text.push_str(&format!(r#", "as": "{slot}""#));
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

pub fn render(case: &Case) -> String {
    let groups: Vec<Value> = case
        .groups
        .iter()
        .map(|g| {
            let mut group = Map::new();
            group.insert("name".into(), json!(g.name));
            let decls = |slots: &[(&str, &str)], x_form: InputForm| {
                Value::Object(
                    slots
                        .iter()
                        .map(|(n, t)| {
                            let form = if *n == "x" { x_form } else { InputForm::Name };
                            (n.to_string(), declaration(t, form))
                        })
                        .collect(),
                )
            };
            if !g.inputs.is_empty() {
                group.insert("in".into(), decls(&g.inputs, g.x_form));
            }
            if !g.outputs.is_empty() {
                group.insert("out".into(), decls(&g.outputs, InputForm::Name));
            }
            if !g.locals.is_empty() {
                group.insert("local".into(), decls(&g.locals, InputForm::Name));
            }
            let mut put = |key: &str, value: Option<Value>| {
                if let Some(value) = value {
                    group.insert(key.into(), value);
                }
            };
            put("parallel", g.parallel.map(Value::Bool));
            put("on_error", g.on_error.map(|v| json!(v)));
            put(
                "retries",
                g.retries.map(|retries| match retries {
                    Retries::Count(count) => json!(count),
                    Retries::From(name) => json!(format!("$args.{name}")),
                }),
            );
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
    format!("{:#}", json!({"name": case.name, "groups": groups}))
}

/// The declaration of an input of type `ty` in `form`.
fn declaration(ty: &str, form: InputForm) -> Value {
    match form {
        InputForm::Name => json!(ty),
        InputForm::Default => json!({"type": ty, "default": value_of(ty)}),
        InputForm::Required => json!({"type": ty, "required": true}),
        InputForm::Described => json!({"type": ty, "description": "an input"}),
        InputForm::RequiredWithDefault => {
            json!({"type": ty, "required": true, "default": value_of(ty)})
        }
    }
}

/// A value of `ty`.
pub fn value_of(ty: &str) -> Value {
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
pub fn run_args(case: &Case) -> Map<String, Value> {
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
