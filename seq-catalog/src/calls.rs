//! Entry groups and callable groups (docs/reference.md, "A run"): a group that a `seq_call` or
//! `seq_when_call` item of its own sequence names as a literal `target` (or `else`) is *callable*, and runs
//! only when called, with that call's arguments; the others are the *entry* groups, the ones a
//! run of the sequence runs, in order. Group calls form no cycle, so a sequence with groups has
//! an entry group. A target that is not a literal names no group here (it is an error of its
//! own), so it makes no group callable.
//!
//! The engine runs exactly these groups; the checker and the editor ask the same question here.

use crate::Catalog;
use seq_syntax::Span;
use seq_syntax::ast::{Group, Item, Sequence, ValueKind};
use seq_syntax::names::CallTarget;
use std::collections::BTreeSet;

/// The names of the groups of `sequence` that an item of it calls.
pub fn callable_groups(sequence: &Sequence) -> BTreeSet<&str> {
    sequence.groups.iter().flat_map(group_calls).collect()
}

/// The groups (of its own sequence) that the items of `group` call, in item order.
pub fn group_calls(group: &Group) -> impl Iterator<Item = &str> {
    group
        .items
        .iter()
        .flat_map(call_targets)
        .filter_map(|(target, _)| match target {
            CallTarget::Group(name) => Some(name),
            CallTarget::Sequence(_) => None,
        })
}

/// The stored sequences (names without the `#`) that the items of `group` call, each with its
/// calling item, in item order.
pub fn sequence_calls(group: &Group) -> impl Iterator<Item = (&Item, &str)> {
    group
        .items
        .iter()
        .flat_map(|item| call_targets(item).map(move |(target, _)| (item, target)))
        .filter_map(|(item, target)| match target {
            CallTarget::Sequence(name) => Some((item, name)),
            CallTarget::Group(_) => None,
        })
}

/// The groups a run of `sequence` runs, in order: those no item of it calls.
pub fn entry_groups(sequence: &Sequence) -> impl Iterator<Item = &Group> {
    let callable = callable_groups(sequence);
    sequence
        .groups
        .iter()
        .filter(move |group| !callable.contains(group.name.value.as_str()))
}

/// `seq_when_call`'s argument naming what it calls when its `when` is false.
pub const ELSE: &str = "else";
/// `seq_when_call`'s arguments for its `else` target (default: its `args`).
pub const ELSE_ARGS: &str = "else_args";

/// The literal target of a call item and the span of its text. `None` for other items and for
/// targets that are absent, dynamic or malformed: those are other rules' findings.
pub fn call_target(item: &Item) -> Option<(CallTarget<'_>, Span)> {
    if !Catalog::is_call(&item.tool.value) {
        return None;
    }
    literal_target(item, "target")
}

/// The literal `else` target of a `seq_when_call` item, as [`call_target`] reads `target`.
pub fn else_target(item: &Item) -> Option<(CallTarget<'_>, Span)> {
    if item.tool.value != crate::SEQ_WHEN_CALL {
        return None;
    }
    literal_target(item, ELSE)
}

/// Every literal target a call item may call: its `target`, then a `seq_when_call`'s `else`.
/// Calls, depth, cycles and parallel safety count each of them.
pub fn call_targets(item: &Item) -> impl Iterator<Item = (CallTarget<'_>, Span)> {
    call_target(item).into_iter().chain(else_target(item))
}

fn literal_target<'i>(item: &'i Item, key: &str) -> Option<(CallTarget<'i>, Span)> {
    let value = item.arg(key)?;
    let ValueKind::String(template) = &value.kind else {
        return None;
    };
    let text = template.as_literal()?;
    let target = CallTarget::parse(text);
    if target.name().is_empty() {
        return None;
    }
    // The name without its quotes, as the other rules about targets point at it.
    Some((target, value.string_body(text)))
}
