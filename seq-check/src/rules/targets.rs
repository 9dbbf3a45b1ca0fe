//! Call targets: `seq_call` and `seq_when_call` need a
//! `target` (not `group`), a literal that is a group of this sequence or `#sequence`; the
//! arguments must be inputs the target declares, of their types. A `seq_when_call`'s `else` is
//! a target as well, given `else_args` (or the same `args`). An unknown `#name` is only a
//! warning: sequences come and go. `seq_run` inside a group hides its callee from the call graph.
//! `seq_create` and `seq_delete` manage what others run: a client's tools, never a step.

use super::args::{check_value, list};
use super::types::input_schema;
use super::types::references;
use super::{Cx, fix};
use seq_catalog::calls::{ELSE, ELSE_ARGS};
use seq_catalog::{Catalog, SEQ_CREATE, SEQ_DELETE, SEQ_RUN, SEQ_WHEN_CALL};
use seq_syntax::ast::{Group, Item, Member, Root, SlotDecl, Value};
use seq_syntax::diagnostic::did_you_mean;
use seq_syntax::names::CallTarget;
use seq_syntax::{Code, Diagnostic, Span};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    for item in cx.items.iter().map(|i| i.item) {
        let tool = item.tool.value.as_str();
        if tool == SEQ_RUN {
            out.push(nested_run(item));
        }
        if tool == SEQ_CREATE || tool == SEQ_DELETE {
            out.push(management_step(item));
        }
        if Catalog::is_call(tool) {
            call(cx, item, out);
        }
    }
}

fn nested_run(item: &Item) -> Diagnostic {
    let target = item
        .arg("name")
        .and_then(|v| v.kind.as_string())
        .and_then(|t| t.as_literal())
        .unwrap_or("NAME");
    Diagnostic::new(
        Code::NestedSeqRun,
        item.tool.span,
        "`seq_run` inside a group: the checker cannot follow it for cycles and depth",
    )
    .with_help(format!(
        "call the sequence with `seq_call` and `\"target\": \"#{target}\"`, which the call graph checks"
    ))
}

fn management_step(item: &Item) -> Diagnostic {
    let tool = &item.tool.value;
    Diagnostic::new(
        Code::ManagementStep,
        item.tool.span,
        format!(
            "`{tool}` manages what others run: it is a client's tool, never a step of a sequence"
        ),
    )
    .with_help(format!(
        "call `{tool}` from the client instead, and remove this item; a run would refuse it"
    ))
}

fn call(cx: &Cx<'_>, item: &Item, out: &mut Vec<Diagnostic>) {
    let tool = &item.tool.value;
    let members = item.args.as_ref().map_or(&[][..], |a| a.value.as_slice());
    let find = |key: &str| members.iter().find(|m| m.key.value == key);
    let target = match (find("target"), find("group")) {
        (Some(target), spelt_group) => {
            if let Some(group) = spelt_group {
                out.push(
                    Diagnostic::new(
                        Code::GroupInsteadOfTarget,
                        group.key.span,
                        format!("`{tool}` takes `target`, not `group`, and has both"),
                    )
                    .with_help("remove `group`"),
                );
            }
            target
        }
        (None, Some(group)) => {
            out.push(
                Diagnostic::new(
                    Code::GroupInsteadOfTarget,
                    group.key.span,
                    format!("`{tool}` names what it calls with `target`, not `group`"),
                )
                .with_help("rename `group` to `target` (a call names its group in `target`)")
                .with_replacement("rename to `target`", group.key.span, "target"),
            );
            group
        }
        // Broken `args` may have held the target: reported where it broke.
        (None, None) if item.hole("args") => return,
        (None, None) => {
            let at = item.args.as_ref().map_or(item.tool.span, |a| a.span);
            out.push(
                Diagnostic::new(Code::MissingTarget, at, format!("`{tool}` has no `target`"))
                    .with_help("add `\"target\": \"GROUP\"` for a group of this sequence, or `\"target\": \"#SEQUENCE\"`"),
            );
            return;
        }
    };
    to_callee(cx, item, target, find("args"), out);
    if item.tool.value == SEQ_WHEN_CALL
        && let Some(otherwise) = find(ELSE)
    {
        // `else_args` default to the same `args`.
        let args = find(ELSE_ARGS).or_else(|| find("args"));
        to_callee(cx, item, otherwise, args, out);
    }
}

/// The checks of one target of a call (`target`, or `seq_when_call`'s `else`) and the
/// arguments it is given.
fn to_callee(
    cx: &Cx<'_>,
    item: &Item,
    target: &Member,
    args: Option<&Member>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(callee) = resolve(cx, &target.value, out) else {
        return;
    };
    let passed: &[Member] = match args {
        None => &[],
        Some(args) => match args.value.kind.as_object() {
            Some(passed) => passed,
            // Not an object: the parameter check reports it.
            None => return,
        },
    };
    call_arguments(cx, &callee, passed, out);
    if !item.hole("args") {
        required_inputs(&callee, passed, target.value.span, out);
    }
    if let Some(group) = callee.group
        && !item.hole("args")
    {
        unpassed_inputs(group, passed, target.value.span, out);
    }
}

