//! The JSON Schema of a sequence and of a group, generated from the field table, so that what a
//! model is shown (`seq_create`'s `inputSchema`) is what lowering accepts.

use super::{Field, GROUP, INPUT, ITEM, SEQUENCE, Ty};
use crate::ast::Type;
use serde_json::{Map, Value, json};

/// The schema of a sequence file's object: `name`, `description`, `groups` (of [`group`]).
pub fn sequence() -> Value {
    object(SEQUENCE)
}

/// The schema of one element of `groups`.
pub fn group() -> Value {
    object(GROUP)
}

/// The schema of one field's value, with its description and default.
pub fn property(field: &Field) -> Value {
    let mut schema = match field.ty {
        Ty::String | Ty::Slot => json!({"type": "string"}),
        Ty::Bool => json!({"type": "boolean"}),
        Ty::Int { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
        Ty::Count { min, max } => json!({"anyOf": [
            {"type": "integer", "minimum": min, "maximum": max},
            {"type": "string", "pattern": "^\\$args\\."},
        ]}),
        Ty::Number { min, max } => json!({"type": "number", "minimum": min, "maximum": max}),
        Ty::Enum(values) => json!({"type": "string", "enum": values}),
        Ty::Duration => json!({"type": "string", "pattern": DURATION_PATTERN}),
        Ty::Condition | Ty::Items => json!({"type": "string"}),
        Ty::Types => json!({
            "type": "object",
            "additionalProperties": {"type": "string", "enum": Type::NAMES},
        }),
        Ty::Inputs => json!({
            "type": "object",
            "additionalProperties": {"anyOf": [
                {"type": "string", "enum": Type::NAMES},
                object(INPUT),
            ]},
        }),
        Ty::TypeName => json!({"type": "string", "enum": Type::NAMES}),
        Ty::Any => json!({}),
        Ty::Object => json!({"type": "object"}),
        Ty::Groups => json!({"type": "array", "items": group()}),
        Ty::Elements => json!({"type": "array"}),
    };
    let description = match field.ty {
        Ty::Items => format!("{} {}", field.doc, item_grammar()),
        Ty::String
        | Ty::Bool
        | Ty::Int { .. }
        | Ty::Count { .. }
        | Ty::Number { .. }
        | Ty::Enum(_)
        | Ty::Duration
        | Ty::Condition
        | Ty::Types
        | Ty::Inputs
        | Ty::TypeName
        | Ty::Any
        | Ty::Slot
        | Ty::Object
        | Ty::Groups
        | Ty::Elements => field.doc.to_owned(),
    };
    if let Value::Object(map) = &mut schema {
        map.insert("description".to_owned(), Value::String(description));
        // The table's defaults are JSON texts; the table's tests hold each one to parse.
        if let Some(default) = field.default.and_then(|d| serde_json::from_str(d).ok()) {
            map.insert("default".to_owned(), default);
        }
    }
    schema
}

/// Whole numbers with units `h`, `m`, `s`, `ms`, largest first (lowering checks the rest: each
/// unit once, positive in total).
const DURATION_PATTERN: &str = "^([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$";

/// What an item is, from the item table: the text of `tools`'s description.
pub fn item_grammar() -> String {
    let fields: Vec<String> = ITEM
        .iter()
        .map(|f| {
            let required = if f.required { ", required" } else { "" };
            let doc = f.doc.strip_suffix('.').unwrap_or(f.doc);
            format!("`{}` ({}{required}): {doc}", f.name, f.ty.describe())
        })
        .collect();
    format!(
        "Every item, the last too, is followed by `;`, as in \
         `{{\"tool\": \"files_read\", \"args\": {{\"path\": \"a.txt\"}}, \"as\": \"text\"}};`. \
         An item's fields: {}. A value in `args` may be a bare reference such as \
         `$args.hosts[0]` (the typed value) or a string with references in it (`\"ssh \
         ${{args.host}}\"`).",
        fields.join("; ")
    )
}

fn object(fields: &[Field]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| (f.name.to_owned(), property(f)))
        .collect();
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::super::ALL;
    use super::*;

    #[test]
    fn every_field_of_the_table_is_in_the_schema_with_its_type_and_doc() {
        let group = group();
        let sequence = sequence();
        assert_eq!(sequence["properties"]["groups"]["items"], group);
        for (schema, table) in [(&sequence, SEQUENCE), (&group, GROUP)] {
            let properties = schema["properties"].as_object().unwrap();
            assert_eq!(properties.len(), table.len());
            for field in table {
                let property = &properties[field.name];
                // A count may also name an input: `anyOf` an integer and a string.
                assert!(
                    property["type"].is_string() || property["anyOf"].is_array(),
                    "{}",
                    field.name
                );
                let description = property["description"].as_str().unwrap();
                assert!(description.starts_with(field.doc), "{}", field.name);
                assert_eq!(
                    schema["required"]
                        .as_array()
                        .unwrap()
                        .contains(&json!(field.name)),
                    field.required,
                    "{}",
                    field.name
                );
                if let Ty::Enum(values) = field.ty {
                    assert_eq!(property["enum"], json!(values));
                }
            }
        }
        let tools = group["properties"]["tools"]["description"]
            .as_str()
            .unwrap();
        for field in ITEM {
            assert!(tools.contains(&format!("`{}` (", field.name)), "{tools}");
        }
    }

    #[test]
    fn every_default_is_json_and_shown() {
        for field in ALL.iter().flat_map(|t| t.iter()) {
            if let Some(default) = field.default {
                let value: Value = serde_json::from_str(default).unwrap();
                assert_eq!(property(field)["default"], value, "{}", field.name);
            }
        }
    }
}
