//! Static types: what the checker knows of a value's type before running it.

use super::Cx;
use seq_catalog::{JsonType, Schema};
use seq_syntax::Span;
use seq_syntax::ast::{Member, Reference, Root, SlotDecl, Type, Value, ValueKind};

/// The declaration a reference reads, if it is declared.
pub(crate) fn declaration<'a>(cx: &Cx<'a>, reference: &Reference) -> Option<&'a SlotDecl> {
    match reference.root.value {
        Root::Args => cx.group.input(&reference.slot.value),
        Root::Out => cx.group.slot(&reference.slot.value),
        // An element has no declaration: its type is the array's, unknown here.
        Root::Each | Root::EachIndex => None,
    }
}

/// The static type of a reference: its slot's declared type when it reads the whole slot; `any`
/// when it reaches inside (fields of an `object` are not typed) or reads an undeclared slot.
pub(crate) fn reference_type(cx: &Cx<'_>, reference: &Reference) -> Option<(Type, Span)> {
    if !reference.path.is_empty() {
        return None;
    }
    if reference.root.value == Root::EachIndex {
        return Some((Type::Integer, reference.root.span));
    }
    let decl = declaration(cx, reference)?;
    match decl.ty.value {
        Type::Any => None,
        Type::String | Type::Number | Type::Integer | Type::Bool | Type::Array | Type::Object => {
            Some((decl.ty.value, decl.ty.span))
        }
    }
}

/// Whether a slot of type `slot` may be passed where `schema` is declared. Declared types are
/// the author's contract, so they must match (an `integer` slot passes for a `number`, not the
/// reverse); the boolean leniency is for literal values only.
pub(crate) fn slot_fits(slot: Type, schema: &Schema) -> bool {
    if schema.types.is_empty() {
        return true;
    }
    let fits = |t: JsonType| schema.types.contains(&t);
    match slot {
        Type::Any => true,
        Type::String => fits(JsonType::String),
        Type::Number => fits(JsonType::Number),
        Type::Integer => fits(JsonType::Integer) || fits(JsonType::Number),
        Type::Bool => fits(JsonType::Boolean),
        Type::Array => fits(JsonType::Array),
        Type::Object => fits(JsonType::Object),
    }
}

/// The schema a group input of type `ty` amounts to, to check call arguments like parameters.
pub(crate) fn input_schema(ty: Type) -> Schema {
    match ty {
        Type::Any => Schema::any(),
        Type::String => Schema::of(JsonType::String),
        Type::Number => Schema::of(JsonType::Number),
        Type::Integer => Schema::of(JsonType::Integer),
        Type::Bool => Schema::of(JsonType::Boolean),
        Type::Array => Schema::of(JsonType::Array),
        Type::Object => Schema::of(JsonType::Object),
    }
}

/// The value as JSON when it holds no reference at all.
pub(crate) fn literal(value: &Value) -> Option<serde_json::Value> {
    Some(match &value.kind {
        ValueKind::Null => serde_json::Value::Null,
        ValueKind::Bool(b) => serde_json::Value::Bool(*b),
        ValueKind::Number(n) => serde_json::Value::Number(n.clone()),
        ValueKind::String(template) => serde_json::Value::from(template.as_literal()?),
        ValueKind::Ref(_) => return None,
        ValueKind::Array(values) => values.iter().map(literal).collect::<Option<_>>()?,
        ValueKind::Object(members) => serde_json::Value::Object(
            members
                .iter()
                .map(|m| Some((m.key.value.to_string(), literal(&m.value)?)))
                .collect::<Option<_>>()?,
        ),
    })
}

/// A short rendering of a value for messages.
pub(crate) fn describe(value: &Value) -> String {
    match &value.kind {
        ValueKind::Null => "null".to_owned(),
        ValueKind::Bool(b) => b.to_string(),
        ValueKind::Number(n) => n.to_string(),
        ValueKind::String(template) => match template.as_literal() {
            Some(text) => shorten(&serde_json::Value::from(text).to_string()),
            None => "a string with references".to_owned(),
        },
        ValueKind::Ref(reference) => format!("`{}`", super::fix::reference_text(reference)),
        ValueKind::Array(_) => "an array".to_owned(),
        ValueKind::Object(_) => "an object".to_owned(),
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

/// Every reference inside a value, in order.
pub(crate) fn references<'v>(value: &'v Value, out: &mut Vec<&'v Reference>) {
    match &value.kind {
        ValueKind::Null | ValueKind::Bool(_) | ValueKind::Number(_) => {}
        ValueKind::String(template) => out.extend(template.references()),
        ValueKind::Ref(reference) => out.push(reference),
        ValueKind::Array(values) => values.iter().for_each(|v| references(v, out)),
        ValueKind::Object(members) => members.iter().for_each(|m| references(&m.value, out)),
    }
}

pub(crate) fn member_references<'v>(members: &'v [Member], out: &mut Vec<&'v Reference>) {
    for member in members {
        references(&member.value, out);
    }
}
