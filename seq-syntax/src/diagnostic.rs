//! Errors as data: every stage reports a [`Diagnostic`]; the CLI renders them with ariadne and the
//! language server converts them to LSP ranges. Nothing else in the toolchain formats an error.

use crate::code::Code;
use crate::limits::{MAX_LISTED_BYTES, MAX_SUGGEST_LEN, MAX_SUGGEST_SCAN, MAX_SUGGEST_WORK};
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
    /// A fix, for `seqc check --fix` and the language server's code actions; its
    /// [`Applicability`] says whether it may be applied unasked.
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
    /// Whether applying it keeps the meaning the author evidently had.
    #[serde(default)]
    pub applicability: Applicability,
}

impl Fix {
    /// A machine-applicable fix.
    pub fn new(title: impl Into<String>, edits: Vec<Edit>) -> Fix {
        Fix {
            title: title.into(),
            edits,
            applicability: Applicability::MachineApplicable,
        }
    }

    /// The same fix with `applicability`.
    #[must_use]
    pub fn with_applicability(mut self, applicability: Applicability) -> Fix {
        self.applicability = applicability;
        self
    }

    pub fn is_machine_applicable(&self) -> bool {
        self.applicability == Applicability::MachineApplicable
    }
}

/// How sure a fix is, as rustc grades its suggestions: `seqc check --fix` applies only
/// machine-applicable fixes (`--unsafe-fixes` the others too), and the language server marks only
/// those as preferred.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Keeps the meaning the author evidently had: a misspelt keyword, a missing `;`, an
    /// unescaped quote. Never turns a sequence meant one way into a valid one that means another.
    #[default]
    MachineApplicable,
    /// May change what the sequence does, or picks one of several readings: running a group
    /// serially, renaming to a similar slot or group, guessing a type.
    MaybeIncorrect,
    /// Inserts a value the author must fill in (a fallback of `""`).
    HasPlaceholders,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::MachineApplicable => "machine-applicable",
            Applicability::MaybeIncorrect => "maybe-incorrect",
            Applicability::HasPlaceholders => "has-placeholders",
        }
    }
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
        self.fix = Some(Fix::new(
            title,
            vec![Edit {
                span,
                text: text.into(),
            }],
        ));
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Diagnostic {
        self.fix = Some(fix);
        self
    }

    /// Grades the fix (if any) as maybe-incorrect: the author must decide.
    #[must_use]
    pub fn maybe_incorrect(self) -> Diagnostic {
        self.graded(Applicability::MaybeIncorrect)
    }

    /// Sets the fix's (if any) applicability.
    #[must_use]
    pub fn graded(mut self, applicability: Applicability) -> Diagnostic {
        if let Some(fix) = &mut self.fix {
            fix.applicability = applicability;
        }
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Suggests the candidate closest to `word`, if one is close enough to be a likely typo.
///
/// Bounded (see [`crate::limits`]), since similarity is quadratic in length and every mistake
/// asks once: words and candidates longer than [`MAX_SUGGEST_LEN`] bytes are passed over, only
/// the first [`MAX_SUGGEST_SCAN`] candidates are looked at, and of those only the closest in
/// length (a typo changes the length little) are compared, up to [`MAX_SUGGEST_WORK`] byte pairs.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    if word.len() > MAX_SUGGEST_LEN {
        return None;
    }
    let mut nearest: Vec<&'a str> = candidates
        .into_iter()
        .take(MAX_SUGGEST_SCAN)
        .filter(|c| c.len() <= MAX_SUGGEST_LEN)
        .collect();
    // Stable: among candidates as close in length, the caller's order decides as before.
    nearest.sort_by_key(|c| c.len().abs_diff(word.len()));
    let mut work = 0usize;
    let nearest: Vec<&'a str> = nearest
        .into_iter()
        .take_while(|c| {
            work += word.len().max(1) * c.len().max(1);
            work <= MAX_SUGGEST_WORK
        })
        .collect();
    // Two neighbours swapped (`sa` for `as`) is one slip of the fingers, whatever the
    // similarity score makes of a short word.
    if let Some(swapped) = nearest.iter().find(|c| is_neighbour_swap(word, c)) {
        return Some(swapped);
    }
    nearest
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|&(score, _)| score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Whether `b` is `a` with two neighbouring characters swapped.
fn is_neighbour_swap(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() != b.len() || a == b {
        return false;
    }
    let differ: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    matches!(differ.as_slice(), [i, j] if *j == i + 1 && a[*i] == b[*j] && a[*j] == b[*i])
}

/// `a`, `b` or `c`, each in backticks: how diagnostics list the legal choices.
pub fn list(names: &[&str]) -> String {
    list_joined(names, "or")
}

/// `a`, `b` *conjunction* `c`, each in backticks. A long list is cut after about
/// [`MAX_LISTED_BYTES`] and ends "*conjunction* N more": one is written per mistake, so an
/// uncut list of every group would make the diagnostics quadratic in the file's size.
pub fn list_joined(names: &[&str], conjunction: &str) -> String {
    let mut shown = 0;
    let mut bytes = 0;
    for name in names {
        bytes += name.len() + 4;
        if bytes > MAX_LISTED_BYTES && shown > 0 {
            break;
        }
        shown += 1;
    }
    let quoted =
        |names: &[&str]| -> Vec<String> { names.iter().map(|n| format!("`{n}`")).collect() };
    match (names, names.get(..shown)) {
        ([], _) | (_, None) => String::new(),
        ([one], _) => format!("`{one}`"),
        ([init @ .., last], Some(_)) if shown == names.len() => {
            format!("{} {conjunction} `{last}`", quoted(init).join(", "))
        }
        (_, Some(head)) => format!(
            "{} {conjunction} {} more",
            quoted(head).join(", "),
            names.len() - shown
        ),
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

    #[test]
    fn two_neighbours_swapped_are_one_slip() {
        let item = ["tool", "args", "as", "unsafe_serial"];
        assert_eq!(did_you_mean("sa", item), Some("as"));
        assert_eq!(did_you_mean("agrs", item), Some("args"));
        assert_eq!(did_you_mean("otol", item), Some("tool"));
        assert!(!is_neighbour_swap("ab", "ab"));
        assert!(!is_neighbour_swap("abc", "cba"));
        assert!(is_neighbour_swap("主机", "机主"));
    }
}
