//! The fields of each level of a sequence file ("The file", "Groups" and "Item fields" in
//! docs/reference.md): the one table that lowering's field checks and "did you mean" lists, the
//! editor's completion and hover, and the JSON Schema of [`schema`] are derived from.

pub mod schema;

use crate::ast::{Missing, OnError};

/// Every field's name, written here once: the tables below, lowering, the editor and the
/// schema take them from here.
pub mod key {
    pub const NAME: &str = "name";
    pub const DESCRIPTION: &str = "description";
    pub const GROUPS: &str = "groups";
    pub const IN: &str = "in";
    pub const OUT: &str = "out";
    pub const LOCAL: &str = "local";
    pub const TOOLS: &str = "tools";
    pub const WHEN: &str = "when";
    pub const PARALLEL: &str = "parallel";
    pub const TIMEOUT: &str = "timeout";
    pub const ON_ERROR: &str = "on_error";
    pub const RETRIES: &str = "retries";
    pub const RETRY_DELAY: &str = "retry_delay";
    pub const RETRY_BACKOFF: &str = "retry_backoff";
    pub const MISSING: &str = "missing";
    pub const FALLBACK: &str = "fallback";
    pub const TOOL: &str = "tool";
    pub const ARGS: &str = "args";
    pub const AS: &str = "as";
    pub const UNSAFE_SERIAL: &str = "unsafe_serial";
    pub const ERROR_AS: &str = "error_as";
    pub const EACH: &str = "each";
    pub const MAX_PARALLEL: &str = "max_parallel";
    pub const TYPE: &str = "type";
    pub const DEFAULT: &str = "default";
    pub const REQUIRED: &str = "required";
}

/// Where a field is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// The file's top-level object.
    Sequence,
    /// An element of `groups`.
    Group,
    /// An item inside a group's `tools` string.
    Item,
    /// An input's declaration object, a value of a group's `in`.
    Input,
}

/// The kind of value a field holds, as lowering reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    String,
    Bool,
    /// An integer from `min` to `max`, both included.
    Int {
        min: u32,
        max: u32,
    },
    /// An integer from `min` to `max`, or `"$args.NAME"`: an `integer` input that gives it.
    Count {
        min: u32,
        max: u32,
    },
    /// A number (fractions allowed) from `min` to `max`, both included.
    Number {
        min: u32,
        max: u32,
    },
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// A duration string such as `"30s"`.
    Duration,
    /// A condition string.
    Condition,
    /// `{"slot": "type"}`, the types of [`crate::ast::Type::NAMES`].
    Types,
    /// `in`: `{"input": "type"}`, or `{"input": {...}}` with the fields of [`INPUT`].
    Inputs,
    /// A type name of [`crate::ast::Type::NAMES`].
    TypeName,
    /// Any JSON value.
    Any,
    /// A slot name of the group's `out`.
    Slot,
    /// Any JSON object.
    Object,
    /// The array of groups.
    Groups,
    /// The string of items.
    Items,
    /// A literal array, or a bare reference to an `array` (or `any`) value.
    Elements,
}

impl Ty {
    /// The type as a reader sees it, for hover and the item grammar's text.
    pub fn describe(self) -> String {
        match self {
            Ty::String => "string".to_owned(),
            Ty::Bool => "boolean".to_owned(),
            Ty::Int { min, max } => format!("integer {min}..{max}"),
            Ty::Count { min, max } => format!("integer {min}..{max}, or \"$args.NAME\""),
            Ty::Number { min, max } => format!("number {min}..{max}"),
            Ty::Enum(values) => values
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(" | "),
            Ty::Duration => "duration string".to_owned(),
            Ty::Condition => "condition string".to_owned(),
            Ty::Types => "object of slot types".to_owned(),
            Ty::Inputs => "object of input types or declarations".to_owned(),
            Ty::TypeName => "type name".to_owned(),
            Ty::Any => "any JSON value".to_owned(),
            Ty::Slot => "slot name".to_owned(),
            Ty::Object => "object".to_owned(),
            Ty::Groups => "array of groups".to_owned(),
            Ty::Items => "string of items".to_owned(),
            Ty::Elements => "array, or a bare reference to one".to_owned(),
        }
    }
}

/// The typed values of the table's defaults, for the AST's accessors (`Group::timeout` & co.):
/// the table's JSON texts are what hovers, the schema and the reference show, and a test holds
/// these to them.
pub mod defaults {
    use crate::ast::{Missing, OnError};
    use std::time::Duration;

    /// `parallel`.
    pub const PARALLEL: bool = true;
    /// `timeout`.
    pub const TIMEOUT: Duration = Duration::from_secs(30);
    /// `on_error`.
    pub const ON_ERROR: OnError = OnError::Abort;
    /// `retries`.
    pub const RETRIES: u32 = 0;
    /// `missing`.
    pub const MISSING: Missing = Missing::Fail;
}

