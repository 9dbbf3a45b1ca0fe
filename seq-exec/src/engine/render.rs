//! Turning an item's arguments (and a `fallback`) into the JSON a tool receives.
//!
//! A bare reference substitutes the typed value; a reference inside a string interpolates the
//! value rendered as text. Reading an unset input or slot is an error of reason
//! `required` naming the reference: a tool never receives an empty string that stands for
//! a value that does not exist.

use super::values::{self, Scope};
use crate::error::{Reason, ToolError};
use seq_syntax::ast::{Member, Template, TemplatePart, Value as Arg, ValueKind};
use seq_syntax::shell::{self, Context};
use serde_json::{Map, Value};

/// The text of a value as a model or a template reads it: strings, numbers and
/// bools as they are, arrays and objects as compact JSON, `null` as the empty string.
pub fn render_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(_) | Value::Object(_) => value.to_string(),
    }
}

/// The value of `arg` in `scope`.
pub(crate) fn value(arg: &Arg, scope: &Scope) -> Result<Value, ToolError> {
    Ok(match &arg.kind {
        ValueKind::Null => Value::Null,
        ValueKind::Bool(b) => Value::Bool(*b),
        ValueKind::Number(n) => Value::Number(n.clone()),
        ValueKind::String(template) => Value::String(template_text(template, scope)?),
        ValueKind::Ref(reference) => values::read(scope, reference)?
            .ok_or_else(|| values::unset(reference))?
            .clone(),
        ValueKind::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| value(item, scope))
                .collect::<Result<_, _>>()?,
        ),
        ValueKind::Object(members) => Value::Object(object(members, scope, None)?),
    })
}

/// The members as an object, leaving out the member named `skip`.
pub(crate) fn object(
    members: &[Member],
    scope: &Scope,
    skip: Option<&str>,
) -> Result<Map<String, Value>, ToolError> {
    let mut out = Map::new();
    for member in members {
        if skip == Some(member.key.value.as_str()) {
            continue;
        }
        out.insert(member.key.value.to_string(), value(&member.value, scope)?);
    }
    Ok(out)
}

fn template_text(template: &Template, scope: &Scope) -> Result<String, ToolError> {
    let mut text = String::new();
    for part in &template.parts {
        match part {
            TemplatePart::Text(t) => text.push_str(t),
            TemplatePart::Ref(reference) => {
                let value =
                    values::read(scope, reference)?.ok_or_else(|| values::unset(reference))?;
                text.push_str(&render_text(value));
            }
        }
    }
    Ok(text)
}

/// `cmd_run`'s `command` (docs/reference.md, "Shell text"): each interpolated value escaped for
/// the quoting context it lands in, so that it reaches the shell as literal text. A bare
/// reference is one word. Any other kind of value renders as usual (the tool refuses it).
pub(crate) fn shell_command(arg: &Arg, scope: &Scope) -> Result<Value, ToolError> {
    let template = match &arg.kind {
        ValueKind::String(template) => template,
        ValueKind::Ref(reference) => {
            let value = values::read(scope, reference)?.ok_or_else(|| values::unset(reference))?;
            return Ok(Value::String(shell::escape(
                &render_text(value),
                Context::Word,
            )));
        }
        ValueKind::Null
        | ValueKind::Bool(_)
        | ValueKind::Number(_)
        | ValueKind::Array(_)
        | ValueKind::Object(_) => return value(arg, scope),
    };
    let contexts = shell::contexts(&template.parts).map_err(|problem| {
        ToolError::new(
            Reason::ArgError,
            format!("`command` cannot take values safely: {problem:?}"),
        )
        .with_field("command")
        .with_hint("run `seqc check`: it explains the shell text it cannot follow")
    })?;
    let mut contexts = contexts.into_iter();
    let mut text = String::new();
    for part in &template.parts {
        match part {
            TemplatePart::Text(t) => text.push_str(t),
            TemplatePart::Ref(reference) => {
                let value =
                    values::read(scope, reference)?.ok_or_else(|| values::unset(reference))?;
                let context = contexts.next().unwrap_or(Context::Word);
                shell::escape_into(&mut text, &render_text(value), context);
            }
        }
    }
    Ok(Value::String(text))
}
