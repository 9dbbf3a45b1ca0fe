//! Entry groups and callable groups (docs/reference.md, "A run"): a group that a `seq_call` or
//! `seq_when_call` item of its own sequence names as a literal `target` is *callable*, and runs
//! only when called, with that call's arguments; the others are the *entry* groups, the ones a
//! run of the sequence runs, in order. Group calls form no cycle, so a sequence with groups has
//! an entry group. A target that is not a literal names no group here (it is an error of its
//! own), so it makes no group callable.
//!
//! The engine runs exactly these groups; the checker and the editor ask the same question here.

use crate::graph::model::call_target;
use seq_syntax::ast::{Group, Item, Sequence};
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
        .filter_map(|item| match call_target(item)?.0 {
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
        .filter_map(|item| match call_target(item)?.0 {
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
