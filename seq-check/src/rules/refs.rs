//! References: `$args.X` must be declared in `in`; `$out.X` is read only in
//! a serial group, by an item after the one that wrote it, and never in the group's `when` or
//! `fallback`. A path must fit the slot's declared type.

use super::types::{declaration, member_references, references};
use super::{Cx, fix};
use seq_catalog::Catalog;
use seq_syntax::ast::{CompactString, Reference, Root, Segment, Type};
use seq_syntax::diagnostic::did_you_mean;
use seq_syntax::{Code, Diagnostic, Span};
use std::collections::HashSet;

/// Where a reference stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Site {
    /// The group's `when`.
    When,
    Fallback,
    /// The arguments of item `i` (also the `when` of a `seq_when_call`).
    Item(usize),
}

/// What the group's references read.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    /// The inputs read as `$args.NAME`.
    pub inputs: HashSet<CompactString>,
    /// The slots read as `$out.NAME`.
    pub slots: HashSet<CompactString>,
}

/// Checks every reference of the group; returns what it reads.
pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) -> Reads {
    let mut sites: Vec<(Site, &Reference)> = Vec::new();
    if let Some(when) = &cx.group.when {
        for reference in when.references() {
            sites.push((Site::When, reference));
        }
    }
    if let Some(fallback) = &cx.group.fallback {
        let mut found = Vec::new();
        member_references(&fallback.value, &mut found);
        sites.extend(found.into_iter().map(|r| (Site::Fallback, r)));
    }
    for (i, item) in cx.items.iter().enumerate() {
        let mut found = Vec::new();
        if let Some(args) = &item.item.args {
            for member in &args.value {
                // The `when` of `seq_when_call` is read from its parsed condition below.
                if item.when.is_some() && member.key.value == "when" {
                    continue;
                }
                references(&member.value, &mut found);
            }
        }
        // The array of an `each` is read like the item's arguments, once, before its elements.
        if let Some(each) = &item.item.each {
            references(each, &mut found);
        }
        if let Some(when) = &item.when {
            found.extend(when.references());
        }
        sites.extend(found.into_iter().map(|r| (Site::Item(i), r)));
    }
    sites.sort_by_key(|(_, r)| r.span);

    let mut used = Reads::default();
    // `"retries": "$args.NAME"` reads its input too (`groups::retries_from` checks it).
    if let Some(from) = &cx.group.retries_from {
        used.inputs.insert(from.value.clone());
    }
    let mut offered_declaration = HashSet::new();
    for (site, reference) in sites {
        match reference.root.value {
            Root::Args => {
                used.inputs.insert(reference.slot.value.clone());
                if cx.group.input(&reference.slot.value).is_none() && !cx.group.hole("in") {
                    let offer = offered_declaration.insert(reference.slot.value.clone());
                    out.push(undeclared_input(cx, reference, offer));
                }
            }
            Root::Out => {
                used.slots.insert(reference.slot.value.clone());
                out_read(cx, site, reference, out);
            }
            // Where an element may be read is `each::check`'s.
            Root::Each | Root::EachIndex => {}
        }
        path_fits(cx, reference, out);
        if reference.root.value == Root::Out {
            result_fields(cx, reference, out);
        }
    }
    used
}

fn undeclared_input(cx: &Cx<'_>, reference: &Reference, offer_declaration: bool) -> Diagnostic {
    let name = &reference.slot.value;
    let group = &cx.group.name.value;
    // From `$` to the end of the name: what an editor underlines is the reference read.
    let read = Span::new(
        reference.span.start.min(reference.slot.span.start),
        reference.slot.span.end,
    );
    let d = Diagnostic::new(
        Code::UndeclaredInput,
        read,
        format!("`$args.{name}` reads an input that group `{group}` does not declare in `in`"),
    );
    let declared = cx.group.inputs.iter().map(|s| s.name.value.as_str());
    if let Some(best) = did_you_mean(name, declared) {
        return d
            .with_help(format!("did you mean `$args.{best}`?"))
            .with_replacement(format!("read `$args.{best}`"), reference.slot.span, best)
            .maybe_incorrect();
    }
    let d = d.with_help(format!(
        "declare it in the group's `in`, such as `\"{name}\": \"string\"`; a group reads only its own inputs"
    ));
    match fix::declare(&cx.group.inputs, name, Type::Any) {
        Some(edit) if offer_declaration => {
            // The type is a guess.
            d.with_fix(fix::fix(format!("declare `{name}` in `in`"), vec![edit]))
                .maybe_incorrect()
        }
        Some(_) | None => d,
    }
}

