//! Runs and calls: `seq_run`, `seq_call` / `seq_when_call` and `seq_run` items,
//! and calls made directly by a model. The engine handles them itself, because they need the
//! stack and the caller's scope.
//!
//! What a call returns (and writes to its `as` slot): for a group target, the object of the
//! slots the group set — nothing at all (`None`: the slot stays unset) when its `when` was
//! false (a `seq_when_call` whose `when` is false calls its `else` target instead, if it has
//! one); for `#name`, `{group: {slot: value}}` for every group of the sequence that ran.
//! A `#name` that is not stored, or a group that does not exist, is `not_found` of the item
//! itself, so `missing` applies to it; a failure inside the callee is a failure of the call,
//! with the callee's reason.

use super::budget::Held;
use super::dispatch;
use super::driver::{Called, Step};
use super::failure::{Failure, cancelled_error, failure_of};
use super::group;
use super::group_cx::GroupCx;
use super::report::{CalledGroup, GroupStatus, RunReport, failed_run};
use super::stack::Stack;
use super::values::{self, Scope, describe};
use super::{Cx, eval, fill, signature_error, size, within};
use crate::error::{Reason, ToolError};
use crate::host::BoxFuture;
use seq_catalog::calls::{ELSE, ELSE_ARGS};
use seq_catalog::{Catalog, SEQ_RUN, SEQ_WHEN_CALL};
use seq_syntax::ast::{Group, Item, Sequence, ValueKind};
use seq_syntax::names::CallTarget;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// Runs the entry groups of `sequence` in order (those no item of it calls; a callable group runs
/// only when called), each with the arguments it declares. `stack` already holds the sequence.
/// The run stops after a group that failed. With the report comes the charge of the slots its
/// `out` holds to the run's budget.
pub(crate) async fn run_sequence(
    cx: Cx<'_>,
    sequence: &Sequence,
    args: Map<String, Value>,
    stack: Stack,
    observe: bool,
) -> (RunReport, Held) {
    let mut held = Held::none(cx.budget);
    if seq_catalog::calls::entry_groups(sequence).next().is_none()
        && let Some(first) = sequence.groups.first()
    {
        return (failed_run(no_entry_group(sequence, first)), held);
    }
    let inputs = match route(sequence, args) {
        Ok(inputs) => inputs,
        Err(errors) => {
            let mut report = failed_run(joined(&errors));
            report.argument_errors = errors;
            return (report, held);
        }
    };
    let mut report = RunReport {
        ok: true,
        groups: Vec::with_capacity(sequence.groups.len()),
        out: Map::new(),
        error: None,
        argument_errors: Vec::new(),
        cancelled: false,
        output: Map::new(),
    };
    for (group, inputs) in seq_catalog::calls::entry_groups(sequence).zip(inputs) {
        let (ran, slots) = group::run(cx, sequence, group, inputs, &stack, observe).await;
        // The report's `out` and its groups' hold the same values: counted once.
        held.absorb(slots);
        let status = ran.status;
        match status {
            GroupStatus::Skipped => {}
            GroupStatus::Ran
            | GroupStatus::Partial
            | GroupStatus::Failed
            | GroupStatus::Cancelled => {
                report
                    .out
                    .insert(ran.name.clone(), Value::Object(ran.out.clone()));
            }
        }
        report.groups.push(ran);
        if status == GroupStatus::Cancelled {
            report.ok = false;
            report.cancelled = true;
            report.error = Some(cancelled_error());
            break;
        }
        if status == GroupStatus::Failed {
            // `partial` was tolerated by the group's own `on_error: continue`; `failed` was not.
            report.ok = false;
            break;
        }
    }
    (report, held)
}

/// Every group is called by another, which only a cycle of group calls can do (the checker
/// refuses it, E0601): the error names the cycle, followed from the first group.
fn no_entry_group(sequence: &Sequence, first: &Group) -> ToolError {
    let mut path = vec![first.name.value.as_str()];
    let mut current = first;
    while let Some(next) = seq_catalog::calls::group_calls(current).next() {
        let seen = path.contains(&next);
        path.push(next);
        match sequence.groups.iter().find(|g| g.name.value == next) {
            Some(group) if !seen => current = group,
            Some(_) | None => break,
        }
    }
    ToolError::new(
        Reason::Cycle,
        format!(
            "every group of `#{}` is called by another, so no group starts the run: {}",
            sequence.name.value,
            path.join(" → ")
        ),
    )
    .with_hint("break the cycle of group calls; `seqc check` shows it (E0601)")
}

