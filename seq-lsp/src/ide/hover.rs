//! Hover texts: group signatures, sequences, tools from the catalog, slots and their types,
//! and the fields of the file, a group and an item, from the field table the parser reads.

use super::Analysis;
use super::index::{Def, Name};
use super::text::Embedded;
use seq_catalog::{ParallelSafety, ToolDef};
use seq_syntax::Span;
use seq_syntax::ast::{Group, Root, Sequence, SlotDecl, Value, ValueKind};
use seq_syntax::duration;
use seq_syntax::fields::{Field, GROUP, INPUT, ITEM, Level, SEQUENCE, key};
use seq_syntax::json::Mode;
use seq_syntax::json::cursor::{Kind, Place, Seg, context, tokenize};
use std::fmt::Write;

pub(crate) fn markdown(analysis: &Analysis, name: &Name) -> Option<String> {
    match name {
        Name::Tool(tool) => Some(match analysis.catalog.get(tool) {
            Some(def) => tool_markdown(def),
            None => format!(
                "**tool** {}\n\nNo catalog knows this tool: it may still exist at run time (add it to `seq-catalog.json` to have it checked).",
                code(tool)
            ),
        }),
        Name::Def(Def::Sequence { file }) => {
            let sequence = sequence(analysis, *file)?;
            let path = analysis.sources.get(*file).map_or("", |s| s.path.as_str());
            Some(sequence_markdown(sequence, path))
        }
        Name::Def(Def::Group { file, group }) => {
            let sequence = sequence(analysis, *file)?;
            let group = sequence.groups.get(*group)?;
            let text = analysis.sources.get(*file).map_or("", |s| s.text.as_str());
            Some(group_markdown(sequence, group, text))
        }
        Name::Def(Def::Input { file, group, slot }) => {
            let group = sequence(analysis, *file)?.groups.get(*group)?;
            Some(slot_markdown("input", group.inputs.get(*slot)?, group))
        }
        Name::Def(Def::Output { file, group, slot }) => {
            let group = sequence(analysis, *file)?.groups.get(*group)?;
            // `slot` is a place in `Group::slots`: the outputs, then the locals.
            let role = if *slot < group.outputs.len() {
                "output"
            } else {
                "local"
            };
            Some(slot_markdown(role, group.slots().nth(*slot)?, group))
        }
        Name::Element {
            file,
            group,
            item,
            root,
        } => {
            let group = sequence(analysis, *file)?.groups.get(*group)?;
            let each = item
                .and_then(|i| group.items.get(i))
                .and_then(|i| i.each.as_ref());
            Some(element_markdown(*root, each))
        }
        Name::Undeclared {
            file,
            group,
            root,
            slot,
        } => {
            let group = sequence(analysis, *file)?.groups.get(*group)?;
            Some(undeclared_markdown(*root, slot, group))
        }
    }
}

/// A slot read but not declared: what the group has instead, and where to declare it.
fn undeclared_markdown(root: Root, slot: &str, group: &Group) -> String {
    let (role, field, declared) = match root {
        Root::Args => ("input", key::IN, &group.inputs),
        Root::Out | Root::Each | Root::EachIndex => ("output", key::OUT, &group.outputs),
    };
    let names: Vec<String> = declared.iter().map(|s| code(&s.name.value)).collect();
    let has = if names.is_empty() {
        format!("declares no {role}s")
    } else {
        format!("declares {}", names.join(", "))
    };
    format!(
        "```\n({role}, undeclared) {slot}\n```\n\nGroup {} {has}: declare {} in its `{field}` to read it here.",
        code(&group.name.value),
        code(slot)
    )
}

/// `$each` / `$each_index`: what they are, and the element's type when `each` shows it.
fn element_markdown(root: Root, each: Option<&Value>) -> String {
    let Some(each) = each else {
        return format!(
            "```\n${}\n```\n\nRead only in the `args` of an item with `each`: the element that run of the item is for, or its place.",
            root.as_str()
        );
    };
    if root == Root::EachIndex {
        return "```\n$each_index: integer\n```\n\nThe place of the element this run of the item is for, in its `each` array, from 0.".to_owned();
    }
    let (ty, of) = if let Some(elements) = each.kind.as_array() {
        (
            literal_element_type(elements),
            format!("the {} elements written in `each`", elements.len()),
        )
    } else if let Some(reference) = each.kind.as_reference() {
        (
            "any",
            format!("an element of {}", code(&reference.to_string())),
        )
    } else {
        ("any", "an element of `each`".to_owned())
    };
    format!(
        "```\n$each: {ty}\n```\n\nThe element this run of the item is for: {of}. The item runs once per element; its `as` slot gets the results in element order."
    )
}

