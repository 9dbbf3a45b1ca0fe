//! `seqc check`: read the inputs, obtain their diagnostics, render them, set the exit status.
//!
//! How diagnostics are obtained ([`diagnose`]) is kept apart from how they are shown
//! ([`crate::render`]): the renderers only see [`SourceFile`]s.

use crate::cli::{CheckArgs, Format, Status, emit, trouble};
use crate::files::{Input, read_what_can_be_read};
use crate::render;
use seq_check::{Catalog, Source};
use seq_syntax::Diagnostic;
use seq_syntax::ast::Sequence;

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
    let (inputs, unreadable) = read_what_can_be_read(&args.paths);
    let catalog = crate::catalog::load(&args.catalogs);
    for error in &unreadable {
        trouble(error);
    }
    // The files that could be read are still checked and reported; the status says that some
    // could not. `--fix` writes nothing unless every input was read.
    let partial = !unreadable.is_empty();
    let catalog = match catalog {
        Ok(catalog) if !inputs.is_empty() && !(partial && (args.fix || args.diff)) => catalog,
        catalog => {
            for error in catalog.err().unwrap_or_default() {
                trouble(error);
            }
            return Status::Trouble;
        }
    };
    let catalog = match crate::mcp::live_definitions(&args.mcp) {
        Ok(definitions) => {
            let mut catalog = catalog;
            catalog.merge(definitions);
            catalog
        }
        Err(status) => return status,
    };
    // `#name` calls resolve to the stored sequences too, as they will when the file runs.
    let stored = match crate::stored::load(&args.data.storage()) {
        Ok(stored) => stored,
        Err(error) => return trouble(error),
    };
    if args.fix || args.diff {
        return crate::fix::run(args, inputs, &stored, &catalog);
    }
    let files = diagnose(inputs, &stored, &catalog);
    let totals = render::Totals::of(&files);
    let status = if partial {
        Status::Trouble
    } else if totals.errors > 0 {
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
        Format::Sarif => emit(status, |out| render::sarif::render(out, &files)),
    }
}

/// Checks every input together, as one batch. A file that is not UTF-8 has no text to check:
/// it gets the front end's E0007 and stays out of the batch (a `#name` call into it is then
/// an unknown sequence, as it would be once it failed to load).
fn diagnose(inputs: Vec<Input>, stored: &[Sequence], catalog: &Catalog) -> Vec<SourceFile> {
    let mut split = Split::of(inputs);
    let checked = seq_check::check_with_stored(&split.sources, stored, catalog);
    let sources = std::mem::take(&mut split.sources);
    let files = sources
        .into_iter()
        .zip(checked.files)
        .map(|(source, file)| SourceFile {
            path: source.path,
            text: source.text,
            diagnostics: file.diagnostics,
        });
    split.merge(files)
}

/// The inputs parted into the batch (UTF-8 text) and the files outside it.
#[derive(Debug)]
pub struct Split {
    /// The UTF-8 inputs, in input order.
    pub sources: Vec<Source>,
    /// Where each source was read from, in the same order.
    pub files: Vec<std::path::PathBuf>,
    /// In input order: `None` for a file in the batch, the report of one outside it.
    unreadable: Vec<Option<SourceFile>>,
}

impl Split {
    pub fn of(inputs: Vec<Input>) -> Split {
        let mut split = Split {
            sources: Vec::with_capacity(inputs.len()),
            files: Vec::with_capacity(inputs.len()),
            unreadable: Vec::with_capacity(inputs.len()),
        };
        for input in inputs {
            match String::from_utf8(input.bytes) {
                Ok(text) => {
                    split.sources.push(Source::new(input.path, text));
                    split.files.push(input.file);
                    split.unreadable.push(None);
                }
                Err(err) => {
                    let mut diagnostics = seq_syntax::parse_bytes(err.as_bytes()).diagnostics;
                    seq_syntax::diagnostic::sort(&mut diagnostics);
                    split.unreadable.push(Some(SourceFile {
                        path: input.path,
                        text: String::from_utf8_lossy(err.as_bytes()).into_owned(),
                        diagnostics,
                    }));
                }
            }
        }
        split
    }

    /// The reports of every input in input order: `checked` gives those of the batch's files.
    pub fn merge(self, mut checked: impl Iterator<Item = SourceFile>) -> Vec<SourceFile> {
        self.unreadable
            .into_iter()
            .filter_map(|slot| slot.or_else(|| checked.next()))
            .collect()
    }
}
