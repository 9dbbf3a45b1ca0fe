//! Names and errors: which names may name a stored sequence, and what can go wrong with the
//! storage.

use super::envelope::FORMAT;
use crate::quota::{Quota, Usage};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a name cannot name a stored sequence: the front end's rule
/// ([`seq_syntax::names::sequence_name_problem`]), asked again here because storage is also
/// reached by name alone (`seq_delete`, `seq_run`, `#name`).
pub fn check_name(name: &str) -> Result<(), String> {
    match seq_syntax::names::sequence_name_problem(name) {
        Some(problem) => Err(problem.into_owned()),
        None => Ok(()),
    }
}

/// [`check_name`] as a storage's refusal: every storage asks it before a name is used.
pub fn valid_name(name: &str) -> Result<(), StorageError> {
    check_name(name).map_err(|problem| StorageError::InvalidName {
        name: name.to_owned(),
        problem,
    })
}

/// What went wrong with the storage.
#[derive(Debug)]
pub enum StorageError {
    InvalidName {
        name: String,
        problem: String,
    },
    /// Creating a sequence whose name is taken, without `replace`.
    Exists {
        name: String,
    },
    /// Creating a sequence whose name looks like a stored one's (the same UTS #39 skeleton):
    /// a caller asking for one would be shown the other.
    Confusable {
        name: String,
        stored: String,
    },
    NotFound {
        name: String,
    },
    /// Replacing or deleting a sequence another caller owns (or an ownerless one), refused by
    /// a storage that checks owners itself.
    NotOwner {
        name: String,
        /// Who owns it (`None`: ownerless).
        owner: Option<String>,
        caller: String,
    },
    /// The file is not JSON of the stored shape, or holds another sequence's name.
    Corrupt {
        name: String,
        detail: String,
    },
    UnknownFormat {
        name: String,
        found: String,
    },
    Io {
        path: PathBuf,
        error: io::Error,
    },
    /// The storage could not be reached, or answered with an error (a durable engine's).
    Unavailable {
        location: String,
        detail: String,
    },
    /// Storing the sequence `name` would take `owner` past its quota: it owns `usage` besides
    /// this name, and the write adds `adding` bytes.
    OverQuota {
        owner: String,
        name: String,
        usage: Usage,
        adding: u64,
        quota: Quota,
    },
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::InvalidName { name, problem } => {
                write!(f, "invalid sequence name `{name}`: {problem}")
            }
            StorageError::Exists { name } => write!(f, "a sequence named `{name}` already exists"),
            StorageError::Confusable { name, stored } => write!(
                f,
                "`{name}` looks like the stored sequence `{stored}` but is another name"
            ),
            StorageError::NotFound { name } => write!(f, "no stored sequence is named `{name}`"),
            StorageError::NotOwner {
                name,
                owner,
                caller,
            } => match owner {
                Some(owner) => write!(
                    f,
                    "`{name}` belongs to `{owner}`; caller `{caller}` may not change it"
                ),
                None => write!(
                    f,
                    "`{name}` has no owner; caller `{caller}` may not change it"
                ),
            },
            StorageError::Corrupt { name, detail } => {
                write!(f, "the stored sequence `{name}` cannot be read: {detail}")
            }
            StorageError::UnknownFormat { name, found } => write!(
                f,
                "the stored sequence `{name}` has format {found}; this version reads format {FORMAT}"
            ),
            StorageError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            StorageError::Unavailable { location, detail } => {
                write!(f, "cannot use the storage of {location}: {detail}")
            }
            StorageError::OverQuota {
                owner,
                name,
                usage,
                adding,
                quota,
            } => {
                if usage.sequences >= quota.sequences {
                    write!(
                        f,
                        "caller `{owner}` already owns {} stored sequences, the quota of {} per \
                         caller",
                        usage.sequences, quota.sequences
                    )
                } else {
                    write!(
                        f,
                        "storing `{name}` ({adding} bytes) would take caller `{owner}` to {} \
                         bytes of stored sequences, past the quota of {} bytes per caller",
                        usage.bytes.saturating_add(*adding),
                        quota.bytes
                    )
                }
            }
        }
    }
}

impl std::error::Error for StorageError {}

impl StorageError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, error: io::Error) -> StorageError {
        StorageError::Io {
            path: path.to_path_buf(),
            error,
        }
    }

    /// What `name`'s stored bytes are not, `detail` saying why.
    pub fn corrupt(name: &str, detail: impl fmt::Display) -> StorageError {
        StorageError::Corrupt {
            name: name.to_owned(),
            detail: detail.to_string(),
        }
    }
}
