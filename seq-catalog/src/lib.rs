//! The tool vocabulary that the checker and the engine share: what a tool is (its definition,
//! argument schema, result shape and parallel safety), the built-in tools and the six `seq_*`
//! tools (defined once, here), catalog files that add other hosts' tools, the language of the
//! `jq` tool's filters ([`jq`]), and which groups and sequences a `seq_call` item calls
//! ([`calls`]). A tool that no catalog knows is only a warning: existence is a run-time property.
//!
//! [`Catalog::builtin`] holds the embedded host's tools and the `seq_*` tools; catalog files
//! ([`Catalog::load_json`]) add the tools of other hosts.

mod builtin;
pub mod calls;
pub mod jq;
mod load;
mod schema;

pub use builtin::{
    CMD_RUN, CMD_RUN_GUIDE, ECHO, FILE_WRITES, FILES_DELETE, FILES_LIST, FILES_MOVE, FILES_READ,
    FILES_STAT, FILES_WRITE, GUIDE_EXAMPLE, GUIDE_JQ, HOST_TOOLS, JQ, OUTPUT_SEND_PREFIX,
    OUTPUT_STDOUT, SEQ_CALL, SEQ_CREATE, SEQ_DELETE, SEQ_LIST, SEQ_RUN, SEQ_TOOLS, SEQ_WHEN_CALL,
    SLEEP, is_output_send,
};
pub use load::{CatalogError, CatalogFile};
pub use schema::{
    ArgProblem, ArgReason, JsonType, Schema, lenient_bool, result_shape, type_accepts,
};

use seq_syntax::{Code, Diagnostic, Span};
use std::collections::{BTreeMap, BTreeSet};

/// Whether a tool may run concurrently with others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParallelSafety {
    Safe,
    /// The zero value: whatever is not declared safe.
    Unsafe,
    /// `seq_call`, `seq_when_call`: safe only if everything the target can reach is,
    /// which the call graph works out.
    ThroughTarget,
}

/// One tool's definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// The parameters as the checker reads them.
    pub parameters: Schema,
    /// The parameters as written, every keyword kept (for listing tools to a model).
    pub raw_parameters: serde_json::Value,
    /// The JSON Schema of the tool's result (MCP's `outputSchema`); `None`: any value.
    pub output: Option<serde_json::Value>,
    pub parallel_safe: ParallelSafety,
}

/// Tool definitions by name: the built-in ones plus any loaded from catalog files.
#[derive(Clone, Debug)]
pub struct Catalog {
    tools: BTreeMap<String, ToolDef>,
    /// Tools known (their items are checked as ever) that the host turned off: a hint that
    /// names the tools one may use names only the others.
    off: BTreeSet<String>,
}

/// The built-in catalog: its tools are in every catalog.
impl Default for Catalog {
    fn default() -> Catalog {
        Catalog::builtin()
    }
}

impl Catalog {
    /// A catalog with no tools at all, not even the `seq_*` ones (for tests of the checker
    /// itself; every real catalog starts from [`Catalog::builtin`]).
    pub fn empty() -> Catalog {
        Catalog {
            tools: BTreeMap::new(),
            off: BTreeSet::new(),
        }
    }

    /// The embedded host's tools and the six `seq_*` tools.
    pub fn builtin() -> Catalog {
        let mut catalog = Catalog::empty();
        for tool in builtin::tools() {
            catalog.tools.insert(tool.name.clone(), tool);
        }
        catalog
    }

    /// Reads a catalog file: an array of `{name, description, parameters, parallel_safe}`,
    /// or MCP's `tools/list` result (`{"tools": [...]}` or its bare array, with `inputSchema`
    /// and `annotations.readOnlyHint` meaning parallel-safe). Add the result with [`merge`].
    ///
    /// ```
    /// use seq_catalog::{Catalog, ParallelSafety};
    ///
    /// let mut catalog = Catalog::builtin();
    /// let tools = Catalog::load_json(
    ///     r#"{"tools": [{"name": "search", "inputSchema": {"type": "object"},
    ///                    "annotations": {"readOnlyHint": true}}]}"#,
    /// )?;
    /// catalog.merge(tools);
    /// assert_eq!(catalog.parallel_safety("search"), Some(ParallelSafety::Safe));
    /// assert!(Catalog::load_json("[{\"name\": 1}]").is_err());
    /// # Ok::<(), seq_catalog::CatalogError>(())
    /// ```
    ///
    /// [`merge`]: Catalog::merge
    pub fn load_json(text: &str) -> Result<Vec<ToolDef>, CatalogError> {
        load::load_json(text)
    }

