//! The rules that look at one sequence at a time
//! (with the batch at hand to resolve `#name`). One module per family; each pushes diagnostics.

mod args;
mod conditions;
mod each;
pub(crate) mod fix;
mod groups;
mod inputs;
mod jq;
mod lookalikes;
mod parallel;
mod refs;
mod shell;
mod slots;
mod targets;
mod types;
pub(crate) mod when_call;

use seq_catalog::Catalog;
use seq_syntax::Diagnostic;
use seq_syntax::ast::{Condition, Group, Item, Sequence};
use std::collections::HashMap;

/// The sequences checked together, by name. When two share a name the first wins, so that
/// lookups stay deterministic.
#[derive(Debug)]
pub(crate) struct Batch<'a> {
    sequences: &'a [&'a Sequence],
    by_name: HashMap<&'a str, usize>,
}

impl<'a> Batch<'a> {
    pub(crate) fn new(sequences: &'a [&'a Sequence]) -> Batch<'a> {
        let mut by_name = HashMap::with_capacity(sequences.len());
        for (i, sequence) in sequences.iter().enumerate() {
            by_name.entry(sequence.name.value.as_str()).or_insert(i);
        }
        Batch { sequences, by_name }
    }

    pub(crate) fn sequence(&self, name: &str) -> Option<&'a Sequence> {
        self.by_name
            .get(name)
            .and_then(|&i| self.sequences.get(i))
            .copied()
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.sequences.iter().map(|s| s.name.value.as_str())
    }
}

/// What the rules of one group share.
pub(crate) struct Cx<'a> {
    pub sequence: &'a Sequence,
    pub group: &'a Group,
    pub batch: &'a Batch<'a>,
    /// The sequence's groups by name (the first of a duplicated name): one lookup per call
    /// item, so that many items and groups are not quadratic.
    pub groups: &'a HashMap<&'a str, &'a Group>,
    pub catalog: &'a Catalog,
    /// The group's items, each with the parsed `when` of a `seq_when_call`.
    pub items: Vec<ItemCx<'a>>,
}

pub(crate) struct ItemCx<'a> {
    pub item: &'a Item,
    pub when: Option<Condition>,
}

/// Checks one sequence of the batch.
pub(crate) fn check_sequence(
    sequence: &Sequence,
    batch: &Batch<'_>,
    catalog: &Catalog,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    groups::duplicate_names(sequence, &mut out);
    let mut by_name = HashMap::with_capacity(sequence.groups.len());
    for group in &sequence.groups {
        by_name.entry(group.name.value.as_str()).or_insert(group);
    }
    for group in &sequence.groups {
        let items = group
            .items
            .iter()
            .map(|item| ItemCx {
                item,
                when: when_call::condition(item, &mut out),
            })
            .collect();
        let cx = Cx {
            sequence,
            group,
            batch,
            groups: &by_name,
            catalog,
            items,
        };
        groups::fields(&cx, &mut out);
        let reads = refs::check(&cx, &mut out);
        lookalikes::check(&cx, &mut out);
        slots::check(&cx, &reads, &mut out);
        parallel::check(&cx, &mut out);
        args::check(&cx, &mut out);
        targets::check(&cx, &mut out);
        conditions::check(&cx, &mut out);
        inputs::check(&cx, &mut out);
        shell::check(&cx, &mut out);
        each::check(&cx, &mut out);
        jq::check(&cx, &mut out);
    }
    out
}
