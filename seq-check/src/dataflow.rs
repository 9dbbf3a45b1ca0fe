//! Slot dataflow (issue rule 8, design §7.5, §8.2 rule 2, §8.4): a read that can see an unset slot
//! because its writer may not write it.
//!
//! - W0601: in a serial group, `$out.x` read by an item when every earlier writer of `x` may
//!   leave it unset: the group's `missing: skip` (the tool may not be registered), `missing:
//!   degrade` without a fallback for `x`, `on_error: continue`, a `seq_when_call`, or a call of a
//!   group that has a `when` (a skipped callee writes nothing into `as`).
//! - W0602: `$out.r.f...` where `r` holds a call's result and the callee may leave `f` unset.
//!
//! What a call writes into its `as` slot (the engine implements the same): for a group target,
//! an object of the slots the group set; nothing at all when the group's `when` is false. For a
//! `#name` target, an object with one entry per group of that sequence that ran, each the object
//! of the slots it set (`{"probe": {"summary": ...}}`).
//!
//! Reads inside the `when` of a `seq_when_call` are not reported: a condition reads an unset
//! slot as `null` (D-4), which is how a sequence tests for it.

use crate::catalog::{Catalog, SEQ_TOOLS, SEQ_WHEN_CALL};
use crate::graph::model::{Names, Target, call_target};
use seq_syntax::ast::{Group, Item, Missing, OnError, Reference, Root, Segment, Sequence, Type, Value, ValueKind};
use seq_syntax::{Code, Diagnostic, Span, Spanned};
use std::collections::HashMap;

/// For each sequence in order, the dataflow diagnostics of that sequence's file.
pub fn check_dataflow(sequences: &[&Sequence], catalog: &Catalog) -> Vec<Vec<Diagnostic>> {
    let _ = catalog;
    let mut flow = Flow {
        sequences,
        names: Names::new(sequences),
        writers: HashMap::new(),
    };
    let mut out = vec![Vec::new(); sequences.len()];
    for (seq, sequence) in sequences.iter().enumerate() {
        for group in &sequence.groups {
            if !group.is_parallel()
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
    /// `missing: skip`, and the tool may be missing.
    MissingSkip { missing: Span },
    /// `missing: degrade` with no fallback for the slot.
    NoFallback { missing: Span },
}

/// A writer that may not write, for messages: which item, in which group.
#[derive(Clone, Copy, Debug)]
struct Writer<'a> {
    item: &'a Item,
    index: usize,
    skip: Unwritten<'a>,
}

/// What may leave a field of a call's result unset.
enum ResultGap<'a> {
    Writer(Writer<'a>),
    NeverWritten,
    NoSlot,
    GroupSkipped { when: Span },
    NoGroup,
}

struct Flow<'a> {
    sequences: &'a [&'a Sequence],
    names: Names<'a>,
    /// The writers of each slot of a group, by item index, built when first needed.
    writers: HashMap<(usize, usize), HashMap<&'a str, Vec<usize>>>,
}

impl<'a> Flow<'a> {
    fn serial_group(&mut self, seq: usize, group: &'a Group, out: &mut Vec<Diagnostic>) {
        let mut written: HashMap<&str, Vec<usize>> = HashMap::new();
        for (index, item) in group.items.iter().enumerate() {
            for reference in reads(item) {
                if reference.root.value != Root::Out {
                    continue;
                }
                if let Some(earlier) = written.get(reference.slot.value.as_str()) {
                    self.read(seq, group, earlier, reference, out);
                }
            }
            if let Some(slot) = &item.output {
                written.entry(slot.value.as_str()).or_default().push(index);
            }
        }
    }