/// The run's arguments, routed to the entry groups that declare them and admitted to their
/// types. Checked for every entry group before any runs: an argument no entry group declares,
/// or one that does not fit a group that declares it, fails the run before it starts (reason
/// `type`), with every such problem, one per argument. A callable group's inputs come from its
/// callers, never from the run.
fn route(
    sequence: &Sequence,
    args: Map<String, Value>,
) -> Result<Vec<Map<String, Value>>, Vec<ToolError>> {
    let name = &sequence.name.value;
    let entry = || seq_catalog::calls::entry_groups(sequence);
    let mut errors: Vec<ToolError> = args
        .keys()
        .filter(|key| !entry().any(|g| g.input(key).is_some()))
        .map(|undeclared| {
            let callable = sequence
                .groups
                .iter()
                .find(|g| g.input(undeclared).is_some())
                .map(|g| g.name.value.as_str());
            let detail = match callable {
                Some(group) => format!(
                    "`{undeclared}` is an input of `{group}`, which `#{name}` runs only when one \
                     of its items calls it, with that call's arguments"
                ),
                None => format!("`{undeclared}` is not an input of any group of `#{name}`"),
            };
            let takes = format!("`#{name}` takes {}", inputs_list(entry()));
            let inputs = entry().flat_map(|g| g.inputs.iter().map(|i| i.name.value.as_str()));
            // An input of a called group is no slip of the fingers: nothing is suggested.
            let meant = callable
                .is_none()
                .then(|| seq_syntax::diagnostic::did_you_mean(undeclared, inputs))
                .flatten();
            let hint = match meant {
                Some(meant) => format!("did you mean `{meant}`? {takes}"),
                None => takes,
            };
            signature_error(undeclared, detail, &hint)
        })
        .collect();
    let mut inputs = Vec::new();
    for group in entry() {
        let owner = format!("group `{}` of `#{name}`", group.name.value);
        match admit(group, &args, &owner) {
            Ok(admitted) => inputs.push(admitted),
            // Two groups may declare one argument alike: its problem is said once.
            Err(problems) => {
                for problem in problems {
                    if !errors.iter().any(|e| e.field == problem.field) {
                        errors.push(problem);
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(inputs)
    } else {
        Err(errors)
    }
}

/// The arguments `group` declares, admitted to their types, or every one that does not fit.
/// `null` stands for "not passed" (as for tool parameters): the input takes its `default`, or
/// stays unset; a `required` input not passed is an error of reason `required` on it.
fn admit(
    group: &Group,
    args: &Map<String, Value>,
    owner: &str,
) -> Result<Map<String, Value>, Vec<ToolError>> {
    let mut inputs = Map::new();
    let mut errors = Vec::new();
    for decl in &group.inputs {
        let name = &decl.name.value;
        let ty = decl.ty.value;
        let Some(value) = args.get(name.as_str()).filter(|v| !v.is_null()) else {
            if let Some(default) = &decl.default {
                // The checker holds a default to its type; `admit` makes a lenient bool real.
                let value = values::admit(ty, default.value.clone())
                    .unwrap_or_else(|| default.value.clone());
                inputs.insert(name.to_string(), value);
            } else if decl.is_required() {
                errors.push(
                    ToolError::new(
                        Reason::Required,
                        format!("{owner} requires the input `{name}`, which was not passed"),
                    )
                    .with_field(name.as_str())
                    .with_hint(format!("pass {} as `{name}`", article(ty.as_str()))),
                );
            }
            continue;
        };
        match values::admit(ty, value.clone()) {
            Some(value) => {
                inputs.insert(name.to_string(), value);
            }
            None => errors.push(signature_error(
                name,
                format!(
                    "{owner} declares `{name}` as `{}`, found {}",
                    ty.as_str(),
                    describe(value)
                ),
                &format!("pass {} as `{name}`", article(ty.as_str())),
            )),
        }
    }
    // `"retries": "$args.NAME"` is held to its bound here, before anything of the group runs.
    if errors.is_empty()
        && let Err(error) = super::retries::allowed(group, &inputs)
    {
        errors.push(error);
    }
    if errors.is_empty() {
        Ok(inputs)
    } else {
        Err(errors)
    }
}

/// Several problems with arguments as one error: the first as it is when it is alone; else
/// each problem's detail, then each hint, the field left to the problems themselves, and the
/// reason theirs when they share it (`type` otherwise).
fn joined(errors: &[ToolError]) -> ToolError {
    match errors {
        [] => ToolError::new(Reason::Type, "the arguments do not fit"),
        [one] => one.clone(),
        [..] => {
            let details: Vec<String> = errors
                .iter()
                .map(|e| e.detail.clone().unwrap_or_default())
                .collect();
            let mut hints: Vec<&str> = Vec::new();
            for hint in errors.iter().filter_map(|e| e.hint.as_deref()) {
                if !hints.contains(&hint) {
                    hints.push(hint);
                }
            }
            let reason = match errors.first().map(|e| e.reason) {
                Some(first) if errors.iter().all(|e| e.reason == first) => first,
                Some(_) | None => Reason::Type,
            };
            let error = ToolError::new(
                reason,
                format!(
                    "{} problems with the arguments: {}",
                    errors.len(),
                    details.join("; ")
                ),
            );
            if hints.is_empty() {
                error
            } else {
                error.with_hint(hints.join("; "))
            }
        }
    }
}

fn article(ty: &str) -> String {
    match ty {
        "any" => "any value".to_owned(),
        "array" | "object" | "integer" => format!("an {ty}"),
        _ => format!("a {ty}"),
    }
}

/// The inputs of `groups`, cut when long (an error is written per call).
fn inputs_list<'g>(groups: impl Iterator<Item = &'g Group>) -> String {
    // Groups may share an input: each name is listed once, where it first appears.
    let mut seen = std::collections::HashSet::new();
    let names: Vec<&str> = groups
        .flat_map(|g| g.inputs.iter().map(|i| i.name.value.as_str()))
        .filter(|name| seen.insert(*name))
        .collect();
    if names.is_empty() {
        "no arguments".to_owned()
    } else {
        seq_syntax::diagnostic::list_joined(&names, "and")
    }
}

/// A call made directly by a model (`Engine::call`): `#name` starts a new stack, a group of
/// `sequence` sits on that sequence.
pub(crate) async fn direct(
    cx: Cx<'_>,
    sequence: Option<&Sequence>,
    owner: Option<&str>,
    target: &str,
    args: Map<String, Value>,
) -> Result<Option<Value>, ToolError> {
    let stack = match sequence {
        Some(sequence) if !CallTarget::parse(target).is_sequence() => {
            Stack::default().enter_sequence(&sequence.name.value, owner, cx.limits.max_depth)?
        }
        Some(_) | None => Stack::default(),
    };
    // A model's call returns the value alone: what the groups did is not kept.
    let mut called = Vec::new();
    to_target(cx, sequence, target, args, &stack, None, &mut called)
        .await
        .map(|called| called.map(|(value, _)| value))
        .map_err(|failure| failure.error)
}

/// A `seq_call`, `seq_when_call` or `seq_run` item. Its dispatch follows the path of every
/// tool: `__arg_error` (checked by the caller), then — for `seq_when_call` — its `when`
/// in the caller's scope before anything of the callee is built, the arguments,
/// authorization of the caller for the call tool itself, pre-validation against the tool's
/// built-in signature, and finally the callee, whose own tools pass the same path. The
/// per-tool timeout does not apply to the call itself: a `#name` call may run several groups,
/// each bounded by its own timeout, and the calling group's timeout bounds the whole call.
/// The call's arguments count against the run's budget while it runs; its value comes with
/// the charge of the callee's slots. The reports of the groups it ran go to `called`.
/// `step`: the item's attempt, which names a `#name` call its driver runs elsewhere.
pub(crate) async fn item(
    g: &GroupCx<'_>,
    step: Step<'_>,
    item: &Item,
    scope: Scope<'_>,
    called: &mut Vec<CalledGroup>,
) -> Result<Option<(Value, Held)>, Failure> {
    let tool = item.tool.value.as_str();
    let members = item.args.as_ref().map_or(&[][..], |a| a.value.as_slice());
    let mut when = None;
    // Which target a `seq_when_call` calls: `target` when `when` holds, else `else`.
    let mut otherwise = false;
    if tool == SEQ_WHEN_CALL {
        let text = when_text(g, item, scope)?;
        let condition = eval::parse(&text)?;
        if !eval::eval(&condition, scope).map_err(|e| within(e, "`when` of `seq_when_call`"))? {
            if item.arg(ELSE).is_none() {
                return Ok(None);
            }
            otherwise = true;
        }
        when = Some(text);
    }
    // The arguments of the branch not taken are not read (they may read a slot that only the
    // other branch's case sets); `when` was read above, as a condition.
    let skip: &[&str] = match (when.is_some(), otherwise) {
        (false, _) => &[],
        (true, false) => &["when", ELSE_ARGS],
        (true, true) if item.arg(ELSE_ARGS).is_some() => &["when", "args"],
        (true, true) => &["when"],
    };
    let budget = &mut fill::Budget::new(g.cx.limits.max_argument_bytes, g.cx.budget);
    let mut args = fill::object(members, scope, skip, budget)?;
    if let Some(text) = when {
        args.insert("when".to_owned(), Value::String(text));
    }
    let args = Value::Object(args);
    dispatch::authorize(g.cx, &g.stack, tool, &args)?;
    if let Some(def) = builtin().get(tool) {
        def.parameters
            .validate(&args)
            .map_err(|problem| dispatch::invalid(tool, &def.parameters, &problem, &args))?;
    }
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    let target = if tool == SEQ_RUN {
        // `seq_run` inside a group runs a sequence: a `#name` call (W0508 warns the checker
        // cannot follow it; the run-time bounds still hold).
        CallTarget::Sequence(text("name")).to_string()
    } else if otherwise {
        text(ELSE).to_owned()
    } else {
        text("target").to_owned()
    };
    let passed = match args.get(ELSE_ARGS) {
        Some(else_args) if otherwise => Some(else_args),
        Some(_) | None => args.get("args"),
    };
    let callee_args = match passed {
        Some(Value::Object(members)) => members.clone(),
        Some(_) | None => Map::new(),
    };
    to_target(
        g.cx,
        Some(g.sequence),
        &target,
        callee_args,
        &g.stack,
        Some(step),
        called,
    )
    .await
}

/// The condition text of a `seq_when_call` item's `when`.
fn when_text(g: &GroupCx<'_>, item: &Item, scope: Scope<'_>) -> Result<String, ToolError> {
    let Some(when) = item.arg("when") else {
        return Err(
            ToolError::new(Reason::Required, "`seq_when_call` needs `when`")
                .with_field("when")
                .with_hint("add `\"when\": \"CONDITION\"`, or use `seq_call`"),
        );
    };
    match &when.kind {
        ValueKind::String(template) => Ok(eval::condition_text(template)),
        ValueKind::Null
        | ValueKind::Bool(_)
        | ValueKind::Number(_)
        | ValueKind::Ref(_)
        | ValueKind::Array(_)
        | ValueKind::Object(_) => {
            let budget = &mut fill::Budget::new(g.cx.limits.max_argument_bytes, g.cx.budget);
            match fill::value(when, scope, budget)? {
                Value::String(text) => Ok(text),
                other @ (Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::Array(_)
                | Value::Object(_)) => Err(ToolError::new(
                    Reason::Type,
                    format!(
                        "`when` of `seq_when_call` must be a condition string, found {}",
                        describe(&other)
                    ),
                )
                .with_field("when")
                .with_hint(
                    "write the condition as a string, such as `\"$args.host != \\\"\\\"\"`",
                )),
            }
        }
    }
}

fn builtin() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(Catalog::builtin)
}

/// Calls `target` — a group of `current`, or `#name` looked up afresh — with `args`, from
/// `stack`, with the charge of the value to the run's budget; the reports of the groups it ran
/// go to `called`. Boxed: calls nest. `step`: the item making the call, if an item does; a
/// call no item makes (a model's) is observed as a run of its own.
fn to_target<'a>(
    cx: Cx<'a>,
    current: Option<&'a Sequence>,
    target: &'a str,
    args: Map<String, Value>,
    stack: &'a Stack,
    step: Option<Step<'a>>,
    called: &'a mut Vec<CalledGroup>,
) -> BoxFuture<'a, Result<Option<(Value, Held)>, Failure>> {
    let observe = step.is_none();
    Box::pin(async move {
        if let CallTarget::Sequence(name) = CallTarget::parse(target) {
            return call_sequence(cx, name, args, stack, observe, step, called).await;
        }
        if target.trim().is_empty() {
            return Err(malformed(target).into());
        }
        let Some(sequence) = current else {
            return Err(Failure::missing(
                ToolError::new(
                    Reason::NotFound,
                    format!("no sequence to find group `{target}` in"),
                )
                .with_field("target")
                .with_hint(
                    "a group is called from within its sequence; call a stored sequence as `#name`",
                ),
            ));
        };
        let Some(group) = sequence.groups.iter().find(|g| g.name.value == target) else {
            return Err(Failure::missing(
                ToolError::new(
                    Reason::NotFound,
                    format!("`#{}` has no group `{target}`", sequence.name.value),
                )
                .with_field("target")
                .with_hint(format!("its groups are {}", group_names(sequence))),
            ));
        };
        let owner = format!("group `{target}`");
        // Every problem with the call's arguments in one error.
        let mut errors: Vec<ToolError> = args
            .keys()
            .filter(|key| group.input(key).is_none())
            .map(|undeclared| {
                signature_error(
                    undeclared,
                    format!("`{undeclared}` is not an input of {owner}"),
                    &format!("{owner} takes {}", inputs_list(std::iter::once(group))),
                )
            })
            .collect();
        let admitted = admit(group, &args, &owner);
        if let Err(problems) = &admitted {
            errors.extend(problems.iter().cloned());
        }
        let inputs = match admitted {
            Ok(inputs) if errors.is_empty() => inputs,
            Ok(_) | Err(_) => return Err(joined(&errors).into()),
        };
        let (mut report, held) = group::run(cx, sequence, group, inputs, stack, observe).await;
        let outcome = match report.status {
            GroupStatus::Skipped => Ok(None),
            GroupStatus::Ran | GroupStatus::Partial => {
                Ok(Some((Value::Object(std::mem::take(&mut report.out)), held)))
            }
            GroupStatus::Failed | GroupStatus::Cancelled => Err(failure_of(&report, &owner)),
        };
        called.push(CalledGroup::of(report, None, stack.groups()));
        outcome
    })
}