    /// Reads a catalog file's bytes as [`load_json`] does, its problems as diagnostics in the
    /// file (E0801–E0804). The one reader of catalog files for the command line and the
    /// language server; pure, so the caller reads the file and renders what comes back.
    ///
    /// ```
    /// use seq_catalog::Catalog;
    /// use seq_syntax::Code;
    ///
    /// let file = Catalog::read_file(b"[{\"name\": \"deploy\"}, {\"name\": \"deploy\"}]");
    /// assert!(file.tools.is_empty());
    /// assert_eq!(file.diagnostics[0].code, Code::CatalogDuplicateTool);
    /// assert_eq!(file.diagnostics[0].span.start, 30);
    /// ```
    ///
    /// [`load_json`]: Catalog::load_json
    pub fn read_file(bytes: &[u8]) -> CatalogFile {
        load::read_file(bytes)
    }

    /// Reads a catalog file ([`read_file`]) and merges its tools ([`merge`]): what comes back is
    /// the file's problems plus a warning (W0801) at each `seq_*` definition that was kept out.
    /// A file with an error adds nothing.
    ///
    /// [`read_file`]: Catalog::read_file
    /// [`merge`]: Catalog::merge
    pub fn load_file(&mut self, bytes: &[u8]) -> Vec<Diagnostic> {
        let CatalogFile {
            tools,
            mut diagnostics,
        } = load::read_file(bytes);
        let text = String::from_utf8_lossy(bytes);
        let whole = Span::from_range(0..text.find('\n').unwrap_or(text.len()));
        for name in self.merge(tools) {
            let span = load::name_span(&text, &name, 0).unwrap_or(whole);
            diagnostics.push(
                Diagnostic::new(
                    Code::CatalogRedefinesSeqTool,
                    span,
                    format!("`{name}` is a built-in tool; the built-in definition is kept and this one ignored"),
                )
                .with_help(format!("remove `{name}` from the catalog")),
            );
        }
        diagnostics
    }

    /// Reads one tool definition already parsed as JSON, in either shape of [`load_json`] (a live
    /// MCP `tools/list` entry, say).
    ///
    /// [`load_json`]: Catalog::load_json
    pub fn load_tool(entry: &serde_json::Value) -> Result<ToolDef, CatalogError> {
        load::tool(entry)
    }

    /// Adds `tools`; a definition replaces an earlier one of the same name, except that the
    /// `seq_*` tools of the built-in catalog are never replaced (a host's own `tools/list`
    /// includes them, and the checker's rules depend on their meaning). Returns the names that
    /// were kept out that way.
    pub fn merge(&mut self, tools: impl IntoIterator<Item = ToolDef>) -> Vec<String> {
        let mut kept_out = Vec::new();
        for tool in tools {
            if SEQ_TOOLS.contains(&tool.name.as_str()) && self.tools.contains_key(&tool.name) {
                kept_out.push(tool.name);
                continue;
            }
            self.tools.insert(tool.name.clone(), tool);
        }
        kept_out
    }

    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.tools.get(name)
    }

    /// The tools, by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolDef> {
        self.tools.values()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Marks `name` as turned off where the sequences will run: still known and checked, but
    /// left out of [`Catalog::offered`].
    pub fn turn_off(&mut self, name: impl Into<String>) {
        self.off.insert(name.into());
    }

    /// The names of the tools one may use here, by name: those not turned off.
    pub fn offered(&self) -> impl Iterator<Item = &str> {
        self.names().filter(|name| !self.off.contains(*name))
    }

    /// The declared parallel safety of `name`; `None` for a tool no catalog knows.
    pub fn parallel_safety(&self, name: &str) -> Option<ParallelSafety> {
        self.get(name).map(|t| t.parallel_safe)
    }

    /// Whether `name` is a tool that calls a group (`seq_call`, `seq_when_call`).
    pub fn is_call(name: &str) -> bool {
        name == SEQ_CALL || name == SEQ_WHEN_CALL
    }
}