    /// A read of `$out.SLOT...` that `earlier` items wrote.
    fn read(&mut self, seq: usize, group: &'a Group, earlier: &[usize], reference: &Reference, out: &mut Vec<Diagnostic>) {
        let slot = reference.slot.value.as_str();
        let skips: Option<Vec<Writer<'a>>> = earlier
            .iter()
            .map(|&index| {
                let item = group.items.get(index)?;
                let skip = self.skip(seq, group, item, slot)?;
                Some(Writer { item, index, skip })
            })
            .collect();
        if let Some(skips) = skips {
            out.push(unset_slot(reference, slot, &skips));
            return;
        }
        let array = group.output(slot).is_some_and(|s| s.ty.value == Type::Array);
        if let ([only], false) = (earlier, array)
            && let Some(item) = group.items.get(*only)
            && let Some(diagnostic) = self.read_into_result(seq, item, reference)
        {
            out.push(diagnostic);
        }
    }

    /// Why `item` of `group` may finish without writing `slot`; `None` when it always writes it.
    fn skip(&self, seq: usize, group: &'a Group, item: &'a Item, slot: &str) -> Option<Unwritten<'a>> {
        if item.tool.value == SEQ_WHEN_CALL {
            return Some(Unwritten::WhenCall { when: item.arg("when").map(|v| v.span) });
        }
        let target = call_target(item);
        if let Some((target, _)) = target
            && let Some((callee_seq, Some(callee))) = self.names.resolve(seq, target)
            && let Some(callee) = self.sequences.get(callee_seq).and_then(|s| s.groups.get(callee))
            && let Some(when) = &callee.when
        {
            return Some(Unwritten::CalleeWhen { callee: &callee.name.value, when: when.span });
        }
        if let Some(on_error) = &group.on_error
            && on_error.value == OnError::Continue
        {
            return Some(Unwritten::Continue { on_error: on_error.span });
        }
        // A group of the same sequence cannot go missing; a tool, or a `#name`, can (8.2).
        let may_be_missing = match target {
            Some((Target::Group(_), _)) => false,
            Some((Target::Sequence(_), _)) => true,
            None => Catalog::is_call(&item.tool.value) || !SEQ_TOOLS.contains(&item.tool.value.as_str()),
        };
        let missing = group.missing.as_ref()?;
        match missing.value {
            Missing::Fail => None,
            Missing::Skip => may_be_missing.then_some(Unwritten::MissingSkip { missing: missing.span }),
            Missing::Degrade => {
                let covered = group
                    .fallback
                    .as_ref()
                    .is_some_and(|f| f.value.iter().any(|m| m.key.value == slot));
                (may_be_missing && !covered).then_some(Unwritten::NoFallback { missing: missing.span })
            }
        }
    }

    /// W0602: the read goes into the result of the call `writer` and the callee may leave that
    /// field unset. Follows calls as deep as the path goes.
    fn read_into_result(&mut self, seq: usize, writer: &'a Item, reference: &Reference) -> Option<Diagnostic> {
        let mut segments = reference.path.iter();
        let mut writer = (seq, writer);
        let mut shown = format!("$out.{}", reference.slot.value);
        loop {
            let (target, _) = call_target(writer.1)?;
            let (callee_seq, callee_group) = self.names.resolve(writer.0, target)?;
            let callee_group = match callee_group {
                Some(group) => group,
                None => {
                    let name = field(segments.next()?)?;
                    shown.push_str(&format!(".{name}"));
                    let Some(group) = self.names.group(callee_seq, name) else {
                        return Some(self.result_gap(seq, reference, &shown, (callee_seq, None), ResultGap::NoGroup));
                    };
                    let when = self.group(callee_seq, group)?.when.as_ref();
                    if let Some(when) = when {
                        let gap = ResultGap::GroupSkipped { when: when.span };
                        return Some(self.result_gap(seq, reference, &shown, (callee_seq, Some(group)), gap));
                    }
                    group
                }
            };
            let slot = field(segments.next()?)?;
            shown.push_str(&format!(".{slot}"));
            let callee = self.group(callee_seq, callee_group)?;
            let at = (callee_seq, Some(callee_group));
            let Some(declared) = callee.output(slot) else {
                return Some(self.result_gap(seq, reference, &shown, at, ResultGap::NoSlot));
            };
            let writers = self.writers_of(callee_seq, callee_group).get(slot).cloned().unwrap_or_default();
            let mut first_skip = None;
            let mut always = None;
            for &index in &writers {
                let item = callee.items.get(index)?;
                match self.skip(callee_seq, callee, item, slot) {
                    Some(skip) => {
                        first_skip.get_or_insert(Writer { item, index, skip });
                    }
                    None => {
                        always.get_or_insert(item);
                    }
                }
            }
            match (always, first_skip) {
                (None, None) => return Some(self.result_gap(seq, reference, &shown, at, ResultGap::NeverWritten)),
                (None, Some(writer)) => {
                    return Some(self.result_gap(seq, reference, &shown, at, ResultGap::Writer(writer)));
                }
                (Some(item), _) if writers.len() == 1 && declared.ty.value != Type::Array => {
                    writer = (callee_seq, item);
                }
                (Some(_), _) => return None,
            }
        }
    }

    fn group(&self, seq: usize, group: usize) -> Option<&'a Group> {
        self.sequences.get(seq)?.groups.get(group)
    }

    fn writers_of(&mut self, seq: usize, group: usize) -> &HashMap<&'a str, Vec<usize>> {
        let sequences = self.sequences;
        self.writers.entry((seq, group)).or_insert_with(|| {
            let mut writers: HashMap<&'a str, Vec<usize>> = HashMap::new();
            let items = sequences.get(seq).and_then(|s| s.groups.get(group)).map_or(&[][..], |g| &g.items);
            for (index, item) in items.iter().enumerate() {
                if let Some(slot) = &item.output {
                    writers.entry(slot.value.as_str()).or_default().push(index);
                }
            }
            writers
        })
    }

    /// W0602 at `reference`; `at` is the callee (a sequence, or a group of one) that leaves the
    /// field unset. Labels point into the callee only when it is in the reader's file.
    fn result_gap(&self, seq: usize, reference: &Reference, shown: &str, at: (usize, Option<usize>), gap: ResultGap<'a>) -> Diagnostic {
        let (callee_seq, callee_group) = at;
        let sequence_name = self.sequences.get(callee_seq).map_or("", |s| s.name.value.as_str());
        let group = callee_group.and_then(|g| self.group(callee_seq, g));
        let callee = match group {
            Some(group) if callee_seq == seq => format!("`{}`", group.name.value),
            Some(group) => format!("`#{sequence_name}/{}`", group.name.value),
            None => format!("`#{sequence_name}`"),
        };
        let field = shown.rsplit('.').next().unwrap_or_default();
        let (why, help, label) = match gap {
            ResultGap::Writer(writer) => {
                let why = format!("{callee} may leave `{field}` unset: {}", writer_text(&writer, field));
                (why, skip_help(writer.skip, field), skip_span(writer.skip))
            }
            ResultGap::NeverWritten => (
                format!("nothing in {callee} writes `{field}`"),
                format!("write `{field}` in {callee} with an item's `\"as\": \"{field}\"`"),
                group.map(|g| g.name.span),
            ),
            ResultGap::NoSlot => (
                format!("{callee} declares no out slot `{field}`"),
                "read a slot that the callee declares in its `out`".to_owned(),
                group.map(|g| g.name.span),
            ),
            ResultGap::GroupSkipped { when } => (
                format!("{callee} is skipped when its `when` is false, and then has no entry in the result"),
                "guard this read with a `seq_when_call` on the same condition, or drop the `when`".to_owned(),
                Some(when),
            ),
            ResultGap::NoGroup => (
                format!("{callee} has no group `{field}`"),
                "read the entry of a group that the sequence has".to_owned(),
                None,
            ),
        };
        let diagnostic = Diagnostic::new(
            Code::CallResultFieldMayBeUnset,
            reference.span,
            format!("`{shown}` may be unset here: {why}"),
        )
        .with_help(help);
        match label {
            Some(span) if callee_seq == seq => diagnostic.with_label(span, "this may leave it unset"),
            Some(_) | None => diagnostic,
        }
    }
}

