//! Confinement to a root directory: the one escape check shared by
//! the file tools and `seq_create(file=...)`.
//!
//! A path is refused when it is absolute, when it has a `..` component, or when any entry on the
//! way to it is a symbolic link that leads outside the root (or whose target does not exist, so
//! that where it leads cannot be verified: writing through it could create a file anywhere).
//! Every link on the way is canonicalized and checked against the canonical root, so a link that
//! leaves the root and comes back is refused too. The file tools then open the canonical path
//! entry by entry without following links (`beneath`), so a link swapped in between the check
//! and the use makes the open fail rather than escape.

use crate::error::{Reason, ToolError};
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// How many entries a path may name under the root. Each is looked at on the way, so a path
/// of thousands of entries (a tree a sequence made one level at a time) would hold a thread
/// for seconds; the kernel refuses longer paths than about this many short names anyway.
pub const MAX_PATH_ENTRIES: usize = 256;

/// Why a path was refused or could not be resolved.
#[derive(Debug)]
pub enum PathError {
    /// `/etc/passwd`: only paths relative to the root are accepted.
    Absolute,
    /// More entries than [`MAX_PATH_ENTRIES`].
    TooDeep,
    /// `a/../b`: `..` could climb out of the root.
    ParentDir,
    /// The entry (relative to the root) is a symbolic link that leads outside the root.
    Outside { entry: PathBuf },
    /// The entry is a symbolic link whose target does not exist.
    BrokenLink { entry: PathBuf },
    /// The root itself cannot be resolved.
    Root { root: PathBuf, error: io::Error },
    /// An entry on the way cannot be inspected.
    Io { entry: PathBuf, error: io::Error },
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Absolute => f.write_str("absolute paths are not accepted"),
            PathError::ParentDir => f.write_str("`..` components are not accepted"),
            PathError::TooDeep => write!(
                f,
                "the path names more than {MAX_PATH_ENTRIES} entries under the root"
            ),
            PathError::Outside { entry } => write!(
                f,
                "`{}` is a symbolic link that leads outside the root",
                entry.display()
            ),
            PathError::BrokenLink { entry } => write!(
                f,
                "`{}` is a symbolic link whose target does not exist",
                entry.display()
            ),
            PathError::Root { root, error } => {
                write!(f, "the root `{}` cannot be used: {error}", root.display())
            }
            PathError::Io { entry, error } => write!(f, "`{}`: {error}", entry.display()),
        }
    }
}

impl std::error::Error for PathError {}

impl PathError {
    /// The structured error for the argument `field`: a malformed path is an argument error, an
    /// escape through a link is a refusal, a file system problem is a failure.
    pub fn to_tool_error(&self, field: &str) -> ToolError {
        let (reason, hint) = match self {
            PathError::Absolute | PathError::ParentDir => (
                Reason::ArgError,
                "give a path relative to the root, without `..`",
            ),
            PathError::TooDeep => (Reason::ArgError, "give a shorter path"),
            PathError::Outside { .. } | PathError::BrokenLink { .. } => (
                Reason::Unauthorized,
                "use a path whose every entry stays inside the root",
            ),
            PathError::Root { .. } | PathError::Io { .. } => {
                (Reason::Failed, "check that the path exists and is readable")
            }
        };
        ToolError::new(reason, self.to_string())
            .with_field(field)
            .with_hint(hint)
    }
}

/// Resolves `path` under `root`, refusing every escape. The result is the canonical location of
/// the deepest existing entry, with the components that do not exist yet appended (so a write
/// creates them inside the root). An empty path or `.` is the root itself.
pub fn resolve_under(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    resolve_beneath(root, path).map(|place| place.root.join(place.relative))
}

/// A path resolved beneath a root: the canonical root, and the canonical location relative to
/// it (no link, no `..`), the components that do not exist yet appended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beneath {
    pub root: PathBuf,
    pub relative: PathBuf,
}

/// [`resolve_under`], with the root and the path inside it apart.
pub fn resolve_beneath(root: &Path, path: &str) -> Result<Beneath, PathError> {
    let mut names = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => return Err(PathError::Absolute),
            Component::ParentDir => return Err(PathError::ParentDir),
            Component::CurDir => {}
            Component::Normal(name) => names.push(name),
        }
    }
    if names.len() > MAX_PATH_ENTRIES {
        return Err(PathError::TooDeep);
    }
    let canonical_root = root.canonicalize().map_err(|error| PathError::Root {
        root: root.to_path_buf(),
        error,
    })?;
    let mut resolved = canonical_root.clone();
    let mut relative = PathBuf::new();
    let mut rest = names.iter();
    for name in rest.by_ref() {
        let candidate = resolved.join(name);
        relative.push(name);
        match candidate.symlink_metadata() {
            // A name that is not a link, under a canonical directory, is canonical: only links
            // are followed to see where they lead (one look per entry, not a walk per prefix).
            Ok(meta) if !meta.file_type().is_symlink() => {
                resolved = candidate;
                continue;
            }
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                // Nothing below a missing entry exists either: the rest is created inside.
                resolved = candidate;
                break;
            }
            Err(error) => {
                return Err(PathError::Io {
                    entry: relative,
                    error,
                });
            }
        }
        let canonical = match candidate.canonicalize() {
            Ok(canonical) => canonical,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(PathError::BrokenLink { entry: relative });
            }
            Err(error) => {
                return Err(PathError::Io {
                    entry: relative,
                    error,
                });
            }
        };
        if !canonical.starts_with(&canonical_root) {
            return Err(PathError::Outside { entry: relative });
        }
        resolved = canonical;
    }
    resolved.extend(rest);
    let relative = match resolved.strip_prefix(&canonical_root) {
        Ok(relative) => relative.to_path_buf(),
        // Every step above stayed under the canonical root.
        Err(_) => return Err(PathError::Outside { entry: relative }),
    };
    Ok(Beneath {
        root: canonical_root,
        relative,
    })
}

/// `path` canonicalized as far as it exists, the rest (not created yet) appended as written,
/// `..` and `.` resolved lexically. A dangling symbolic link on the way is an error.
pub fn canonical_beyond(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(mut canonical) => {
                for part in rest.iter().rev() {
                    match part {
                        Component::ParentDir => {
                            canonical.pop();
                        }
                        Component::CurDir => {}
                        other @ (Component::Prefix(_)
                        | Component::RootDir
                        | Component::Normal(_)) => {
                            canonical.push(other);
                        }
                    }
                }
                return Ok(canonical);
            }
            // A dangling link is not a directory to come: where it will lead is not known, so
            // a path through it cannot be placed (a data directory behind one could land in the
            // root once its target is made).
            Err(error)
                if error.kind() == std::io::ErrorKind::NotFound
                    && existing
                        .symlink_metadata()
                        .is_ok_and(|meta| meta.file_type().is_symlink()) =>
            {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!(
                        "{} is a symbolic link whose target does not exist",
                        existing.display()
                    ),
                ));
            }
            Err(error) => match (existing.parent(), existing.components().next_back()) {
                (Some(parent), Some(last)) if error.kind() == std::io::ErrorKind::NotFound => {
                    rest.push(last);
                    existing = parent;
                }
                _ => return Err(error),
            },
        }
    }
}
