//! Whole items as LSP snippets: `{"tool":"NAME","args":{"p":"${1:p}"}} ;` with a tab stop per
//! required argument, escaped for the `tools` string and then for snippet syntax.

use super::super::text::escape_depth;
use seq_catalog::JsonType;
use seq_catalog::ToolDef;

/// The item calling `tool`, for text `depth` strings deep (the `tools` string: 1).
pub(super) fn item(tool: &ToolDef, depth: u8) -> String {
    let mut out = Snippet {
        text: String::new(),
        depth,
    };
    out.literal(&format!("{{\"tool\":{}", json_string(&tool.name)));
    let schema = &tool.parameters;
    let required: Vec<_> = schema
        .properties
        .iter()
        .filter(|(name, _)| schema.is_required(name))
        .collect();
    if !required.is_empty() {
        out.literal(",\"args\":{");
        for (i, (name, param)) in required.iter().enumerate() {
            if i > 0 {
                out.literal(",");
            }
            out.literal(&format!("{}:", json_string(name)));
            let stop = i + 1;
            match param.types.first() {
                Some(JsonType::String) => {
                    out.literal("\"");
                    out.stop(stop, name, depth + 1);
                    out.literal("\"");
                }
                Some(JsonType::Integer | JsonType::Number) => out.stop(stop, "0", depth),
                Some(JsonType::Boolean) => out.stop(stop, "true", depth),
                Some(JsonType::Object) => out.stop(stop, "{}", depth),
                Some(JsonType::Array) => out.stop(stop, "[]", depth),
                Some(JsonType::Null) | None => out.stop(stop, "null", depth),
            }
        }
        out.literal("}");
    }
    out.literal("} ;");
    out.text
}

fn json_string(text: &str) -> String {
    format!("\"{}\"", escape_depth(text, 1))
}

struct Snippet {
    text: String,
    depth: u8,
}

impl Snippet {
    /// Item-level JSON text, escaped for the enclosing strings and for snippet syntax.
    fn literal(&mut self, json: &str) {
        self.text
            .push_str(&snippet_escape(&escape_depth(json, self.depth)));
    }

    /// A tab stop whose placeholder is `default`, written `depth` strings deep.
    fn stop(&mut self, n: usize, default: &str, depth: u8) {
        let default = snippet_escape(&escape_depth(default, depth));
        self.text.push_str(&format!("${{{n}:{default}}}"));
    }
}

/// LSP snippet syntax gives `$`, `}` and `\` a meaning; a backslash escapes them.
fn snippet_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '$' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use seq_catalog::Catalog;

    #[test]
    fn items_are_escaped_for_the_tools_string_and_for_snippets() {
        let catalog = Catalog::builtin();
        let cmd = catalog.get("cmd_run").map(|t| item(t, 1));
        // `command` and `argv` are alternatives, neither required by the schema.
        assert_eq!(cmd.as_deref(), Some(r#"{\\"tool\\":\\"cmd_run\\"\} ;"#));
        let echo = catalog.get("echo").map(|t| item(t, 1));
        assert_eq!(
            echo.as_deref(),
            Some(r#"{\\"tool\\":\\"echo\\",\\"args\\":{\\"value\\":${1:null}\}\} ;"#)
        );
        let list = catalog.get("seq_list").map(|t| item(t, 1));
        assert_eq!(list.as_deref(), Some(r#"{\\"tool\\":\\"seq_list\\"\} ;"#));
    }
}
