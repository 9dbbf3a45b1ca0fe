//! The words of W0601 and W0602: which writer may not write, why, and what to do.

use super::{ResultGap, Unwritten, Writer};
use seq_syntax::ast::{Reference, Segment, Sequence};
use seq_syntax::names::CallTarget;
use seq_syntax::{Code, Diagnostic, Span};

/// Writers named in a message, at most.
pub(super) const SHOWN: usize = 3;

/// W0601 at `reference`: all `count` earlier writers may leave the slot unset; `skips` are the
/// first of them.
/// `else_help`: the writers are conditional calls that one negated condition would make an if
/// and its else.
pub(super) fn unset_slot(
    reference: &Reference,
    count: usize,
    skips: &[Writer<'_>],
    else_help: bool,
) -> Diagnostic {
    let slot = reference.slot.value.as_str();
    let texts: Vec<String> = skips.iter().map(|w| writer_text(w, slot)).collect();
    let why = match count {
        1 => texts.join(""),
        n => format!(
            "none of its {n} earlier writers is sure to write it: {}{}",
            texts.join("; "),
            if n > skips.len() { "; …" } else { "" }
        ),
    };
    let mut diagnostic = Diagnostic::new(
        Code::SlotMayBeUnset,
        reference.span,
        format!("`{}` may be unset here: {why}", reference_text(reference)),
    );
    if let Some(first) = skips.first() {
        let mut help = skip_help(first.skip, slot, &guard(reference, None));
        if else_help {
            help.push_str(
                "; for an if and its else, write the second `when` as the first one negated, \
                 `!(…)`, so that one of them always writes",
            );
        }
        diagnostic = diagnostic.with_help(help);
    }
    let mut reasons = Vec::new();
    for writer in skips {
        if let Some(output) = &writer.item.as_slot {
            let text = format!("item {} writes `{slot}`", writer.index + 1);
            diagnostic = diagnostic.with_label(output.span, text);
        }
        // Several writers may share one reason (the group's `on_error`): label it once.
        if let Some(span) = skip_span(writer.skip)
            && !reasons.contains(&span)
        {
            reasons.push(span);
            diagnostic = diagnostic.with_label(span, "this may leave it unset");
        }
    }
    diagnostic
}

/// W0602 at `reference`; `at` is the callee (a sequence, or a group of one) that leaves the
/// field unset. Labels point into the callee only when it is in the reader's file.
pub(super) fn result_gap(
    sequences: &[&Sequence],
    seq: usize,
    reference: &Reference,
    at: (usize, Option<usize>),
    gap: ResultGap<'_>,
) -> Diagnostic {
    let (callee_seq, callee_group) = at;
    let sequence = sequences.get(callee_seq);
    let sequence_name = sequence.map_or("", |s| s.name.value.as_str());
    let group = callee_group.and_then(|g| sequence?.groups.get(g));
    let callee = match group {
        Some(group) if callee_seq == seq => format!("`{}`", group.name.value),
        Some(group) => format!("`#{sequence_name}/{}`", group.name.value),
        None => format!("`{}`", CallTarget::Sequence(sequence_name)),
    };
    let name_span = group.map(|g| g.name.span);
    let (verdict, why, help, label) = match gap {
        ResultGap::Writer(writer, slot) => (
            "may be unset here",
            format!(
                "{callee} may leave `{slot}` unset: {}",
                writer_text(&writer, slot)
            ),
            skip_help(writer.skip, slot, &guard(reference, Some(slot))),
            skip_span(writer.skip).map(|span| (span, "this may leave it unset".to_owned())),
        ),
        ResultGap::NeverWritten(slot) => (
            "is never set",
            format!("nothing in {callee} writes `{slot}`"),
            format!("write `{slot}` in {callee} with an item's `\"as\": \"{slot}\"`"),
            name_span.map(|span| (span, format!("nothing here writes `{slot}`"))),
        ),
        ResultGap::NoSlot(slot) => (
            "is never set",
            format!("{callee} declares no out slot `{slot}`"),
            "read a slot that the callee declares in its `out`".to_owned(),
            name_span.map(|span| (span, format!("declares no out slot `{slot}`"))),
        ),
        ResultGap::GroupSkipped { when } => (
            "may be unset here",
            format!(
                "{callee} is skipped when its `when` is false, and then has no entry in the result"
            ),
            "guard this read with a `seq_when_call` on the same condition, or drop the `when`"
                .to_owned(),
            Some((when, "the group is skipped when this is false".to_owned())),
        ),
        ResultGap::NoGroup(name) => (
            "is never set",
            format!("{callee} has no group `{name}`"),
            "read the entry of a group that the sequence has".to_owned(),
            None,
        ),
    };
    let diagnostic = Diagnostic::new(
        Code::CallResultFieldMayBeUnset,
        reference.span,
        format!("`{}` {verdict}: {why}", reference_text(reference)),
    )
    .with_help(help);
    match label {
        Some((span, text)) if callee_seq == seq => diagnostic.with_label(span, text),
        Some(_) | None => diagnostic,
    }
}

/// `$out.r.f[0]`, as written (without the braces of `${...}`).
fn reference_text(reference: &Reference) -> String {
    reference.to_string()
}

fn writer_text(writer: &Writer<'_>, slot: &str) -> String {
    let tool = &writer.item.tool.value;
    let item = format!("item {} (`{tool}`)", writer.index + 1);
    match writer.skip {
        Unwritten::WhenCall { .. } => format!("{item} writes it only when its `when` holds"),
        Unwritten::CalleeWhen { callee, .. } => {
            format!("{item} writes nothing when `{callee}` is skipped by its `when`")
        }
        Unwritten::Continue { .. } => {
            format!("{item} may fail, and `on_error: continue` goes on without `{slot}`")
        }
        Unwritten::EachAbsent { input, .. } => format!(
            "{item} fails whole when {} (failed elements only leave `null`), and \
             `on_error: continue` goes on without `{slot}`",
            match input {
                Some(input) => format!("`$args.{input}` is not passed"),
                None => "its `each` is not an array".to_owned(),
            }
        ),
        Unwritten::MissingSkip { .. } => {
            format!("{item} is skipped when `{tool}` is not registered (`missing: skip`)")
        }
        Unwritten::NoFallback { .. } => format!(
            "{item} writes nothing when `{tool}` is not registered: `missing: degrade` has no \
             fallback for `{slot}`"
        ),
        Unwritten::Caught { .. } => {
            format!("{item} may fail, and its `error_as` catches the failure without `{slot}`")
        }
        Unwritten::OnFailure { .. } => {
            format!("{item} writes its `error_as` slot `{slot}` only when it fails")
        }
    }
}

/// The condition that proves `reference` readable: its slot set, or with `field` its path up to
/// that field (`$out.a.r != null` for `$out.a.r.stdout`).
fn guard(reference: &Reference, field: Option<&str>) -> String {
    let upto = field
        .and_then(|field| {
            reference
                .path
                .iter()
                .position(|s| matches!(&s.value, Segment::Field(f) if f == field))
        })
        .map_or(0, |i| i + 1);
    format!("{} != null", reference.text_until(upto))
}

fn skip_help(skip: Unwritten<'_>, slot: &str, guard: &str) -> String {
    match skip {
        Unwritten::WhenCall { .. } => "give the `seq_when_call` an `else` target, called when \
                                       `when` is false; use `seq_call` if the call must always \
                                       happen; or read the slot in a `seq_when_call` guarded by \
                                       the same condition"
            .to_owned(),
        Unwritten::CalleeWhen { callee, .. } => format!(
            "drop `{callee}`'s `when`, or read the slot in a `seq_when_call` guarded by the same \
             condition"
        ),
        Unwritten::Continue { .. } => format!(
            "use `on_error: abort` or `retry`, or read it in the `args` of a `seq_when_call` \
             whose `when` is `{guard}`"
        ),
        Unwritten::EachAbsent { input, .. } => match input {
            Some(input) => format!(
                "declare `{input}` as `{{\"type\": \"array\", \"required\": true}}` or give it a \
                 `default`, so that the array is always there; or read `{slot}` in the `args` of a \
                 `seq_when_call` whose `when` is `{guard}`"
            ),
            None => format!(
                "read `{slot}` in the `args` of a `seq_when_call` whose `when` is `{guard}`"
            ),
        },
        Unwritten::MissingSkip { .. } => {
            format!("use `missing: fail`, or `degrade` with a `fallback` for `{slot}`")
        }
        Unwritten::NoFallback { .. } => format!("add `{slot}` to the group's `fallback`"),
        Unwritten::Caught { .. } | Unwritten::OnFailure { .. } => {
            format!("read it in the `args` of a `seq_when_call` whose `when` is `{guard}`")
        }
    }
}

fn skip_span(skip: Unwritten<'_>) -> Option<Span> {
    match skip {
        Unwritten::WhenCall { when } => when,
        Unwritten::CalleeWhen { when, .. } => Some(when),
        Unwritten::Continue { on_error } => Some(on_error),
        Unwritten::EachAbsent { each, .. } => Some(each),
        Unwritten::MissingSkip { missing } | Unwritten::NoFallback { missing } => Some(missing),
        Unwritten::Caught { error_as } | Unwritten::OnFailure { error_as } => Some(error_as),
    }
}
