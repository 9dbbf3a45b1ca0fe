//! Reading references: `$args.PATH` from the group's inputs, `$out.PATH` from the
//! slots its earlier items wrote.
//!
//! An input that was not passed, or a slot that was not written, is *unset*. A path that does
//! not exist (an unset input or slot, a missing field of an object, an index past the end of an
//! array) is never text: templates and bare references refuse it with reason `required`, naming
//! the reference as written and the step of its path that is missing; conditions read it as
//! `null`. A field of anything but an object, or an index into anything but an array, is an
//! error of reason `type` everywhere.

use crate::error::{Reason, ToolError};
use seq_catalog::{lenient_bool, type_accepts};
use seq_syntax::ast::{Reference, Root, Segment, Type};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// What `$args` and `$out` of one group read.
#[derive(Clone, Debug, Default)]
pub(crate) struct Slots {
    /// The inputs that were passed.
    pub args: Map<String, Value>,
    /// The slots written so far (in a parallel group: none until the barrier).
    pub out: Map<String, Value>,
    /// Why a slot is still unset where an earlier item was to write it (a serial group's
    /// writer that failed or was skipped), so that a read of it names the failure that matters.
    pub unwritten: HashMap<String, String>,
}

/// What references read where an item runs: the group's slots and, in a run of an `each`
/// item, the element.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scope<'s> {
    pub slots: &'s Slots,
    pub each: Option<Element<'s>>,
}

/// The element an `each` item runs for: `$each` and `$each_index`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Element<'s> {
    pub value: &'s Value,
    pub index: usize,
}

impl<'s> Scope<'s> {
    /// The scope of a group's `when` and of its items without `each`.
    pub fn of(slots: &'s Slots) -> Scope<'s> {
        Scope { slots, each: None }
    }
}

static NULL: Value = Value::Null;

/// `$each_index` of every element an item may run, made once, so that a reference reads it
/// as it reads any other value: by reference.
static INDEXES: std::sync::LazyLock<Vec<Value>> =
    std::sync::LazyLock::new(|| (0..seq_syntax::limits::MAX_EACH).map(Value::from).collect());

/// The value `reference` reads in a template or a bare reference: a path that does not exist
/// is an error of reason `required`.
pub(crate) fn read<'s>(scope: Scope<'s>, reference: &Reference) -> Result<&'s Value, ToolError> {
    let value = slot(scope, reference).ok_or_else(|| unset(scope.slots, reference))?;
    walk(reference, value, Absent::Refuse)
}

/// The value `reference` reads in a condition: an unset slot or input is `null`, and its
/// path, if any, is followed from there — so `.field` of an unset input is an error like `.field`
/// of any other null, not a quiet `null`; a missing field or an index past the end is `null`.
pub(crate) fn read_in_condition<'s>(
    scope: Scope<'s>,
    reference: &Reference,
) -> Result<&'s Value, ToolError> {
    walk(
        reference,
        slot(scope, reference).unwrap_or(&NULL),
        Absent::Null,
    )
}

fn slot<'s>(scope: Scope<'s>, reference: &Reference) -> Option<&'s Value> {
    let root = match reference.root.value {
        Root::Args => &scope.slots.args,
        Root::Out => &scope.slots.out,
        // The checker allows these only inside an `each` item's arguments; elsewhere they read
        // as unset.
        Root::Each => return scope.each.map(|e| e.value),
        Root::EachIndex => {
            return scope.each.map(|e| INDEXES.get(e.index).unwrap_or(&NULL));
        }
    };
    root.get(reference.slot.value.as_str())
}

/// What a step of a path that finds nothing reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Absent {
    Null,
    Refuse,
}

fn walk<'s>(
    reference: &Reference,
    mut value: &'s Value,
    absent: Absent,
) -> Result<&'s Value, ToolError> {
    for (i, segment) in reference.path.iter().enumerate() {
        let found = match (&segment.value, value) {
            (Segment::Field(name), Value::Object(members)) => members.get(name.as_str()),
            (Segment::Index(index), Value::Array(items)) => {
                usize::try_from(*index).ok().and_then(|i| items.get(i))
            }
            (Segment::Field(name), other) => {
                return Err(path_error(
                    reference,
                    i,
                    &format!("field `{name}`"),
                    "an object",
                    other,
                ));
            }
            (Segment::Index(index), other) => {
                return Err(path_error(
                    reference,
                    i,
                    &format!("index [{index}]"),
                    "an array",
                    other,
                ));
            }
        };
        value = match (found, absent) {
            (Some(found), _) => found,
            (None, Absent::Null) => &NULL,
            (None, Absent::Refuse) => return Err(absent_step(reference, i, value)),
        };
    }
    Ok(value)
}

