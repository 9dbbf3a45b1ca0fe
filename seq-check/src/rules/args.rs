//! Tool arguments against the catalog: required parameters, literal
//! types (lenient booleans), references whose declared type differs from the
//! parameter's, and unknown parameters. A tool no catalog knows is a warning.
//!
//! Unknown parameters: JSON Schema lets objects hold extra properties, and the host's tools
//! ignore them, so an extra parameter is reported only when the schema is closed
//! (`additionalProperties: false`, an error) or when it is a likely typo of a declared one (a
//! warning with the rename). `null` stands for "not given": accepted for an optional parameter,
//! reported as missing for a required one.

use super::types::{describe, literal, reference_type, slot_fits};
use super::{Cx, fix};
use seq_catalog::{Catalog, JsonType, Schema, ToolDef};
use seq_syntax::ast::{Item, Member, Type, Value, ValueKind};
use seq_syntax::diagnostic::{did_you_mean, list_joined};
use seq_syntax::{Code, Diagnostic, Span};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    for item in cx.items.iter().map(|i| i.item) {
        match cx.catalog.get(&item.tool.value) {
            Some(def) => check_item(cx, item, def, out),
            None => out.push(unknown_tool(cx.catalog, item)),
        }
    }
}

fn unknown_tool(catalog: &Catalog, item: &Item) -> Diagnostic {
    let tool = &item.tool.value;
    let d = Diagnostic::new(
        Code::UnknownTool,
        item.tool.span,
        format!(
            "no catalog knows the tool `{tool}`; its arguments and parallel safety are not checked"
        ),
    );
    // Only the tools offered here are suggested: one turned off would only be refused.
    match did_you_mean(tool, catalog.offered()) {
        Some(best) => d
            .with_help(format!("did you mean `{best}`?"))
            .with_replacement(
                format!("call `{best}`"),
                item.tool.span,
                fix::in_item_string(best),
            )
            .maybe_incorrect(),
        None => {
            let known: Vec<&str> = catalog.offered().collect();
            d.with_help(format!(
                "the tools known here are {}; a tool that only another host provides is found at \
                 run time (`seqc check --catalog FILE` adds that host's list)",
                list_joined(&known, "and")
            ))
        }
    }
}

fn check_item(cx: &Cx<'_>, item: &Item, def: &ToolDef, out: &mut Vec<Diagnostic>) {
    // `target` (and its misspelling `group`) of a call are the target rules' business.
    let mut skip: Vec<&str> = if Catalog::is_call(&def.name) {
        vec!["target", "group"]
    } else {
        Vec::new()
    };
    // `comand` for `cmd_run`'s `command`: one error of the shell rules, with the rename.
    skip.extend(super::shell::misspelt_program(item).map(|m| m.key.value.as_str()));
    let members = item.args.as_ref().map_or(&[][..], |a| a.value.as_slice());
    let at = item.args.as_ref().map_or(item.tool.span, |a| a.span);
    let owner = format!("`{}`", def.name);
    let place = Place {
        at,
        path: "",
        owner: &owner,
        whole: !item.hole("args"),
    };
    check_object(cx, &def.parameters, members, &place, &skip, out);
    timeout_past_bound(cx, item, out);
}

/// A tool's own `timeout` argument longer than what ends the call first: the bound on every
/// call, or the group's `timeout`, which covers all its items (and their retries).
fn timeout_past_bound(cx: &Cx<'_>, item: &Item, out: &mut Vec<Diagnostic>) {
    let Some(value) = item.arg("timeout") else {
        return;
    };
    let ValueKind::String(template) = &value.kind else {
        return;
    };
    let Some(Ok(asked)) = template.as_literal().map(seq_syntax::parse_duration) else {
        return;
    };
    let call = Item::CALL_TIMEOUT;
    let group = cx.group.timeout();
    if asked <= call.min(group) {
        return;
    }
    let format = seq_syntax::duration::format;
    let tool = &item.tool.value;
    let d = if group < call {
        let mut d = Diagnostic::new(
            Code::TimeoutPastBound,
            value.span,
            format!(
                "`{tool}` may take {} here, but the group's timeout ends it after {}",
                format(asked),
                format(group)
            ),
        )
        .with_help(format!(
            "raise the group's `timeout` to at least {} (a call is also cut off after {})",
            format(asked.min(call)),
            format(call)
        ));
        if let Some(timeout) = &cx.group.timeout {
            d = d.with_label(timeout.span, "the group's timeout");
        }
        d
    } else {
        Diagnostic::new(
            Code::TimeoutPastBound,
            value.span,
            format!(
                "`{tool}` may take {} here, but every tool call is cut off after {}",
                format(asked),
                format(call)
            ),
        )
        .with_help(format!(
            "no call runs longer than {}: make the work shorter, or split it over several items",
            format(call)
        ))
    };
    out.push(d);
}

/// Where an arguments object stands: its span, its path from the arguments' root, and what
/// takes the arguments, for messages ("`cmd_run`", "group `fetch`").
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place<'a> {
    pub at: Span,
    pub path: &'a str,
    pub owner: &'a str,
    /// Whether the object holds every member written (none left out as broken).
    pub whole: bool,
}