/// Inputs of the called group that this call leaves out while an item of the group reads them:
/// unset, the item fails when it runs. A group whose `when` names the input guards it (an unset
/// input reads as `null` there).
fn unpassed_inputs(group: &Group, passed: &[Member], at: Span, out: &mut Vec<Diagnostic>) {
    if ["in", "tools", "when"].iter().any(|f| group.hole(f)) {
        return;
    }
    let guarded: Vec<&str> = group
        .when
        .iter()
        .flat_map(|w| w.references())
        .filter(|r| r.root.value == Root::Args)
        .map(|r| r.slot.value.as_str())
        .collect();
    for input in &group.inputs {
        let name = input.name.value.as_str();
        // A default fills it; a required one left out is E0546.
        if passed.iter().any(|m| m.key.value == name)
            || guarded.contains(&name)
            || input.default.is_some()
            || input.is_required()
        {
            continue;
        }
        // Passed misspelt: E0513 renames the argument, which is the one mistake.
        let misspelt = passed.iter().any(|m| {
            group.input(&m.key.value).is_none() && did_you_mean(&m.key.value, [name]).is_some()
        });
        if misspelt {
            continue;
        }
        let read = group.items.iter().enumerate().find_map(|(i, item)| {
            let mut found = Vec::new();
            for member in item.args.iter().flat_map(|a| a.value.iter()) {
                // The `when` of a `seq_when_call` reads an unset input as `null`.
                if item.tool.value == SEQ_WHEN_CALL && member.key.value == "when" {
                    continue;
                }
                references(&member.value, &mut found);
            }
            found
                .into_iter()
                .find(|r| r.root.value == Root::Args && r.slot.value == name)
                .map(|r| (i, item, r.span))
        });
        let Some((index, item, span)) = read else {
            continue;
        };
        let callee = &group.name.value;
        out.push(
            Diagnostic::new(
                Code::CallLeavesOutInput,
                at,
                format!(
                    "this call does not pass `{name}`, which group `{callee}` reads: its item {} (`{}`) will fail",
                    index + 1,
                    item.tool.value
                ),
            )
            .with_label(span, "read here")
            .with_help(format!(
                "pass `\"{name}\": …` in the call's `args`, or guard group `{callee}` with `\"when\": \"$args.{name} != null\"`"
            )),
        );
    }
}

/// The required inputs of the callee that the call does not pass (E0546): the call would fail
/// before the callee runs anything.
fn required_inputs(callee: &Callee<'_>, passed: &[Member], at: Span, out: &mut Vec<Diagnostic>) {
    let mut reported: Vec<&str> = Vec::new();
    for input in &callee.required {
        let name = input.name.value.as_str();
        if reported.contains(&name) || passed.iter().any(|m| m.key.value == name) {
            continue;
        }
        // Passed misspelt: E0513 renames the argument, which is the one mistake.
        let misspelt = passed.iter().any(|m| {
            callee.inputs.iter().all(|i| i.name.value != m.key.value)
                && did_you_mean(&m.key.value, [name]).is_some()
        });
        if misspelt {
            continue;
        }
        reported.push(name);
        let d = Diagnostic::new(
            Code::CallLeavesOutRequired,
            at,
            format!(
                "this call does not pass `{name}`, which {} requires",
                callee.owner
            ),
        );
        // A stored sequence's declaration is in another file: no label there.
        let d = match callee.group {
            Some(_) => d.with_label(input.name.span, "declared required here"),
            None => d,
        };
        out.push(d.with_help(format!(
            "pass `\"{name}\": …` in the call's `args` (of type `{}`)",
            input.ty.value.as_str()
        )));
    }
}

/// What a call resolves to: a group's inputs, or the inputs of every group of a sequence (a
/// sequence run hands each group the arguments it declares).
struct Callee<'a> {
    owner: String,
    /// The group, for a call of a group of this sequence.
    group: Option<&'a Group>,
    inputs: Vec<&'a SlotDecl>,
    /// The inputs the call must pass: the group's required ones, or those of the sequence's
    /// entry groups (its other groups take theirs from the calls that run them).
    required: Vec<&'a SlotDecl>,
    /// Whether `inputs` are all the callee declares (no `in` or group left out as broken).
    whole: bool,
}

