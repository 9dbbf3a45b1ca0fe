//! `seqc check --fix` and `--diff`: the checker's machine-applicable fixes (with
//! `--unsafe-fixes` the maybe-incorrect ones too), applied by [`seq_check::fix_all`], either
//! written back (each file replaced atomically) or shown as a unified diff; then the fixes left
//! as suggestions, and what remains, reported as `check` reports.

use crate::files::{Input, Split, reason};
use crate::render;
use crate::render::fixes::FixedIn;
use crate::render::{ColorChoice, Format, SourceFile};
use crate::status::{Status, emit, trouble, warn};
use seq_catalog::Catalog;
use seq_check::{Fixes, Fixing};
use seq_syntax::ast::Sequence;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// What `check --fix` or `--diff` was asked for.
#[derive(Clone, Copy, Debug)]
pub struct FixOptions {
    pub unsafe_fixes: bool,
    pub diff: bool,
    pub format: Format,
    pub color: ColorChoice,
}

pub fn run(
    args: &FixOptions,
    inputs: Vec<Input>,
    stored: &[Sequence],
    catalog: &Catalog,
) -> Status {
    let mut split = Split::of(inputs);
    let allowed = if args.unsafe_fixes {
        Fixes::Unsafe
    } else {
        Fixes::Safe
    };
    let fixing = seq_check::fix_all(&split.sources, stored, catalog, allowed);
    let sources = std::mem::take(&mut split.sources);
    let paths = std::mem::take(&mut split.files);
    if !fixing.settled {
        warn(format_args!(
            "fixes still applied after {} passes; run `seqc check --fix` again to see what is left",
            seq_check::MAX_PASSES
        ));
    }
    let fixed: Vec<FixedIn<'_>> = sources
        .iter()
        .zip(&fixing.files)
        .map(|(source, file)| FixedIn {
            path: &source.path,
            original: &source.text,
            fixes: &file.fixes,
        })
        .collect();
    if args.diff {
        return diff(&sources, &fixing, &fixed);
    }

    let mut unwritten = false;
    for ((path, source), file) in paths.iter().zip(&sources).zip(&fixing.files) {
        if !file.changed() {
            continue;
        }
        if let Err(err) = write_atomically(path, &file.text) {
            trouble(format_args!(
                "cannot write {}: {}",
                source.path,
                reason(&err)
            ));
            unwritten = true;
        }
    }
    let reports = remaining(split, &fixing);
    let totals = render::Totals::of(&reports);
    let status = match (unwritten, totals.errors) {
        (true, _) => Status::Trouble,
        (false, 0) => Status::Clean,
        (false, _) => Status::Failed,
    };
    match args.format {
        Format::Human => {
            let color = args.color.for_stdout();
            emit(status, |out| {
                render::fixes::render(out, &fixed, "fixed")?;
                render::fixes::suggestions(out, &reports, allowed)?;
                writeln!(out)?;
                render::human::render(out, &reports, color)
            })
        }
        Format::Json => emit(status, |out| {
            render::json::render_fixed(out, &reports, &fixed)
        }),
        Format::Sarif => {
            // SARIF has no place for fixes already made: they go to stderr.
            let _ = render::fixes::render(&mut io::stderr().lock(), &fixed, "fixed");
            emit(status, |out| render::sarif::render(out, &reports))
        }
    }
}

/// The diagnostics of the fixed texts, every input in input order.
fn remaining(split: Split, fixing: &Fixing) -> Vec<SourceFile> {
    let checked = fixing
        .files
        .iter()
        .zip(&fixing.check.files)
        .map(|(file, check)| SourceFile {
            path: file.path.clone(),
            text: file.text.clone(),
            diagnostics: check.diagnostics.clone(),
        });
    split.merge(checked)
}

/// `--diff`: the changes on stdout, what they fix on stderr, nothing written. The status says
/// whether the files are fine as they are: 1 when there is something to fix or errors would
/// remain.
fn diff(sources: &[seq_check::Source], fixing: &Fixing, fixed: &[FixedIn<'_>]) -> Status {
    let _ = render::fixes::render(&mut io::stderr().lock(), fixed, "would fix");
    let errors = fixing.check.has_errors();
    let status = if fixing.fixes() > 0 || errors {
        Status::Failed
    } else {
        Status::Clean
    };
    emit(status, |out| {
        for (source, file) in sources.iter().zip(&fixing.files) {
            if !file.changed() {
                continue;
            }
            let diff = similar::TextDiff::from_lines(&source.text, &file.text);
            let path = &source.path;
            write!(out, "{}", diff.unified_diff().header(path, path))?;
        }
        Ok(())
    })
}

/// Replaces the file at `path` (the file a link points to, for a link) with `text` so that a
/// reader sees the old text or the new one, never a mix: a temporary file beside it, with the
/// same permissions, synced, then renamed over it.
fn write_atomically(path: &Path, text: &str) -> io::Result<()> {
    let target = fs::canonicalize(path)?;
    let permissions = fs::metadata(&target)?.permissions();
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{name}.seqc-fix-{}", std::process::id()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.set_permissions(permissions)?;
        file.sync_all()?;
        fs::rename(&temporary, &target)
    })();
    if written.is_err() {
        // Nothing half-written is left behind; the original is untouched.
        let _ = fs::remove_file(&temporary);
    }
    written
}
