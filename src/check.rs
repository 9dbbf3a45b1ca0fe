//! `seqc check`: read the inputs, obtain their diagnostics, render them, set the exit status.
//!
//! How diagnostics are obtained ([`diagnose`]) is kept apart from how they are shown
//! ([`crate::render`]): the renderers only see [`SourceFile`]s.

use crate::cli::{CheckArgs, Format, Status, emit, trouble};
use crate::files::{Input, read_inputs};
use crate::render;
use seq_syntax::Diagnostic;

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

pub fn run(args: &CheckArgs) -> Status {
    let inputs = match read_inputs(&args.paths) {
        Ok(inputs) => inputs,
        Err(errors) => {
            for error in &errors {
                trouble(error);
            }
            return Status::Trouble;
        }
    };
    let files = diagnose(inputs);
    let totals = render::Totals::of(&files);
    let status = if totals.errors > 0 {
        Status::Failed
    } else {
        Status::Clean
    };
    match args.format {
        Format::Human => {
            let color = args.color.for_stdout();
            emit(status, |out| render::human::render(out, &files, color))
        }
        Format::Json => emit(status, |out| render::json::render(out, &files)),
    }
}

/// Parses every input on its own.
fn diagnose(inputs: Vec<Input>) -> Vec<SourceFile> {
    inputs
        .into_iter()
        .map(|input| {
            let mut diagnostics = seq_syntax::parse_bytes(&input.bytes).diagnostics;
            seq_syntax::diagnostic::sort(&mut diagnostics);
            let text = match String::from_utf8(input.bytes) {
                Ok(text) => text,
                Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
            };
            SourceFile {
                path: input.path,
                text,
                diagnostics,
            }
        })
        .collect()
}
