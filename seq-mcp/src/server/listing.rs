//! How the seq tools are listed: each tool with its description for this caller (`seq_create`'s
//! ending with the tools a sequence may use here, `seq_run`'s with those a run can reach), its
//! schemas and its annotations.

use super::SeqServer;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use seq_catalog::{
    CMD_RUN, CMD_RUN_GUIDE, SEQ_CALL, SEQ_CREATE, SEQ_DELETE, SEQ_LIST, SEQ_RUN, SEQ_WHEN_CALL,
    result_shape,
};
use seq_catalog::{Catalog, ParallelSafety, ToolDef};
use seq_exec::Caller;
use std::sync::Arc;

impl SeqServer {
    pub(super) fn tool(&self, def: ToolDef, caller: &Caller) -> Tool {
        let mut description = def.description.clone();
        if def.name == SEQ_CREATE {
            // `cmd_run` is taught only where a sequence may use it.
            if self.authorizer().allows(caller, CMD_RUN)
                && (self.downstream)().iter().any(|d| d.name == CMD_RUN)
            {
                description.push_str(CMD_RUN_GUIDE);
            }
            description.push_str(&self.available(caller));
        } else if def.name == SEQ_RUN {
            description.push_str(&self.reachable(caller));
        }
        // The seq tools' schemas are objects (`Schema::to_json`).
        let schema: JsonObject = def.raw_parameters.as_object().cloned().unwrap_or_default();
        let tool = Tool::new(def.name.clone(), description, schema)
            .with_annotations(annotations(&def.name));
        // What `seq_run` answers is the report: its schema is derived from the report's types.
        match crate::answer::output_schema(&def.name, def.output.as_ref()) {
            Some(output) => tool.with_raw_output_schema(Arc::new(output)),
            None => tool,
        }
    }

    /// " Tools available to sequences here: ..." for `seq_create`'s description.
    fn available(&self, caller: &Caller) -> String {
        let mut tools: Vec<ToolDef> = (self.downstream)()
            .into_iter()
            .filter(|def| self.authorizer().allows(caller, &def.name))
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        // The calls are items too, with a parallel safety of their own.
        tools.extend(
            seq_service::definitions()
                .into_iter()
                .filter(|def| Catalog::is_call(&def.name))
                .filter(|def| self.authorizer().allows(caller, &def.name)),
        );
        let listed: Vec<String> = tools.iter().map(signature).collect();
        let mut text = format!(
            "\nTools available to sequences here (`name {{parameters}} -> result`, `?` marking an optional parameter; `parallel-safe` ones may share a parallel group): {}.",
            listed.join("; ")
        );
        if text.len() > MAX_AVAILABLE_BYTES {
            // Without summaries, every tool still fits.
            let short: Vec<String> = tools.iter().map(signature_only).collect();
            text = format!(
                "\nTools available to sequences here (`name {{parameters}} -> result`): {}.",
                short.join("; ")
            );
        }
        text
    }

    /// " A run here can reach: ..." for `seq_run`'s description: the names only, since
    /// `seq_create`'s description gives their parameters.
    fn reachable(&self, caller: &Caller) -> String {
        let mut names: Vec<String> = (self.downstream)()
            .into_iter()
            .filter(|def| self.authorizer().allows(caller, &def.name))
            .map(|def| format!("`{}`", def.name))
            .collect();
        names.sort();
        if names.is_empty() {
            return " A run here can reach no tools besides the seq_* ones.".to_owned();
        }
        format!(
            " A run here can reach these tools (any other is refused as unauthorized): {}.",
            names.join(", ")
        )
    }
}

/// How long the tool list in `seq_create`'s description may grow with summaries.
const MAX_AVAILABLE_BYTES: usize = 8 * 1024;

/// Longest summary of a tool's description, in characters.
const MAX_SUMMARY_CHARS: usize = 320;

/// A tool's signature with the first sentence of its description.
fn signature(def: &ToolDef) -> String {
    let summary = first_sentence(&def.description);
    if summary.is_empty() {
        signature_only(def)
    } else {
        format!("{} ({summary})", signature_only(def))
    }
}

/// The first sentence of a description, bounded.
fn first_sentence(description: &str) -> String {
    let line = description.lines().next().unwrap_or("").trim();
    let end = line
        .match_indices(". ")
        .map(|(i, _)| i + 1)
        .next()
        .unwrap_or(line.len());
    let sentence = line.get(..end).unwrap_or(line).trim_end_matches('.');
    if sentence.chars().count() <= MAX_SUMMARY_CHARS {
        return sentence.to_owned();
    }
    // Too long: cut at the last clause (or, failing one, word) that fits, never inside a word.
    let bound = sentence
        .char_indices()
        .nth(MAX_SUMMARY_CHARS)
        .map_or(sentence.len(), |(i, _)| i);
    let head = &sentence[..bound];
    let cut = head
        .rfind("; ")
        .or_else(|| head.rfind(", "))
        .or_else(|| head.rfind(' '))
        .unwrap_or(bound);
    format!("{} …", head[..cut].trim_end_matches([',', ';', ':']))
}

/// `name {a, b?} -> result` and whether it is parallel-safe.
fn signature_only(def: &ToolDef) -> String {
    let params: Vec<String> = def
        .parameters
        .properties
        .iter()
        .map(|(name, _)| {
            if def.parameters.required.contains(name) {
                name.clone()
            } else {
                format!("{name}?")
            }
        })
        .collect();
    let safety = match def.parallel_safe {
        ParallelSafety::Safe => ", parallel-safe",
        ParallelSafety::Unsafe => "",
        ParallelSafety::ThroughTarget => {
            ", as parallel-safe as all it reaches; reaching a tool that is not, the item needs \
             `\"unsafe_serial\": true` in a `parallel: false` group"
        }
    };
    format!(
        "`{}` {{{}}} -> {}{safety}",
        def.name,
        params.join(", "),
        result_shape(def.output.as_ref())
    )
}

/// What each seq tool does to the world, as MCP's hints say it.
pub fn annotations(name: &str) -> ToolAnnotations {
    let (title, read_only, destructive, idempotent, open_world) = match name {
        SEQ_LIST => ("List stored sequences", true, false, true, false),
        // `replace: true` overwrites a stored sequence; the same call twice stores the same.
        SEQ_CREATE => ("Check and store a sequence", false, true, true, false),
        SEQ_DELETE => ("Delete a stored sequence", false, true, true, false),
        // A run reaches whatever tools the sequence calls, here and on downstream servers.
        SEQ_RUN => ("Run a stored sequence", false, true, false, true),
        SEQ_CALL => ("Call a stored sequence", false, true, false, true),
        SEQ_WHEN_CALL => (
            "Call a stored sequence if a condition holds",
            false,
            true,
            false,
            true,
        ),
        // Not a seq tool: say nothing beyond the defaults.
        other => return ToolAnnotations::with_title(other),
    };
    ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(open_world)
}
