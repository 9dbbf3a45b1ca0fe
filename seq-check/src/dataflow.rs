//! Slot dataflow: a read that can see an unset slot
//! because its writer may not write it.
//!
//! - W0601: in a serial group, `$out.x` read by an item when every earlier writer of `x` may
//!   leave it unset: the group's `missing: skip` (the tool may not be registered), `missing:
//!   degrade` without a fallback for `x`, `on_error: continue`, a `seq_when_call`, or a call of a
//!   group that has a `when` (a skipped callee writes nothing into `as`).
//! - W0602: `$out.r.f…` where `r` holds a call's result and the callee may leave `f` unset.
//!
//! What a call writes into its `as` slot (the engine implements the same): for a group target,
//! an object of the slots the group set; nothing at all when the group's `when` is false. For a
//! `#name` target, an object with one entry per group of that sequence that ran, each the object
//! of the slots it set (`{"probe": {"summary": …}}`).
//!
//! Only the six `seq_*` tools and calls of a group of the same sequence cannot go missing at run
//! time; any other tool, and a `#name` call, can. Reads inside the `when` of a
//! `seq_when_call` are not reported: a condition reads an unset slot as `null`, which is
//! how a sequence tests for it. Nor are reads in the `args` of a `seq_when_call` whose `when`
//! proves them set (`$out.a != null` guards `$out.a.…`; `$out.a.r != null` also guards the
//! callee's `r`): following the warnings' own advice silences them.
//!
//! Every group's writers are summarised once per slot, so the pass is linear in the batch.

mod diagnostics;
mod guards;

use crate::graph::model::{Names, call_target, call_targets};
use guards::{covers, negates, proven, proven_null, when_condition};
use seq_catalog::calls::ELSE;
use seq_catalog::{Catalog, SEQ_TOOLS, SEQ_WHEN_CALL};
use seq_syntax::ast::{
    Condition, Group, Item, Missing, OnError, Reference, Root, Segment, Sequence, Type, Value,
    ValueKind,
};
use seq_syntax::names::CallTarget;
use seq_syntax::{Diagnostic, Span};
use std::collections::{HashMap, HashSet};

/// For each sequence in order, the dataflow diagnostics of that sequence's file.
pub fn check_dataflow(sequences: &[&Sequence], catalog: &Catalog) -> Vec<Vec<Diagnostic>> {
    // Which tools may go missing is fixed by the language (`SEQ_TOOLS`), not by the catalog.
    let _ = catalog;
    let mut flow = Flow {
        sequences,
        names: Names::new(sequences),
        slots: HashMap::new(),
    };
    let mut out = vec![Vec::new(); sequences.len()];
    for (seq, sequence) in sequences.iter().enumerate() {
        for group in &sequence.groups {
            // Whether items see each other's slots is not known without `parallel`. Of the
            // items, only those known as written are followed: a broken one may have been a
            // writer. A left-out `missing`, `on_error` or `fallback` makes some writers
            // uncertain (`Slot::uncertain`), never the whole group.
            let whole = !group.hole("parallel");
            if whole
                && !group.is_parallel()
                && let Some(list) = out.get_mut(seq)
            {
                flow.serial_group(seq, group, list);
            }
        }
    }
    out
}

/// Why a writer may finish without writing its slot.
#[derive(Clone, Copy, Debug)]
enum Unwritten<'a> {
    /// A `seq_when_call`: writes only when its condition holds.
    WhenCall { when: Option<Span> },
    /// A call of a group that has a `when`.
    CalleeWhen { callee: &'a str, when: Span },
    /// `on_error: continue`.
    Continue { on_error: Span },
    /// `on_error: continue` over an `each` whose array may be absent: failed elements leave
    /// `null`, but with no array the item fails whole.
    /// `input`: the group input it reads, when it is one.
    EachAbsent { each: Span, input: Option<&'a str> },
    /// `missing: skip`, and the tool may be missing.
    MissingSkip { missing: Span },
    /// `missing: degrade` with no fallback for the slot.
    NoFallback { missing: Span },
    /// The item's failure is caught by its `error_as`: its `as` slot stays unset.
    Caught { error_as: Span },
    /// The slot is the item's `error_as`: written only when the item fails.
    OnFailure { error_as: Span },
}

/// Whether an `each` value is sure to be an array when the item runs: a literal array, or an
/// input declared `array` that is required or has a default (both are checked before anything
/// runs).
fn always_array(group: &Group, each: &Value) -> bool {
    each.kind.as_array().is_some()
        || each.kind.as_reference().is_some_and(|reference| {
            reference.root.value == Root::Args
                && reference.path.is_empty()
                && group.input(&reference.slot.value).is_some_and(|input| {
                    input.ty.value == Type::Array
                        && (input.default.is_some()
                            || input.required.as_ref().is_some_and(|r| r.value))
                })
        })
}

/// What the conditional calls writing one slot are to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Branches {
    /// An if and its else: one of them writes the slot.
    IfElse,
    /// Calls of groups under conditions that exclude each other nowhere, where one written
    /// as the other negated would make them an if and its else.
    MayBeIfElse,
    Neither,
}

