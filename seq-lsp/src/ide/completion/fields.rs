//! The fields of each level, with the one-line meaning docs/reference.md gives them.

pub(super) struct Field {
    pub name: &'static str,
    pub required: bool,
    pub doc: &'static str,
}

const fn field(name: &'static str, required: bool, doc: &'static str) -> Field {
    Field {
        name,
        required,
        doc,
    }
}

pub(super) const FILE: &[Field] = &[
    field(
        "name",
        true,
        "The sequence's name; `#name` calls it from other sequences.",
    ),
    field("description", false, "Shown by `seq_list` and to models."),
    field(
        "groups",
        true,
        "The groups, run in array order by `seq_run`.",
    ),
];

pub(super) const GROUP: &[Field] = &[
    field(
        "name",
        true,
        "The group's signature name, the `target` of `seq_call`.",
    ),
    field("description", false, "Documentation."),
    field(
        "in",
        false,
        "Inputs: `{\"name\": \"type\"}`, read as `$args.name`.",
    ),
    field(
        "out",
        false,
        "Outputs: `{\"name\": \"type\"}`, written by `\"as\": \"name\"`.",
    ),
    field("tools", true, "A string of items, each followed by `;`."),
    field(
        "when",
        false,
        "A condition; when false the group is skipped and its slots stay unset.",
    ),
    field(
        "parallel",
        false,
        "`false` runs the items one after another (default `true`).",
    ),
    field(
        "timeout",
        false,
        "The group's wall-clock bound, such as `\"30s\"` (default `\"30s\"`).",
    ),
    field(
        "on_error",
        false,
        "`abort`, `continue` or `retry` (default `abort`).",
    ),
    field(
        "retries",
        false,
        "0…10, only with `on_error: \"retry\"` (default 0).",
    ),
    field(
        "missing",
        false,
        "When a tool is not there at run time: `fail`, `skip` or `degrade` (default `fail`).",
    ),
    field(
        "fallback",
        false,
        "With `missing: \"degrade\"`: `{\"slot\": value}` written when a tool is missing.",
    ),
];

pub(super) const ITEM: &[Field] = &[
    field(
        "tool",
        true,
        "The tool's name (`seq_call` / `seq_when_call` call groups and sequences).",
    ),
    field(
        "args",
        false,
        "The arguments, an object; values may use `$args.x` / `$out.x`.",
    ),
    field("as", false, "The `out` slot the result is written to."),
    field(
        "unsafe_serial",
        false,
        "`true` acknowledges a tool that is not parallel-safe in a serial group.",
    ),
];
