//! Code actions: the checker's own fixes, offered where their diagnostics are. The server holds
//! no rule and invents no fix; the edits arrive escaped for the strings they land in.

use super::{Analysis, CodeAction, FileEdit, FileId};
use seq_syntax::Span;

pub(crate) fn code_actions(analysis: &Analysis, file: FileId, range: Span) -> Vec<CodeAction> {
    analysis
        .diagnostics(file)
        .iter()
        .enumerate()
        .filter(|(_, d)| d.span.start <= range.end && range.start <= d.span.end)
        .filter_map(|(i, d)| {
            let fix = d.fix.as_ref()?;
            let mut edits: Vec<FileEdit> = fix
                .edits
                .iter()
                .map(|e| FileEdit {
                    file,
                    span: e.span,
                    new_text: e.text.clone(),
                })
                .collect();
            edits.sort();
            Some(CodeAction {
                title: fix.title.clone(),
                edits,
                code: d.code,
                preferred: fix.is_machine_applicable(),
                diagnostic: i,
            })
        })
        .collect()
}
