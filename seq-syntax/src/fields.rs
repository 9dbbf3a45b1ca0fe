//! The fields of each level of a sequence file ("The file", "Groups" and "Item fields" in
//! docs/reference.md): the one table that lowering's field checks and "did you mean" lists, the
//! editor's completion and hover, and a JSON Schema are derived from.

/// Where a field is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// The file's top-level object.
    Sequence,
    /// An element of `groups`.
    Group,
    /// An item inside a group's `tools` string.
    Item,
}

/// One field: its name, level, whether it must be written, the type of its value as a reader
/// sees it, its default when left out, and its one-line meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub level: Level,
    pub required: bool,
    pub ty: &'static str,
    /// The value a left-out field means, as JSON; `None` when leaving it out means "none".
    pub default: Option<&'static str>,
    pub doc: &'static str,
}

const fn field(
    level: Level,
    name: &'static str,
    required: bool,
    ty: &'static str,
    default: Option<&'static str>,
    doc: &'static str,
) -> Field {
    Field {
        name,
        level,
        required,
        ty,
        default,
        doc,
    }
}

/// The names of a level's fields, in table order, for lowering's lookups.
pub(crate) const fn names<const N: usize>(fields: &[Field]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = fields[i].name;
        i += 1;
    }
    out
}

/// Every level's fields, in the order the reference lists them.
pub const ALL: [&[Field]; 3] = [SEQUENCE, GROUP, ITEM];

/// The fields of the file's object.
pub const SEQUENCE: &[Field] = &[
    field(
        Level::Sequence,
        "name",
        true,
        "string",
        None,
        "The sequence's name; `#name` calls it from other sequences.",
    ),
    field(
        Level::Sequence,
        "description",
        false,
        "string",
        None,
        "Shown by `seq_list` and to models.",
    ),
    field(
        Level::Sequence,
        "groups",
        true,
        "array of groups",
        None,
        "The groups, run in array order by `seq_run`.",
    ),
];

/// The fields of a group.
pub const GROUP: &[Field] = &[
    field(
        Level::Group,
        "name",
        true,
        "string",
        None,
        "The group's signature name, the `target` of `seq_call`.",
    ),
    field(
        Level::Group,
        "description",
        false,
        "string",
        None,
        "Documentation.",
    ),
    field(
        Level::Group,
        "in",
        false,
        "object of slot types",
        None,
        "Inputs: `{\"name\": \"type\"}`, read as `$args.name`.",
    ),
    field(
        Level::Group,
        "out",
        false,
        "object of slot types",
        None,
        "Outputs: `{\"name\": \"type\"}`, written by `\"as\": \"name\"`.",
    ),
    field(
        Level::Group,
        "tools",
        true,
        "string of items",
        None,
        "A string of items, each followed by `;`.",
    ),
    field(
        Level::Group,
        "when",
        false,
        "condition string",
        None,
        "A condition; when false the group is skipped and its slots stay unset.",
    ),
    field(
        Level::Group,
        "parallel",
        false,
        "boolean",
        Some("true"),
        "`false` runs the items one after another (default `true`).",
    ),
    field(
        Level::Group,
        "timeout",
        false,
        "duration string",
        Some("\"30s\""),
        "The group's wall-clock bound, such as `\"30s\"` (default `\"30s\"`).",
    ),
    field(
        Level::Group,
        "on_error",
        false,
        "`abort` | `continue` | `retry`",
        Some("\"abort\""),
        "`abort`, `continue` or `retry` (default `abort`).",
    ),
    field(
        Level::Group,
        "retries",
        false,
        "integer 0..=10",
        Some("0"),
        "0…10, only with `on_error: \"retry\"` (default 0).",
    ),
    field(
        Level::Group,
        "missing",
        false,
        "`fail` | `skip` | `degrade`",
        Some("\"fail\""),
        "When a tool is not there at run time: `fail`, `skip` or `degrade` (default `fail`).",
    ),
    field(
        Level::Group,
        "fallback",
        false,
        "object",
        None,
        "With `missing: \"degrade\"`: `{\"slot\": value}` written when a tool is missing.",
    ),
];

/// The fields of an item.
pub const ITEM: &[Field] = &[
    field(
        Level::Item,
        "tool",
        true,
        "string",
        None,
        "The tool's name (`seq_call` / `seq_when_call` call groups and sequences).",
    ),
    field(
        Level::Item,
        "args",
        false,
        "object",
        None,
        "The arguments, an object; values may use `$args.x` / `$out.x`.",
    ),
    field(
        Level::Item,
        "as",
        false,
        "slot name",
        None,
        "The `out` slot the result is written to.",
    ),
    field(
        Level::Item,
        "unsafe_serial",
        false,
        "boolean",
        None,
        "`true` acknowledges a tool that is not parallel-safe in a serial group.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_holds_its_own_level_once_per_name() {
        for (table, level) in ALL.iter().zip([Level::Sequence, Level::Group, Level::Item]) {
            for (i, field) in table.iter().enumerate() {
                assert_eq!(field.level, level, "{}", field.name);
                assert!(
                    table.iter().skip(i + 1).all(|f| f.name != field.name),
                    "{} twice",
                    field.name
                );
            }
        }
    }
}
