//! The data directory of `run`, `create`, `list` and `delete`: where it is, what it holds, and
//! checking a sequence file against the sequences stored in it.

use crate::render::{self, SourceFile};
use crate::status::warn;
use clap::Args;
use seq_catalog::Catalog;
use seq_check::Admission;
use seq_store::storage::{SequenceStorage, Storage};
use seq_syntax::Diagnostic;
use seq_syntax::ast::Sequence;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// The variable that names the data directory when `--data-dir` is not given.
pub const DATA_DIR_VAR: &str = "SEQC_DATA_DIR";
/// The data directory when neither `--data-dir` nor the variable says otherwise.
pub const DEFAULT_DATA_DIR: &str = ".seqc";

#[derive(Debug, Args)]
pub struct DataDirArg {
    /// Where sequences are stored, as `DIR/sequences/NAME.json` [default: $SEQC_DATA_DIR, else
    /// ./.seqc].
    #[arg(long = "data-dir", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

impl DataDirArg {
    /// `--data-dir`, else `$SEQC_DATA_DIR` (when set and not empty), else `./.seqc`.
    pub fn resolve(&self) -> PathBuf {
        self.data_dir
            .clone()
            .or_else(|| {
                std::env::var_os(DATA_DIR_VAR)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR))
    }

    pub fn storage(&self) -> Storage {
        Storage::new(self.resolve())
    }
}

/// Every stored sequence that can be read. An unreadable file is warned about and left out:
/// `#name` calls cannot reach it either. Storage that cannot be listed is a problem of the
/// command (one line).
pub fn load(storage: &dyn SequenceStorage) -> Result<Vec<Sequence>, String> {
    let loaded = seq_store::storage::load_all(storage).map_err(|error| {
        format!(
            "cannot read the stored sequences of {}: {error}",
            storage.location()
        )
    })?;
    let mut sequences = Vec::with_capacity(loaded.len());
    for (name, read) in loaded {
        match read {
            Ok(sequence) => sequences.push(Arc::unwrap_or_clone(sequence)),
            Err(error) => warn(format_args!(
                "stored sequence `{name}` is left out: {error}"
            )),
        }
    }
    Ok(sequences)
}

/// Admits a sequence file among the stored sequences (a stored one of the same name is replaced
/// by the file's, as `seq_create` would replace it): the one admission of `seq_create`, whose
/// own diagnostics are those `seqc check` gives the file. Returns the file as the renderers see
/// it, and the admission.
pub fn check_file(
    path: &str,
    bytes: &[u8],
    stored: &[Sequence],
    catalog: &Catalog,
) -> (SourceFile, Admission) {
    let admission = seq_check::admit(seq_syntax::parse_bytes(bytes), stored, catalog);
    (source_file(path, bytes, &admission), admission)
}

/// The file as the renderers see it, with the admission's own diagnostics.
pub fn source_file(path: &str, bytes: &[u8], admission: &Admission) -> SourceFile {
    SourceFile {
        path: path.to_owned(),
        text: String::from_utf8_lossy(bytes).into_owned(),
        diagnostics: admission.own.clone(),
    }
}

/// Renders checked files on stderr with the human renderer of `seqc check` (colour when stderr
/// is a terminal and NO_COLOR is unset). Only files with diagnostics are worth it.
pub fn render_to_stderr(files: &[SourceFile]) -> io::Result<()> {
    let color =
        io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut err = io::stderr().lock();
    crate::render::human::render(&mut err, files, color)?;
    err.flush()
}

/// The diagnostics of a stored sequence, which has no text to quote: one line each on stderr,
/// `#name: error[CODE]: message`, and its help below.
pub fn report_stored(name: &str, diagnostics: &[Diagnostic]) {
    let mut err = io::stderr().lock();
    for diagnostic in diagnostics {
        // With stderr gone, the exit status still tells.
        let _ = writeln!(err, "{}", render::one_line(&format!("#{name}"), diagnostic));
        if let Some(help) = &diagnostic.help {
            let _ = writeln!(err, "  help: {help}");
        }
    }
}