async fn call_sequence(
    cx: Cx<'_>,
    name: &str,
    args: Map<String, Value>,
    stack: &Stack,
    observe: bool,
    step: Option<Step<'_>>,
    called: &mut Vec<CalledGroup>,
) -> Result<Option<(Value, Held)>, Failure> {
    if name.trim().is_empty() {
        return Err(malformed("#").into());
    }
    // Looked up afresh at every call: stored sequences come and go, and so may their owners.
    let Some((sequence, owner)) = cx.sequences.owned(name) else {
        return Err(Failure::missing(
            ToolError::new(Reason::NotFound, format!("no sequence `#{name}` is stored"))
                .with_field("target")
                .with_hint(
                    "store it with `seq_create`, or `missing: \"skip\"` to go on without it",
                ),
        ));
    };
    let depth = stack.groups();
    let stack = stack.enter_sequence(name, owner.as_deref(), cx.limits.max_depth)?;
    let (report, held) = match step {
        // The call is decided; how it runs is the driver's.
        Some(step) if cx.driver.intercepts() => driven(cx, step, &sequence, args, stack).await?,
        Some(_) | None => run_sequence(cx, &sequence, args, stack, observe).await,
    };
    let context = format!("`#{name}`");
    if let Some(error) = report.error {
        return Err(within(error, &context).into());
    }
    let outcome = match report
        .groups
        .iter()
        .find(|g| matches!(g.status, GroupStatus::Failed | GroupStatus::Cancelled))
    {
        Some(failed) => Err(failure_of(
            failed,
            &format!("{context} group `{}`", failed.name),
        )),
        None => Ok(Some((Value::Object(report.out), held))),
    };
    called.extend(
        report
            .groups
            .into_iter()
            .map(|group| CalledGroup::of(group, Some(name), depth)),
    );
    outcome
}