fn resolve<'a>(cx: &Cx<'a>, value: &Value, out: &mut Vec<Diagnostic>) -> Option<Callee<'a>> {
    let malformed = |message: String, help: &str| {
        Diagnostic::new(Code::MalformedTarget, value.span, message).with_help(help.to_owned())
    };
    let Some(template) = value.kind.as_string() else {
        out.push(malformed(
            format!(
                "a call's `target` must be a string, found {}",
                super::types::describe(value)
            ),
            "write a group name of this sequence, or `#` and a sequence name",
        ));
        return None;
    };
    let Some(text) = template.as_literal() else {
        out.push(malformed(
            "a call's `target` must be written out: it cannot interpolate references".to_owned(),
            "name the group or `#sequence` literally, so that the call graph can be checked before anything runs",
        ));
        return None;
    };
    let body = value.string_body(text);
    if text.trim().is_empty() {
        out.push(malformed(
            "the call's `target` is empty".to_owned(),
            "write a group name of this sequence, or `#` and a sequence name",
        ));
        return None;
    }
    if let CallTarget::Sequence(name) = CallTarget::parse(text) {
        if name.is_empty() {
            out.push(malformed(
                "`#` must be followed by a sequence name".to_owned(),
                "write `#NAME` to call the sequence named NAME",
            ));
            return None;
        }
        let Some(sequence) = cx.batch.sequence(name) else {
            let d = Diagnostic::new(
                Code::UnknownSequence,
                body,
                format!("no sequence named `{name}` is stored or checked with this one"),
            );
            out.push(match did_you_mean(name, cx.batch.names()) {
                Some(best) => d
                    .with_help(format!("did you mean `{}`?", CallTarget::Sequence(best)))
                    .with_replacement(
                        format!("call `{}`", CallTarget::Sequence(best)),
                        body,
                        fix::in_item_string(&CallTarget::Sequence(best).to_string()),
                    )
                    .maybe_incorrect(),
                None => d.with_help(
                    "create it before running this one; sequences come and go, so this is a warning",
                ),
            });
            return None;
        };
        return Some(Callee {
            owner: format!("sequence `{}`", CallTarget::Sequence(name)),
            group: None,
            inputs: sequence
                .groups
                .iter()
                .flat_map(|g| g.inputs.iter())
                .collect(),
            required: seq_catalog::calls::entry_groups(sequence)
                .flat_map(|g| g.inputs.iter())
                .filter(|i| i.is_required())
                .collect(),
            whole: !sequence.hole("groups") && sequence.groups.iter().all(|g| !g.hole("in")),
        });
    }
    if let Some(group) = cx.groups.get(text) {
        return Some(Callee {
            owner: format!("group `{text}`"),
            group: Some(group),
            inputs: group.inputs.iter().collect(),
            required: group.inputs.iter().filter(|i| i.is_required()).collect(),
            whole: !group.hole("in"),
        });
    }
    // A group left out as broken may be the one named.
    if !cx.sequence.groups_whole() {
        return None;
    }
    let mut d = Diagnostic::new(
        Code::UnknownGroup,
        body,
        format!(
            "sequence `{}` has no group named `{text}`",
            cx.sequence.name.value
        ),
    );
    let groups = cx.sequence.groups.iter().map(|g| g.name.value.as_str());
    d = if let Some(best) = did_you_mean(text, groups) {
        d.with_help(format!("did you mean `{best}`?"))
            .with_replacement(format!("call `{best}`"), body, fix::in_item_string(best))
            .maybe_incorrect()
    } else if cx.batch.sequence(text).is_some() {
        d.with_help(format!(
            "to call the sequence `{text}`, write `{}`",
            CallTarget::Sequence(text)
        ))
        .with_replacement(
            format!("call `{}`", CallTarget::Sequence(text)),
            body,
            fix::in_item_string(&CallTarget::Sequence(text).to_string()),
        )
        .maybe_incorrect()
    } else {
        let names: Vec<&str> = cx
            .sequence
            .groups
            .iter()
            .map(|g| g.name.value.as_str())
            .collect();
        d.with_help(format!(
            "a `target` without `#` is a group of this sequence: {}; `#NAME` calls another sequence",
            list(&names)
        ))
    };
    out.push(d);
    None
}

fn call_arguments(cx: &Cx<'_>, callee: &Callee<'_>, passed: &[Member], out: &mut Vec<Diagnostic>) {
    // The groups of a sequence may share an input: each name listed once.
    let mut names: Vec<&str> = Vec::with_capacity(callee.inputs.len());
    for input in &callee.inputs {
        if !names.contains(&input.name.value.as_str()) {
            names.push(input.name.value.as_str());
        }
    }
    for member in passed {
        let key = member.key.value.as_str();
        match callee.inputs.iter().find(|i| i.name.value == key) {
            Some(input) => {
                let schema = input_schema(input.ty.value);
                check_value(cx, &schema, &member.value, key, &callee.owner, out);
            }
            None if !callee.whole => {}
            None => {
                let d = Diagnostic::new(
                    Code::UnknownCallArgument,
                    member.key.span,
                    format!("{} declares no input `{key}`", callee.owner),
                );
                out.push(match did_you_mean(key, names.iter().copied()) {
                    Some(best) => d
                        .with_help(format!("did you mean `{best}`?"))
                        .with_replacement(
                            format!("rename to `{best}`"),
                            member.key.span,
                            fix::in_item_string(best),
                        )
                        .maybe_incorrect(),
                    None if names.is_empty() => {
                        d.with_help("it declares no inputs; remove the argument, or declare it in the callee's `in`")
                    }
                    None => d.with_help(format!(
                        "its inputs are {}; declare `{key}` in the callee's `in`, or remove the argument",
                        list(&names)
                    )),
                });
            }
        }
    }
}