/// Writers named in a message, at most.
const SHOWN: usize = 3;

/// W0601 at `reference`.
fn unset_slot(reference: &Reference, slot: &str, writers: &[Writer<'_>]) -> Diagnostic {
    let texts: Vec<String> = writers.iter().take(SHOWN).map(|w| writer_text(w, slot)).collect();
    let why = match writers.len() {
        1 => texts.join(""),
        n => format!(
            "none of its {n} earlier writers is sure to write it: {}{}",
            texts.join("; "),
            if n > SHOWN { "; …" } else { "" }
        ),
    };
    let mut diagnostic = Diagnostic::new(
        Code::SlotMayBeUnset,
        reference.span,
        format!("`$out.{slot}` may be unset here: {why}"),
    );
    if let Some(first) = writers.first() {
        diagnostic = diagnostic.with_help(skip_help(first.skip, slot));
    }
    for writer in writers.iter().take(SHOWN) {
        if let Some(output) = &writer.item.output {
            diagnostic = diagnostic.with_label(output.span, format!("item {} writes `{slot}`", writer.index + 1));
        }
        if let Some(span) = skip_span(writer.skip) {
            diagnostic = diagnostic.with_label(span, "this may leave it unset");
        }
    }
    diagnostic
}

fn writer_text(writer: &Writer<'_>, slot: &str) -> String {
    let item = format!("item {} (`{}`)", writer.index + 1, writer.item.tool.value);
    match writer.skip {
        Unwritten::WhenCall { .. } => format!("{item} writes it only when its `when` holds"),
        Unwritten::CalleeWhen { callee, .. } => {
            format!("{item} writes nothing when `{callee}` is skipped by its `when`")
        }
        Unwritten::Continue { .. } => {
            format!("{item} may fail, and `on_error: continue` goes on without `{slot}`")
        }
        Unwritten::MissingSkip { .. } => {
            format!("{item} is skipped when `{}` is not registered (`missing: skip`)", writer.item.tool.value)
        }
        Unwritten::NoFallback { .. } => format!(
            "{item} writes nothing when `{}` is not registered: `missing: degrade` has no fallback for `{slot}`",
            writer.item.tool.value
        ),
    }
}

fn skip_help(skip: Unwritten<'_>, slot: &str) -> String {
    match skip {
        Unwritten::WhenCall { .. } => "use `seq_call` if the call must always happen, or read the slot in a \
                                  `seq_when_call` guarded by the same condition"
            .to_owned(),
        Unwritten::CalleeWhen { callee, .. } => format!(
            "drop `{callee}`'s `when`, or read the slot in a `seq_when_call` guarded by the same condition"
        ),
        Unwritten::Continue { .. } => "use `on_error: abort` or `retry`, or read the slot in a `seq_when_call` whose \
                                  condition checks it"
            .to_owned(),
        Unwritten::MissingSkip { .. } => format!("use `missing: fail`, or `degrade` with a `fallback` for `{slot}`"),
        Unwritten::NoFallback { .. } => format!("add `{slot}` to the group's `fallback`"),
    }
}

fn skip_span(skip: Unwritten<'_>) -> Option<Span> {
    match skip {
        Unwritten::WhenCall { when } => when,
        Unwritten::CalleeWhen { when, .. } => Some(when),
        Unwritten::Continue { on_error } => Some(on_error),
        Unwritten::MissingSkip { missing } | Unwritten::NoFallback { missing } => Some(missing),
    }
}

fn field(segment: &Spanned<Segment>) -> Option<&str> {
    match &segment.value {
        Segment::Field(name) => Some(name),
        Segment::Index(_) => None,
    }
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
