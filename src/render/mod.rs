//! Renderers of checked files: each writes the whole report of one run to `out`.

pub mod excerpt;
pub mod fixes;
pub mod human;
pub mod json;
pub mod sarif;

use crate::check::SourceFile;
use seq_syntax::{Diagnostic, Severity};

/// Counts over a whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub errors: usize,
    pub warnings: usize,
    pub files: usize,
}

impl Totals {
    pub fn of(files: &[SourceFile]) -> Totals {
        Totals {
            files: files.len(),
            ..Totals::of_diagnostics(files.iter().flat_map(|f| &f.diagnostics))
        }
    }

    /// The errors and warnings among some diagnostics (no file counted).
    pub fn of_diagnostics<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Totals {
        let mut totals = Totals::default();
        for diagnostic in diagnostics {
            match diagnostic.severity {
                Severity::Error => totals.errors += 1,
                Severity::Warning => totals.warnings += 1,
            }
        }
        totals
    }

    /// `2 errors, 1 warning`.
    pub fn counts(&self) -> String {
        format!(
            "{}, {}",
            plural(self.errors, "error"),
            plural(self.warnings, "warning")
        )
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

impl std::fmt::Display for Totals {
    /// `2 errors, 1 warning in 3 files`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} in {}", self.counts(), plural(self.files, "file"))
    }
}
