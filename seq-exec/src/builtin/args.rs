//! Reading a tool's arguments into Rust values, with structured errors. Hosts do not
//! rely on the engine's pre-validation: they can be called directly.

use crate::error::{Reason, ToolError};
use seq_catalog::lenient_bool;
use seq_syntax::kind::JsonKind;
use serde_json::Value;

/// The argument `name`, required (a `null` counts as absent, as in pre-validation).
pub fn required<'a>(args: &'a Value, name: &str) -> Result<&'a Value, ToolError> {
    optional(args, name)?.ok_or_else(|| {
        ToolError::new(Reason::Required, format!("`{name}` is required"))
            .with_field(name)
            .with_hint(format!("pass `{name}`"))
    })
}

/// The argument `name`, if given and not `null`.
pub fn optional<'a>(args: &'a Value, name: &str) -> Result<Option<&'a Value>, ToolError> {
    match args {
        Value::Object(members) => Ok(members.get(name).filter(|v| !v.is_null())),
        Value::Null => Ok(None),
        Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => Err(
            ToolError::new(Reason::Type, "the arguments must be a JSON object")
                .with_hint("pass the arguments as an object of named parameters"),
        ),
    }
}

pub fn string<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    let value = required(args, name)?;
    value
        .as_str()
        .ok_or_else(|| wrong_type(name, JsonKind::String.described(), value))
}

pub fn optional_string<'a>(args: &'a Value, name: &str) -> Result<Option<&'a str>, ToolError> {
    optional(args, name)?
        .map(|value| {
            value
                .as_str()
                .ok_or_else(|| wrong_type(name, JsonKind::String.described(), value))
        })
        .transpose()
}

/// A non-negative whole number (`5` and `5.0` alike, as the schema's `integer` accepts both).
pub fn whole_number(args: &Value, name: &str) -> Result<u64, ToolError> {
    let value = required(args, name)?;
    let number = value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    });
    number.ok_or_else(|| match value {
        // A number of the wrong sort: say which, as "not a number" would read as nonsense.
        Value::Number(n) => ToolError::new(
            Reason::Type,
            format!("`{name}` must be a non-negative whole number, not {n}"),
        )
        .with_field(name)
        .with_hint(format!("pass a non-negative whole number as `{name}`")),
        Value::Null | Value::Bool(_) | Value::String(_) | Value::Array(_) | Value::Object(_) => {
            wrong_type(name, "a non-negative whole number", value)
        }
    })
}

/// A lenient boolean (`true`, `"true"`, `1` alike); absent is `false`.
pub fn flag(args: &Value, name: &str) -> Result<bool, ToolError> {
    match optional(args, name)? {
        None => Ok(false),
        Some(value) => {
            lenient_bool(value).ok_or_else(|| wrong_type(name, JsonKind::Bool.described(), value))
        }
    }
}

pub fn optional_object<'a>(
    args: &'a Value,
    name: &str,
) -> Result<Option<&'a serde_json::Map<String, Value>>, ToolError> {
    optional(args, name)?
        .map(|value| {
            value
                .as_object()
                .ok_or_else(|| wrong_type(name, JsonKind::Object.described(), value))
        })
        .transpose()
}

pub fn wrong_type(name: &str, expected: &str, value: &Value) -> ToolError {
    ToolError::new(
        Reason::Type,
        format!("`{name}` must be {expected}, not {}", kind(value)),
    )
    .with_field(name)
    .with_hint(format!("pass {expected} as `{name}`"))
}

fn kind(value: &Value) -> &'static str {
    seq_syntax::kind::described(value)
}