/// A writer that may not write: which item, and why.
#[derive(Clone, Copy, Debug)]
struct Writer<'a> {
    item: &'a Item,
    index: usize,
    skip: Unwritten<'a>,
}

/// What the writers of one slot (all of a group's, or those before a read) guarantee.
#[derive(Clone, Debug, Default)]
struct Slot<'a> {
    writers: usize,
    /// The first writer that always writes.
    always: Option<usize>,
    /// The writer, when there is exactly one.
    only: Option<usize>,
    /// The first writers that may not write, as many as messages show.
    skips: Vec<Writer<'a>>,
    /// Writers whose writing depends on a field left out (`missing`, `on_error`, `fallback`):
    /// they may always write, so a read after one is not reported.
    uncertain: usize,
    /// The `seq_when_call` writers, all of them: two whose conditions exclude each other
    /// write the slot between them.
    branches: Vec<usize>,
}

impl<'a> Slot<'a> {
    fn add(&mut self, item: &'a Item, index: usize, skip: Option<Unwritten<'a>>, holes: bool) {
        self.writers += 1;
        self.only = (self.writers == 1).then_some(index);
        // Reasons that hold whatever the left-out fields said.
        let definite = matches!(
            skip,
            Some(
                Unwritten::WhenCall { .. }
                    | Unwritten::CalleeWhen { .. }
                    | Unwritten::Continue { .. }
                    | Unwritten::EachAbsent { .. }
                    | Unwritten::Caught { .. }
                    | Unwritten::OnFailure { .. }
            )
        );
        if let Some(Unwritten::WhenCall { .. }) = skip {
            self.branches.push(index);
        }
        if holes && !definite {
            self.uncertain += 1;
            return;
        }
        match skip {
            Some(skip) if self.skips.len() < diagnostics::SHOWN => {
                self.skips.push(Writer { item, index, skip });
            }
            Some(_) => {}
            None => {
                self.always.get_or_insert(index);
            }
        }
    }
}

/// What may leave a field of a call's result unset.
#[derive(Debug)]
enum ResultGap<'a> {
    /// Every writer of the slot may leave it unset.
    Writer(Writer<'a>, &'a str),
    /// Nothing writes the slot.
    NeverWritten(&'a str),
    /// The callee declares no such slot.
    NoSlot(&'a str),
    /// The group of a `#name` call may be skipped by its `when`.
    GroupSkipped { when: Span },
    /// The sequence of a `#name` call has no such group.
    NoGroup(&'a str),
}

struct Flow<'a> {
    sequences: &'a [&'a Sequence],
    names: Names<'a>,
    /// Each group's slots over all their writers, built when a caller first looks inside.
    slots: HashMap<(usize, usize), HashMap<&'a str, Slot<'a>>>,
}