/// One field: its name, level, whether it must be written, the type of its value, its default
/// when left out, and its one-line meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub level: Level,
    pub required: bool,
    pub ty: Ty,
    /// The value a left-out field means, as JSON; `None` when leaving it out means "none".
    pub default: Option<&'static str>,
    pub doc: &'static str,
}

const fn field(
    level: Level,
    name: &'static str,
    required: bool,
    ty: Ty,
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
pub const ALL: [&[Field]; 4] = [SEQUENCE, GROUP, ITEM, INPUT];

/// The fields of the file's object.
pub const SEQUENCE: &[Field] = &[
    field(
        Level::Sequence,
        key::NAME,
        true,
        Ty::String,
        None,
        "The sequence's name; `#name` calls it from other sequences.",
    ),
    field(
        Level::Sequence,
        key::DESCRIPTION,
        false,
        Ty::String,
        None,
        "Shown by `seq_list` and to models.",
    ),
    field(
        Level::Sequence,
        key::GROUPS,
        true,
        Ty::Groups,
        None,
        "The groups, run in array order by `seq_run`.",
    ),
];

/// The fields of a group.
pub const GROUP: &[Field] = &[
    field(
        Level::Group,
        key::NAME,
        true,
        Ty::String,
        None,
        "The group's signature name, the `target` of `seq_call`.",
    ),
    field(
        Level::Group,
        key::DESCRIPTION,
        false,
        Ty::String,
        None,
        "Documentation.",
    ),
    field(
        Level::Group,
        key::IN,
        false,
        Ty::Inputs,
        Some("{}"),
        "Inputs: `{\"name\": \"type\"}` or `{\"name\": {\"type\": \"type\", \"default\": value, \"required\": true, \"description\": \"...\"}}`, read as `$args.name`, filled by `seq_run`'s or a call's `args`; one not passed takes its `default`, else is unset.",
    ),
    field(
        Level::Group,
        key::OUT,
        false,
        Ty::Types,
        Some("{}"),
        "Outputs: `{\"name\": \"type\"}`, written by an item's `\"as\": \"name\"`; an `array` slot collects every value written to it.",
    ),
    field(
        Level::Group,
        key::LOCAL,
        false,
        Ty::Types,
        Some("{}"),
        "Private slots: written and read as `out` slots are, never in the group's result.",
    ),
    field(
        Level::Group,
        key::TOOLS,
        true,
        Ty::Items,
        None,
        "A string of items, each a JSON object followed by `;`.",
    ),
    field(
        Level::Group,
        key::WHEN,
        false,
        Ty::Condition,
        None,
        "A condition; when false the group is skipped and its slots stay unset.",
    ),
    field(
        Level::Group,
        key::PARALLEL,
        false,
        Ty::Bool,
        Some("true"),
        "`false` runs the items one after another, and `$out.x` reads an earlier item's slot.",
    ),
    field(
        Level::Group,
        key::TIMEOUT,
        false,
        Ty::Duration,
        Some("\"30s\""),
        "The group's wall-clock bound, retries included, such as `\"30s\"`.",
    ),
    field(
        Level::Group,
        key::ON_ERROR,
        false,
        Ty::Enum(OnError::NAMES),
        Some("\"abort\""),
        "On a failed item: `abort` fails the group and stops the run, `continue` makes the group `partial` and goes on, `retry` re-runs the item.",
    ),
    field(
        Level::Group,
        key::RETRIES,
        false,
        Ty::Count {
            min: 0,
            max: crate::limits::MAX_RETRIES,
        },
        Some("0"),
        "How many more attempts `on_error: \"retry\"` gives a failed item, 0…10, or `\"$args.NAME\"` (an `integer` input).",
    ),
    field(
        Level::Group,
        key::RETRY_DELAY,
        false,
        Ty::Duration,
        Some("\"0s\""),
        "The pause before the first retry (default `\"0s\"`).",
    ),
    field(
        Level::Group,
        key::RETRY_BACKOFF,
        false,
        Ty::Number {
            min: 1,
            max: crate::limits::MAX_RETRY_BACKOFF,
        },
        Some("1"),
        "Each retry's pause is this many times the last, 1…10 (default 1).",
    ),
    field(
        Level::Group,
        key::MISSING,
        false,
        Ty::Enum(Missing::NAMES),
        Some("\"fail\""),
        "When a tool is not found at run time: `fail` fails the item, `skip` skips it (no slot), `degrade` writes `fallback`.",
    ),
    field(
        Level::Group,
        key::FALLBACK,
        false,
        Ty::Object,
        None,
        "With `missing: \"degrade\"`: `{\"slot\": value}` written when a tool is missing.",
    ),
    field(
        Level::Group,
        key::MAX_PARALLEL,
        false,
        Ty::Int {
            min: 1,
            max: crate::limits::MAX_EACH,
        },
        None,
        "How many runs of the group's tools, items and `each` elements alike, may be in flight at once (default: no bound).",
    ),
];

/// The fields of an item.
pub const ITEM: &[Field] = &[
    field(
        Level::Item,
        key::TOOL,
        true,
        Ty::String,
        None,
        "The tool's name (`seq_call` / `seq_when_call` call groups and sequences).",
    ),
    field(
        Level::Item,
        key::ARGS,
        false,
        Ty::Object,
        None,
        "The arguments, an object; values may use `$args.x` / `$out.x`.",
    ),
    field(
        Level::Item,
        key::AS,
        false,
        Ty::Slot,
        None,
        "The `out` slot the result is written to.",
    ),
    field(
        Level::Item,
        key::UNSAFE_SERIAL,
        false,
        Ty::Bool,
        None,
        "`true` acknowledges a tool that is not parallel-safe in a serial group.",
    ),
    field(
        Level::Item,
        key::ERROR_AS,
        false,
        Ty::Slot,
        None,
        "An `object` slot for the item's final error; the item is then `caught` and the group goes on. On an `each` item, an `array` slot: each failed element's error at its place, `null` at the others; unset when none failed.",
    ),
    field(
        Level::Item,
        key::EACH,
        false,
        Ty::Elements,
        None,
        "Runs the item once per element (at most 10000): inside `args`, `$each` is the element and `$each_index` its place from 0; `as` (an `array` slot) gets the results in element order, `null` for a tolerated failure.",
    ),
    field(
        Level::Item,
        key::MAX_PARALLEL,
        false,
        Ty::Int {
            min: 1,
            max: crate::limits::MAX_EACH,
        },
        None,
        "With `each`: runs the elements side by side, at most this many at once, also in a serial group (whose next item still waits for all of them); the tool must be parallel-safe.",
    ),
];

/// The fields of an input's declaration object.
pub const INPUT: &[Field] = &[
    field(
        Level::Input,
        key::TYPE,
        true,
        Ty::TypeName,
        None,
        "The input's type, as in `{\"name\": \"type\"}`.",
    ),
    field(
        Level::Input,
        key::DEFAULT,
        false,
        Ty::Any,
        None,
        "The value the input takes when it is not passed, of its type.",
    ),
    field(
        Level::Input,
        key::REQUIRED,
        false,
        Ty::Bool,
        Some("false"),
        "`true`: a run or call that does not pass it fails before anything runs (not with `default`).",
    ),
    field(
        Level::Input,
        key::DESCRIPTION,
        false,
        Ty::String,
        None,
        "What the input means, shown by `seq_list` and hover.",
    ),
];

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn table_default(name: &str) -> Value {
        let field = GROUP.iter().find(|f| f.name == name).unwrap();
        serde_json::from_str(field.default.unwrap()).unwrap()
    }

    #[test]
    fn typed_defaults_are_the_tables() {
        assert_eq!(table_default(key::PARALLEL), json!(defaults::PARALLEL));
        let timeout = table_default(key::TIMEOUT);
        assert_eq!(
            crate::parse_duration(timeout.as_str().unwrap()),
            Ok(defaults::TIMEOUT)
        );
        assert_eq!(
            table_default(key::ON_ERROR),
            json!(defaults::ON_ERROR.as_str())
        );
        assert_eq!(table_default(key::RETRIES), json!(defaults::RETRIES));
        assert_eq!(
            table_default(key::MISSING),
            json!(defaults::MISSING.as_str())
        );
    }

    /// docs/reference.md's tables of the file's and the groups' fields give each field's
    /// default as the field table does.
    #[test]
    fn the_references_default_columns_are_the_tables() {
        let reference = include_str!("../../docs/reference.md");
        for (heading, table) in [("### The file", SEQUENCE), ("### Groups", GROUP)] {
            let section = reference.split(heading).nth(1).unwrap();
            let mut rows = section
                .lines()
                .skip_while(|l| !l.starts_with("| `"))
                .take_while(|l| l.starts_with('|'));
            for field in table {
                let row = rows
                    .next()
                    .unwrap_or_else(|| panic!("no row for {}", field.name));
                let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
                assert_eq!(cells[0], format!("`{}`", field.name), "{row}");
                let written = match field.required {
                    true => "yes",
                    false => "",
                };
                assert_eq!(cells[1], written, "{row}");
                // The file's table has no default column.
                if cells.len() == 4 {
                    let default = field.default.map(|d| format!("`{d}`"));
                    assert_eq!(cells[2], default.unwrap_or_default(), "{row}");
                }
            }
        }
    }

    #[test]
    fn each_table_holds_its_own_level_once_per_name() {
        for (table, level) in
            ALL.iter()
                .zip([Level::Sequence, Level::Group, Level::Item, Level::Input])
        {
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
