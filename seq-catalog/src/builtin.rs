//! The tools every catalog holds: the embedded host's tools and the six `seq_*` tools.
//! These are the only definitions of them; the engine implements exactly these signatures.

use super::schema::{JsonType, Schema};
use super::{ParallelSafety, ToolDef};
use serde_json::{Value as Json, json};

/// How `cmd_run` treats its exit status, in its description and in the guide of a server that
/// offers it (a macro because `concat!` takes literals only).
macro_rules! cmd_run_exit_rule {
    () => {
        "An exit status outside `ok_exit` (default [0]) fails the call (reason `failed`, its \
         detail the status and the end of stderr), so a result's `exit_code` is always one of \
         `ok_exit`."
    };
}

mod guide;

use guide::seq_create_guide;
pub use guide::{CMD_RUN_GUIDE, GUIDE_EXAMPLE, GUIDE_JQ};

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

// The embedded host's tool names, one home for the checker, the engine and the command line.

/// `cmd_run`: runs a command.
pub const CMD_RUN: &str = "cmd_run";
/// `echo`: returns its `value`.
pub const ECHO: &str = "echo";
/// `jq`: runs a jq filter over its `input` (the filter language's home is `seq_syntax::jq`).
pub const JQ: &str = seq_syntax::jq::TOOL;
/// `sleep`: waits `ms`.
pub const SLEEP: &str = "sleep";
/// `files_read`: reads a file under the root.
pub const FILES_READ: &str = "files_read";
/// `files_write`: writes a file under the root.
pub const FILES_WRITE: &str = "files_write";
/// `files_list`: lists a directory under the root.
pub const FILES_LIST: &str = "files_list";
/// `files_stat`: what is at a path under the root, if anything.
pub const FILES_STAT: &str = "files_stat";
/// `files_delete`: deletes a file or directory under the root.
pub const FILES_DELETE: &str = "files_delete";
/// `files_move`: renames a file or directory under the root.
pub const FILES_MOVE: &str = "files_move";
/// The one spelling of the output-channel prefix, for the constants below (`concat!` takes
/// literals only).
macro_rules! output_send_prefix {
    () => {
        "output_send__"
    };
}
/// The name prefix of an output channel's tool: `output_send__<channel>` prints on `<channel>`,
/// and calls to one channel keep their order even in a parallel group.
pub const OUTPUT_SEND_PREFIX: &str = output_send_prefix!();
/// `output_send__stdout`: prints a line on the run's standard output.
pub const OUTPUT_STDOUT: &str = concat!(output_send_prefix!(), "stdout");

/// Whether `tool` is an output channel's (`output_send__<channel>`).
pub fn is_output_send(tool: &str) -> bool {
    tool.starts_with(OUTPUT_SEND_PREFIX)
}

/// The embedded host's tools.
pub const HOST_TOOLS: [&str; 11] = [
    CMD_RUN,
    ECHO,
    JQ,
    SLEEP,
    FILES_READ,
    FILES_WRITE,
    FILES_LIST,
    FILES_STAT,
    FILES_DELETE,
    FILES_MOVE,
    OUTPUT_STDOUT,
];

/// The tools that change files: one switch, `files_write`'s, turns them all on where writes are
/// off by default (`seqc mcp`), so that enabling writes never leaves one kind of write out.
pub const FILE_WRITES: [&str; 3] = [FILES_WRITE, FILES_DELETE, FILES_MOVE];

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
        output: None,
        parallel_safe,
    }
}

fn string() -> Json {
    json!({"type": "string"})
}

fn integer() -> Json {
    json!({"type": "integer"})
}

fn null() -> Json {
    json!({"type": "null"})
}

/// An object whose listed properties are always there.
fn record(properties: &[(&str, Json)]) -> Json {
    let names: Vec<&str> = properties.iter().map(|(name, _)| *name).collect();
    let properties: serde_json::Map<String, Json> = properties
        .iter()
        .map(|(name, schema)| ((*name).to_owned(), schema.clone()))
        .collect();
    json!({"type": "object", "properties": properties, "required": names})
}

use ParallelSafety::{Safe, ThroughTarget, Unsafe};

/// A sequence-level field's one-line meaning, from the field table.
fn sequence_doc(name: &str) -> &'static str {
    seq_syntax::fields::SEQUENCE
        .iter()
        .find(|f| f.name == name)
        .map_or("", |f| f.doc)
}