fn out_read(cx: &Cx<'_>, site: Site, reference: &Reference, out: &mut Vec<Diagnostic>) {
    let name = &reference.slot.value;
    let text = fix::reference_text(reference);
    let index = match site {
        Site::When | Site::Fallback => {
            let place = if site == Site::When {
                "`when`"
            } else {
                "`fallback`"
            };
            out.push(
                Diagnostic::new(
                    Code::OutOutsideItems,
                    reference.span,
                    format!("`{text}` in the group's {place}: only items read `$out` slots"),
                )
                .with_help(format!(
                    "the group's {place} reads only `$args`; pass the value in as an input and read `$args.{name}`"
                )),
            );
            return;
        }
        Site::Item(index) => index,
    };
    // Whether the group is parallel is not known.
    if cx.group.hole("parallel") {
        return;
    }
    if cx.group.is_parallel() {
        let mut d = Diagnostic::new(
            Code::OutInParallel,
            reference.span,
            format!(
                "`{text}` is read in a parallel group, where items cannot see each other's slots"
            ),
        )
        .with_help("set `\"parallel\": false` so that items run in order and see earlier writes");
        if let Some(parallel) = &cx.group.parallel {
            d = d.with_label(parallel.span, "the group is parallel here");
        }
        if let Some(edit) = fix::make_serial(cx.group) {
            // Running the group serially changes what it does.
            d = d
                .with_fix(fix::fix("run the group serially", vec![edit]))
                .maybe_incorrect();
        }
        out.push(d);
        return;
    }
    // Which items before this one write what is known only up to the first broken item.
    let known = cx.group.known_items().len();
    let written_before = cx.items.iter().take(index).any(|i| {
        i.item.hole("as")
            || i.item.hole("error_as")
            || [&i.item.as_slot, &i.item.error_as]
                .into_iter()
                .flatten()
                .any(|o| o.value == *name)
    });
    if written_before || index >= known {
        return;
    }
    let mut d = Diagnostic::new(
        Code::OutBeforeWrite,
        reference.span,
        format!("`{text}` is read before any item writes `{name}`"),
    );
    let later = cx
        .items
        .iter()
        .skip(index)
        .flat_map(|i| [&i.item.as_slot, &i.item.error_as].into_iter().flatten())
        .find(|o| o.value == *name);
    d = match later {
        Some(writer) => d
            .with_label(writer.span, "written here, too late")
            .with_help("move the item that writes the slot before the one that reads it"),
        None if cx.group.slot(name).is_some() => {
            d.with_help(format!("no item writes `{name}`; add `\"as\": \"{name}\"` to an earlier item"))
        }
        None if cx.groups.contains_key(name.as_str()) => d.with_help(format!(
            "`{name}` is a group, and groups share no slots: call it from this group with \
             {{\"tool\":\"seq_call\",\"args\":{{\"target\":\"{name}\"}},\"as\":\"r\"}} before this item, \
             declare `\"r\": \"object\"` in `out`, and read `$out.r.SLOT`"
        )),
        None => d.with_help(format!(
            "`$out` reads slots written by earlier items of this group; `{name}` is neither declared in `out` nor written"
        )),
    };
    out.push(d);
}