/// Whether `name` may run in a parallel group on its own account: `Some(true)` for a safe tool,
/// `Some(false)` for one that is not, `None` when the catalog cannot say (an unknown tool, or a
/// call whose safety depends on its target).
pub fn is_parallel_safe_tool(catalog: &Catalog, name: &str) -> Option<bool> {
    match catalog.parallel_safety(name)? {
        ParallelSafety::Safe => Some(true),
        ParallelSafety::Unsafe => Some(false),
        ParallelSafety::ThroughTarget => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn builtin_flags_follow_the_reference() {
        let catalog = Catalog::builtin();
        for safe in [
            "cmd_run",
            "echo",
            "jq",
            "sleep",
            "files_read",
            "files_list",
            "output_send__stdout",
            "seq_list",
        ] {
            assert_eq!(is_parallel_safe_tool(&catalog, safe), Some(true), "{safe}");
        }
        for unsafe_ in ["files_write", "seq_create", "seq_delete", "seq_run"] {
            assert_eq!(
                is_parallel_safe_tool(&catalog, unsafe_),
                Some(false),
                "{unsafe_}"
            );
        }
        for call in [SEQ_CALL, SEQ_WHEN_CALL] {
            assert_eq!(
                catalog.parallel_safety(call),
                Some(ParallelSafety::ThroughTarget)
            );
            assert!(Catalog::is_call(call));
        }
        assert_eq!(is_parallel_safe_tool(&catalog, "nope"), None);
        let cmd = catalog.get("cmd_run").unwrap();
        // Exactly one of `command` and `argv`: the shell rule checks that, the schema cannot.
        assert!(cmd.parameters.required.is_empty());
        assert_eq!(cmd.raw_parameters["properties"]["argv"]["type"], "array");
        assert_eq!(
            cmd.raw_parameters["properties"]["timeout"]["type"],
            "string"
        );
        let call = catalog.get(SEQ_WHEN_CALL).unwrap();
        assert_eq!(call.parameters.required, ["target", "when"]);
        assert!(!call.parameters.additional_properties);
    }

    #[test]
    fn seq_create_shows_the_language_in_brief_and_every_tool_its_result() {
        let catalog = Catalog::builtin();
        let create = catalog.get(SEQ_CREATE).unwrap();
        // A guide a model reads whole, before the tool list the server appends (the whole
        // tools/list stays under 32 KB: tests/mcp.rs).
        assert!(
            create.description.len() <= 4200,
            "{}",
            create.description.len()
        );
        assert!(create.description.contains(GUIDE_EXAMPLE));
        assert!(create.description.contains(GUIDE_JQ));
        assert_eq!(
            create.raw_parameters["properties"]["groups"]["items"],
            seq_syntax::fields::schema::group()
        );
        for tool in catalog
            .tools()
            .filter(|t| t.name != "echo" && t.name != seq_syntax::jq::TOOL)
        {
            assert!(tool.output.is_some(), "{}", tool.name);
        }
        assert_eq!(
            result_shape(catalog.get("cmd_run").unwrap().output.as_ref()),
            "{exit_code, stderr, stdout}"
        );
        assert_eq!(result_shape(None), "any");
    }

    #[test]
    fn merge_replaces_host_tools_but_not_seq_tools() {
        let mut catalog = Catalog::builtin();
        let loaded = Catalog::load_json(
            r#"[{"name": "cmd_run", "parallel_safe": false},
                {"name": "seq_call", "parallel_safe": true},
                {"name": "deploy"}]"#,
        )
        .unwrap();
        assert_eq!(catalog.merge(loaded), ["seq_call"]);
        assert_eq!(
            catalog.parallel_safety("cmd_run"),
            Some(ParallelSafety::Unsafe)
        );
        assert_eq!(
            catalog.parallel_safety(SEQ_CALL),
            Some(ParallelSafety::ThroughTarget)
        );
        assert!(catalog.get("deploy").is_some());
    }
}
