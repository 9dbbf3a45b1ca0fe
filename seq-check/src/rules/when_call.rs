//! The `when` argument of `seq_when_call` (design §8.4): a condition written as a string inside
//! an item, so inside the `tools` string — escaped twice in the file.
//!
//! The AST keeps that string as a template whose references carry exact file spans but whose
//! literal text does not. The condition is re-parsed from the template's text, with a map that
//! is exact for references and approximate for the text between them (exact until the first
//! escape in that text); references in the parsed condition then get their template spans back.

use crate::catalog::SEQ_WHEN_CALL;
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
    let mut map = PieceMap::default();
    let mut cursor = body_start;
    let mut refs: Vec<&Reference> = Vec::new();
    for part in &template.parts {
        let start = offset(&text);
        match part {
            TemplatePart::Text(t) => {
                text.push_str(t);
                map.pieces.push(Piece {
                    text_start: start,
                    file_start: cursor,
                    file_end: body_end,
                });
            }
            TemplatePart::Ref(reference) => {
                text.push_str(&super::fix::reference_text(reference));
                if let Some(last) = map.pieces.last_mut() {
                    last.file_end = last.file_end.min(reference.span.start);
                }
                map.pieces.push(Piece {
                    text_start: start,
                    file_start: reference.span.start,
                    file_end: reference.span.end,
                });
                cursor = reference.span.end;
                refs.push(reference);
            }
        }
    }
    map.end = body_end;
    let (condition, diagnostics) = parse_condition(&text, &map);
    out.extend(diagnostics);
    let mut condition = condition?;
    let mut operands = vec![&mut condition.lhs];
    if let Some(comparison) = condition.comparison.as_mut() {
        operands.push(&mut comparison.rhs);
    }
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

fn restore<'r>(operand: &mut Operand, originals: &mut impl Iterator<Item = &'r Reference>) {
    match &mut operand.kind {
        OperandKind::Ref(reference) => {
            if let Some(original) = originals.next() {
                *reference = original.clone();
                operand.span = original.span;
            }
        }
        OperandKind::Null | OperandKind::Bool(_) | OperandKind::Number(_) | OperandKind::String(_) => {}
    }
}

fn offset(text: &str) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}

#[derive(Debug)]
struct Piece {
    text_start: u32,
    file_start: u32,
    file_end: u32,
}

#[derive(Debug, Default)]
struct PieceMap {
    pieces: Vec<Piece>,
    end: u32,
}

impl MapOffset for PieceMap {
    fn to_raw(&self, offset: u32) -> u32 {
        let i = self.pieces.partition_point(|p| p.text_start <= offset);
        match i.checked_sub(1).and_then(|i| self.pieces.get(i)) {
            Some(piece) => piece
                .file_start
                .saturating_add(offset - piece.text_start)
                .min(piece.file_end.max(piece.file_start)),
            None => self.end,
        }
    }
}
