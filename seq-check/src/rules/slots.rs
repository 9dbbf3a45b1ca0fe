//! Named slots: `as` writes a declared `out` slot whose type holds what the writer returns; a
//! slot that is not an `array` has one writer; inputs never read and outputs never written are
//! warnings.

use super::refs::Reads;
use super::types::member_references;
use super::{Cx, fix};
use seq_catalog::{Catalog, JsonType};
use seq_syntax::ast::{Group, Item, Root, Type};
use seq_syntax::diagnostic::{Edit, did_you_mean};
use seq_syntax::kind::JsonKind;
use seq_syntax::names::is_slot_name;
use seq_syntax::{Code, Diagnostic, Span};
use std::collections::{HashMap, HashSet};

pub(crate) fn check(cx: &Cx<'_>, reads: &Reads, out: &mut Vec<Diagnostic>) {
    let group = cx.group;
    declared_twice(group, out);
    let mut writers: HashMap<&str, Vec<Span>> = HashMap::new();
    for item in &cx.items {
        if let Some(output) = &item.item.as_slot {
            writers
                .entry(output.value.as_str())
                .or_default()
                .push(output.span);
        }
        // A caught failure writes its slot as `as` does.
        if let Some(error_as) = &item.item.error_as {
            writers
                .entry(error_as.value.as_str())
                .or_default()
                .push(error_as.span);
        }
    }
    for item in &cx.items {
        if let Some(error_as) = &item.item.error_as {
            // An `each` that broke is still an `each`: its slot holds errors element by element.
            let each = item.item.each.is_some() || item.item.hole("each");
            error_slot(
                cx,
                error_as.value.as_str(),
                error_as.span,
                each,
                &writers,
                out,
            );
        }
    }
    let mut offered_declaration = HashSet::new();
    let mut mismatched = HashSet::new();
    for item in &cx.items {
        let Some(output) = &item.item.as_slot else {
            continue;
        };
        let name = output.value.as_str();
        let Some(decl) = group.slot(name) else {
            if group.hole("out") || group.hole("local") {
                continue;
            }
            let count = writers.get(name).map_or(0, Vec::len);
            let offer = offered_declaration.insert(name);
            let ty = if count > 1 || item.item.each.is_some() {
                // Several writers, or one per element, need an `array` slot.
                Type::Array
            } else {
                result_type(cx, item.item)
            };
            out.push(undeclared_output(cx, name, output.span, ty, offer));
            continue;
        };
        // One report per declaration, however many items write the slot.
        // An `each` item writes an array of results, which `each::check` holds to the slot.
        if !mismatched.contains(name)
            && item.item.each.is_none()
            && let Some(d) = mismatch(cx, item.item, name, decl.ty.value, decl.ty.span)
        {
            mismatched.insert(name);
            out.push(d.with_label(output.span, "written here"));
        }
        if decl.ty.value == Type::Array {
            if item.item.each.is_none()
                && writers.get(name).map_or(0, Vec::len) == 1
                && returned(cx, item.item) == Some(JsonType::Array)
            {
                out.push(nested_list(name, output.span, decl.ty.span));
            }
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
        && cx
            .items
            .iter()
            .all(|i| !i.item.hole("args") && !i.item.hole("each"));
    let writes_whole = !group.hole("tools")
        && !group.hole("out")
        && cx
            .items
            .iter()
            .all(|i| !i.item.hole("as") && !i.item.hole("error_as"));
    for input in group.inputs.iter().filter(|_| reads_whole) {
        if !reads.inputs.contains(&input.name.value) {
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
    // A slot that only `error_as` writes tolerates a failure: leaving it unread is its use.
    let names = |name: &str, slot: fn(&Item) -> Option<&str>| {
        cx.items.iter().any(|i| slot(i.item) == Some(name))
    };
    let caught = |name: &str| {
        names(name, |i| i.error_as.as_ref().map(|e| e.value.as_str()))
            && !names(name, |i| i.as_slot.as_ref().map(|s| s.value.as_str()))
    };
    for local in group
        .locals
        .iter()
        .filter(|_| reads_whole && !group.hole("local"))
    {
        if !reads.slots.contains(&local.name.value)
            && group.output(&local.name.value).is_none()
            && !caught(&local.name.value)
        {
            let name = &local.name.value;
            out.push(
                Diagnostic::new(
                    Code::UnreadLocal,
                    local.name.span,
                    format!("local slot `{name}` is never read"),
                )
                .with_help(format!(
                    "read it as `$out.{name}` in a later item, move it to `out` if callers need it, or remove it"
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

/// E0560: a local's name also in `in` or `out` (or twice in `local`): an output and a local
/// would be one slot, and `$args.NAME` and `$out.NAME` two values under one name. A name in
/// both `in` and `out` stays allowed, as it was before locals.
fn declared_twice(group: &Group, out: &mut Vec<Diagnostic>) {
    if group.locals.is_empty() {
        return;
    }
    let mut first: HashMap<&str, (&str, Span)> = HashMap::new();
    for (field, slot) in group.inputs.iter().map(|s| ("in", s)) {
        first
            .entry(&slot.name.value)
            .or_insert((field, slot.name.span));
    }
    for (field, slot) in group.outputs.iter().map(|s| ("out", s)) {
        first
            .entry(&slot.name.value)
            .or_insert((field, slot.name.span));
    }
    for (field, slots) in [("local", &group.locals)] {
        for slot in slots {
            let name = slot.name.value.as_str();
            match first.get(name) {
                Some(&(earlier, at)) => out.push(
                    Diagnostic::new(
                        Code::SlotDeclaredTwice,
                        slot.name.span,
                        format!("`{name}` is declared in both `{earlier}` and `{field}`"),
                    )
                    .with_label(at, format!("declared in `{earlier}` here"))
                    .with_help(format!(
                        "a name is in at most one of `in`, `out` and `local`: rename one, or remove `{name}` from `{field}`"
                    )),
                ),
                None => {
                    first.insert(name, (field, slot.name.span));
                }
            }
        }
    }
}

/// W0512: the one writer of an `array` slot returns a list, which the slot collects as one
/// value: the list arrives as `[[...]]`, which is seldom what was meant.
fn nested_list(name: &str, written: Span, declared: Span) -> Diagnostic {
    Diagnostic::new(
        Code::ArrayIntoCollectingSlot,
        written,
        format!("this list arrives as the one element of `{name}`: `[[...]]`"),
    )
    .with_label(
        declared,
        "an `array` slot collects every value written to it",
    )
    .with_help(format!(
        "declare `{name}` as `any` to hold the list as it is; keep `array` to collect the \
         values of several writers"
    ))
    // What readers of the slot expect is the author's: `$out.{name}[0]` changes meaning.
    .with_replacement(format!("declare `{name}` as `any`"), declared, "any")
    .maybe_incorrect()
}

/// `error_as`: a declared slot that holds the error object (`object` or `any`), or for an
/// `each` item the errors of its elements (`array` or `any`), with no other writer unless it
/// collects (`array` collects, but an item's error is one object).
fn error_slot(
    cx: &Cx<'_>,
    name: &str,
    span: Span,
    each: bool,
    writers: &HashMap<&str, Vec<Span>>,
    out: &mut Vec<Diagnostic>,
) {
    let group = cx.group;
    let Some(decl) = group.slot(name) else {
        if group.hole("out") || group.hole("local") {
            return;
        }
        let d = Diagnostic::new(
            Code::ErrorAsUndeclared,
            span,
            format!(
                "`error_as` writes `{name}`, which group `{}` does not declare in `out`",
                group.name.value
            ),
        );
        let declared = group.slots().map(|s| s.name.value.as_str());
        let d = match did_you_mean(name, declared) {
            Some(best) => d
                .with_help(format!("did you mean `{best}`?"))
                .with_replacement(format!("write `{best}`"), span, fix::in_item_string(best))
                .maybe_incorrect(),
            None => {
                let d = d.with_help(format!(
                    "declare it in `out` as an object: `\"{name}\": \"object\"`"
                ));
                match fix::declare(&group.outputs, name, Type::Object) {
                    Some(edit) => {
                        d.with_fix(fix::fix(format!("declare `{name}` in `out`"), vec![edit]))
                    }
                    None => d,
                }
            }
        };
        out.push(d);
        return;
    };
    if each {
        match decl.ty.value {
            // An `array` slot collects: other writers add to it.
            Type::Array => return,
            Type::Any => {}
            Type::String | Type::Number | Type::Integer | Type::Bool | Type::Object => {
                out.push(
                    Diagnostic::new(
                        Code::ErrorAsEachSlot,
                        span,
                        format!(
                            "`error_as` of an `each` item writes an array of errors, but slot \
                             `{name}` is declared `{}`",
                            decl.ty.value.as_str()
                        ),
                    )
                    .with_label(decl.ty.span, "declared here")
                    .with_help(format!(
                        "declare `{name}` as `array`: it gets each failed element's error at \
                         its place, `null` at the others"
                    ))
                    // Readers of the slot may expect the old type.
                    .with_replacement(
                        format!("declare `{name}` as `array`"),
                        decl.ty.span,
                        "array",
                    )
                    .maybe_incorrect(),
                );
                return;
            }
        }
    } else {
        match decl.ty.value {
            Type::Object | Type::Any => {}
            Type::String | Type::Number | Type::Integer | Type::Bool | Type::Array => {
                out.push(
                Diagnostic::new(
                    Code::ErrorAsType,
                    span,
                    format!(
                        "`error_as` writes an error object to `{name}`, which is declared `{}`",
                        decl.ty.value.as_str()
                    ),
                )
                .with_label(decl.ty.span, "declared here")
                .with_help(format!(
                    "declare `{name}` as `object`: the error is `{{reason, detail, field, hint}}`"
                ))
                .with_replacement(
                    format!("declare `{name}` as `object`"),
                    decl.ty.span,
                    "object",
                )
                .maybe_incorrect(),
            );
                return;
            }
        }
    }
    if let Some(first) = writers.get(name).and_then(|w| w.first()).copied()
        && first != span
    {
        out.push(
            Diagnostic::new(
                Code::SlotWrittenTwice,
                span,
                format!("slot `{name}` is written by `error_as` and by another writer"),
            )
            .with_label(first, "first written here")
            .with_help(format!(
                "give the error a slot of its own, such as `{name}_error`"
            )),
        );
    }
}

/// The slot type that holds what `tool` returns: a call's object, else the type of the catalog's
/// result schema; `any` when the tool or its result is unknown, of several types, or a list.
fn result_type(cx: &Cx<'_>, item: &Item) -> Type {
    returned(cx, item).map_or(Type::Any, slot_type)
}

/// The JSON type of what `item`'s tool returns: a call's object, what a `jq` filter evidently
/// gives, else the type of the catalog's result schema; `None` when the tool or its result is
/// unknown, or of several types.
fn returned(cx: &Cx<'_>, item: &Item) -> Option<JsonType> {
    let tool = item.tool.value.as_str();
    if tool == seq_syntax::jq::TOOL {
        return seq_catalog::jq::item_result(item);
    }
    if Catalog::is_call(tool) {
        return Some(JsonType::Object);
    }
    cx.catalog
        .get(tool)
        .and_then(|def| def.output.as_ref())
        .and_then(|output| output.get("type"))
        .and_then(serde_json::Value::as_str)
        .and_then(JsonType::parse)
}

/// The slot type to declare for a value of JSON Schema type `ty`.
fn slot_type(ty: JsonType) -> Type {
    match ty {
        JsonType::String => Type::String,
        JsonType::Integer => Type::Integer,
        JsonType::Number => Type::Number,
        JsonType::Boolean => Type::Bool,
        JsonType::Object => Type::Object,
        // An `array` slot would wrap the one list in another (it collects every value written).
        JsonType::Array | JsonType::Null => Type::Any,
    }
}

/// Whether a slot declared `declared` can never hold a result of JSON type `returned`: the
/// engine's type check at the write would fail every time. An `array` slot collects any value;
/// a `bool` slot also takes the numbers 0 and 1 and the strings "true" and "false", and an
/// `integer` one a number without a fraction.
fn never_holds(declared: Type, returned: JsonType) -> bool {
    use JsonType as J;
    match declared {
        Type::Any | Type::Array => false,
        Type::String => returned != J::String,
        Type::Object => returned != J::Object,
        Type::Integer | Type::Number => !matches!(returned, J::Integer | J::Number),
        Type::Bool => !matches!(returned, J::Boolean | J::Integer | J::Number | J::String),
    }
}

/// E0529: the slot's declared type never holds what its writer returns (a tool with a known
/// result schema, or a call, which returns an object).
fn mismatch(cx: &Cx<'_>, item: &Item, name: &str, declared: Type, at: Span) -> Option<Diagnostic> {
    let tool = item.tool.value.as_str();
    let returned = returned(cx, item).filter(|&r| never_holds(declared, r))?;
    let schema = if Catalog::is_call(tool) {
        None
    } else {
        cx.catalog.get(tool).and_then(|d| d.output.as_ref())
    };
    // The shape only where it tells more than the kind: `{stdout, stderr, exit_code}`, `[string]`.
    let shape = match schema.map(|s| seq_catalog::result_shape(Some(s))) {
        Some(shape) if shape.starts_with(['{', '[']) => format!(" ({shape})"),
        Some(_) => String::new(),
        None if tool == seq_syntax::jq::TOOL => " (what its filter gives)".to_owned(),
        None => " (the called group's slots)".to_owned(),
    };
    let suggested = slot_type(returned);
    let field = schema.and_then(|s| field_of_type(s, declared));
    let read = match field {
        Some(field) => format!(
            " and read `$out.{name}.{field}`, which is {}",
            declared.described()
        ),
        None if returned == JsonType::Object => {
            format!(" and read the field you want, such as `$out.{name}.FIELD`")
        }
        None => String::new(),
    };
    let said = match returned {
        JsonType::Null => JsonKind::Null.described(),
        JsonType::Array => JsonKind::Array.described(),
        JsonType::String
        | JsonType::Integer
        | JsonType::Number
        | JsonType::Boolean
        | JsonType::Object => slot_type(returned).described(),
    };
    Some(
        Diagnostic::new(
            Code::SlotTypeMismatch,
            at,
            format!(
                "slot `{name}` is declared `{}`, but `{tool}` returns {said}{shape}",
                declared.as_str(),
            ),
        )
        .with_help(format!(
            "declare `{name}` as `{}`{read}; as it is, every run fails when the item writes it",
            suggested.as_str()
        ))
        // Which part of the result the author wanted is a guess: the field of the declared type.
        .with_fix(fix::fix(
            match field {
                Some(field) => format!(
                    "declare `{name}` as `{}` and read `$out.{name}.{field}`",
                    suggested.as_str()
                ),
                None => format!("declare `{name}` as `{}`", suggested.as_str()),
            },
            std::iter::once(fix::edit(at, suggested.as_str()))
                .chain(field.into_iter().flat_map(|f| whole_reads(cx, name, f)))
                .collect(),
        ))
        .maybe_incorrect(),
    )
}

/// Edits that turn the group's reads of the whole slot `name` in item arguments (`$out.name`,
/// `${out.name}`) into reads of its `field`, which holds what those reads expected.
fn whole_reads(cx: &Cx<'_>, name: &str, field: &str) -> Vec<Edit> {
    let mut found = Vec::new();
    for item in &cx.items {
        if let Some(args) = &item.item.args {
            member_references(&args.value, &mut found);
        }
    }
    found
        .into_iter()
        .filter(|r| r.root.value == Root::Out && r.slot.value == name && r.path.is_empty())
        .map(|r| {
            fix::edit(
                Span::new(r.slot.span.end, r.slot.span.end),
                format!(".{field}"),
            )
        })
        .collect()
}

/// A field of an object result schema whose values a slot of type `ty` holds: the first in the
/// schema's `required` order (`stdout` before `stderr` for `cmd_run`), else in property order.
fn field_of_type(schema: &serde_json::Value, ty: Type) -> Option<&str> {
    let properties = schema.get("properties")?.as_object()?;
    let fits = |field: &&str| {
        properties
            .get(*field)
            .and_then(|p| p.get("type"))
            .and_then(serde_json::Value::as_str)
            .and_then(JsonType::parse)
            .is_some_and(|t| slot_type(t) == ty)
    };
    let required = schema
        .get("required")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str);
    required
        .chain(properties.keys().map(String::as_str))
        .find(|field| fits(field) && is_slot_name(field))
}

fn undeclared_output(cx: &Cx<'_>, name: &str, span: Span, ty: Type, offer: bool) -> Diagnostic {
    let group = &cx.group.name.value;
    let d = Diagnostic::new(
        Code::UndeclaredOutput,
        span,
        format!("`as` writes `{name}`, which group `{group}` does not declare in `out`"),
    );
    let declared = cx.group.slots().map(|s| s.name.value.as_str());
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
