//! Reading catalog files: an array of `{name, description, parameters, parallel_safe}`, or
//! MCP's `tools/list` result (`{"tools": [{name, description, inputSchema, annotations}]}`, or
//! its bare array), where `annotations.readOnlyHint: true` means parallel-safe.

use super::schema::{JsonType, Schema};
use super::{ParallelSafety, ToolDef};
use seq_syntax::{Code, Diagnostic, Span};
use serde_json::{Map, Value as Json};
use std::fmt;

/// Why a catalog file (or one definition) was refused, as text; [`CatalogFile`] has the same as a
/// diagnostic with a code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogError {
    pub message: String,
    /// The bytes at fault, when the JSON itself is malformed.
    pub span: Option<Span>,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CatalogError {}

fn error(message: impl Into<String>) -> CatalogError {
    CatalogError {
        message: message.into(),
        span: None,
    }
}

/// Parses a catalog file. Every definition is validated; the first problem is the error.
pub(crate) fn load_json(text: &str) -> Result<Vec<ToolDef>, CatalogError> {
    read(text).map_err(|refusal| refusal.error)
}

/// Why a catalog file was refused, with its code and the name of the tool it is about, when
/// that tool has one.
struct Refusal {
    code: Code,
    error: CatalogError,
    tool: Option<String>,
}

fn read(text: &str) -> Result<Vec<ToolDef>, Refusal> {
    let not_a_catalog = |message: &str| Refusal {
        code: Code::CatalogInvalid,
        error: error(message),
        tool: None,
    };
    let root: Json = serde_json::from_str(text).map_err(|e| Refusal {
        code: Code::CatalogJson,
        error: CatalogError {
            message: format!("the catalog is not valid JSON: {e}"),
            span: Some(position(text, e.line(), e.column())),
        },
        tool: None,
    })?;
    let list = match &root {
        Json::Array(list) => list,
        Json::Object(object) => match object.get("tools") {
            Some(Json::Array(list)) => list,
            Some(_) => {
                return Err(not_a_catalog(
                    "`tools` must be an array of tool definitions",
                ));
            }
            None => return Err(not_a_catalog(NOT_A_CATALOG)),
        },
        Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {
            return Err(not_a_catalog(NOT_A_CATALOG));
        }
    };
    let mut tools: Vec<ToolDef> = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let named = entry.get("name").and_then(Json::as_str).map(str::to_owned);
        let tool = tool(entry).map_err(|e| Refusal {
            code: Code::CatalogInvalid,
            error: error(format!("tool #{}: {}", i + 1, e.message)),
            tool: named.clone(),
        })?;
        if tools.iter().any(|t| t.name == tool.name) {
            return Err(Refusal {
                code: Code::CatalogDuplicateTool,
                error: error(format!("tool #{}: `{}` is defined twice", i + 1, tool.name)),
                tool: named,
            });
        }
        tools.push(tool);
    }
    Ok(tools)
}

const NOT_A_CATALOG: &str = "a catalog is an array of tool definitions, or an object with a `tools` array (MCP `tools/list`)";

/// One catalog file as the checker reads it: its tools and what is wrong with it, as
/// diagnostics in the file. A file with an error gives no tools: checking against part of a
/// catalog would mislead.
#[derive(Clone, Debug, Default)]
pub struct CatalogFile {
    pub tools: Vec<ToolDef>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads a catalog file's bytes (see [`Catalog::read_file`]).
///
/// [`Catalog::read_file`]: crate::Catalog::read_file
pub(crate) fn read_file(bytes: &[u8]) -> CatalogFile {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let at = err.valid_up_to();
            let span = Span::from_range(at..(at + err.error_len().unwrap_or(1)).min(bytes.len()));
            let diagnostic =
                Diagnostic::new(Code::CatalogNotUtf8, span, "the catalog file is not UTF-8")
                    .with_help("save the catalog as UTF-8");
            return CatalogFile {
                tools: Vec::new(),
                diagnostics: vec![diagnostic],
            };
        }
    };
    match read(text) {
        Ok(tools) => CatalogFile {
            tools,
            diagnostics: Vec::new(),
        },
        Err(refusal) => {
            let span = refusal.error.span.unwrap_or_else(|| {
                // A duplicate is shown at the later definition.
                let nth = usize::from(refusal.code == Code::CatalogDuplicateTool);
                refusal
                    .tool
                    .as_deref()
                    .and_then(|name| name_span(text, name, nth))
                    .unwrap_or_else(|| first_line(text))
            });
            CatalogFile {
                tools: Vec::new(),
                diagnostics: vec![Diagnostic::new(refusal.code, span, refusal.error.message)],
            }
        }
    }
}

