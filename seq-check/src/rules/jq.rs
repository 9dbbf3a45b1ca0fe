//! The `filter` of a `jq` item: a literal is compiled at check time, its problems reported at
//! their bytes in the file (E1001, E1002; E1004 for one too deep or too long to read); a reference inside it would paste a value into code
//! (E1003).

use super::Cx;
use seq_catalog::jq::{self, ProblemKind};
use seq_syntax::ast::{Item, ValueKind};
use seq_syntax::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    for item in cx.items.iter().map(|i| i.item) {
        if item.tool.value == seq_syntax::jq::TOOL {
            check_item(item, out);
        }
    }
}

fn check_item(item: &Item, out: &mut Vec<Diagnostic>) {
    let Some(filter) = item.arg(seq_syntax::jq::FILTER) else {
        return;
    };
    let ValueKind::String(template) = &filter.kind else {
        return;
    };
    let Some(text) = template.as_literal() else {
        for reference in template.references() {
            out.push(
                Diagnostic::new(
                    Code::JqInterpolated,
                    reference.span,
                    format!("`{reference}` inside a jq filter would paste a value into its code"),
                )
                .with_help(format!(
                    "pass it as data: `\"input\": {{\"{slot}\": {reference}}}`, read in the \
                     filter as `.{slot}` (or `.{slot} as ${slot} | …`)",
                    slot = reference.slot.value
                )),
            );
        }
        return;
    };
    for problem in jq::problems(text) {
        let span = item
            .filter_offsets
            .as_ref()
            .and_then(|offsets| offsets.span(problem.range.clone()))
            .unwrap_or(filter.span);
        let code = match problem.kind {
            ProblemKind::Syntax => Code::JqSyntax,
            ProblemKind::Unknown => Code::JqUnknownName,
            ProblemKind::TooBig => Code::JqTooBig,
        };
        out.push(Diagnostic::new(code, span, problem.message).with_help(problem.help));
    }
}
