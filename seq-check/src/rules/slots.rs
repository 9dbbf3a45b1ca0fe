//! Named slots: `as` writes a declared `out` slot; a slot that is not an
//! `array` has one writer; inputs never read and outputs never written are warnings.

use super::{Cx, fix};
use crate::catalog::{Catalog, JsonType};
use seq_syntax::ast::{CompactString, Type};
use seq_syntax::diagnostic::did_you_mean;
use seq_syntax::{Code, Diagnostic, Span};
use std::collections::{HashMap, HashSet};

pub(crate) fn check(cx: &Cx<'_>, used_inputs: &HashSet<CompactString>, out: &mut Vec<Diagnostic>) {
    let group = cx.group;
    let mut writers: HashMap<&str, Vec<Span>> = HashMap::new();
    for item in &cx.items {
        if let Some(output) = &item.item.output {
            writers
                .entry(output.value.as_str())
                .or_default()
                .push(output.span);
        }
    }
    let mut offered_declaration = HashSet::new();
    for item in &cx.items {
        let Some(output) = &item.item.output else {
            continue;
        };
        let name = output.value.as_str();
        let Some(decl) = group.output(name) else {
            if group.hole("out") {
                continue;
            }
            let count = writers.get(name).map_or(0, Vec::len);
            let offer = offered_declaration.insert(name);
            let ty = if count > 1 {
                // Several writers need an `array` slot.
                Type::Array
            } else {
                result_type(cx, &item.item.tool.value)
            };
            out.push(undeclared_output(cx, name, output.span, ty, offer));
            continue;
        };
        if decl.ty.value == Type::Array {
            continue;
        }
        let Some(first) = writers.get(name).and_then(|w| w.first()).copied() else {
            continue;
        };
        if first == output.span {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::SlotWrittenTwice,
                output.span,
                format!(
                    "slot `{name}` is written by several items but declared `{}`, not `array`",
                    decl.ty.value.as_str()
                ),
            )
            .with_label(first, "first written here")
            .with_label(decl.ty.span, "declared here")
            .with_help(format!(
                "declare `{name}` as `array` to collect every value in item order, or write the items to different slots"
            ))
            // An `array` slot collects every value: a change of what the group writes.
            .with_replacement(format!("declare `{name}` as `array`"), decl.ty.span, "array")
            .maybe_incorrect(),
        );
    }

    // A part left out may read an input or write an output.
    // And an `in` or `out` that broke is reported where it broke, not slot by slot.
    let reads_whole = !["in", "tools", "when", "fallback"]
        .iter()
        .any(|f| group.hole(f))
        && cx.items.iter().all(|i| !i.item.hole("args"));
    let writes_whole =
        !group.hole("tools") && !group.hole("out") && cx.items.iter().all(|i| !i.item.hole("as"));
    for input in group.inputs.iter().filter(|_| reads_whole) {
        if !used_inputs.contains(&input.name.value) {
            out.push(
                Diagnostic::new(
                    Code::UnusedInput,
                    input.name.span,
                    format!("input `{}` is never read", input.name.value),
                )
                .with_help(format!(
                    "read it as `$args.{}`, or remove it from `in`",
                    input.name.value
                )),
            );
        }
    }
    for output in group.outputs.iter().filter(|_| writes_whole) {
        if !writers.contains_key(output.name.value.as_str()) {
            out.push(
                Diagnostic::new(
                    Code::UnwrittenOutput,
                    output.name.span,
                    format!("no item writes output `{}`", output.name.value),
                )
                .with_help(format!(
                    "add `\"as\": \"{}\"` to the item that produces it, or remove it from `out`",
                    output.name.value
                )),
            );
        }
    }
}

/// The slot type that holds what `tool` returns: a call's object, else the type of the catalog's
/// result schema; `any` when the tool or its result is unknown, of several types, or a list.
fn result_type(cx: &Cx<'_>, tool: &str) -> Type {
    if Catalog::is_call(tool) {
        return Type::Object;
    }
    let ty = cx
        .catalog
        .get(tool)
        .and_then(|def| def.output.as_ref())
        .and_then(|output| output.get("type"))
        .and_then(serde_json::Value::as_str);
    match ty.and_then(JsonType::parse) {
        Some(JsonType::String) => Type::String,
        Some(JsonType::Integer) => Type::Integer,
        Some(JsonType::Number) => Type::Number,
        Some(JsonType::Boolean) => Type::Bool,
        Some(JsonType::Object) => Type::Object,
        // An `array` slot would wrap the one list in another (it collects every value written).
        Some(JsonType::Array | JsonType::Null) | None => Type::Any,
    }
}

fn undeclared_output(cx: &Cx<'_>, name: &str, span: Span, ty: Type, offer: bool) -> Diagnostic {
    let group = &cx.group.name.value;
    let d = Diagnostic::new(
        Code::UndeclaredOutput,
        span,
        format!("`as` writes `{name}`, which group `{group}` does not declare in `out`"),
    );
    let declared = cx.group.outputs.iter().map(|s| s.name.value.as_str());
    if let Some(best) = did_you_mean(name, declared) {
        return d
            .with_help(format!("did you mean `{best}`?"))
            .with_replacement(format!("write `{best}`"), span, fix::in_item_string(best))
            .maybe_incorrect();
    }
    let d = d.with_help(format!(
        "declare it in `out`, such as `\"{name}\": \"{}\"`",
        ty.as_str()
    ));
    match fix::declare(&cx.group.outputs, name, ty) {
        Some(edit) if offer => {
            // The type is a guess.
            d.with_fix(fix::fix(format!("declare `{name}` in `out`"), vec![edit]))
                .maybe_incorrect()
        }
        Some(_) | None => d,
    }
}
