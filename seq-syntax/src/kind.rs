//! How messages name the kinds of JSON value and the types of slots: one wording everywhere
//! (`a boolean`, never `a bool` in one message and `a boolean` in the next).

use crate::ast::Type;
use serde_json::Value;

/// The kind of a JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonKind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl JsonKind {
    pub fn of(value: &Value) -> JsonKind {
        match value {
            Value::Null => JsonKind::Null,
            Value::Bool(_) => JsonKind::Bool,
            Value::Number(_) => JsonKind::Number,
            Value::String(_) => JsonKind::String,
            Value::Array(_) => JsonKind::Array,
            Value::Object(_) => JsonKind::Object,
        }
    }

    /// `a string`, `null`, `an array`: as a message says it.
    pub fn described(self) -> &'static str {
        match self {
            JsonKind::Null => "null",
            JsonKind::Bool => "a boolean",
            JsonKind::Number => "a number",
            JsonKind::String => "a string",
            JsonKind::Array => "an array",
            JsonKind::Object => "an object",
        }
    }
}

/// The kind of `value` as a message says it.
pub fn described(value: &Value) -> &'static str {
    JsonKind::of(value).described()
}

impl Type {
    /// `a string`, `an integer`, `any value`: a value of this type as a message says it.
    pub fn described(self) -> &'static str {
        match self {
            Type::String => JsonKind::String.described(),
            Type::Number => JsonKind::Number.described(),
            Type::Integer => "an integer",
            Type::Bool => JsonKind::Bool.described(),
            Type::Array => JsonKind::Array.described(),
            Type::Object => JsonKind::Object.described(),
            Type::Any => "any value",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_and_a_value_of_it_are_said_alike() {
        let values = [
            (Type::String, serde_json::json!("x")),
            (Type::Number, serde_json::json!(1.5)),
            (Type::Bool, serde_json::json!(true)),
            (Type::Array, serde_json::json!([])),
            (Type::Object, serde_json::json!({})),
        ];
        for (ty, value) in values {
            assert_eq!(ty.described(), described(&value), "{ty:?}");
        }
    }
}
