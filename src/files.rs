//! Collecting the inputs of a command: explicit files as given, directories walked for their
//! sequence files by the file set's one rule (`seq_check::file_set`), as the editor walks them.

use crate::render::SourceFile;
use seq_check::Source;
use std::fmt;
use std::fs;
use std::io;
use std::path::PathBuf;

/// One input file: its path as the user will read it in reports, and its bytes.
#[derive(Debug)]
pub struct Input {
    pub path: String,
    /// The path itself (`path` is its display, lossy when the name is not UTF-8): where
    /// `check --fix` writes.
    pub file: PathBuf,
    pub bytes: Vec<u8>,
}

/// Why an input could not be collected; displayed as one line.
#[derive(Debug)]
pub enum InputError {
    Read { path: PathBuf, err: io::Error },
    NoSequenceFiles { dir: PathBuf },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Read { path, err } => {
                write!(f, "cannot read {}: {}", path.display(), reason(err))
            }
            InputError::NoSequenceFiles { dir } => {
                write!(f, "no sequence files in directory {}", dir.display())
            }
        }
    }
}

/// Reads every input named by `paths`. A directory stands for every sequence file below it
/// (`seq_check::file_set`: skipped and hidden directories left out, `*.json` whose content is a
/// sequence), recursively, in sorted order; an explicit file is read whatever it holds. A path named
/// twice is read once. Any problem is collected, so one run reports all of them.
pub fn read_inputs(paths: &[PathBuf]) -> Result<Vec<Input>, Vec<InputError>> {
    let (inputs, errors) = read_what_can_be_read(paths);
    if errors.is_empty() {
        Ok(inputs)
    } else {
        Err(errors)
    }
}

/// As [`read_inputs`], but keeps the inputs that could be read beside the problems of the
/// others: one unreadable file does not hide what is wrong in its siblings.
pub fn read_what_can_be_read(paths: &[PathBuf]) -> (Vec<Input>, Vec<InputError>) {
    let mut files = Vec::new();
    let mut walked = std::collections::HashSet::new();
    // Each directory walked, with where its files start among `files` and how many there are.
    let mut walks = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let walk = seq_check::file_set::walk(path);
                errors.extend(
                    walk.errors
                        .into_iter()
                        .map(|(path, err)| InputError::Read { path, err }),
                );
                walked.extend(walk.files.iter().cloned());
                walks.push((path.clone(), files.len(), walk.files.len()));
                files.extend(walk.files);
            }
            Ok(_) => files.push(path.clone()),
            Err(err) => errors.push(InputError::Read {
                path: path.clone(),
                err,
            }),
        }
    }
    let mut inputs = Vec::with_capacity(files.len());
    // Which of `files` were read as sequence files (a walked file whose content is not a
    // sequence is not one; an explicit one always is).
    let mut kept = vec![false; files.len()];
    let mut seen = std::collections::HashSet::new();
    for (at, path) in files.into_iter().enumerate() {
        if !seen.insert(path.clone()) {
            continue;
        }
        // Every file, found by a walk or named, is read as a regular file only, opened without
        // blocking, and refused past the parser's bound before it is read: a FIFO or a device
        // is an error at once, never a hang.
        let found = walked.contains(&path);
        match read_named(&path) {
            Ok(bytes)
                if found
                    && !seq_check::file_set::is_sequence_document(&String::from_utf8_lossy(
                        &bytes,
                    )) => {}
            Ok(bytes) => {
                if let Some(slot) = kept.get_mut(at) {
                    *slot = true;
                }
                inputs.push(Input {
                    path: path.display().to_string(),
                    file: path,
                    bytes,
                });
            }
            Err(err) => {
                if let Some(slot) = kept.get_mut(at) {
                    *slot = true;
                }
                errors.push(InputError::Read { path, err });
            }
        }
    }
    for (dir, start, count) in walks {
        if !kept.iter().skip(start).take(count).any(|&k| k) {
            errors.push(InputError::NoSequenceFiles { dir });
        }
    }
    (inputs, errors)
}

/// A sequence file named on the command line or found by a walk: a regular file (links
/// followed), opened without blocking, at most the parser's bound
/// ([`seq_syntax::limits::MAX_FILE_BYTES`]), refused past it before it is read.
pub fn read_named(path: &std::path::Path) -> io::Result<Vec<u8>> {
    Ok(seq_check::regular_file::read(
        path,
        seq_syntax::limits::MAX_FILE_BYTES,
        seq_check::regular_file::Links::Follow,
    )?)
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

/// The operating system's reason without Rust's ` (os error N)` suffix, which says nothing to
/// a user.
pub fn reason(err: &io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text.get(..at).unwrap_or(&text).to_owned(),
        Some(_) | None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_error_suffix_is_dropped() {
        let err = io::Error::from_raw_os_error(2);
        assert!(!reason(&err).contains("os error"), "{}", reason(&err));
        let custom = io::Error::other("odd (thing)");
        assert_eq!(reason(&custom), "odd (thing)");
    }
}
