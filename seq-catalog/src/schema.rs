//! The JSON Schema subset of tool parameters: `type`, `properties`, `required`, and
//! `additionalProperties: false` to close an object. Other keywords are kept in the raw schema
//! and ignored by the checker.
//!
//! Lenient booleans: the host's `getBool` has met booleans sent as `true`, as the strings
//! `"true"`/`"false"` and as numbers, and the language makes that leniency the schema's declared
//! contract. So a `boolean` parameter accepts `true`/`false`, the strings `"true"`/`"false"` in
//! any ASCII case, and the numbers `1`/`0` (also written `1.0`/`0.0`); nothing else. The other
//! types are strict JSON Schema: an `integer` is a number without a fractional part, a `number`
//! any number, and no string ever passes for a number. The engine validates with these same
//! functions, so check time and run time cannot disagree.

use seq_syntax::ast::Type;
use serde_json::Value as Json;

/// JSON Schema's primitive types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JsonType {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
    Null,
}

impl JsonType {
    pub fn parse(name: &str) -> Option<JsonType> {
        Some(match name {
            "string" => JsonType::String,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "boolean" => JsonType::Boolean,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            "null" => JsonType::Null,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::Boolean => "boolean",
            JsonType::Array => "array",
            JsonType::Object => "object",
            JsonType::Null => "null",
        }
    }

    /// Whether `value` is accepted where this type is declared (lenient booleans, see the module
    /// comment).
    pub fn accepts(self, value: &Json) -> bool {
        match self {
            JsonType::String => value.is_string(),
            JsonType::Integer => is_integer(value),
            JsonType::Number => value.is_number(),
            JsonType::Boolean => lenient_bool(value).is_some(),
            JsonType::Array => value.is_array(),
            JsonType::Object => value.is_object(),
            JsonType::Null => value.is_null(),
        }
    }

    /// The slot type that holds exactly the values of this type.
    pub fn slot_type(self) -> Type {
        match self {
            JsonType::String => Type::String,
            JsonType::Integer => Type::Integer,
            JsonType::Number => Type::Number,
            JsonType::Boolean => Type::Bool,
            JsonType::Array => Type::Array,
            JsonType::Object => Type::Object,
            JsonType::Null => Type::Any,
        }
    }
}

fn is_integer(value: &Json) -> bool {
    match value {
        Json::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        Json::Null | Json::Bool(_) | Json::String(_) | Json::Array(_) | Json::Object(_) => false,
    }
}

/// The boolean a lenient `boolean` parameter reads from `value`, if it reads one.
pub fn lenient_bool(value: &Json) -> Option<bool> {
    match value {
        Json::Bool(b) => Some(*b),
        Json::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Json::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        Json::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            Some(_) | None => None,
        },
        Json::String(_) | Json::Null | Json::Array(_) | Json::Object(_) => None,
    }
}

/// Whether `value` fits a slot or input declared `ty`, with the same leniency for `bool`
/// as a `boolean` parameter.
pub fn type_accepts(ty: Type, value: &Json) -> bool {
    match ty {
        Type::String => JsonType::String.accepts(value),
        Type::Number => JsonType::Number.accepts(value),
        Type::Integer => JsonType::Integer.accepts(value),
        Type::Bool => JsonType::Boolean.accepts(value),
        Type::Array => JsonType::Array.accepts(value),
        Type::Object => JsonType::Object.accepts(value),
        Type::Any => true,
    }
}

/// One parameter schema (or the whole `parameters` object).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// `type`; empty means any value.
    pub types: Vec<JsonType>,
    /// `properties`, in the order written.
    pub properties: Vec<(String, Schema)>,
    pub required: Vec<String>,
    /// `false` only when the schema says `"additionalProperties": false`.
    pub additional_properties: bool,
    pub description: Option<String>,
}

impl Schema {
    /// A schema that accepts any value.
    pub fn any() -> Schema {
        Schema {
            additional_properties: true,
            ..Schema::default()
        }
    }

