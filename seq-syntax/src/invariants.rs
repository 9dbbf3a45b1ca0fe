//! What every diagnostic promises about the text it is about: each span it holds (its own, its
//! labels', its fix's edits') lies inside the text, on character boundaries (editors turn them
//! into line and column), start before end, and a fix's edits never overlap (`apply` makes them
//! in one pass). The front end's and the checker's robustness tests and the fuzz targets all
//! assert it through [`span_violations`], so that they hold the same promise; the JSON tree,
//! whose error nodes keep what the editor reads of broken text, keeps it too
//! ([`tree_violations`]).

use crate::diagnostic::Diagnostic;
use crate::json::{Node, NodeKind};
use crate::span::Span;
use std::ops::Range;

/// Every way `diagnostics` break the span invariants of `text`, one line each (empty when they
/// hold).
pub fn span_violations(text: &str, diagnostics: &[Diagnostic]) -> Vec<String> {
    let mut found = Vec::new();
    for d in diagnostics {
        let mut check = |span: Span, what: &str| {
            if let Some(problem) = span_problem(text, span) {
                found.push(format!("{what} {problem}: {d:?}"));
            }
        };
        check(d.span, "span");
        for label in &d.labels {
            check(label.span, "label");
        }
        if let Some(fix) = &d.fix {
            let mut edits: Vec<Span> = fix.edits.iter().map(|e| e.span).collect();
            for &edit in &edits {
                check(edit, "edit");
            }
            edits.sort();
            for pair in edits.windows(2) {
                if let [a, b] = pair
                    && a.end > b.start
                {
                    found.push(format!("overlapping edits {a:?} and {b:?}: {d:?}"));
                }
            }
        }
    }
    found
}

/// Every way the JSON tree `node` of `text` breaks the same promise, one line each: each node's
/// span and each key's span (error nodes and error keys included) inside the text, on character
/// boundaries, start before end.
pub fn tree_violations(text: &str, node: &Node<'_>) -> Vec<String> {
    let mut found = Vec::new();
    let mut check = |range: &Range<usize>, what: &str| {
        if let Some(problem) = span_problem(text, Span::from_range(range.clone())) {
            found.push(format!("{what} {problem}"));
        }
    };
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        check(&node.span, "node");
        match &node.kind {
            NodeKind::Array(elements) => stack.extend(elements),
            NodeKind::Object(members) => {
                for member in members {
                    check(&member.key_span, "key");
                    stack.push(&member.value);
                }
            }
            NodeKind::Null
            | NodeKind::Bool(_)
            | NodeKind::Number(_)
            | NodeKind::String(_)
            | NodeKind::Ref(_)
            | NodeKind::Error => {}
        }
    }
    found
}

fn span_problem(text: &str, span: Span) -> Option<String> {
    let (start, end) = (span.start as usize, span.end as usize);
    if start > end {
        Some(format!("{start}..{end} reversed"))
    } else if end > text.len() {
        Some(format!("{start}..{end} past the end ({})", text.len()))
    } else if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        Some(format!("{start}..{end} inside a character"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::Code;

    #[test]
    fn each_broken_promise_is_found() {
        let text = "é{}";
        let at = |span| Diagnostic::new(Code::TooDeep, span, "x");
        let ok = at(Span::new(0, 2))
            .with_label(Span::new(2, 4), "l")
            .with_replacement("f", Span::new(4, 4), "y");
        assert_eq!(span_violations(text, &[ok]), Vec::<String>::new());
        let edit = |span| crate::diagnostic::Edit {
            span,
            text: String::new(),
        };
        let overlapping =
            crate::diagnostic::Fix::new("f", vec![edit(Span::new(0, 3)), edit(Span::new(2, 4))]);
        for (bad, problem) in [
            (at(Span::new(1, 2)), "span 1..2 inside a character"),
            (at(Span::new(2, 1)), "span 2..1 reversed"),
            (
                at(Span::new(0, 0)).with_label(Span::new(2, 9), "l"),
                "label 2..9 past the end",
            ),
            (
                at(Span::new(0, 0)).with_replacement("f", Span::new(0, 1), ""),
                "edit 0..1 inside a character",
            ),
            (
                at(Span::new(0, 0)).with_fix(overlapping),
                "overlapping edits",
            ),
        ] {
            let found = span_violations(text, &[bad]);
            assert!(
                found.len() == 1 && found.iter().all(|f| f.starts_with(problem)),
                "{problem}: {found:?}"
            );
        }
    }
}
