//! `each` items: `$each` and `$each_index` only inside the arguments of an `each` item, an
//! `array` (or `any`) slot for what it writes, an array to go through, and at most
//! [`MAX_EACH`] elements in a literal. An item's `max_parallel` only with `each`, and such a
//! fan-out's elements read no slot the item itself writes.

use super::types::{member_references, reference_type, references};
use super::{Cx, fix};
use seq_syntax::ast::{Item, Reference, Root, Type};
use seq_syntax::limits::MAX_EACH;
use seq_syntax::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    outside(cx, out);
    for item in &cx.items {
        let item = item.item;
        without_each(item, out);
        own_slot(cx, item, out);
        let Some(each) = &item.each else { continue };
        slot(cx, item, out);
        if let Some(reference) = each.kind.as_reference() {
            not_array(cx, reference, out);
        }
        // Underlined from the first element past the bound.
        if let Some(elements) = each.kind.as_array()
            && elements.len() > MAX_EACH as usize
        {
            let past = elements
                .get(MAX_EACH as usize)
                .map_or(each.span, |e| e.span);
            out.push(
                Diagnostic::new(
                    Code::EachTooLong,
                    past,
                    format!(
                        "`each` lists {} elements; an item runs at most {MAX_EACH}",
                        elements.len()
                    ),
                )
                .with_help(
                    "split the elements over several items, or let one tool go through the list",
                ),
            );
        }
    }
}

/// E0550: `$each`/`$each_index` in the group's `when` or `fallback`, in an item without `each`,
/// or in the `each` value itself.
fn outside(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    let mut found: Vec<(&Reference, &str)> = Vec::new();
    if let Some(fallback) = &cx.group.fallback {
        let mut refs = Vec::new();
        member_references(&fallback.value, &mut refs);
        found.extend(refs.into_iter().map(|r| (r, "a group's `fallback`")));
    }
    if let Some(when) = &cx.group.when {
        for operand in when.operands() {
            if let seq_syntax::ast::OperandKind::Ref(r) = &operand.kind {
                found.push((r, "a group's `when`"));
            }
        }
    }
    for item in &cx.items {
        let mut refs = Vec::new();
        if let Some(each) = &item.item.each {
            references(each, &mut refs);
            found.extend(refs.drain(..).map(|r| (r, "the `each` value itself")));
        }
        // An `each` that broke is reported where it broke, not at every `$each` it feeds.
        if item.item.each.is_none() && !item.item.hole("each") {
            if let Some(args) = &item.item.args {
                member_references(&args.value, &mut refs);
            }
            found.extend(refs.drain(..).map(|r| (r, "an item without `each`")));
        }
    }
    for (reference, place) in found {
        if reference.root.value.has_slot() {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::EachOutsideEach,
                reference.span,
                format!("`{reference}` is read in {place}, where there is no element"),
            )
            .with_help(
                "`$each` and `$each_index` are read only in the `args` of an item with `each`, such as {\"tool\": \"echo\", \"each\": $args.hosts, \"args\": {\"value\": $each}}",
            ),
        );
    }
}

/// E0551: the `as` slot of an `each` item is declared with a type other than `array`/`any`.
fn slot(cx: &Cx<'_>, item: &Item, out: &mut Vec<Diagnostic>) {
    let Some(output) = &item.as_slot else { return };
    let Some(decl) = cx.group.slot(&output.value) else {
        return;
    };
    match decl.ty.value {
        Type::Array | Type::Any => {}
        Type::String | Type::Number | Type::Integer | Type::Bool | Type::Object => {
            let name = &output.value;
            out.push(
                Diagnostic::new(
                    Code::EachSlotNotArray,
                    output.span,
                    format!(
                        "an `each` item writes an array of results, but slot `{name}` is declared `{}`",
                        decl.ty.value.as_str()
                    ),
                )
                .with_label(decl.ty.span, "declared here")
                .with_help(format!(
                    "declare `{name}` as `array`: it gets one value per element, in element order"
                ))
                // Other writers of the slot, or readers of it, may expect the old type.
                .with_fix(fix::fix(
                    format!("declare `{name}` as `array`"),
                    vec![fix::edit(decl.ty.span, "array")],
                ))
                .maybe_incorrect(),
            );
        }
    }
}

/// E0552: `each` reads an input or slot whose declared type is not an array.
fn not_array(cx: &Cx<'_>, reference: &Reference, out: &mut Vec<Diagnostic>) {
    let Some((ty, declared)) = reference_type(cx, reference) else {
        return;
    };
    match ty {
        Type::Array | Type::Any => {}
        Type::String | Type::Number | Type::Integer | Type::Bool | Type::Object => {
            let what = match reference.root.value {
                Root::Args => "input",
                Root::Out => "slot",
                Root::Each | Root::EachIndex => "value",
            };
            out.push(
                Diagnostic::new(
                    Code::EachNotArray,
                    reference.span,
                    format!(
                        "`each` goes through an array, but `{reference}` is declared `{}`",
                        ty.as_str()
                    ),
                )
                .with_label(declared, "declared here")
                .with_help(format!(
                    "declare the {what} `array`, or point `each` at an array"
                )),
            );
        }
    }
}

/// E0556: an item's `max_parallel` without `each`, where it bounds nothing.
fn without_each(item: &Item, out: &mut Vec<Diagnostic>) {
    let Some(bound) = &item.max_parallel else {
        return;
    };
    if item.each.is_some() || item.hole("each") {
        return;
    }
    out.push(
        Diagnostic::new(
            Code::MaxParallelWithoutEach,
            bound.span,
            "`max_parallel` on an item without `each`: the item runs once, so nothing runs side by side",
        )
        .with_help(
            "add `each` to run the item once per element, at most this many at once, or move \
             `max_parallel` to the group to bound every run of its tools",
        ),
    );
}

/// E0557: in a serial group, an element of a fan-out reads a slot its own item writes. The
/// item writes it after its last element, so an element would see only what earlier items wrote
/// there, never its siblings' results. (A parallel group reads no `$out` at all: E0506.)
fn own_slot(cx: &Cx<'_>, item: &Item, out: &mut Vec<Diagnostic>) {
    let (Some(bound), Some(args)) = (&item.max_parallel, &item.args) else {
        return;
    };
    if item.each.is_none() || cx.group.hole("parallel") || cx.group.is_parallel() {
        return;
    }
    let mut refs = Vec::new();
    member_references(&args.value, &mut refs);
    for reference in refs {
        if reference.root.value != Root::Out {
            continue;
        }
        let Some(writes) = [&item.as_slot, &item.error_as]
            .into_iter()
            .flatten()
            .find(|slot| slot.value == reference.slot.value)
        else {
            continue;
        };
        let name = &reference.slot.value;
        out.push(
            Diagnostic::new(
                Code::FanOutReadsOwnSlot,
                reference.span,
                format!(
                    "`{reference}` reads `{name}`, which this item writes once its elements have \
                     all ended; its elements run side by side and see only what earlier items wrote"
                ),
            )
            .with_label(writes.span, "written here")
            .with_label(bound.span, "the elements run side by side")
            .with_help(format!(
                "read `{name}` in an item after this one, or have an earlier item write the value \
                 the elements need to a slot of its own"
            )),
        );
    }
}