/// Checks the members of an arguments object against `schema`, leaving out the keys in `skip`.
pub(crate) fn check_object(
    cx: &Cx<'_>,
    schema: &Schema,
    members: &[Member],
    place: &Place<'_>,
    skip: &[&str],
    out: &mut Vec<Diagnostic>,
) {
    let Place {
        at,
        path,
        owner,
        whole,
    } = *place;
    let mut missing = Vec::new();
    let mut names = Vec::new();
    let mut nulls = Vec::new();
    // A required parameter misspelt: one error, renamed, rather than "missing" and "unknown".
    let mut misspelt: Vec<&str> = Vec::new();
    for name in &schema.required {
        if skip.contains(&name.as_str()) {
            continue;
        }
        match members.iter().find(|m| m.key.value == *name) {
            Some(given) if !matches!(given.value.kind, ValueKind::Null) => continue,
            Some(null) => nulls.push(null.value.span),
            None => {
                let typo = members.iter().find(|m| {
                    let key = m.key.value.as_str();
                    schema.property(key).is_none()
                        && !skip.contains(&key)
                        && !misspelt.contains(&key)
                        && did_you_mean(key, [name.as_str()]).is_some()
                });
                if let Some(typo) = typo {
                    misspelt.push(typo.key.value.as_str());
                    let key = &typo.key.value;
                    out.push(
                        Diagnostic::new(
                            Code::MissingParameter,
                            typo.key.span,
                            format!(
                                "`{}` is not a parameter of {owner}; did you mean `{}`?",
                                join(path, key),
                                join(path, name)
                            ),
                        )
                        .with_help(format!("rename it to `{name}`, the required parameter"))
                        .with_replacement(
                            format!("rename to `{name}`"),
                            typo.key.span,
                            fix::in_item_string(name),
                        ),
                    );
                    continue;
                }
            }
        }
        let expected = schema
            .property(name)
            .map_or_else(|| "any value".to_owned(), Schema::type_text);
        missing.push(format!("`{}` ({expected})", join(path, name)));
        names.push(format!("`\"{name}\": …`"));
    }
    if !missing.is_empty() && whole {
        let (noun, verb) = if missing.len() == 1 {
            ("parameter", "is")
        } else {
            ("parameters", "are")
        };
        let mut d = Diagnostic::new(
            Code::MissingParameter,
            at,
            format!(
                "{owner} needs the {noun} {}, which {verb} not given",
                and_list(&missing)
            ),
        )
        .with_help(format!("add {} to the arguments", and_list(&names)));
        for null in nulls {
            d = d.with_label(null, "`null` counts as not given");
        }
        out.push(d);
    }
    for member in members {
        let key = member.key.value.as_str();
        if skip.contains(&key) || misspelt.contains(&key) {
            continue;
        }
        match schema.property(key) {
            Some(parameter) => {
                check_value(cx, parameter, &member.value, &join(path, key), owner, out)
            }
            None => {
                if let Some(d) = unknown_parameter(schema, member, path, owner) {
                    out.push(d);
                }
            }
        }
    }
}

fn unknown_parameter(
    schema: &Schema,
    member: &Member,
    path: &str,
    owner: &str,
) -> Option<Diagnostic> {
    let key = member.key.value.as_str();
    let full = join(path, key);
    let known = schema.properties.iter().map(|(n, _)| n.as_str());
    let best = did_you_mean(key, known);
    let listed = list(
        &schema
            .properties
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
    );
    let d = if !schema.additional_properties {
        Diagnostic::new(
            Code::UnknownParameterClosed,
            member.key.span,
            format!("{owner} has no parameter `{full}`"),
        )
    } else if best.is_some() {
        Diagnostic::new(
            Code::UnknownParameter,
            member.key.span,
            format!("{owner} declares no parameter `{full}`; it is passed but probably ignored"),
        )
    } else {
        return None;
    };
    Some(match best {
        Some(best) => d
            .with_help(format!(
                "did you mean `{best}`? The parameters are {listed}"
            ))
            .with_replacement(
                format!("rename to `{best}`"),
                member.key.span,
                fix::in_item_string(best),
            )
            .maybe_incorrect(),
        None if listed.is_empty() => d.with_help("it takes no parameters; remove it"),
        None => d.with_help(format!("remove it; the parameters are {listed}")),
    })
}

