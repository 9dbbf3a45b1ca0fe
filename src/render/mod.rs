//! Renderers of checked files: each writes the whole report of one run to `out`.

pub mod excerpt;
pub mod fixes;
pub mod human;
pub mod json;
pub mod sarif;

use clap::ValueEnum;
use seq_syntax::{Diagnostic, LineIndex, Severity};
use std::io::{self, IsTerminal};

/// A diagnostic on one line, `PLACE: SEVERITY[CODE]: message`: the form of every line-per-finding
/// output (catalog problems, a graph's syntax errors, a stored sequence's findings). PLACE is
/// `PATH:LINE:COLUMN` for a file (see [`file_place`]) or `#name` for a stored sequence.
pub fn one_line(place: &str, diagnostic: &Diagnostic) -> String {
    format!(
        "{place}: {}[{}]: {}",
        diagnostic.severity.as_str(),
        diagnostic.code,
        diagnostic.message
    )
}

/// `PATH:LINE:COLUMN` of a diagnostic's start, both 1-based, the column in characters.
pub fn file_place(path: &str, text: &str, index: &LineIndex, diagnostic: &Diagnostic) -> String {
    let at = index.line_col(text, diagnostic.span.start);
    format!("{path}:{}:{}", at.line, at.column)
}

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

/// A checked file as the renderers see it.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as the user gave it (or as found below a directory they gave).
    pub path: String,
    /// The file's text; invalid UTF-8 is replaced (only the E0007 report points there).
    pub text: String,
    /// Every diagnostic of the file, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

/// How `check` reports diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Reports with source snippets, for people.
    Human,
    /// One JSON object on stdout, for programs.
    Json,
    /// SARIF 2.1.0 on stdout, for code-scanning services.
    Sarif,
}

/// When to colour human output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour what goes to stdout; `auto` follows <https://no-color.org>.
    pub fn for_stdout(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}
