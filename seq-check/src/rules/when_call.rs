//! The `when` argument of `seq_when_call`: a condition written as a string inside
//! an item, so inside the `tools` string — escaped twice in the file.
//!
//! The AST keeps that string as a template whose references carry exact file spans but whose
//! literal text does not. The condition is re-parsed from the template's text, with a map that
//! assumes the escapes a JSON writer would use (`"` written `\\\"`); references in the parsed
//! condition then get their template spans back. When the file escapes differently (`\u0022`),
//! spans inside the text between references are approximate and their fixes are dropped.

use seq_catalog::SEQ_WHEN_CALL;
use seq_syntax::ast::{Condition, Item, Operand, OperandKind, Reference, TemplatePart, ValueKind};
use seq_syntax::condition::parse_condition;
use seq_syntax::escape::MapOffset;
use seq_syntax::{Diagnostic, Span};

/// The parsed `when` of a `seq_when_call` item; its syntax diagnostics go to `out`.
pub(crate) fn condition(item: &Item, out: &mut Vec<Diagnostic>) -> Option<Condition> {
    if item.tool.value != SEQ_WHEN_CALL {
        return None;
    }
    let value = item.arg("when")?;
    let ValueKind::String(template) = &value.kind else {
        return None;
    };
    // The literal is `\"…\"` in the file: its body starts two bytes in.
    let body_start = value.span.start.saturating_add(2).min(value.span.end);
    let body_end = value.span.end.saturating_sub(2).max(body_start);
    let mut text = String::new();
    let mut map = PointMap::default();
    let mut refs: Vec<&Reference> = Vec::new();
    // Where each part starts in the file, assuming the escapes a JSON writer would use; if the
    // parts do not land on the references' spans and the literal's end, the user escaped
    // something differently and the map is only approximate.
    let mut raw = body_start;
    let mut exact = true;
    for part in &template.parts {
        match part {
            TemplatePart::Text(t) => {
                for c in t.chars() {
                    map.points.push((offset(&text), raw));
                    text.push(c);
                    raw = raw.saturating_add(escaped_width(c));
                }
            }
            TemplatePart::Ref(reference) => {
                exact &= raw == reference.span.start;
                map.points.push((offset(&text), reference.span.start));
                text.push_str(&super::fix::reference_text(reference));
                raw = reference.span.end;
                refs.push(reference);
            }
        }
    }
    exact &= raw == body_end;
    map.points.push((offset(&text), body_end));
    let (condition, mut diagnostics) = parse_condition(&text, &map);
    if !exact {
        // An edit at an approximate place could damage the file.
        for d in &mut diagnostics {
            d.fix = None;
        }
    }
    out.extend(diagnostics);
    let mut condition = condition?;
    let operands = condition.operands_mut();
    let parsed_refs = operands
        .iter()
        .filter(|o| matches!(o.kind, OperandKind::Ref(_)))
        .count();
    if parsed_refs == refs.len() {
        let mut originals = refs.into_iter();
        for operand in operands {
            restore(operand, &mut originals);
        }
    }
    condition.span = Span::new(body_start, body_end);
    Some(condition)
}

/// The bytes a character takes in the file when it is written in a string inside an item (JSON
/// escaping, twice: `"` is `\\\"`).
fn escaped_width(c: char) -> u32 {
    let mut buffer = [0u8; 4];
    let once = super::fix::escape(c.encode_utf8(&mut buffer));
    u32::try_from(super::fix::escape(&once).len()).unwrap_or(u32::MAX)
}

fn restore<'r>(operand: &mut Operand, originals: &mut impl Iterator<Item = &'r Reference>) {
    match &mut operand.kind {
        OperandKind::Ref(reference) => {
            if let Some(original) = originals.next() {
                *reference = original.clone();
                operand.span = original.span;
            }
        }
        OperandKind::Null
        | OperandKind::Bool(_)
        | OperandKind::Number(_)
        | OperandKind::String(_) => {}
    }
}

fn offset(text: &str) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}

/// `(offset in the condition's text, offset in the file)` at the start of every character and
/// reference, and at the end; offsets inside a reference advance with the file.
#[derive(Debug, Default)]
struct PointMap {
    points: Vec<(u32, u32)>,
}

impl MapOffset for PointMap {
    fn to_raw(&self, offset: u32) -> u32 {
        let i = self.points.partition_point(|&(text, _)| text <= offset);
        match i.checked_sub(1).and_then(|i| self.points.get(i)) {
            Some(&(text, raw)) => raw.saturating_add(offset - text),
            None => self.points.first().map_or(0, |&(_, raw)| raw),
        }
    }
}
