//! `seqc graph`: the call graph of the files given, as Graphviz DOT or JSON on stdout.

use crate::files::read_inputs;
use crate::render;
use crate::status::{Status, emit, trouble};
use clap::{Args, ValueEnum};
use seq_syntax::ast::Sequence;
use seq_syntax::{Diagnostic, LineIndex};
use std::io::{self, Write};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Files or directories to draw; a directory means every sequence file below it, as for
    /// `check`.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How to print the graph.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz DOT (`seqc graph dir/ | dot -Tsvg > calls.svg`).
    Dot,
    /// `{"sequences": [...], "edges": [...]}`, for programs.
    Json,
}

pub fn run(args: &GraphArgs) -> Status {
    let inputs = match read_inputs(&args.paths) {
        Ok(inputs) => inputs,
        Err(errors) => {
            for error in &errors {
                trouble(error);
            }
            return Status::Trouble;
        }
    };
    // Only the front end runs: the picture shows what the files say, right or wrong.
    let mut sequences = Vec::with_capacity(inputs.len());
    let mut failed = false;
    for input in &inputs {
        let parse = seq_syntax::parse_bytes(&input.bytes);
        let errors: Vec<&Diagnostic> = parse.diagnostics.iter().filter(|d| d.is_error()).collect();
        if !errors.is_empty() {
            failed = true;
            let text = String::from_utf8_lossy(&input.bytes);
            report(&input.path, &text, &errors);
        }
        sequences.extend(parse.sequence);
    }
    let refs: Vec<&Sequence> = sequences.iter().collect();
    let status = if failed {
        Status::Failed
    } else {
        Status::Clean
    };
    match args.format {
        GraphFormat::Dot => emit(status, |out| {
            out.write_all(seq_check::graph::to_dot(&refs).as_bytes())
        }),
        GraphFormat::Json => emit(status, |out| {
            serde_json::to_writer_pretty(&mut *out, &seq_check::graph::to_json(&refs))
                .map_err(io::Error::from)?;
            writeln!(out)
        }),
    }
}

/// The syntax errors of one file, one line each on stderr: `FILE:LINE:COLUMN: error[CODE]: ...`.
fn report(path: &str, text: &str, errors: &[&Diagnostic]) {
    let index = LineIndex::new(text);
    let mut err = io::stderr().lock();
    for diagnostic in errors {
        // As in `trouble`: with stderr gone, the exit status still tells.
        let place = render::file_place(path, text, &index, diagnostic);
        let _ = writeln!(err, "{}", render::one_line(&place, diagnostic));
    }
}