/// The error of a template or bare reference whose path step `at` finds nothing in `container`.
fn absent_step(reference: &Reference, at: usize, container: &Value) -> ToolError {
    let prefix = text_until(reference, at);
    let missing = match (reference.path.get(at).map(|s| &s.value), container) {
        (Some(Segment::Index(index)), Value::Array(items)) => format!(
            "index [{index}] is past the end of `{prefix}`, which has {} element{}",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        ),
        (Some(Segment::Field(name)), _) => format!("`{prefix}` has no field `{name}`"),
        (Some(Segment::Index(index)), _) => format!("`{prefix}` has no index [{index}]"),
        (None, _) => format!("`{prefix}` has nothing there"),
    };
    ToolError::new(
        Reason::Required,
        format!(
            "`{}` reads a path that does not exist: {missing}",
            text(reference)
        ),
    )
    .with_field(text(reference))
    .with_hint(format!(
        "a path that does not exist is never text: pass a value that has it, or guard the item \
         with `seq_when_call` on `{} != null`",
        text(reference)
    ))
}

fn path_error(
    reference: &Reference,
    at: usize,
    what: &str,
    needs: &str,
    found: &Value,
) -> ToolError {
    let prefix = text_until(reference, at);
    ToolError::new(
        Reason::Type,
        format!(
            "`{}` reads {what} of `{prefix}`, which is {}, not {needs}",
            text(reference),
            describe(found)
        ),
    )
    .with_field(text(reference))
    .with_hint(format!(
        "check what `{prefix}` holds at run time, or test it with a `when` first"
    ))
}

/// The error of a template or bare reference that reads an unset input or slot.
fn unset(slots: &Slots, reference: &Reference) -> ToolError {
    let name = &reference.slot.value;
    let (detail, hint) = match reference.root.value {
        Root::Args => (
            format!("input `{name}` was not passed"),
            format!(
                "pass `{name}` (as a run argument, or in the call that runs the group), or give \
                 the group a `when` such as `$args.{name} != null` so that it is skipped without it"
            ),
        ),
        Root::Out => (
            match slots.unwritten.get(name.as_str()) {
                Some(why) => format!("slot `{name}` was not written: {why}"),
                None => format!("slot `{name}` was not written: its writer was skipped or failed"),
            },
            format!(
                "guard this item with `seq_when_call` on `$out.{name} != null`, or make the writer always write"
            ),
        ),
        Root::Each | Root::EachIndex => (
            "there is no element here: the item has no `each`".to_owned(),
            "give the item an `each`, or read the value another way".to_owned(),
        ),
    };
    ToolError::new(Reason::Required, format!("`{}`: {detail}", text(reference)))
        .with_field(text(reference))
        .with_hint(hint)
}

/// The reference as written: `$args.hosts[0].name`.
pub(crate) fn text(reference: &Reference) -> String {
    reference.to_string()
}

fn text_until(reference: &Reference, segments: usize) -> String {
    reference.text_until(segments)
}

/// `a string`, `null`, `an array`: for messages.
pub(crate) fn describe(value: &Value) -> &'static str {
    seq_syntax::kind::described(value)
}

/// `value` as it enters an input or slot declared `ty`, or `None` when it does not fit.
/// A lenient boolean (`"true"`, `1`) becomes a JSON boolean, so that conditions, which
/// take only real booleans, read the input the way its declaration promises.
pub(crate) fn admit(ty: Type, value: Value) -> Option<Value> {
    if !type_accepts(ty, &value) {
        return None;
    }
    Some(match ty {
        Type::Bool => lenient_bool(&value).map_or(value, Value::Bool),
        Type::String | Type::Number | Type::Integer | Type::Array | Type::Object | Type::Any => {
            value
        }
    })
}