impl<'a> Flow<'a> {
    fn serial_group(&mut self, seq: usize, group: &'a Group, out: &mut Vec<Diagnostic>) {
        let fallback = fallback_slots(group);
        let mut seen: HashMap<&str, Slot<'a>> = HashMap::new();
        let items = group.known_items();
        for (index, item) in items.iter().enumerate() {
            let when = when_condition(item);
            let guards = when.as_ref().map(proven).unwrap_or_default();
            // `$out.e == null`, where `e` is an earlier item's `error_as`: that item did not
            // fail, so it wrote its `as` slot (unless `missing` may have skipped it, or, under
            // `continue`, an error too large to catch left both unset).
            let none_skipped = !group.hole("missing")
                && group
                    .missing
                    .as_ref()
                    .is_none_or(|m| m.value == Missing::Fail)
                && !group.hole("on_error")
                && group
                    .on_error
                    .as_ref()
                    .is_none_or(|e| e.value != OnError::Continue);
            let succeeded: Vec<&str> = when
                .as_ref()
                .filter(|_| none_skipped)
                .map(proven_null)
                .unwrap_or_default()
                .iter()
                .filter(|r| r.root.value == Root::Out && r.path.is_empty())
                .filter_map(|r| {
                    items.get(..index)?.iter().find_map(|earlier| {
                        (earlier.error_as.as_ref()?.value == r.slot.value).then_some(earlier)
                    })
                })
                .filter_map(|earlier| {
                    let slot = earlier.as_slot.as_ref()?;
                    matches!(
                        self.unwritten(seq, group, earlier, &slot.value, &fallback),
                        Some(Unwritten::Caught { .. })
                    )
                    .then_some(slot.value.as_str())
                })
                .collect();
            for reference in reads(item) {
                if reference.root.value != Root::Out {
                    continue;
                }
                let slot = reference.slot.value.as_str();
                let guarded = |field_too: bool| {
                    guards
                        .iter()
                        .any(|guard| covers(guard, reference, field_too))
                        || (!field_too && succeeded.contains(&slot))
                };
                // No earlier writer at all is another rule's error.
                let Some(written) = seen.get(slot).filter(|s| s.writers > 0) else {
                    continue;
                };
                if written.always.is_none() && written.uncertain == 0 {
                    let branches = self.branches(seq, group, &written.branches);
                    if guarded(false) || branches == Branches::IfElse {
                        continue;
                    }
                    out.push(diagnostics::unset_slot(
                        reference,
                        written.writers,
                        &written.skips,
                        branches == Branches::MayBeIfElse
                            && written.branches.len() == written.writers,
                    ));
                    continue;
                }
                let array = group.slot(slot).is_some_and(|s| s.ty.value == Type::Array);
                if written.always.is_none() {
                    continue;
                }
                if let (Some(only), false) = (written.only, array)
                    && let Some(writer) = group.items.get(only)
                    && !guarded(true)
                    && let Some((at, gap)) = self.result_gap(seq, writer, reference)
                {
                    out.push(diagnostics::result_gap(
                        self.sequences,
                        seq,
                        reference,
                        at,
                        gap,
                    ));
                }
            }
            if let Some(slot) = &item.as_slot {
                let skip = self.unwritten(seq, group, item, &slot.value, &fallback);
                seen.entry(slot.value.as_str()).or_default().add(
                    item,
                    index,
                    skip,
                    uncertain_writers(group),
                );
            }
            if let Some(slot) = &item.error_as {
                let skip = Some(Unwritten::OnFailure {
                    error_as: slot.span,
                });
                seen.entry(slot.value.as_str())
                    .or_default()
                    .add(item, index, skip, false);
            }
        }
    }

