//! Errors as data: every stage reports a [`Diagnostic`]; the CLI renders them with ariadne and the
//! language server converts them to LSP ranges. Nothing else in the toolchain formats an error.

use crate::code::Code;
use crate::span::Span;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding about the input: a stable code, the exact bytes of the culprit, and what to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    /// The culprit, in bytes of the file the user wrote.
    pub span: Span,
    /// Secondary places that explain the finding (the earlier duplicate, the declaration, ...).
    pub labels: Vec<Label>,
    /// What to do about it, when there is something to do.
    pub help: Option<String>,
    /// A machine-applicable fix, for `seqc check --fix` and the language server's code actions.
    pub fix: Option<Fix>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// Edits that resolve a diagnostic. Edits never overlap; text inside JSON strings is already
/// escaped for the place it goes to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<Edit>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub span: Span,
    pub text: String,
}

impl Diagnostic {
    /// A diagnostic with the code's own severity.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: code.severity(),
            code,
            message: message.into(),
            span,
            labels: Vec::new(),
            help: None,
            fix: None,
        }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// A fix that replaces `span` with `text`, titled `title`.
    pub fn with_replacement(
        mut self,
        title: impl Into<String>,
        span: Span,
        text: impl Into<String>,
    ) -> Diagnostic {
        self.fix = Some(Fix {
            title: title.into(),
            edits: vec![Edit {
                span,
                text: text.into(),
            }],
        });
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Diagnostic {
        self.fix = Some(fix);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Suggests the candidate closest to `word`, if one is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|&(score, _)| score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `a`, `b` or `c`, each in backticks: how diagnostics list the legal choices.
pub fn list(names: &[&str]) -> String {
    list_joined(names, "or")
}

/// `a`, `b` *conjunction* `c`, each in backticks.
pub fn list_joined(names: &[&str], conjunction: &str) -> String {
    match names {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|n| format!("`{n}`")).collect();
            format!("{} {conjunction} `{last}`", init.join(", "))
        }
    }
}

/// Orders diagnostics by position, then code, so that output is deterministic.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (a.span.start, a.span.end, a.code).cmp(&(b.span.start, b.span.end, b.code))
    });
}

impl Diagnostic {
    /// Moves every span (primary, labels, fix edits) through `f`: used to bring spans relative
    /// to an unescaped string into the file.
    pub fn map_spans(&mut self, f: impl Fn(Span) -> Span) {
        self.span = f(self.span);
        for label in &mut self.labels {
            label.span = f(label.span);
        }
        if let Some(fix) = &mut self.fix {
            for edit in &mut fix.edits {
                edit.span = f(edit.span);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let fields = ["parallel", "timeout", "tools"];
        assert_eq!(did_you_mean("paralell", fields), Some("parallel"));
        assert_eq!(did_you_mean("timout", fields), Some("timeout"));
        assert_eq!(did_you_mean("zzz", fields), None);
    }
}