/// `.field` needs an object and `[i]` an array: a declared type that cannot have them makes the
/// read an evaluation error every time.
fn path_fits(cx: &Cx<'_>, reference: &Reference, out: &mut Vec<Diagnostic>) {
    let (Some(first), Some(decl)) = (reference.path.first(), declaration(cx, reference)) else {
        return;
    };
    let ty = decl.ty.value;
    let (fits, what) = match &first.value {
        Segment::Field(_) => (matches!(ty, Type::Object | Type::Any), "a field of"),
        Segment::Index(_) => (matches!(ty, Type::Array | Type::Any), "an index into"),
    };
    if fits {
        return;
    }
    let text = fix::reference_text(reference);
    let needs = match &first.value {
        Segment::Field(_) => "object",
        Segment::Index(_) => "array",
    };
    let d = Diagnostic::new(
        Code::PathIntoScalar,
        first.span,
        format!(
            "`{text}` reads {what} `{}`, which is declared `{}`",
            reference.slot.value,
            ty.as_str()
        ),
    )
    .with_label(decl.ty.span, "declared here");
    // `$args.version.tgz` on a string is most often text after the value: `${args.version}.tgz`.
    // Only for a reference written without braces, whose span is exactly its text.
    let unbraced = usize::try_from(reference.span.len()).is_ok_and(|n| n == text.len());
    let d = match (&first.value, ty) {
        (Segment::Field(_), Type::String | Type::Number | Type::Integer | Type::Bool)
            if unbraced =>
        {
            let slot = reference.text_until(0);
            let braced = format!(
                "${{{}}}{}",
                slot.trim_start_matches('$'),
                text.get(slot.len()..).unwrap_or("")
            );
            d.with_help(format!(
                "if `{}` is text after the value, write `{braced}`; if not, declare `{}` as `{needs}` (or `any`)",
                text.get(slot.len()..).unwrap_or(""),
                reference.slot.value
            ))
            .with_replacement(
                format!("write `{braced}`"),
                reference.span,
                fix::in_item_string(&braced),
            )
            .maybe_incorrect()
        }
        (Segment::Field(_) | Segment::Index(_), _) => d.with_help(format!(
            "declare `{}` as `{needs}` (or `any`), or read the whole slot",
            reference.slot.value
        )),
    };
    out.push(d);
}

/// W0511: `$out.r.FIELD` where the one item that writes `r` is a tool whose result schema lists
/// its fields, and `FIELD` is not one of them (`$out.r.stdot` for a `cmd_run` result). Only
/// fields the schema lists are known: a tool without a schema, or a part of the result whose
/// schema lists no properties, is never reported.
fn result_fields(cx: &Cx<'_>, reference: &Reference, out: &mut Vec<Diagnostic>) {
    let name = &reference.slot.value;
    let Some(decl) = declaration(cx, reference) else {
        return;
    };
    if !matches!(decl.ty.value, Type::Object | Type::Any) || reference.path.is_empty() {
        return;
    }
    let mut writers = cx
        .items
        .iter()
        .filter(|i| i.item.as_slot.as_ref().is_some_and(|o| o.value == *name));
    let (Some(writer), None) = (writers.next(), writers.next()) else {
        return;
    };
    let tool = writer.item.tool.value.as_str();
    if Catalog::is_call(tool) {
        return;
    }
    let Some(mut schema) = cx.catalog.get(tool).and_then(|d| d.output.as_ref()) else {
        return;
    };
    for (depth, segment) in reference.path.iter().enumerate() {
        let field = match &segment.value {
            Segment::Field(field) => field,
            Segment::Index(_) => match schema.get("items") {
                Some(items) => {
                    schema = items;
                    continue;
                }
                None => return,
            },
        };
        let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
            return;
        };
        // A schema that says other fields may come lists only some of them.
        let open = schema
            .get("additionalProperties")
            .is_some_and(|a| a != &serde_json::Value::Bool(false));
        if let Some(inner) = properties.get(field.as_str()) {
            schema = inner;
            continue;
        }
        if open {
            return;
        }
        let read = reference.text_until(depth);
        let fields: Vec<&str> = properties.keys().map(String::as_str).collect();
        let d = Diagnostic::new(
            Code::UnknownResultField,
            segment.span,
            format!(
                "`{read}` has no field `{field}`: the result schema of `{tool}` declares {}",
                fields
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with_label(
            writer.item.tool.span,
            format!("`{name}` is written by `{tool}` here"),
        );
        let d = match did_you_mean(field, fields.iter().copied()) {
            Some(best) => d
                .with_help(format!("did you mean `{read}.{best}`?"))
                .with_replacement(
                    format!("read `{read}.{best}`"),
                    segment.span,
                    fix::in_item_string(&format!(".{best}")),
                )
                .maybe_incorrect(),
            None => d.with_help(format!(
                "read a field the result has: {}",
                fields
                    .iter()
                    .map(|f| format!("`{read}.{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        out.push(d);
        return;
    }
}