/// The one type of literal elements (`integer` and `number` together are `number`), else `any`.
fn literal_element_type(elements: &[Value]) -> &'static str {
    let kind = |value: &Value| match &value.kind {
        ValueKind::Null => Some("null"),
        ValueKind::Bool(_) => Some("bool"),
        ValueKind::Number(n) if n.is_f64() => Some("number"),
        ValueKind::Number(_) => Some("integer"),
        ValueKind::String(_) => Some("string"),
        ValueKind::Array(_) => Some("array"),
        ValueKind::Object(_) => Some("object"),
        ValueKind::Ref(_) => None,
    };
    let mut kinds = elements.iter().map(kind);
    let Some(Some(mut one)) = kinds.next() else {
        return "any";
    };
    for next in kinds {
        one = match (one, next) {
            (a, Some(b)) if a == b => a,
            ("integer" | "number", Some("integer" | "number")) => "number",
            _ => return "any",
        };
    }
    one
}

/// Hover over a `jq` item's literal `filter`: the type the checker derives for its result, and
/// the tool's own text from the catalog.
pub(crate) fn filter_at(analysis: &Analysis, file: usize, offset: u32) -> Option<(Span, String)> {
    let sequence = sequence(analysis, file)?;
    let (item, filter) = sequence
        .groups
        .iter()
        .flat_map(|g| &g.items)
        .filter(|item| item.tool.value == seq_syntax::jq::TOOL)
        .find_map(|item| {
            let filter = item.arg(seq_syntax::jq::FILTER)?;
            let literal = matches!(&filter.kind, ValueKind::String(t) if t.as_literal().is_some());
            (literal && filter.span.contains(offset)).then_some((item, filter))
        })?;
    let result = seq_catalog::jq::item_result(item).map_or("unknown until it runs", |t| t.as_str());
    let mut text = format!("```\n(jq filter) result: {result}\n```");
    if let Some(tool) = analysis.catalog.get(seq_syntax::jq::TOOL) {
        write!(text, "\n\n{}", tool.description).ok();
    }
    Some((filter.span, text))
}

fn sequence(analysis: &Analysis, file: usize) -> Option<&Sequence> {
    analysis.check.files.get(file)?.sequence.as_ref()
}

