//! The outline of a file: the sequence, its groups, their items.

use super::hover::signature;
use super::{Analysis, FileId, Symbol, SymbolKind};
use seq_syntax::ast::{Group, Item};

pub(crate) fn document_symbols(analysis: &Analysis, file: FileId) -> Vec<Symbol> {
    let Some(sequence) = analysis
        .check
        .files
        .get(file.index())
        .and_then(|f| f.sequence.as_ref())
    else {
        return Vec::new();
    };
    vec![Symbol {
        name: named(&sequence.name.value, "(unnamed sequence)"),
        detail: sequence.description.as_ref().map(|d| d.value.clone()),
        kind: SymbolKind::Sequence,
        span: sequence.span,
        selection_span: sequence.name.span,
        children: sequence.groups.iter().map(group).collect(),
    }]
}

fn group(group: &Group) -> Symbol {
    let signature = signature(group);
    let params = signature
        .get(group.name.value.len()..)
        .unwrap_or_default()
        .to_owned();
    Symbol {
        name: named(&group.name.value, "(unnamed group)"),
        detail: Some(params),
        kind: SymbolKind::Group,
        span: group.span,
        selection_span: group.name.span,
        children: group.items.iter().map(item).collect(),
    }
}

fn item(item: &Item) -> Symbol {
    let name = match &item.as_slot {
        Some(slot) => format!("{} → {}", item.tool.value, slot.value),
        None => item.tool.value.to_string(),
    };
    Symbol {
        name,
        detail: None,
        kind: SymbolKind::Item,
        span: item.span,
        selection_span: item.tool.span,
        children: Vec::new(),
    }
}

/// LSP clients reject empty symbol names.
fn named(name: &str, fallback: &str) -> String {
    if name.is_empty() {
        fallback.to_owned()
    } else {
        name.to_owned()
    }
}
