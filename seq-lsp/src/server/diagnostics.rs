//! The checker's diagnostics as LSP diagnostics. The only rendering of a `Diagnostic` in the
//! server: code, severity, range in the negotiated encoding, labels as related information.

use super::catalog::CatalogFile;
use super::encoding::{Encoding, Lines};
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};
use seq_syntax::{LineIndex, Severity};

/// Every diagnostic names its origin, so that users can tell seqc's findings from other servers'.
pub const SOURCE: &str = "seqc";

pub fn to_lsp(diagnostic: &seq_syntax::Diagnostic, lines: Lines<'_>, uri: &Uri) -> Diagnostic {
    let message = match &diagnostic.help {
        Some(help) => format!("{}\nhelp: {help}", diagnostic.message),
        None => diagnostic.message.clone(),
    };
    // Labels always point into the same file (a label cannot cross files, see seq-check).
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .labels
        .iter()
        .map(|label| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), lines.range(label.span)),
            message: label.message.clone(),
        })
        .collect();
    Diagnostic {
        range: lines.range(diagnostic.span),
        severity: Some(severity(diagnostic.severity)),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_owned())),
        code_description: None,
        source: Some(SOURCE.to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        // What the quick fix would do, for clients that show it before asking for actions.
        data: diagnostic
            .fix
            .as_ref()
            .map(|fix| serde_json::json!({ "fix": fix.title })),
    }
}

/// A catalog file's diagnostics, rendered as the checker's are.
pub fn catalog_problems(file: &CatalogFile, encoding: Encoding) -> Vec<Diagnostic> {
    let index = LineIndex::new(&file.text);
    let lines = Lines {
        text: &file.text,
        index: &index,
        encoding,
    };
    file.diagnostics
        .iter()
        .map(|diagnostic| to_lsp(diagnostic, lines, &file.uri))
        .collect()
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
    }
}