/// `seq_create` as listed to a model: `groups` is the full schema of a group, generated from the
/// field table that lowering reads, so the two cannot drift.
fn seq_create(mut def: ToolDef) -> ToolDef {
    let groups = seq_syntax::fields::schema::sequence()["properties"]["groups"].clone();
    if let Some(properties) = def
        .raw_parameters
        .get_mut("properties")
        .and_then(Json::as_object_mut)
    {
        properties.insert("groups".to_owned(), groups);
    }
    def
}

pub(super) fn tools() -> Vec<ToolDef> {
    let mut tools = definitions();
    for def in &mut tools {
        def.output = output(&def.name);
    }
    tools
}

/// What each tool returns on success, as the engine's implementations build it (a failure is
/// never a result: an exit of `cmd_run` outside its `ok_exit` is a failed call, so `exit_code`
/// is one of `ok_exit`).
fn output(name: &str) -> Option<Json> {
    Some(match name {
        CMD_RUN => record(&[
            ("stdout", string()),
            ("stderr", string()),
            ("exit_code", integer()),
        ]),
        // Its `value`, whatever it is.
        // Whatever its filter gives; the checker knows more from the filter itself.
        ECHO | JQ => return None,
        SLEEP | OUTPUT_STDOUT => null(),
        FILES_READ => string(),
        FILES_WRITE => record(&[("path", string()), ("bytes", integer())]),
        FILES_LIST => json!({"type": "array", "items": string()}),
        FILES_STAT => json!({
            "type": "object",
            "properties": {
                "exists": {"type": "boolean"},
                "kind": {"type": ["string", "null"], "enum": ["file", "dir", "link", "other", null]},
                "size": {"type": ["integer", "null"]},
                "modified_ms": {"type": ["integer", "null"]},
            },
            "required": ["exists", "kind", "size", "modified_ms"],
        }),
        FILES_DELETE => record(&[
            ("path", string()),
            (
                "kind",
                json!({"type": "string", "enum": ["file", "dir", "link", "other"]}),
            ),
            ("removed", integer()),
        ]),
        FILES_MOVE => record(&[("from", string()), ("to", string())]),
        SEQ_CREATE => record(&[
            ("name", string()),
            ("groups", integer()),
            ("items", integer()),
            (
                "warnings",
                json!({"type": "array", "items": {"type": "object"}}),
            ),
        ]),
        SEQ_LIST => json!({"type": "array", "items": {
            "type": "object",
            "properties": {
                "name": string(),
                "groups": integer(),
                "items": integer(),
                "description": string(),
                "args": {"type": "object", "additionalProperties": string()},
                "owner": string(),
                "error": string(),
            },
            "required": ["name"],
        }}),
        SEQ_DELETE => record(&[("deleted", string())]),
        // As an item, what a `#name` call returns: `{group: {slot: value}}`. Called directly it
        // answers with the run report, whose schema seq-mcp derives from the report's types.
        SEQ_RUN => json!({"type": "object", "additionalProperties": {"type": "object"}}),
        // The target's `out` slots (`{group: {slot: value}}` for `#name`).
        SEQ_CALL => json!({"type": "object"}),
        // As `seq_call`, or null when `when` is false and there is no `else`.
        SEQ_WHEN_CALL => json!({"type": ["object", "null"]}),
        _ => return None,
    })
}

