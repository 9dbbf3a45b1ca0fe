//! Collecting the inputs of a command: explicit files as given, directories walked for `*.json`.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
    NoJsonFiles { dir: PathBuf },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Read { path, err } => {
                write!(f, "cannot read {}: {}", path.display(), reason(err))
            }
            InputError::NoJsonFiles { dir } => {
                write!(f, "no *.json files in directory {}", dir.display())
            }
        }
    }
}

/// Reads every input named by `paths`. A directory stands for every `*.json` file below it,
/// recursively, in sorted order; an explicit file is read whatever its extension. A path named
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
    let mut errors = Vec::new();
    for path in paths {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let before = files.len();
                walk(path, &mut files, &mut errors);
                if let Some(found) = files.get_mut(before..) {
                    found.sort();
                    walked.extend(found.iter().cloned());
                    if found.is_empty() {
                        errors.push(InputError::NoJsonFiles { dir: path.clone() });
                    }
                }
            }
            Ok(_) => files.push(path.clone()),
            Err(err) => errors.push(InputError::Read {
                path: path.clone(),
                err,
            }),
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|path| seen.insert(path.clone()));

    let mut inputs = Vec::with_capacity(files.len());
    for path in files {
        // What a walk found is read as regular files only, opened without blocking, no more
        // than the parser takes: a FIFO or a device named `*.json` is an error at once. A path
        // given explicitly is read whatever it is (`<(...)`, `/dev/stdin`).
        let read = if walked.contains(&path) {
            seq_lsp::source_file::read(&path)
        } else {
            fs::read(&path)
        };
        match read {
            Ok(bytes) => inputs.push(Input {
                path: path.display().to_string(),
                file: path,
                bytes,
            }),
            Err(err) => errors.push(InputError::Read { path, err }),
        }
    }
    (inputs, errors)
}

/// Collects the `*.json` files below `dir`. Symbolic links to files are followed; links to
/// directories are not, so a link cycle cannot make the walk endless.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<InputError>) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            errors.push(InputError::Read {
                path: dir.to_path_buf(),
                err,
            });
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                errors.push(InputError::Read {
                    path: dir.to_path_buf(),
                    err,
                });
                continue;
            }
        };
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            walk(&path, files, errors);
        } else if path.extension().is_some_and(|ext| ext == "json")
            && !fs::metadata(&path).is_ok_and(|m| m.is_dir())
        {
            // A dangling link is kept: reading it reports the problem instead of skipping it.
            files.push(path);
        }
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
