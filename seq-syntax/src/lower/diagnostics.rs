//! The diagnostics lowering reports itself, and how diagnostics made inside strings reach the
//! file: spans mapped, fix texts escaped once per enclosing string.

use super::Lower;
use super::maps::span_in;
use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::escape::{LoneSurrogate, MapOffset};
use crate::json::{Node, NodeKind};
use crate::kind::JsonKind;
use crate::span::Span;

impl Lower {
    pub(super) fn report(&mut self, mut diagnostic: Diagnostic) {
        escape_fix(&mut diagnostic, self.depth);
        self.diagnostics.push(diagnostic);
    }

    /// Takes diagnostics made inside a string `levels` deeper than the current text: maps their
    /// spans through `map` to the file and escapes their fix texts for every enclosing string.
    pub(super) fn nested(
        &mut self,
        levels: usize,
        diagnostics: Vec<Diagnostic>,
        map: &dyn MapOffset,
    ) {
        for mut d in diagnostics {
            d.map_spans(|s| map.span(s));
            escape_fix(&mut d, self.depth + levels);
            self.diagnostics.push(d);
        }
    }

    /// Reports a value of the wrong JSON kind for `field`, unless it is an error node (already
    /// reported by the parser).
    pub(super) fn wrong_kind(
        &mut self,
        node: &Node<'_>,
        map: &dyn MapOffset,
        field: &str,
        expected: &str,
    ) {
        if matches!(node.kind, NodeKind::Error) {
            return;
        }
        let found = kind_name(&node.kind);
        self.report(
            Diagnostic::new(
                Code::WrongJsonType,
                span_in(map, &node.span),
                format!("`{field}` must be {expected}, found {found}"),
            )
            .with_help(format!("write `{field}` as {expected}")),
        );
    }

    /// Lone surrogates in a string or key: one wording for both, the span says which.
    pub(super) fn lone_surrogates(&mut self, lone: Vec<LoneSurrogate>, map: &dyn MapOffset) {
        for surrogate in lone {
            self.report(
                Diagnostic::new(
                    Code::JsonString,
                    map.span(surrogate.span),
                    "lone UTF-16 surrogate in a string escape",
                )
                .with_help("a `\\uD800`–`\\uDFFF` escape must be half of a surrogate pair; write the character itself or its full pair"),
            );
        }
    }

    /// `node` is the first element past a count bound (E0009); it and those after it are not
    /// lowered.
    pub(super) fn too_many(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        what: &str,
        bound: usize,
        owner: &str,
    ) {
        self.report(too_many(span_in(map, &node.span), what, bound, owner));
    }

    pub(super) fn missing_field(&mut self, at: Span, field: &str, owner: &str, example: &str) {
        if self.quiet_missing {
            return;
        }
        self.report(
            Diagnostic::new(
                Code::MissingField,
                at,
                format!("{owner} has no `{field}` field"),
            )
            .with_help(format!("add `{example}`")),
        );
    }
}

pub(super) fn kind_name(kind: &NodeKind<'_>) -> &'static str {
    match kind {
        NodeKind::Null => JsonKind::Null.described(),
        NodeKind::Bool(_) => JsonKind::Bool.described(),
        NodeKind::Number(_) => JsonKind::Number.described(),
        NodeKind::String(_) => JsonKind::String.described(),
        NodeKind::Ref(_) => "a reference",
        NodeKind::Array(_) => JsonKind::Array.described(),
        NodeKind::Object(_) => JsonKind::Object.described(),
        NodeKind::Error => "invalid input",
    }
}

/// Escapes a fix's texts for `depth` enclosing JSON strings.
fn escape_fix(diagnostic: &mut Diagnostic, depth: usize) {
    let Some(fix) = &mut diagnostic.fix else {
        return;
    };
    for edit in &mut fix.edits {
        for _ in 0..depth {
            edit.text = crate::escape::escape(&edit.text);
        }
    }
}

pub(super) fn too_many(span: Span, what: &str, bound: usize, owner: &str) -> Diagnostic {
    Diagnostic::new(
        Code::TooLarge,
        span,
        format!(
            "more than {bound} {what} in one {owner}; this one and those after it are not read"
        ),
    )
    .with_help("split the sequence into several that call each other as `#name`")
}
