//! `seqc check`: read the inputs, obtain their diagnostics, render them, set the exit status.
//!
//! How diagnostics are obtained ([`diagnose`]) is kept apart from how they are shown
//! ([`crate::render`]): the renderers only see [`SourceFile`]s.

use crate::files::{Input, Split, read_what_can_be_read};
use crate::fix::FixOptions;
use crate::render;
use crate::render::{ColorChoice, Format, SourceFile};
use crate::status::{Status, emit, trouble};
use clap::Args;
use seq_catalog::Catalog;
use seq_syntax::ast::Sequence;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check; a directory means every sequence file below it (its
    /// `*.json` files whose content is a sequence, outside `.git`, `node_modules`, `target` and
    /// hidden directories: the files the language server checks). All of them are checked
    /// together as one store: `#name` calls resolve across files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How to report diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// When to colour human output (`auto`: when stdout is a terminal and NO_COLOR is unset).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// A catalog of tool definitions to check against, added to the built-in one (repeatable):
    /// an array of `{name, description, parameters, parallel_safe}`, or an MCP `tools/list`
    /// result. Later files replace earlier definitions of a tool; the built-in `seq_*` tools
    /// are never replaced.
    #[arg(long = "catalog", value_name = "FILE")]
    pub catalogs: Vec<PathBuf>,
    /// MCP servers whose live `tools/list` joins the catalog (started, listed, stopped).
    #[command(flatten)]
    pub mcp: crate::mcp::McpArgs,
    /// The stored sequences that `#name` calls may reach, as `seqc run` finds them (a file
    /// given here stands in for a stored sequence of its name).
    #[command(flatten)]
    pub data: crate::stored::DataDirArg,
    /// Apply every machine-applicable fix the diagnostics carry (the preferred quick fixes of
    /// the language server), checking again until none is left, write the fixed files, and
    /// report what was fixed, the other fixes as suggestions, and what remains. The exit status
    /// is that of the fixed files.
    #[arg(long)]
    pub fix: bool,
    /// With `--fix` or `--diff`, apply the maybe-incorrect fixes too (running a group serially,
    /// renaming to a similar slot or group, guessing a type): read what they changed.
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print what `--fix` would change as a unified diff, and write nothing. Exit status 1 when
    /// there is something to fix or errors would remain.
    #[arg(long)]
    pub diff: bool,
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
        let options = FixOptions {
            unsafe_fixes: args.unsafe_fixes,
            diff: args.diff,
            format: args.format,
            color: args.color,
        };
        return crate::fix::run(&options, inputs, &stored, &catalog);
    }
    let (files, sequences) = diagnose(inputs, &stored, &catalog);
    let totals = render::Totals::of(&files);
    let status = if partial {
        Status::Trouble
    } else if totals.errors > 0 {
        Status::Failed
    } else {
        Status::Clean
    };
    let status = match args.format {
        Format::Human => {
            let color = args.color.for_stdout();
            emit(status, |out| render::human::render(out, &files, color))
        }
        Format::Json => emit(status, |out| render::json::render(out, &files)),
        Format::Sarif => emit(status, |out| render::sarif::render(out, &files)),
    };
    // The process ends here: freeing the syntax trees node by node (a 10 MB file holds a
    // million allocations) would only delay the exit the system reclaims them at.
    std::mem::forget((sequences, stored, files));
    status
}

/// Checks every input together, as one batch. A file that is not UTF-8 has no text to check:
/// it gets the front end's E0007 and stays out of the batch (a `#name` call into it is then
/// an unknown sequence, as it would be once it failed to load).
/// Returns the files' reports and the sequences checked, which the caller may keep until it
/// exits rather than free.
fn diagnose(
    inputs: Vec<Input>,
    stored: &[Sequence],
    catalog: &Catalog,
) -> (Vec<SourceFile>, Vec<Sequence>) {
    let mut split = Split::of(inputs);
    let checked = seq_check::check_with_stored(&split.sources, stored, catalog);
    let sources = std::mem::take(&mut split.sources);
    let mut sequences = Vec::with_capacity(checked.files.len());
    let files = sources
        .into_iter()
        .zip(checked.files)
        .map(|(source, file)| {
            sequences.extend(file.sequence);
            SourceFile {
                path: source.path,
                text: source.text,
                diagnostics: file.diagnostics,
            }
        })
        .collect::<Vec<_>>();
    (split.merge(files.into_iter()), sequences)
}