/// Checks one value against its parameter's schema.
pub(crate) fn check_value(
    cx: &Cx<'_>,
    schema: &Schema,
    value: &Value,
    path: &str,
    owner: &str,
    out: &mut Vec<Diagnostic>,
) {
    let expects = |found: String| {
        format!(
            "{owner} expects `{path}` of type {}, found {found}",
            schema.type_text()
        )
    };
    let allows = |t: JsonType| schema.types.is_empty() || schema.types.contains(&t);
    match &value.kind {
        ValueKind::Null => {}
        ValueKind::Bool(_) | ValueKind::Number(_) => {
            if literal(value).is_some_and(|json| !schema.accepts(&json)) {
                out.push(
                    Diagnostic::new(Code::ArgumentType, value.span, expects(describe(value)))
                        .with_help(format!("pass a value of type {}", schema.type_text())),
                );
            }
        }
        ValueKind::String(template) => match template.as_literal() {
            Some(text) => {
                if schema.accepts(&serde_json::Value::from(text)) {
                    return;
                }
                let d = Diagnostic::new(Code::ArgumentType, value.span, expects(describe(value)));
                // A number or boolean in quotes: offer it unquoted.
                let unquoted = serde_json::from_str::<serde_json::Value>(text.trim())
                    .ok()
                    .filter(|j| (j.is_number() || j.is_boolean()) && schema.accepts(j));
                out.push(match unquoted {
                    Some(json) => d
                        .with_help(format!("write `{json}` without quotes"))
                        .with_replacement("remove the quotes", value.span, json.to_string()),
                    None => d.with_help(format!("pass a value of type {}", schema.type_text())),
                });
            }
            None => {
                // Interpolation renders text; a lenient boolean may still read it.
                if allows(JsonType::String) || allows(JsonType::Boolean) {
                    if let Some(d) = quoted_reference(cx, schema, value, template) {
                        out.push(d);
                    }
                    return;
                }
                let mut d = Diagnostic::new(
                    Code::ArgumentType,
                    value.span,
                    expects(
                        "a string (a string with references renders its values as text)".to_owned(),
                    ),
                );
                let single = match template.parts.as_slice() {
                    [seq_syntax::ast::TemplatePart::Ref(reference)] => Some(reference),
                    _ => None,
                };
                d = match single {
                    Some(reference) => {
                        let text = fix::reference_text(reference);
                        d.with_help(format!(
                            "write the reference without quotes, `{text}`, to pass its value with its type"
                        ))
                        .with_replacement("pass the reference itself", value.span, text)
                    }
                    None => d.with_help(format!("pass a value of type {}", schema.type_text())),
                };
                out.push(d);
            }
        },
        ValueKind::Ref(reference) => {
            let Some((ty, declared_at)) = reference_type(cx, reference) else {
                return;
            };
            if slot_fits(ty, schema) {
                return;
            }
            out.push(
                Diagnostic::new(
                    Code::ArgumentType,
                    reference.span,
                    expects(format!(
                        "`{}`, declared `{}`",
                        fix::reference_text(reference),
                        ty.as_str()
                    )),
                )
                .with_label(declared_at, "declared here")
                .with_help(format!(
                    "declare `{}` with the parameter's type, {}",
                    reference.slot.value,
                    schema.type_text()
                )),
            );
        }
        ValueKind::Array(_) => {
            if !allows(JsonType::Array) {
                out.push(
                    Diagnostic::new(
                        Code::ArgumentType,
                        value.span,
                        expects("an array".to_owned()),
                    )
                    .with_help(format!("pass a value of type {}", schema.type_text())),
                );
            }
        }
        ValueKind::Object(members) => {
            if !allows(JsonType::Object) {
                out.push(
                    Diagnostic::new(
                        Code::ArgumentType,
                        value.span,
                        expects("an object".to_owned()),
                    )
                    .with_help(format!("pass a value of type {}", schema.type_text())),
                );
            } else if !schema.properties.is_empty() || !schema.additional_properties {
                let place = Place {
                    at: value.span,
                    path,
                    owner,
                    whole: true,
                };
                check_object(cx, schema, members, &place, &[], out);
            }
        }
    }
}

/// W0561: `"$out.names"` in quotes, where `names` is declared with a type other than `string`
/// and the parameter takes that type: the value's text is passed, not the value. (A `bool`
/// slot is left out: a lenient boolean reads its text as the value.)
fn quoted_reference(
    cx: &Cx<'_>,
    schema: &Schema,
    value: &Value,
    template: &seq_syntax::ast::Template,
) -> Option<Diagnostic> {
    let [seq_syntax::ast::TemplatePart::Ref(reference)] = template.parts.as_slice() else {
        return None;
    };
    let (ty, declared_at) = reference_type(cx, reference)?;
    if matches!(ty, Type::String | Type::Bool) || !slot_fits(ty, schema) {
        return None;
    }
    let text = fix::reference_text(reference);
    Some(
        Diagnostic::new(
            Code::QuotedReference,
            value.span,
            format!(
                "`\"{text}\"` in quotes passes the text of a value declared `{}`, not the value",
                ty.as_str()
            ),
        )
        .with_label(declared_at, "declared here")
        .with_help(format!(
            "write `{text}` without quotes to pass the {} itself; keep the quotes only if the text is meant",
            ty.as_str()
        ))
        // The text may be what the author meant (a list shown to a person).
        .with_replacement("pass the reference itself", value.span, text)
        .maybe_incorrect(),
    )
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// `a`, `b` and `c`, each in backticks.
pub(crate) fn list(names: &[&str]) -> String {
    seq_syntax::diagnostic::list_joined(names, "and")
}

/// `a`, `b` and `c`, as given.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