    pub fn of(ty: JsonType) -> Schema {
        Schema {
            types: vec![ty],
            ..Schema::any()
        }
    }

    pub fn property(&self, name: &str) -> Option<&Schema> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    pub fn is_required(&self, name: &str) -> bool {
        self.required.iter().any(|r| r == name)
    }

    /// Whether the schema's `type` accepts `value` (nested properties are not looked at).
    pub fn accepts(&self, value: &Json) -> bool {
        self.types.is_empty() || self.types.iter().any(|t| t.accepts(value))
    }

    /// `string`, `integer or null`, ... for messages.
    pub fn type_text(&self) -> String {
        match self.types.as_slice() {
            [] => "any value".to_owned(),
            types => types
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(" or "),
        }
    }

    /// The schema as JSON, for tools defined in code.
    pub fn to_json(&self) -> Json {
        let mut object = serde_json::Map::new();
        match self.types.as_slice() {
            [] => {}
            [one] => {
                object.insert("type".into(), one.as_str().into());
            }
            many => {
                object.insert(
                    "type".into(),
                    many.iter().map(|t| Json::from(t.as_str())).collect(),
                );
            }
        }
        if let Some(description) = &self.description {
            object.insert("description".into(), description.clone().into());
        }
        if !self.properties.is_empty() || self.types.contains(&JsonType::Object) {
            let properties = self
                .properties
                .iter()
                .map(|(name, schema)| (name.clone(), schema.to_json()))
                .collect();
            object.insert("properties".into(), Json::Object(properties));
        }
        if !self.required.is_empty() {
            object.insert(
                "required".into(),
                self.required
                    .iter()
                    .map(|r| Json::from(r.as_str()))
                    .collect(),
            );
        }
        if !self.additional_properties {
            object.insert("additionalProperties".into(), false.into());
        }
        Json::Object(object)
    }

    /// Run-time pre-validation of arguments: the first problem, if any. Nested
    /// objects are validated against their own `properties`.
    pub fn validate(&self, args: &Json) -> Result<(), ArgProblem> {
        self.validate_at(args)
    }

    /// The problem's `field` is relative to `value`: callers prefix it on the way out, so that
    /// valid arguments (nearly all of them) build no path.
    fn validate_at(&self, value: &Json) -> Result<(), ArgProblem> {
        if !self.accepts(value) {
            return Err(ArgProblem {
                field: String::new(),
                reason: ArgReason::Type,
                expected: self.type_text(),
            });
        }
        let Json::Object(members) = value else {
            return Ok(());
        };
        for name in &self.required {
            if members.get(name).is_none_or(Json::is_null) {
                return Err(ArgProblem {
                    field: name.clone(),
                    reason: ArgReason::Required,
                    expected: self
                        .property(name)
                        .map_or_else(|| "a value".to_owned(), Schema::type_text),
                });
            }
        }
        for (name, value) in members {
            match self.property(name) {
                // Null stands for "not given" on optional parameters.
                Some(_) if value.is_null() => {}
                Some(schema) => schema.validate_at(value).map_err(|mut problem| {
                    problem.field = join(name, &problem.field);
                    problem
                })?,
                None if !self.additional_properties => {
                    return Err(ArgProblem {
                        field: name.clone(),
                        reason: ArgReason::Unknown,
                        expected: String::new(),
                    });
                }
                None => {}
            }
        }
        Ok(())
    }
}

/// `name` followed by the path below it, if any.
/// A result schema in a few words, for a model reading a tool list: `{stdout, stderr, exit_code}`,
/// `[string]`, `string`, `null`; `any` without a schema (or past a small depth, so that a large
/// downstream schema stays short).
pub fn result_shape(schema: Option<&Json>) -> String {
    shape_at(schema, 2)
}