/// `name(in: type, ...) -> (out: type, ...)`.
pub(crate) fn signature(group: &Group) -> String {
    let slots = |slots: &[SlotDecl]| {
        slots
            .iter()
            .map(|s| format!("{}: {}", s.name.value, s.ty.value.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{}({}) -> ({})",
        group.name.value,
        slots(&group.inputs),
        slots(&group.outputs)
    )
}

fn group_markdown(sequence: &Sequence, group: &Group, text: &str) -> String {
    let mut out = format!(
        "```\ngroup {}\n```\n\ngroup of sequence {}",
        signature(group),
        code(&sequence.name.value)
    );
    if let Some(description) = &group.description {
        write!(out, "\n\n{}", description.value).ok();
    }
    let mut fields = Vec::new();
    if let Some(when) = &group.when {
        let condition = Embedded::file_string(text, when.span).map_or_else(String::new, |e| e.text);
        fields.push(format!("when {}", code(&condition)));
    }
    fields.push(
        if group.is_parallel() {
            "parallel"
        } else {
            "serial"
        }
        .to_owned(),
    );
    fields.push(format!("timeout {}", duration::format(group.timeout())));
    fields.push(format!("on_error {}", group.on_error().as_str()));
    if group.retries() > 0 {
        fields.push(format!("retries {}", group.retries()));
    }
    fields.push(format!("missing {}", group.missing().as_str()));
    write!(out, "\n\n{}", fields.join(" · ")).ok();
    out
}

fn sequence_markdown(sequence: &Sequence, path: &str) -> String {
    let mut out = format!(
        "**sequence** {} in {}",
        code(&sequence.name.value),
        code(path)
    );
    if let Some(description) = &sequence.description {
        write!(out, "\n\n{}", description.value).ok();
    }
    if sequence.groups.is_empty() {
        out.push_str("\n\nNo groups.");
    } else {
        out.push_str("\n\n```");
        for group in &sequence.groups {
            write!(out, "\ngroup {}", signature(group)).ok();
        }
        out.push_str("\n```");
    }
    out
}

pub(crate) fn tool_markdown(tool: &ToolDef) -> String {
    let safety = match tool.parallel_safe {
        ParallelSafety::Safe => "parallel-safe",
        ParallelSafety::Unsafe => "not parallel-safe",
        ParallelSafety::ThroughTarget => "as parallel-safe as what it calls",
    };
    let mut out = format!("**tool** {} · {safety}", code(&tool.name));
    if !tool.description.is_empty() {
        write!(out, "\n\n{}", tool.description).ok();
    }
    out.push_str("\n\n");
    out.push_str(&parameters(tool));
    out
}

/// The tool's parameters as a Markdown list.
pub(crate) fn parameters(tool: &ToolDef) -> String {
    let schema = &tool.parameters;
    if schema.properties.is_empty() {
        return "No parameters.".to_owned();
    }
    let mut out = String::from("Parameters:");
    for (name, param) in &schema.properties {
        let required = if schema.is_required(name) {
            ", required"
        } else {
            ""
        };
        write!(out, "\n- {}: {}{required}", code(name), param.type_text()).ok();
        if let Some(description) = &param.description {
            write!(out, " — {description}").ok();
        }
    }
    out
}

fn slot_markdown(role: &str, slot: &SlotDecl, group: &Group) -> String {
    let mut text = format!(
        "```\n({role}) {}: {}\n```\n\n{role} of group {}",
        slot.name.value,
        slot.ty.value.as_str(),
        code(&group.name.value)
    );
    if role == "local" {
        text.push_str(&format!(
            "; read as `$out.{}` by its items, not part of its result",
            slot.name.value
        ));
    }
    // What a declaration object adds: how the input is filled, and what it means.
    if let Some(default) = &slot.default {
        text.push_str(&format!(
            "; when not passed it is {}",
            code(&default.value.to_string())
        ));
    } else if slot.is_required() {
        text.push_str("; required: a run or call must pass it");
    }
    if let Some(description) = &slot.description {
        text.push_str("\n\n");
        text.push_str(&description.value);
    }
    text
}

/// `text` as inline code, fenced so that backticks inside it do not end it.
pub(crate) fn code(text: &str) -> String {
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// The field whose key is under the cursor at `offset` of `text` (the file's, a group's, an
/// input declaration's or, inside a `tools` string, an item's), with the key's span: hover over
/// `"timeout"` says what the field is, from the one field table.
pub(crate) fn field_at(text: &str, offset: u32) -> Option<(&'static Field, Span)> {
    let cursor = usize::try_from(offset).ok()?;
    if !text.is_char_boundary(cursor) {
        return None;
    }
    let tokens = tokenize(text);
    let cx = context(text, Mode::File, &tokens, cursor);
    let token = cx.token.as_ref()?;
    if !matches!(token.kind, Kind::String { .. }) {
        return None;
    }
    if let (Place::Value(_), [Seg::Key(groups), Seg::Index(_), Seg::Key(tools)]) =
        (&cx.place, cx.path.as_slice())
        && groups == key::GROUPS
        && tools == key::TOOLS
    {
        return item_field_at(text, Span::from_range(token.body()), offset);
    }
    if !matches!(cx.place, Place::Key) {
        return None;
    }
    let key = text.get(token.body())?;
    let level: &'static [Field] = match cx.path.as_slice() {
        [] => SEQUENCE,
        [Seg::Key(groups), Seg::Index(_)] if groups == key::GROUPS => GROUP,
        [
            Seg::Key(groups),
            Seg::Index(_),
            Seg::Key(inputs),
            Seg::Key(_),
        ] if groups == key::GROUPS && inputs == key::IN => INPUT,
        _ => return None,
    };
    let field = level.iter().find(|f| f.name == key)?;
    Some((field, Span::from_range(token.range.clone())))
}

/// The item field whose key is under the file offset `offset` inside the `tools` string whose
/// body is `body`: a key of an item itself, not of its `args`.
fn item_field_at(text: &str, body: Span, offset: u32) -> Option<(&'static Field, Span)> {
    let tools = Embedded::file_string(text, body)?;
    let cursor = tools.offset_of(offset);
    let tokens = tokenize(&tools.text);
    let cx = context(&tools.text, Mode::Item, &tokens, cursor);
    let token = cx.token.as_ref()?;
    if !matches!(token.kind, Kind::String { .. })
        || !matches!(cx.place, Place::Key)
        || !cx.path.is_empty()
    {
        return None;
    }
    let key = tools.text.get(token.body())?;
    let field = ITEM.iter().find(|f| f.name == key)?;
    Some((field, tools.span_of(token.range.clone())))
}

/// `(group field) timeout: duration string, default "30s"` and the field's one-line doc.
pub(crate) fn field_markdown(field: &Field) -> String {
    let level = match field.level {
        Level::Sequence => "file field",
        Level::Group => "group field",
        Level::Item => "item field",
        Level::Input => "input declaration field",
    };
    let mut head = format!("({level}) {}: {}", field.name, field.ty.describe());
    match (field.required, field.default) {
        (true, _) => head.push_str(", required"),
        (false, Some(default)) => head.push_str(&format!(", default {default}")),
        (false, None) => {}
    }
    format!("```\n{head}\n```\n\n{}", field.doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_fence_backticks() {
        assert_eq!(code("a`b"), "`` a`b ``");
    }
}