    /// Why `item` of `group` may finish without writing `slot`; `None` when it always does.
    fn unwritten(
        &self,
        seq: usize,
        group: &'a Group,
        item: &'a Item,
        slot: &str,
        fallback: &HashSet<&str>,
    ) -> Option<Unwritten<'a>> {
        // With `else`, one of the two targets is called whatever `when` gives.
        if item.tool.value == SEQ_WHEN_CALL && item.arg(ELSE).is_none() {
            let when = item.arg("when").map(|v| v.span);
            return Some(Unwritten::WhenCall { when });
        }
        for (target, _) in call_targets(item) {
            if let Some((callee_seq, Some(callee))) = self.names.resolve(seq, target)
                && let Some(callee) = self.group(callee_seq, callee)
                && let Some(when) = &callee.when
            {
                let callee = callee.name.value.as_str();
                return Some(Unwritten::CalleeWhen {
                    callee,
                    when: when.span,
                });
            }
        }
        // An `each` item's caught elements leave `null` at their places: the slot is written.
        if let Some(error_as) = &item.error_as
            && item.each.is_none()
        {
            return Some(Unwritten::Caught {
                error_as: error_as.span,
            });
        }
        // An `each` item's failed elements leave `null` in place, so under `continue` it still
        // writes its slot, unless its array itself may be absent.
        if let Some(on_error) = &group.on_error
            && on_error.value == OnError::Continue
        {
            return match &item.each {
                Some(each) if always_array(group, each) => None,
                Some(each) => Some(Unwritten::EachAbsent {
                    each: each.span,
                    input: each
                        .kind
                        .as_reference()
                        .filter(|r| r.root.value == Root::Args && r.path.is_empty())
                        .map(|r| r.slot.value.as_str()),
                }),
                None => Some(Unwritten::Continue {
                    on_error: on_error.span,
                }),
            };
        }
        let may_be_missing = match call_target(item) {
            Some((CallTarget::Group(_), _)) => {
                call_targets(item).any(|(target, _)| target.is_sequence())
            }
            Some((CallTarget::Sequence(_), _)) => true,
            None => {
                Catalog::is_call(&item.tool.value) || !SEQ_TOOLS.contains(&item.tool.value.as_str())
            }
        };
        let missing = group.missing.as_ref().filter(|_| may_be_missing)?;
        match missing.value {
            Missing::Fail => None,
            Missing::Skip => Some(Unwritten::MissingSkip {
                missing: missing.span,
            }),
            Missing::Degrade => (!fallback.contains(slot)).then_some(Unwritten::NoFallback {
                missing: missing.span,
            }),
        }
    }

    /// Where and why a field read through call results may be unset. Each call's result is
    /// entered by the next segment of the path (a group's slot; for `#name`, a group and then
    /// its slot), as long as the slot has a single writer and that writer is a call.
    fn result_gap(
        &mut self,
        seq: usize,
        writer: &'a Item,
        reference: &'a Reference,
    ) -> Option<((usize, Option<usize>), ResultGap<'a>)> {
        let mut segments = reference.path.iter().map(|s| match &s.value {
            Segment::Field(name) => Some(name.as_str()),
            Segment::Index(_) => None,
        });
        let mut writer = (seq, writer);
        loop {
            // A call with two targets has no one callee to follow.
            if writer.1.arg(ELSE).is_some() {
                return None;
            }
            let (target, _) = call_target(writer.1)?;
            let (callee_seq, callee_group) = self.names.resolve(writer.0, target)?;
            let callee_group = match callee_group {
                Some(group) => group,
                None => {
                    let name = segments.next()??;
                    let Some(group) = self.names.group(callee_seq, name) else {
                        return Some(((callee_seq, None), ResultGap::NoGroup(name)));
                    };
                    if let Some(when) = &self.group(callee_seq, group)?.when {
                        let gap = ResultGap::GroupSkipped { when: when.span };
                        return Some(((callee_seq, Some(group)), gap));
                    }
                    group
                }
            };
            let name = segments.next()??;
            let callee = self.group(callee_seq, callee_group)?;
            // Which items of the callee write what is not known.
            if ["tools", "out", "missing", "on_error", "fallback"]
                .iter()
                .any(|f| callee.hole(f))
            {
                return None;
            }
            let at = (callee_seq, Some(callee_group));
            let Some(declared) = callee.output(name) else {
                return Some((at, ResultGap::NoSlot(name)));
            };
            let slot = self
                .slots_of(callee_seq, callee_group)
                .get(name)
                .cloned()
                .unwrap_or_default();
            match (slot.always, slot.skips.first(), slot.only) {
                (None, None, _) => return Some((at, ResultGap::NeverWritten(name))),
                (None, Some(&first), _) => return Some((at, ResultGap::Writer(first, name))),
                (Some(_), _, Some(only)) if declared.ty.value != Type::Array => {
                    writer = (callee_seq, callee.items.get(only)?);
                }
                (Some(_), _, _) => return None,
            }
        }
    }

    fn group(&self, seq: usize, group: usize) -> Option<&'a Group> {
        self.sequences.get(seq)?.groups.get(group)
    }

    /// Whether the `seq_when_call` writers at `branches` (places in `group`'s items) include
    /// an if and its else: one condition is the other negated, nothing between them changes
    /// what the condition reads, and each calls a group of this sequence that has no `when`,
    /// so one of them writes the slot. A condition that cannot be evaluated fails its item,
    /// which stops the group unless `on_error` is `continue`; then no pair counts.
    fn branches(&self, seq: usize, group: &'a Group, branches: &[usize]) -> Branches {
        if group.hole("on_error")
            || group
                .on_error
                .as_ref()
                .is_some_and(|e| e.value == OnError::Continue)
        {
            return Branches::Neither;
        }
        let items = group.known_items();
        let branch = |at: usize| {
            // An `error_as` catches a failed call, which then writes no `as`.
            let item = items.get(at).filter(|item| {
                item.each.is_none() && item.error_as.is_none() && !item.hole("error_as")
            })?;
            let (target @ CallTarget::Group(_), _) = call_target(item)? else {
                return None;
            };
            let (callee_seq, callee) = self.names.resolve(seq, target)?;
            self.group(callee_seq, callee?)
                .filter(|callee| callee.when.is_none() && !callee.hole("when"))?;
            Some((at, when_condition(item)?))
        };
        let Some(conditions) = branches
            .iter()
            .map(|&at| branch(at))
            .collect::<Option<Vec<_>>>()
        else {
            return Branches::Neither;
        };
        // Whether what `when` reads is the same from item `first` up to item `second`.
        let unchanged = |when: &Condition, first: usize, second: usize| {
            let read: Vec<&Reference> = when
                .references()
                .into_iter()
                .filter(|r| r.root.value == Root::Out)
                .collect();
            items.get(first..second).is_some_and(|between| {
                !between.iter().any(|item| {
                    [&item.as_slot, &item.error_as]
                        .into_iter()
                        .flatten()
                        .any(|slot| read.iter().any(|r| r.slot.value == slot.value))
                })
            })
        };
        let mut negated = false;
        for (k, (first, this)) in conditions.iter().enumerate() {
            for (second, that) in conditions.iter().skip(k + 1) {
                if negates(this, that) || negates(that, this) {
                    negated = true;
                    if unchanged(this, *first, *second) {
                        return Branches::IfElse;
                    }
                }
            }
        }
        // The help would negate the first condition in the second call: only where that makes
        // an if and its else.
        match conditions.as_slice() {
            [(first, this), (second, _), ..] if !negated && unchanged(this, *first, *second) => {
                Branches::MayBeIfElse
            }
            _ => Branches::Neither,
        }
    }

    /// The slots of a group over all their writers.
    fn slots_of(&mut self, seq: usize, index: usize) -> &HashMap<&'a str, Slot<'a>> {
        if !self.slots.contains_key(&(seq, index)) {
            let mut slots: HashMap<&'a str, Slot<'a>> = HashMap::new();
            if let Some(group) = self.group(seq, index) {
                let fallback = fallback_slots(group);
                for (i, item) in group.items.iter().enumerate() {
                    if let Some(slot) = &item.as_slot {
                        let skip = self.unwritten(seq, group, item, &slot.value, &fallback);
                        slots.entry(slot.value.as_str()).or_default().add(
                            item,
                            i,
                            skip,
                            uncertain_writers(group),
                        );
                    }
                    if let Some(slot) = &item.error_as {
                        let skip = Some(Unwritten::OnFailure {
                            error_as: slot.span,
                        });
                        slots
                            .entry(slot.value.as_str())
                            .or_default()
                            .add(item, i, skip, false);
                    }
                }
            }
            self.slots.insert((seq, index), slots);
        }
        self.slots.entry((seq, index)).or_default()
    }
}