fn shape_at(schema: Option<&Json>, depth: usize) -> String {
    let Some(Json::Object(schema)) = schema else {
        return "any".to_owned();
    };
    let ty = match schema.get("type") {
        Some(Json::String(ty)) => ty.as_str(),
        Some(_) | None => return "any".to_owned(),
    };
    match ty {
        "object" => match schema.get("properties") {
            Some(Json::Object(properties)) if depth > 0 && !properties.is_empty() => {
                let names: Vec<&str> = properties.keys().map(String::as_str).collect();
                format!("{{{}}}", names.join(", "))
            }
            Some(_) | None => "object".to_owned(),
        },
        "array" if depth > 0 => format!("[{}]", shape_at(schema.get("items"), depth - 1)),
        other => other.to_owned(),
    }
}

fn join(name: &str, below: &str) -> String {
    if below.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{below}")
    }
}

/// What run-time pre-validation found wrong with an argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgProblem {
    /// The parameter's path, `options.depth`; empty for the arguments object itself.
    pub field: String,
    pub reason: ArgReason,
    /// The expected type, as `Schema::type_text` writes it.
    pub expected: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgReason {
    Required,
    Type,
    Unknown,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn booleans_are_lenient_and_nothing_else_is() {
        let b = JsonType::Boolean;
        for yes in [
            json!(true),
            json!("true"),
            json!("FALSE"),
            json!(1),
            json!(0.0),
        ] {
            assert!(b.accepts(&yes), "{yes}");
        }
        for no in [json!("yes"), json!(2), json!(null), json!([]), json!("1")] {
            assert!(!b.accepts(&no), "{no}");
        }
        assert!(JsonType::Integer.accepts(&json!(3.0)));
        assert!(!JsonType::Integer.accepts(&json!(3.5)));
        assert!(!JsonType::Number.accepts(&json!("3")));
        assert!(type_accepts(Type::Bool, &json!("true")));
        assert!(!type_accepts(Type::String, &json!(1)));
    }

    #[test]
    fn validate_reports_the_first_problem() {
        let schema = Schema {
            types: vec![JsonType::Object],
            properties: vec![
                ("path".into(), Schema::of(JsonType::String)),
                ("force".into(), Schema::of(JsonType::Boolean)),
            ],
            required: vec!["path".into()],
            additional_properties: false,
            description: None,
        };
        assert_eq!(
            schema.validate(&json!({"path": "a", "force": "true"})),
            Ok(())
        );
        let missing = schema.validate(&json!({"path": null})).unwrap_err();
        assert_eq!(
            (missing.field.as_str(), missing.reason),
            ("path", ArgReason::Required)
        );
        let wrong = schema.validate(&json!({"path": 1})).unwrap_err();
        assert_eq!(
            (wrong.expected.as_str(), wrong.reason),
            ("string", ArgReason::Type)
        );
        let unknown = schema
            .validate(&json!({"path": "a", "pth": 1}))
            .unwrap_err();
        assert_eq!(
            (unknown.field.as_str(), unknown.reason),
            ("pth", ArgReason::Unknown)
        );
    }

    #[test]
    fn problems_in_nested_objects_name_the_whole_path() {
        let depth = Schema {
            types: vec![JsonType::Object],
            properties: vec![("depth".into(), Schema::of(JsonType::Integer))],
            required: vec!["depth".into()],
            additional_properties: false,
            description: None,
        };
        let schema = Schema {
            types: vec![JsonType::Object],
            properties: vec![("opts".into(), depth)],
            required: Vec::new(),
            additional_properties: false,
            description: None,
        };
        let problem = |args| {
            let p = schema.validate(&args).unwrap_err();
            (p.field, p.reason)
        };
        assert_eq!(schema.validate(&json!({"opts": {"depth": 2}})), Ok(()));
        assert_eq!(
            problem(json!({"opts": {"depth": "x"}})),
            ("opts.depth".to_owned(), ArgReason::Type)
        );
        assert_eq!(
            problem(json!({"opts": {}})),
            ("opts.depth".to_owned(), ArgReason::Required)
        );
        assert_eq!(
            problem(json!({"opts": {"depth": 1, "x": 0}})),
            ("opts.x".to_owned(), ArgReason::Unknown)
        );
        assert_eq!(
            problem(json!({"opts": 3})),
            ("opts".to_owned(), ArgReason::Type)
        );
    }
}
