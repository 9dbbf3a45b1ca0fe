//! The checker's diagnostics as `seq_create` reports them: structured (for MCP's structured
//! content and the success value's `warnings`) and as text (for the error's `detail`).
//!
//! Positions: a file given as `file` gets 1-based `line` and `column` (in characters, as
//! `seqc check --format json` counts). The parameter form has no text the model wrote — the
//! front end parses a rendering of `{name, description, groups}` — so it gets no position; the
//! `excerpt` (the culprit's text) says where. A finding in *another* stored sequence, one that
//! the new sequence would break (a cycle or a chain too deep through it), names that sequence.

use seq_syntax::{Diagnostic, LineIndex, Severity};
use serde::Serialize;

/// Longest excerpt quoted, in characters.
const EXCERPT: usize = 80;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// The stable code (`seqc explain CODE`).
    pub code: &'static str,
    pub message: String,
    /// Set when the finding is in another stored sequence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Where the diagnostics' spans point.
pub(super) enum Origin<'a> {
    /// The text of a file, with its line index (built once for all its diagnostics):
    /// positions are meaningful.
    File(&'a str, LineIndex),
    /// The rendering of the parameter form: only excerpts are.
    Value(&'a str),
    /// A stored sequence, whose text is not kept.
    Stored(&'a str),
}

impl Finding {
    pub(super) fn new(diagnostic: &Diagnostic, origin: &Origin<'_>) -> Finding {
        let mut finding = Finding {
            severity: diagnostic.severity,
            code: diagnostic.code.as_str(),
            message: diagnostic.message.clone(),
            sequence: None,
            line: None,
            column: None,
            excerpt: None,
            hint: diagnostic.help.clone(),
        };
        match origin {
            Origin::File(text, index) => {
                let at = index.line_col(text, diagnostic.span.start);
                finding.line = Some(at.line);
                finding.column = Some(at.column);
                finding.excerpt = excerpt(text, diagnostic);
            }
            Origin::Value(text) => finding.excerpt = excerpt(text, diagnostic),
            Origin::Stored(name) => finding.sequence = Some((*name).to_owned()),
        }
        finding
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `E0502 at 3:14: message (help: ...)`, one line.
    pub fn to_line(&self) -> String {
        let mut line = format!("{} {}", self.severity.as_str(), self.code);
        match (&self.sequence, self.line, self.column, &self.excerpt) {
            (Some(sequence), ..) => line.push_str(&format!(" in `#{sequence}`")),
            (None, Some(l), Some(c), _) => line.push_str(&format!(" at {l}:{c}")),
            (None, _, _, Some(excerpt)) => line.push_str(&format!(" at `{excerpt}`")),
            (None, ..) => {}
        }
        line.push_str(&format!(": {}", self.message));
        if let Some(hint) = &self.hint {
            line.push_str(&format!(" (help: {hint})"));
        }
        line
    }
}

fn excerpt(text: &str, diagnostic: &Diagnostic) -> Option<String> {
    let quoted = text.get(diagnostic.span.range())?;
    if quoted.is_empty() {
        return None;
    }
    let mut chars = quoted.chars();
    let mut out: String = chars.by_ref().take(EXCERPT).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    Some(out)
}

/// The detail of a refusal: a count, then one line per finding, errors first.
pub(super) fn render(findings: &[Finding]) -> String {
    let errors = findings.iter().filter(|f| f.is_error()).count();
    let mut text = format!(
        "the sequence has {errors} error{}",
        if errors == 1 { "" } else { "s" }
    );
    let ordered = findings
        .iter()
        .filter(|f| f.is_error())
        .chain(findings.iter().filter(|f| !f.is_error()));
    for finding in ordered {
        text.push_str("\n- ");
        text.push_str(&finding.to_line());
    }
    text
}
