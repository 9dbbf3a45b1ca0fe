//! The tools every catalog holds (D-9): the embedded host's tools and the six `seq_*` tools.
//! These are the only definitions of them; the engine implements exactly these signatures.

use super::schema::{JsonType, Schema};
use super::{ParallelSafety, ToolDef};

/// `seq_call`: calls a group of this sequence, or `#sequence`.
pub const SEQ_CALL: &str = "seq_call";
/// `seq_when_call`: `seq_call` guarded by its own condition (design §8.4).
pub const SEQ_WHEN_CALL: &str = "seq_when_call";
/// `seq_run`: runs a stored sequence by name.
pub const SEQ_RUN: &str = "seq_run";

/// The names a catalog file can never redefine: the checker gives them meaning of its own.
pub const SEQ_TOOLS: [&str; 6] = [
    "seq_create",
    "seq_list",
    "seq_delete",
    SEQ_RUN,
    SEQ_CALL,
    SEQ_WHEN_CALL,
];

struct Param {
    name: &'static str,
    ty: Option<JsonType>,
    required: bool,
    description: &'static str,
}

const fn req(name: &'static str, ty: Option<JsonType>, description: &'static str) -> Param {
    Param {
        name,
        ty,
        required: true,
        description,
    }
}

const fn opt(name: &'static str, ty: Option<JsonType>, description: &'static str) -> Param {
    Param {
        name,
        ty,
        required: false,
        description,
    }
}

/// `closed`: unknown parameters are refused (the `seq_*` tools, whose implementation is ours);
/// the host's tools ignore extra parameters, as run-time pre-validation (§4.4) does.
fn tool(
    name: &str,
    description: &str,
    params: &[Param],
    closed: bool,
    parallel_safe: ParallelSafety,
) -> ToolDef {
    let parameters = Schema {
        types: vec![JsonType::Object],
        properties: params
            .iter()
            .map(|p| {
                let mut schema = p.ty.map_or_else(Schema::any, Schema::of);
                schema.description = Some(p.description.to_owned());
                (p.name.to_owned(), schema)
            })
            .collect(),
        required: params
            .iter()
            .filter(|p| p.required)
            .map(|p| p.name.to_owned())
            .collect(),
        additional_properties: !closed,
        description: None,
    };
    ToolDef {
        name: name.to_owned(),
        description: description.to_owned(),
        raw_parameters: parameters.to_json(),
        parameters,
        parallel_safe,
    }
}

use ParallelSafety::{Safe, ThroughTarget, Unsafe};

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        // The embedded host (D-9 flags).
        tool(
            "cmd_run",
            "Runs a shell command in its own process and returns its output.",
            &[
                req(
                    "command",
                    Some(JsonType::String),
                    "The command line, run by the shell.",
                ),
                opt(
                    "timeout",
                    Some(JsonType::String),
                    "A duration such as \"30s\"; the default is 60s.",
                ),
            ],
            false,
            // Separate processes; the design's own example runs two in a parallel group.
            Safe,
        ),
        tool(
            "echo",
            "Returns its `value` unchanged.",
            &[req("value", None, "Any JSON value.")],
            false,
            Safe,
        ),
        tool(
            "sleep",
            "Waits `ms` milliseconds.",
            &[req("ms", Some(JsonType::Integer), "Milliseconds to wait.")],
            false,
            Safe,
        ),
        tool(
            "files_read",
            "Reads a file under the host's root and returns its text.",
            &[req(
                "path",
                Some(JsonType::String),
                "A path relative to the root.",
            )],
            false,
            Safe,
        ),
        tool(
            "files_write",
            "Writes text to a file under the host's root, replacing it.",
            &[
                req(
                    "path",
                    Some(JsonType::String),
                    "A path relative to the root.",
                ),
                req("content", Some(JsonType::String), "The text to write."),
            ],
            false,
            // Two writes to one path would race.
            Unsafe,
        ),
        tool(
            "files_list",
            "Lists the entries of a directory under the host's root.",
            &[req(
                "path",
                Some(JsonType::String),
                "A directory relative to the root.",
            )],
            false,
            Safe,
        ),
        tool(
            "output_send__stdout",
            "Sends text to the standard output channel.",
            &[req("text", Some(JsonType::String), "The text to send.")],
            false,
            // Sends to one channel keep their order even in a parallel group (§6.2).
            Safe,
        ),
        // The six tools of the sequence plugin (design §8).
        tool(
            "seq_create",
            "Checks a sequence and stores it: give `groups`, or `file` to load one; `replace` overwrites an existing one.",
            &[
                req("name", Some(JsonType::String), "The sequence's name."),
                opt(
                    "groups",
                    Some(JsonType::Array),
                    "The groups, in the file form's shape.",
                ),
                opt(
                    "file",
                    Some(JsonType::String),
                    "A sequence file under the configured root.",
                ),
                opt(
                    "description",
                    Some(JsonType::String),
                    "What the sequence does.",
                ),
                opt(
                    "replace",
                    Some(JsonType::Boolean),
                    "Overwrite a sequence of the same name.",
                ),
            ],
            true,
            // Writes the store.
            Unsafe,
        ),
        tool(
            "seq_list",
            "Lists the stored sequences: name, groups, tools and description.",
            &[],
            true,
            Safe,
        ),
        tool(
            "seq_delete",
            "Deletes a stored sequence.",
            &[req("name", Some(JsonType::String), "The sequence's name.")],
            true,
            Unsafe,
        ),
        tool(
            SEQ_RUN,
            "Runs a stored sequence's groups in order and returns a summary per group and the final `out` slots.",
            &[
                req("name", Some(JsonType::String), "The sequence's name."),
                opt(
                    "args",
                    Some(JsonType::Object),
                    "Arguments for the groups' `in` slots.",
                ),
            ],
            true,
            // It can run any tool, and the call graph cannot see which: treated as unsafe.
            Unsafe,
        ),
        tool(
            SEQ_CALL,
            "Calls a group by name: `target` is a group of this sequence or `#sequence`.",
            &[
                req(
                    "target",
                    Some(JsonType::String),
                    "A group name, or `#` and a sequence name.",
                ),
                opt(
                    "args",
                    Some(JsonType::Object),
                    "Arguments for the target's `in` slots.",
                ),
            ],
            true,
            ThroughTarget,
        ),
        tool(
            SEQ_WHEN_CALL,
            "Calls a group by name when `when` holds; otherwise skips the call and writes no slot.",
            &[
                req(
                    "target",
                    Some(JsonType::String),
                    "A group name, or `#` and a sequence name.",
                ),
                opt(
                    "args",
                    Some(JsonType::Object),
                    "Arguments for the target's `in` slots.",
                ),
                req(
                    "when",
                    Some(JsonType::String),
                    "A condition, evaluated before the call.",
                ),
            ],
            true,
            ThroughTarget,
        ),
    ]
}
