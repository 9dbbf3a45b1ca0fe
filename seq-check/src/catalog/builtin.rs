//! The tools every catalog holds: the embedded host's tools and the six `seq_*` tools.
//! These are the only definitions of them; the engine implements exactly these signatures.

use super::schema::{JsonType, Schema};
use super::{ParallelSafety, ToolDef};

// The six `seq_*` names, one home for the checker, the engine and the MCP server.

/// `seq_create`: checks a sequence and stores it.
pub const SEQ_CREATE: &str = "seq_create";
/// `seq_list`: lists the stored sequences.
pub const SEQ_LIST: &str = "seq_list";
/// `seq_delete`: deletes a stored sequence by name.
pub const SEQ_DELETE: &str = "seq_delete";
/// `seq_call`: calls a group of this sequence, or `#sequence`.
pub const SEQ_CALL: &str = "seq_call";
/// `seq_when_call`: `seq_call` guarded by its own condition (see "Calls" in docs/reference.md).
pub const SEQ_WHEN_CALL: &str = "seq_when_call";
/// `seq_run`: runs a stored sequence by name.
pub const SEQ_RUN: &str = "seq_run";

/// The names a catalog file can never redefine: the checker gives them meaning of its own.
pub const SEQ_TOOLS: [&str; 6] = [
    SEQ_CREATE,
    SEQ_LIST,
    SEQ_DELETE,
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
/// the host's tools ignore extra parameters, as run-time pre-validation does.
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
        // The embedded host (its catalog flags).
        tool(
            "cmd_run",
            "Runs `command` with `sh -c`, or the program and arguments of `argv` without a \
             shell (exactly one of the two), in its own process, in the host's root directory, \
             and returns `{stdout, stderr, exit_code}`. A `$args`/`$out` value inside `command` \
             is escaped for the quoting it lands in, so it stays literal text. A non-zero exit \
             is a failure whose detail gives the exit status and the end of stderr. When \
             `timeout` passes, the command and every process it started are killed.",
            &[
                opt(
                    "command",
                    Some(JsonType::String),
                    "The command line, run by the shell; interpolated values are escaped.",
                ),
                opt(
                    "argv",
                    Some(JsonType::Array),
                    "The program and its arguments, an array of strings, run without a shell.",
                ),
                opt(
                    "timeout",
                    Some(JsonType::String),
                    "A duration such as \"500ms\", \"30s\" or \"1m30s\"; the default is 60s.",
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
            "Waits `ms` milliseconds, then returns null.",
            &[req("ms", Some(JsonType::Integer), "Milliseconds to wait.")],
            false,
            Safe,
        ),
        tool(
            "files_read",
            "Reads a UTF-8 text file under the host's root and returns its content. Paths are \
             relative to the root; absolute paths, `..` and symbolic links that lead outside the \
             root are refused.",
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
            "Writes `content` to a file under the host's root, replacing it and creating missing \
             parent directories; returns `{path, bytes}`. Not parallel-safe: it never runs at the \
             same time as other tools. Paths as for `files_read`.",
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
            "Lists a directory under the host's root: the entries' names, sorted, directories \
             ending in `/`. Paths as for `files_read`; `\"\"` or `.` is the root.",
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
            "Prints `text` as one line on the standard output channel. Calls to one channel keep \
             their order, even in a group whose items run at the same time.",
            &[req("text", Some(JsonType::String), "The text to send.")],
            false,
            // Sends to one channel keep their order even in a parallel group.
            Safe,
        ),
        // The six tools of the sequence plugin (see "Execution (the engine)" in
        // docs/reference.md).
        tool(
            SEQ_CREATE,
            "Checks a tool sequence and stores it under `name`. Give the groups inline as \
             `groups`, or a sequence file as `file` (a path under the configured root), not both; \
             `replace: true` overwrites a stored sequence of the same name. A sequence with \
             errors is refused (`arg_error`) and every error comes back with its code, position \
             and hint; warnings come back with the stored result. How sequences run: groups run \
             one after another, in array order; the items of a group run at the same time unless \
             the group says `\"parallel\": false`, so never rely on one item's output in a \
             sibling item (in a `parallel: false` group a later item reads an earlier one's slot \
             as `$out.SLOT`); calls to the same `output_send__<channel>` keep their order; tools \
             that are not parallel-safe never run concurrently (they go in a `parallel: false` \
             group, marked `\"unsafe_serial\": true`).",
            &[
                req(
                    "name",
                    Some(JsonType::String),
                    "The sequence's name; with `file`, the name the file gives it.",
                ),
                opt(
                    "groups",
                    Some(JsonType::Array),
                    "The groups: an array of group objects, as in a sequence file.",
                ),
                opt(
                    "file",
                    Some(JsonType::String),
                    "A sequence file, relative to the configured root.",
                ),
                opt(
                    "description",
                    Some(JsonType::String),
                    "What the sequence does (with `groups` only; a file has its own).",
                ),
                opt(
                    "replace",
                    Some(JsonType::Boolean),
                    "Overwrite a sequence of the same name.",
                ),
            ],
            true,
            // Writes to the storage.
            Unsafe,
        ),
        tool(
            SEQ_LIST,
            "Lists the stored sequences: name, number of groups, number of tool items, and \
             description. A stored file that cannot be read is listed with its error.",
            &[],
            true,
            Safe,
        ),
        tool(
            SEQ_DELETE,
            "Deletes a stored sequence. Sequences that call it as `#name` are not changed: their \
             calls find nothing (`not_found`) until it exists again.",
            &[req("name", Some(JsonType::String), "The sequence's name.")],
            true,
            Unsafe,
        ),
        tool(
            SEQ_RUN,
            "Runs a stored sequence: its groups one after another, in array order. Within a group \
             the items run at the same time unless the group says `\"parallel\": false`; calls to \
             the same `output_send__<channel>` keep their order even then, and tools that are \
             not parallel-safe never run concurrently. `args` go to the groups that declare them in \
             `in`; an argument no group declares is an error. Returns per group its status \
             (`ran`, `skipped`, `failed`, `partial`), whether its items actually ran in parallel, \
             its duration, its slots and each item's error, plus the final `out` slots. A run \
             that does not succeed is a failed call, its detail holding the report.",
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
            "Calls a group by name and returns its `out` slots: `target` is a group of the same \
             sequence, or `#name` to run a whole stored sequence (returning `{group: {slot: \
             value}}`); called directly, outside a sequence, only `#name` works. `args` fill the \
             target's `in` slots. The target runs by the same rules: items run at the same time \
             unless their group says `\"parallel\": false`, calls to the same \
             `output_send__<channel>` keep their order, and tools that are not parallel-safe \
             never run concurrently. Calls across sequences nest at most 4 deep and never form a \
             cycle.",
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
            "Like `seq_call`, but evaluates `when` first, in the caller's scope (called directly, \
             `$args` are this call's `args`): when it is false the call is skipped and writes no \
             slot; a condition that cannot be evaluated is an error, never false.",
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
                    "A condition such as `$args.count > 0`, evaluated before the call.",
                ),
            ],
            true,
            ThroughTarget,
        ),
    ]
}
