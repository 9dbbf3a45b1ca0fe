//! Text that reads like a reference but is literal: `$gather.df`, where `gather` is a group or
//! a slot of the sequence. Only `$args.…` and `$out.…` are read; anything else after `$` is
//! passed on as written (so that shell text such as `$HOME` keeps working), and a run would
//! silently send the characters `$gather.df` to the tool.

use super::Cx;
use seq_syntax::ast::{Group, Item, TemplatePart, Type, Value, ValueKind};
use seq_syntax::reference::lookalike_names;
use seq_syntax::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    for item in cx.items.iter().map(|i| i.item) {
        let Some(args) = &item.args else { continue };
        for member in &args.value {
            strings(cx, item, &member.value, out);
        }
    }
}

fn strings(cx: &Cx<'_>, item: &Item, value: &Value, out: &mut Vec<Diagnostic>) {
    match &value.kind {
        ValueKind::Null | ValueKind::Bool(_) | ValueKind::Number(_) | ValueKind::Ref(_) => {}
        ValueKind::String(template) => {
            for part in &template.parts {
                match part {
                    TemplatePart::Text(text) => {
                        for name in lookalike_names(text) {
                            if let Some(d) = lookalike(cx, item, value, text, name) {
                                out.push(d);
                            }
                        }
                    }
                    TemplatePart::Ref(_) => {}
                }
            }
        }
        ValueKind::Array(values) => values.iter().for_each(|v| strings(cx, item, v, out)),
        ValueKind::Object(members) => members
            .iter()
            .for_each(|m| strings(cx, item, &m.value, out)),
    }
}

/// What `$NAME.` names in this sequence, if anything.
enum Named<'a> {
    /// A slot of the group the item is in: `$args` or `$out`, and its declared type.
    Own { root: &'static str, ty: Type },
    /// A group of the sequence.
    Group(&'a Group),
    /// A slot of another group.
    OtherSlot(&'a Group),
}

fn named<'a>(cx: &Cx<'a>, name: &str) -> Option<Named<'a>> {
    if let Some(slot) = cx.group.slot(name) {
        return Some(Named::Own {
            root: "out",
            ty: slot.ty.value,
        });
    }
    if let Some(slot) = cx.group.input(name) {
        return Some(Named::Own {
            root: "args",
            ty: slot.ty.value,
        });
    }
    if let Some(group) = cx.groups.get(name) {
        return Some(Named::Group(group));
    }
    cx.sequence
        .groups
        .iter()
        .find(|g| g.output(name).is_some() || g.input(name).is_some())
        .map(Named::OtherSlot)
}

fn lookalike(
    cx: &Cx<'_>,
    item: &Item,
    value: &Value,
    text: &str,
    name: &str,
) -> Option<Diagnostic> {
    let named = named(cx, name)?;
    let (shown, rest) = written(text, name);
    let d = Diagnostic::new(
        Code::LiteralLookalike,
        value.span,
        format!(
            "`{shown}` is literal text here, not a reference: only `$args.…` and `$out.…` are read"
        ),
    );
    let tool = &item.tool.value;
    let call = |other: &str, path: &str| {
        format!(
            "groups share no slots: to use what group `{other}` writes, call it from this group (serial) with \
             {{\"tool\":\"seq_call\",\"args\":{{\"target\":\"{other}\"}},\"as\":\"r\"}} before the `{tool}` item, \
             declare `\"r\": \"object\"` in `out`, and read `$out.r{path}`"
        )
    };
    let own = |root: &str| match root {
        "args" => format!("the input `{name}`"),
        _ => format!("the slot `{name}` an earlier item wrote"),
    };
    Some(match named {
        Named::Own {
            root,
            ty: Type::Object | Type::Any,
        } => d.with_help(format!(
            "to read {}, write `${root}.{name}{rest}`",
            own(root)
        )),
        // A path into a scalar is text after the value: `${args.path}.txt`.
        Named::Own {
            root,
            ty: Type::String | Type::Number | Type::Integer | Type::Bool | Type::Array,
        } => d.with_help(format!(
            "to read {}, write `${{{root}.{name}}}{rest}`",
            own(root)
        )),
        Named::Group(group) => d.with_help(call(&group.name.value, &rest)),
        Named::OtherSlot(group) => d.with_help(call(&group.name.value, &format!(".{name}{rest}"))),
    })
}

/// `$NAME.rest` as written, for the message, and the `.rest` after the name.
fn written(text: &str, name: &str) -> (String, String) {
    let found = text.match_indices(name).map(|(i, _)| i).find_map(|i| {
        let before = text.get(..i)?;
        let start = if before.ends_with("${") {
            i - 2
        } else if before.ends_with('$') {
            i - 1
        } else {
            return None;
        };
        let after = text.get(i + name.len()..)?;
        (after.starts_with('.')).then_some((start, i + name.len()))
    });
    let Some((start, name_end)) = found else {
        return (format!("${name}"), String::new());
    };
    let braced = text.get(start..).is_some_and(|t| t.starts_with("${"));
    let tail = text.get(name_end..).unwrap_or("");
    let len = if braced {
        tail.find('}').map_or(tail.len(), |n| n + 1)
    } else {
        tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(tail.len())
    };
    let path = tail
        .get(..len)
        .unwrap_or("")
        .trim_end_matches('}')
        .trim_end_matches('.');
    let shown = text
        .get(start..name_end + len)
        .unwrap_or("")
        .trim_end_matches('.');
    (shown.to_owned(), path.to_owned())
}