/// The `nth` (0-based) `"name"` string literal in the text: close enough to point at a tool's
/// definition, since serde_json's tree keeps no positions.
pub(crate) fn name_span(text: &str, name: &str, nth: usize) -> Option<Span> {
    let quoted = format!("\"{name}\"");
    let at = text.match_indices(&quoted).nth(nth)?.0;
    Some(Span::from_range(at..at + quoted.len()))
}

/// The first line, where a problem of the file as a whole is shown.
fn first_line(text: &str) -> Span {
    Span::from_range(0..text.find('\n').unwrap_or(text.len()))
}

/// The byte span of serde_json's 1-based line and column (a column of 0 means the line's end).
fn position(text: &str, line: usize, column: usize) -> Span {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let at = (start + column.saturating_sub(1)).min(text.len());
    Span::from_range(at..(at + 1).min(text.len()))
}

pub(crate) fn tool(entry: &Json) -> Result<ToolDef, CatalogError> {
    let Json::Object(object) = entry else {
        return Err(error("a tool definition must be an object"));
    };
    let name = match object.get("name") {
        Some(Json::String(name)) if !name.is_empty() => name.clone(),
        Some(_) => return Err(error("`name` must be a non-empty string")),
        None => return Err(error("a tool definition needs a `name`")),
    };
    let in_tool = |e: CatalogError| error(format!("`{name}`: {}", e.message));
    let description = match object.get("description") {
        Some(Json::String(d)) => d.clone(),
        None | Some(Json::Null) => String::new(),
        Some(_) => return Err(in_tool(error("`description` must be a string"))),
    };
    let raw = match (object.get("parameters"), object.get("inputSchema")) {
        (Some(_), Some(_)) => {
            return Err(in_tool(error(
                "give `parameters` or `inputSchema`, not both",
            )));
        }
        (Some(schema), None) | (None, Some(schema)) => schema.clone(),
        (None, None) => Json::Object(Map::new()),
    };
    let parameters = schema(&raw, "parameters").map_err(in_tool)?;
    let parallel_safe = match object.get("parallel_safe") {
        Some(Json::Bool(safe)) => *safe,
        Some(_) => return Err(in_tool(error("`parallel_safe` must be a boolean"))),
        None => read_only_hint(object).map_err(in_tool)?,
    };
    // A result schema that is not an object says nothing: the result is any value.
    let output = object
        .get("outputSchema")
        .filter(|schema| schema.is_object())
        .cloned();
    Ok(ToolDef {
        name,
        description,
        parameters,
        raw_parameters: raw,
        output,
        parallel_safe: if parallel_safe {
            ParallelSafety::Safe
        } else {
            ParallelSafety::Unsafe
        },
    })
}

/// MCP: `annotations.readOnlyHint`. Absent means not parallel-safe (the zero value is the safe
/// side).
fn read_only_hint(object: &Map<String, Json>) -> Result<bool, CatalogError> {
    match object.get("annotations") {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Object(annotations)) => match annotations.get("readOnlyHint") {
            None | Some(Json::Null) => Ok(false),
            Some(Json::Bool(hint)) => Ok(*hint),
            Some(_) => Err(error("`annotations.readOnlyHint` must be a boolean")),
        },
        Some(_) => Err(error("`annotations` must be an object")),
    }
}