/// Whether a field that decides if a writer may leave its slot unset was left out.
fn uncertain_writers(group: &Group) -> bool {
    ["missing", "on_error", "fallback"]
        .iter()
        .any(|f| group.hole(f))
}

/// The slots that `missing: degrade` has a fallback value for.
fn fallback_slots(group: &Group) -> HashSet<&str> {
    group
        .fallback
        .iter()
        .flat_map(|f| f.value.iter().map(|m| m.key.value.as_str()))
        .collect()
}

/// The references an item reads, in file order, leaving out the `when` of a `seq_when_call`.
fn reads(item: &Item) -> Vec<&Reference> {
    let mut found = Vec::new();
    let mut stack: Vec<&Value> = Vec::new();
    if let Some(args) = &item.args {
        for member in args.value.iter().rev() {
            if item.tool.value == SEQ_WHEN_CALL && member.key.value == "when" {
                continue;
            }
            stack.push(&member.value);
        }
    }
    while let Some(value) = stack.pop() {
        match &value.kind {
            ValueKind::String(template) => found.extend(template.references()),
            ValueKind::Ref(reference) => found.push(reference),
            ValueKind::Array(values) => stack.extend(values.iter().rev()),
            ValueKind::Object(members) => stack.extend(members.iter().rev().map(|m| &m.value)),
            ValueKind::Null | ValueKind::Bool(_) | ValueKind::Number(_) => {}
        }
    }
    found
}