/// The run of a called sequence through the driver, which may run it elsewhere: what its
/// report sent is recorded here, and what its `out` holds is charged to this run's budget.
async fn driven(
    cx: Cx<'_>,
    step: Step<'_>,
    sequence: &Sequence,
    args: Map<String, Value>,
    stack: Stack,
) -> Result<(RunReport, Held), Failure> {
    let shown = args.clone();
    let entered = stack.clone();
    let work = Box::pin(async move { run_sequence(cx, sequence, args, entered, false).await.0 });
    let call = Called {
        step,
        sequence,
        args: &shown,
        stack: &stack,
    };
    let report = cx.driver.sequence(call, work).await;
    cx.output.absorb(&report.output);
    let mut held = Held::none(cx.budget);
    let bytes = size::json_size_within(&report.out, cx.limits.max_run_bytes)
        .unwrap_or(cx.limits.max_run_bytes);
    held.take(bytes).map_err(|error| {
        within(
            error,
            &format!("keeping the result of `#{}`", sequence.name.value),
        )
    })?;
    Ok((report, held))
}

fn malformed(target: &str) -> ToolError {
    ToolError::new(Reason::ArgError, format!("`{target}` is not a call target"))
        .with_field("target")
        .with_hint("name a group of this sequence, or `#` and a sequence name")
}

/// The groups of `sequence`, cut when long.
fn group_names(sequence: &Sequence) -> String {
    let names: Vec<&str> = sequence
        .groups
        .iter()
        .map(|g| g.name.value.as_str())
        .collect();
    seq_syntax::diagnostic::list_joined(&names, "and")
}