fn schema(raw: &Json, at: &str) -> Result<Schema, CatalogError> {
    let Json::Object(object) = raw else {
        // JSON Schema allows `true` (anything); `false` would make the tool uncallable.
        return match raw {
            Json::Bool(true) => Ok(Schema::any()),
            Json::Null
            | Json::Bool(false)
            | Json::Number(_)
            | Json::String(_)
            | Json::Array(_)
            | Json::Object(_) => Err(error(format!("`{at}` must be a JSON Schema object"))),
        };
    };
    let types = match object.get("type") {
        None => Vec::new(),
        Some(Json::String(name)) => vec![json_type(name, at)?],
        Some(Json::Array(names)) => names
            .iter()
            .map(|n| match n {
                Json::String(name) => json_type(name, at),
                Json::Null | Json::Bool(_) | Json::Number(_) | Json::Array(_) | Json::Object(_) => {
                    Err(error(format!("`{at}.type` must list type names")))
                }
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(error(format!(
                "`{at}.type` must be a type name or a list of them"
            )));
        }
    };
    let properties = match object.get("properties") {
        None => Vec::new(),
        Some(Json::Object(properties)) => properties
            .iter()
            .map(|(name, raw)| Ok((name.clone(), schema(raw, &format!("{at}.{name}"))?)))
            .collect::<Result<_, CatalogError>>()?,
        Some(_) => return Err(error(format!("`{at}.properties` must be an object"))),
    };
    let required = match object.get("required") {
        None => Vec::new(),
        Some(Json::Array(names)) => names
            .iter()
            .map(|n| match n {
                Json::String(name) => Ok(name.clone()),
                Json::Null | Json::Bool(_) | Json::Number(_) | Json::Array(_) | Json::Object(_) => {
                    Err(error(format!("`{at}.required` must list property names")))
                }
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(error(format!("`{at}.required` must be an array of names"))),
    };
    // A schema for extra properties still allows them; only `false` closes the object.
    let additional_properties =
        !matches!(object.get("additionalProperties"), Some(Json::Bool(false)));
    let description = match object.get("description") {
        Some(Json::String(d)) => Some(d.clone()),
        Some(_) | None => None,
    };
    Ok(Schema {
        types,
        properties,
        required,
        additional_properties,
        description,
    })
}

fn json_type(name: &str, at: &str) -> Result<JsonType, CatalogError> {
    JsonType::parse(name).ok_or_else(|| {
        error(format!(
            "`{at}.type`: unknown type `{name}` (JSON Schema's types are string, integer, number, boolean, array, object and null)"
        ))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn reads_the_native_shape() {
        let tools = load_json(
            r#"[{"name": "deploy", "description": "Deploys.", "parallel_safe": true,
                 "parameters": {"type": "object", "properties": {"env": {"type": "string"},
                 "dry": {"type": ["boolean", "null"]}}, "required": ["env"],
                 "additionalProperties": false}}]"#,
        )
        .unwrap();
        let deploy = &tools[0];
        assert_eq!(deploy.name, "deploy");
        assert_eq!(deploy.parallel_safe, ParallelSafety::Safe);
        assert_eq!(deploy.parameters.required, ["env"]);
        assert!(!deploy.parameters.additional_properties);
        let dry = deploy.parameters.property("dry").unwrap();
        assert_eq!(dry.types, [JsonType::Boolean, JsonType::Null]);
        assert_eq!(deploy.raw_parameters["properties"]["env"]["type"], "string");
    }

    #[test]
    fn reads_mcp_tools_list_with_read_only_hint() {
        let text = r#"{"tools": [
            {"name": "search", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
             "annotations": {"readOnlyHint": true}},
            {"name": "write", "description": "Writes.", "inputSchema": {"type": "object"}}]}"#;
        let tools = load_json(text).unwrap();
        assert_eq!(tools[0].parallel_safe, ParallelSafety::Safe);
        assert_eq!(tools[0].description, "");
        assert!(tools[0].parameters.additional_properties);
        assert_eq!(tools[1].parallel_safe, ParallelSafety::Unsafe);
        // No `outputSchema`: the result is any value.
        assert_eq!(tools[0].output, None);
        let typed = r#"[{"name": "stat", "outputSchema": {"type": "object",
            "properties": {"size": {"type": "integer"}}}},
            {"name": "odd", "outputSchema": 3}]"#;
        let typed = load_json(typed).unwrap();
        assert_eq!(
            typed[0].output.as_ref().unwrap()["properties"]["size"]["type"],
            "integer"
        );
        // A result schema that is not a schema says nothing, and refuses nothing.
        assert_eq!(typed[1].output, None);
        // The bare array of MCP definitions is accepted too.
        let bare = r#"[{"name": "search", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false}}]"#;
        assert_eq!(
            load_json(bare).unwrap()[0].parallel_safe,
            ParallelSafety::Unsafe
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let cases = [
            ("", "not valid JSON"),
            ("[{\"name\": \"a\"},]", "not valid JSON"),
            ("42", "array of tool definitions"),
            ("{\"tools\": 1}", "`tools` must be an array"),
            ("[1]", "must be an object"),
            ("[{\"description\": \"x\"}]", "needs a `name`"),
            ("[{\"name\": \"\"}]", "non-empty string"),
            (
                "[{\"name\": \"a\", \"parallel_safe\": \"yes\"}]",
                "`parallel_safe` must be a boolean",
            ),
            (
                "[{\"name\": \"a\", \"parameters\": {\"type\": \"date\"}}]",
                "unknown type `date`",
            ),
            (
                "[{\"name\": \"a\", \"parameters\": {\"required\": \"x\"}}]",
                "array of names",
            ),
            (
                "[{\"name\": \"a\", \"parameters\": {\"properties\": {\"p\": 3}}}]",
                "`parameters.p` must be",
            ),
            ("[{\"name\": \"a\"}, {\"name\": \"a\"}]", "defined twice"),
            (
                "[{\"name\": \"a\", \"annotations\": {\"readOnlyHint\": 1}}]",
                "readOnlyHint",
            ),
        ];
        for (text, expected) in cases {
            let err = load_json(text).unwrap_err();
            assert!(err.message.contains(expected), "{text}: {}", err.message);
        }
    }

    #[test]
    fn syntax_errors_carry_a_span() {
        let text = "[\n  {\"name\": }\n]";
        let err = load_json(text).unwrap_err();
        let span = err.span.unwrap();
        assert_eq!(&text[span.range()], "}");
    }
}
