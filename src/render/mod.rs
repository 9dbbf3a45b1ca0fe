//! Renderers of checked files: each writes the whole report of one run to `out`.

pub mod fixes;
pub mod human;
pub mod json;
pub mod sarif;

use crate::check::SourceFile;
use seq_syntax::Severity;

/// Counts over a whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub errors: usize,
    pub warnings: usize,
    pub files: usize,
}

impl Totals {
    pub fn of(files: &[SourceFile]) -> Totals {
        let mut totals = Totals {
            files: files.len(),
            ..Totals::default()
        };
        for diagnostic in files.iter().flat_map(|f| &f.diagnostics) {
            match diagnostic.severity {
                Severity::Error => totals.errors += 1,
                Severity::Warning => totals.warnings += 1,
            }
        }
        totals
    }
}

impl std::fmt::Display for Totals {
    /// `2 errors, 1 warning in 3 files`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize, word: &str| {
            if n == 1 {
                format!("{n} {word}")
            } else {
                format!("{n} {word}s")
            }
        };
        write!(
            f,
            "{}, {} in {}",
            plural(self.errors, "error"),
            plural(self.warnings, "warning"),
            plural(self.files, "file")
        )
    }
}