fn definitions() -> Vec<ToolDef> {
    vec![
        // The embedded host (its catalog flags).
        tool(
            CMD_RUN,
            concat!(
                "Runs `command` with `sh -c`, or `argv` without a shell; a `$args` value in \
             `command` is one word (a command line input runs as `\"argv\": \
             [\"sh\",\"-c\",$args.line]`). Exactly one of `command` and \
             `argv`; it runs in its own process, in the host's root directory, and returns \
             `{stdout, stderr, exit_code}`, `stdout` with its final newline. A `$args`/`$out` \
             value in `command` reaches the shell in a variable (`SEQ_V1`, ...), never as code: \
             not inside single quotes, a comment or arithmetic, nor in `eval`, `sh -c` or `ssh` \
             (pass it as `sh -c '... \"$1\"' sh $args.v`); shell text such as `$1` or `$?` is \
             the shell's. When `timeout` passes, the command and every process it started \
             are killed. ",
                cmd_run_exit_rule!()
            ),
            &[
                opt(
                    "command",
                    Some(JsonType::String),
                    "The command line, run by the shell; values referenced in it arrive as variables.",
                ),
                opt(
                    "argv",
                    Some(JsonType::Array),
                    "The program and its arguments, an array of strings, run without a shell.",
                ),
                opt(
                    "env",
                    Some(JsonType::Object),
                    "Environment variables for the command, an object of strings; names starting \
                     with `SEQ_V` carry the values of `command` and are the engine's.",
                ),
                opt(
                    "timeout",
                    Some(JsonType::String),
                    "A duration such as \"500ms\", \"30s\" or \"1m30s\"; the default is 60s.",
                ),
                opt(
                    "ok_exit",
                    Some(JsonType::Array),
                    "Exit codes that succeed (default [0]; [0,1] for `grep -c`).",
                ),
            ],
            false,
            // Separate processes; fanning commands out in a parallel group is the common case.
            Safe,
        ),
        tool(
            ECHO,
            "Returns its `value` unchanged.",
            &[req("value", None, "Any JSON value.")],
            false,
            Safe,
        ),
        tool(
            JQ,
            "Runs a jq `filter` over `input` (default null) and returns its one output; a \
             filter giving no output or several fails (collect them with `[...]`). Pure: no \
             environment, files, clock or input (`env`, `input`, `now` are unknown). Text: \
             `trim`, `split(\"\\n\")`, `join(\",\")`, `\"\\(.a)-\\(.b)\"`, `test(\"re\")`; \
             numbers: `tonumber`, `length`, `add`; JSON text: `fromjson`, `tojson`; arrays: \
             `map(select(.n > 1))`, `sort_by(.k)`, `first`. Values go in through `input` \
             (`{\"x\": $args.x}` read as `.x`), never into the filter.",
            &[
                req(
                    seq_syntax::jq::FILTER,
                    Some(JsonType::String),
                    "A jq filter, such as `split(\"\\n\") | map(select(length > 0)) | length`.",
                ),
                opt(
                    seq_syntax::jq::INPUT,
                    None,
                    "Any JSON value: the filter's input (`.`); null when absent.",
                ),
            ],
            false,
            // Pure computation on its own thread.
            Safe,
        ),
        tool(
            SLEEP,
            "Waits `ms` milliseconds, then returns null.",
            &[req("ms", Some(JsonType::Integer), "Milliseconds to wait.")],
            false,
            Safe,
        ),
        tool(
            FILES_READ,
            "Reads a UTF-8 text file under the host's root and returns its content; a path that \
             does not exist fails with the reason `absent` (detail `` `PATH` does not exist ``; \
             `files_stat` asks without failing). Paths are \
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
            FILES_WRITE,
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
            FILES_LIST,
            "Lists a directory under the host's root: the entries' names, sorted, directories \
             ending in `/`; a path that does not exist fails as for `files_read`. Paths as for \
             `files_read`; `\"\"` or `.` is the root.",
            &[req(
                "path",
                Some(JsonType::String),
                "A directory relative to the root.",
            )],
            false,
            Safe,
        ),
        tool(
            FILES_STAT,
            "Tells what is at a path under the host's root, without following a link there: \
             `{exists, kind, size, modified_ms}`, `kind` one of `file`, `dir`, `link`, `other`. \
             A path that does not exist is no failure: `exists` is false and the rest null. \
             Paths as for `files_read`.",
            &[req(
                "path",
                Some(JsonType::String),
                "A path relative to the root.",
            )],
            false,
            Safe,
        ),
        tool(
            FILES_DELETE,
            "Deletes a file, a link (never what it leads to) or an empty directory under the \
             host's root; with `recursive: true` a directory and all it holds. Returns `{path, \
             kind, removed}` (`removed`: how many entries went). A path that does not exist fails with the reason `absent`. Not \
             parallel-safe. Paths as for `files_read`; the root itself is never deleted.",
            &[
                req(
                    "path",
                    Some(JsonType::String),
                    "A path relative to the root.",
                ),
                opt(
                    "recursive",
                    Some(JsonType::Boolean),
                    "Delete a directory with everything in it (default false).",
                ),
            ],
            false,
            // Deletes race with every other use of the path.
            Unsafe,
        ),
        tool(
            FILES_MOVE,
            "Renames `from` to `to` under the host's root in one step (a link moves as itself), \
             creating missing parent directories of `to`; returns `{from, to}`. An existing `to` \
             fails unless `replace: true`. Both must be on one file system (else it fails, \
             saying so). A `from` that does not exist fails with the reason `absent`. Not \
             parallel-safe. Paths as for `files_read`.",
            &[
                req(
                    "from",
                    Some(JsonType::String),
                    "The path to move, relative to the root.",
                ),
                req(
                    "to",
                    Some(JsonType::String),
                    "The new path, relative to the root.",
                ),
                opt(
                    "replace",
                    Some(JsonType::Boolean),
                    "Replace what is at `to` (default false).",
                ),
            ],
            false,
            // Two moves of one path would race.
            Unsafe,
        ),
        tool(
            OUTPUT_STDOUT,
            "Prints `text` as one line on the standard output channel. Calls to one channel keep \
             their order, even in a group whose items run at the same time.",
            &[req("text", Some(JsonType::String), "The text to send.")],
            false,
            // Sends to one channel keep their order even in a parallel group.
            Safe,
        ),
        // The six tools of the sequence plugin (see "Execution (the engine)" in
        // docs/reference.md).
        seq_create(tool(
            SEQ_CREATE,
            &seq_create_guide(),
            &[
                req(
                    "name",
                    Some(JsonType::String),
                    "The sequence's name; with `file`, the name the file gives it.",
                ),
                opt("groups", Some(JsonType::Array), sequence_doc("groups")),
                opt(
                    "file",
                    Some(JsonType::String),
                    "A sequence file under the configured root, relative to it: a JSON object \
                     `{\"name\", \"description\"?, \"groups\": [...]}`, its groups as `groups` takes them.",
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
        )),
        tool(
            SEQ_LIST,
            "Lists the stored sequences: name, number of groups, number of tool items, \
             description, `args` (the arguments `seq_run` takes, each with its type, default or \
             `required`, and description), and owner \
             (the caller that created it; only the owner, or a caller \
             allowed `seq_admin`, may replace or delete it). A stored file that cannot be read \
             is listed with its error.",
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
            "Runs a stored sequence: the groups that none of its items calls, one after another, in \
             array order (a called group runs only when called). Within a group \
             the items run at the same time unless the group says `\"parallel\": false`; calls to \
             the same `output_send__<channel>` keep their order even then, and tools that are \
             not parallel-safe never run concurrently. `args` go to the uncalled groups that declare \
             them in `in`; an argument none of them declares is an error. Returns per group its status \
             (`ran`, `skipped`, `failed`, `partial`), whether its items actually ran in parallel, \
             its duration, its slots and each item's error, plus the final `out` slots and `output`: \
             what the `output_send__<channel>` items sent, by channel. A run \
             that does not succeed is a failed call, its detail holding the report. As an item \
             inside a sequence it returns what `seq_call` of `#name` returns, `{group: {slot: \
             value}}`, not the report.",
            &[
                req("name", Some(JsonType::String), "The sequence's name."),
                opt(
                    "args",
                    Some(JsonType::Object),
                    "Arguments for the groups' `in` slots.",
                ),
                opt(
                    "run_id",
                    Some(JsonType::String),
                    "Names the run so that it can be got back: pass a new one (1-128 letters, \
                     digits, `-`, `_`, `.`) for a run with side effects, and after a lost \
                     connection call again with the same id: the same caller, `name` and `args` \
                     wait for that run or get its report, never a second run; anything else \
                     under it is an `arg_error`. Kept by a durable server; otherwise for the \
                     server process's life (its last 10,000 ids). Only when called directly.",
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
             `$args` are this call's `args`): when it is false it calls `else` instead (with \
             `else_args`, default `args`), or without `else` is skipped, writing no slot and \
             reading no `args` (which may read a slot only the true case sets). With `else`, one \
             `as` is written either way. A condition that cannot be evaluated is an error, never \
             false.",
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
                    "A condition such as `$args.count > 0 && !$args.dry`, evaluated before the call.",
                ),
                opt(
                    "else",
                    Some(JsonType::String),
                    "What to call when `when` is false: a group name, or `#` and a sequence name.",
                ),
                opt(
                    "else_args",
                    Some(JsonType::Object),
                    "Arguments for the `else` target's `in` slots (default: `args`).",
                ),
            ],
            true,
            ThroughTarget,
        ),
    ]
}
