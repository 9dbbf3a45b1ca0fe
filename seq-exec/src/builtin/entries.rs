//! `files_stat`, `files_delete`, `files_move`: tools on a directory entry itself rather than on a
//! file's content. The directory holding the entry is resolved beneath the root as for the other
//! file tools ([`super::files`]), and the entry's own name is then used relative to that
//! directory's descriptor without following it: a link is told, deleted and moved as itself,
//! never as what it leads to (a link to `/` deleted recursively deletes a link).

use super::beneath;
use super::files::{FileError, blocking, resolve};
use super::root::{Beneath, PathError};
use crate::error::{Reason, ToolError};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use serde_json::{Value, json};
use std::io;
use std::path::{Component, Path, PathBuf};

/// How deep `files_delete` with `recursive` descends: each level holds a directory open, and a
/// tree deeper than this is refused where it goes deeper, what was under it left as it was.
pub const MAX_DELETE_DEPTH: usize = 256;

/// An entry named by a path: the directory that holds it, resolved beneath the root, and its
/// own name there (`None` for the root itself).
struct Entry {
    parent: Beneath,
    name: Option<String>,
    shown: String,
}

impl Entry {
    fn locate(
        root: &Path,
        hidden: &[PathBuf],
        path: &str,
        field: &str,
    ) -> Result<Entry, ToolError> {
        let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
        for component in Path::new(path).components() {
            match component {
                Component::Normal(name) => parts.push(name),
                Component::CurDir => {}
                // Refused as the resolver refuses them, with its wording.
                Component::Prefix(_) | Component::RootDir => {
                    return Err(PathError::Absolute.to_tool_error(field));
                }
                Component::ParentDir => return Err(PathError::ParentDir.to_tool_error(field)),
            }
        }
        if parts.len() > super::root::MAX_PATH_ENTRIES {
            return Err(PathError::TooDeep.to_tool_error(field));
        }
        let name = match parts.pop() {
            None => None,
            Some(name) => Some(
                name.to_str()
                    .ok_or_else(|| {
                        ToolError::new(Reason::ArgError, format!("`{path}` is not UTF-8"))
                            .with_field(field)
                    })?
                    .to_owned(),
            ),
        };
        let parent_path: PathBuf = parts.iter().collect();
        let parent_text = parent_path.to_string_lossy();
        let parent = resolve(root, hidden, &parent_text, field)?;
        let entry = Entry {
            parent,
            name,
            shown: path.to_owned(),
        };
        // The entry itself, and what it holds, must not be or hold a hidden directory.
        let full = entry.parent.root.join(&entry.parent.relative);
        let full = match &entry.name {
            Some(name) => full.join(name),
            None => full,
        };
        if hidden
            .iter()
            .any(|dir| dir.starts_with(&full) || full.starts_with(dir))
        {
            return Err(ToolError::new(
                Reason::Unauthorized,
                format!(
                    "`{path}` is or holds seqc's data directory, which the file tools do not reach"
                ),
            )
            .with_field(field)
            .with_hint("stored sequences change through `seq_create` and `seq_delete`"));
        }
        Ok(entry)
    }

    /// The entry's name, or the refusal of a change to the root itself.
    fn name_to_change(&self, field: &str, doing: &str) -> Result<&str, ToolError> {
        self.name.as_deref().ok_or_else(|| {
            ToolError::new(
                Reason::ArgError,
                format!("`{}` is the root, which is not {doing}", self.shown),
            )
            .with_field(field)
            .with_hint("name an entry inside the root, such as `out/old.txt`")
        })
    }

    /// The failure of `doing` on this entry, the entry's absence told as `absent`.
    fn error(&self, doing: &'static str, error: io::Error, field: &str) -> ToolError {
        let mut error = FileError::Io(doing, error).at(&self.shown);
        error.field = Some(field.to_owned());
        error
    }
}

/// A missing entry, or a path through a file, is an entry that does not exist.
fn is_absent(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "file",
        FileType::Directory => "dir",
        FileType::Symlink => "link",
        FileType::Fifo
        | FileType::Socket
        | FileType::CharacterDevice
        | FileType::BlockDevice
        | FileType::Unknown => "other",
    }
}

/// `{exists, kind, size, modified_ms}`; a path that does not exist is `exists: false`.
pub(super) async fn files_stat(
    root: &Path,
    hidden: &[PathBuf],
    args: &Value,
) -> Result<Value, ToolError> {
    let path = super::args::string(args, "path")?;
    let entry = Entry::locate(root, hidden, path, "path")?;
    blocking(move || {
        let absent = json!({"exists": false, "kind": null, "size": null, "modified_ms": null});
        let dir = match beneath::open_dir(&entry.parent.root, &entry.parent.relative) {
            Ok(dir) => dir,
            Err(error) if is_absent(&error) => return Ok(absent),
            Err(error) => return Err(entry.error("inspecting", error, "path")),
        };
        let stat = match &entry.name {
            None => rustix::fs::fstat(&dir),
            Some(name) => rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW),
        };
        let stat = match stat {
            Ok(stat) => stat,
            Err(Errno::NOENT | Errno::NOTDIR) => return Ok(absent),
            Err(error) => return Err(entry.error("inspecting", error.into(), "path")),
        };
        Ok(json!({
            "exists": true,
            "kind": kind_name(FileType::from_raw_mode(stat.st_mode)),
            "size": stat.st_size,
            "modified_ms": modified_ms(&stat),
        }))
    })
    .await
}

/// The modification time in milliseconds since the Unix epoch (negative before it).
#[allow(
    clippy::useless_conversion,
    reason = "the time fields' widths differ between targets"
)]
fn modified_ms(stat: &rustix::fs::Stat) -> i64 {
    let seconds = i64::from(stat.st_mtime);
    let nanos = i64::try_from(stat.st_mtime_nsec).unwrap_or(0);
    seconds
        .saturating_mul(1000)
        .saturating_add(nanos / 1_000_000)
}

/// Deletes a file, a link or an empty directory; with `recursive`, a directory and all it holds.
pub(super) async fn files_delete(
    root: &Path,
    hidden: &[PathBuf],
    args: &Value,
) -> Result<Value, ToolError> {
    let path = super::args::string(args, "path")?;
    let recursive = super::args::flag(args, "recursive")?;
    let entry = Entry::locate(root, hidden, path, "path")?;
    entry.name_to_change("path", "deleted")?;
    blocking(move || {
        let name = entry.name_to_change("path", "deleted")?;
        let deleting = |error: io::Error| entry.error("deleting", error, "path");
        let dir =
            beneath::open_dir(&entry.parent.root, &entry.parent.relative).map_err(deleting)?;
        let Some((kind, _)) = beneath::kind_of(&dir, name).map_err(deleting)? else {
            return Err(deleting(io::ErrorKind::NotFound.into()));
        };
        let removed = if kind == FileType::Directory {
            let removed = if recursive {
                empty_dir(&dir, name).map_err(|(error, at)| {
                    let mut error = deleting(error);
                    error.detail = error.detail.map(|d| format!("{d} (at `{at}`)"));
                    error
                })?
            } else {
                0
            };
            match rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR) {
                Ok(()) => removed + 1,
                Err(Errno::NOTEMPTY | Errno::EXIST) => {
                    return Err(ToolError::new(
                        Reason::Failed,
                        format!("`{}` is a directory that is not empty", entry.shown),
                    )
                    .with_field("path")
                    .with_hint("`\"recursive\": true` deletes it with everything in it"));
                }
                Err(error) => return Err(deleting(error.into())),
            }
        } else {
            rustix::fs::unlinkat(&dir, name, AtFlags::empty())
                .map_err(|error| deleting(error.into()))?;
            1
        };
        Ok(json!({"path": entry.shown, "kind": kind_name(kind), "removed": removed}))
    })
    .await
}

/// Deletes everything in the directory `name` of `parent`, never following a link, and returns
/// how many entries went; on failure, the error and where (relative to `name`).
fn empty_dir(parent: &OwnedFd, name: &str) -> Result<u64, (io::Error, String)> {
    const DIR: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    let open = |dir: &OwnedFd, name: &str| rustix::fs::openat(dir, name, DIR, Mode::empty());
    // Each level: the directory, its place for messages, and its entries left to delete.
    let top = open(parent, name).map_err(|e| (e.into(), name.to_owned()))?;
    let mut stack: Vec<(OwnedFd, String)> = vec![(top, name.to_owned())];
    let mut removed = 0_u64;
    while let Some((dir, at)) = stack.last() {
        let at = at.clone();
        let fail = |error: io::Error, below: &str| (error, format!("{at}/{below}"));
        let mut descend = None;
        let names = beneath::read_entries(dir).map_err(|e| (e, at.clone()))?;
        for (child, told) in names {
            let shown = child.to_string_lossy().into_owned();
            let kind = beneath::known_kind(dir, &child, told).map_err(|e| fail(e, &shown))?;
            if kind == FileType::Directory {
                match rustix::fs::unlinkat(dir, child.as_c_str(), AtFlags::REMOVEDIR) {
                    Ok(()) => removed += 1,
                    Err(Errno::NOTEMPTY | Errno::EXIST) => {
                        descend = Some((child, shown));
                        break;
                    }
                    Err(error) => return Err(fail(error.into(), &shown)),
                }
            } else {
                rustix::fs::unlinkat(dir, child.as_c_str(), AtFlags::empty())
                    .map_err(|e| fail(e.into(), &shown))?;
                removed += 1;
            }
        }
        match descend {
            Some((child, shown)) => {
                if stack.len() >= MAX_DELETE_DEPTH {
                    return Err((
                        io::Error::other(format!(
                            "the tree is deeper than {MAX_DELETE_DEPTH} directories"
                        )),
                        format!("{at}/{shown}"),
                    ));
                }
                let below = rustix::fs::openat(dir, child.as_c_str(), DIR, Mode::empty())
                    .map_err(|e| fail(e.into(), &shown))?;
                stack.push((below, format!("{at}/{shown}")));
            }
            // This level is empty now: its parent removes it when it reads its entries again.
            None => {
                stack.pop();
                if stack.is_empty() {
                    break;
                }
            }
        }
    }
    Ok(removed)
}

/// Renames `from` to `to`: one `renameat` on one file system, never a copy.
pub(super) async fn files_move(
    root: &Path,
    hidden: &[PathBuf],
    args: &Value,
) -> Result<Value, ToolError> {
    let from_path = super::args::string(args, "from")?;
    let to_path = super::args::string(args, "to")?;
    let replace = super::args::flag(args, "replace")?;
    let from = Entry::locate(root, hidden, from_path, "from")?;
    let to = Entry::locate(root, hidden, to_path, "to")?;
    from.name_to_change("from", "moved")?;
    to.name_to_change("to", "replaced")?;
    blocking(move || {
        let from_name = from.name_to_change("from", "moved")?;
        let to_name = to.name_to_change("to", "replaced")?;
        let from_dir = beneath::open_dir(&from.parent.root, &from.parent.relative)
            .map_err(|error| from.error("moving", error, "from"))?;
        if beneath::kind_of(&from_dir, from_name)
            .map_err(|error| from.error("moving", error, "from"))?
            .is_none()
        {
            return Err(from.error("moving", io::ErrorKind::NotFound.into(), "from"));
        }
        let to_dir = beneath::create_dirs(&to.parent.root, &to.parent.relative)
            .map_err(|error| to.error("creating the directories of", error, "to"))?;
        let flags = if replace {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        match rustix::fs::renameat_with(&from_dir, from_name, &to_dir, to_name, flags) {
            Ok(()) => Ok(json!({"from": from.shown, "to": to.shown})),
            Err(Errno::EXIST) => Err(ToolError::new(
                Reason::Failed,
                format!("`{}` exists; it is not replaced", to.shown),
            )
            .with_field("to")
            .with_hint("`\"replace\": true` replaces it")),
            Err(Errno::XDEV) => Err(ToolError::new(
                Reason::Failed,
                format!(
                    "`{}` and `{}` are on different file systems; files_move only renames",
                    from.shown, to.shown
                ),
            )
            .with_field("to")
            .with_hint("copy it with `files_read` and `files_write`, then `files_delete` it")),
            Err(Errno::NOENT) => Err(from.error("moving", io::ErrorKind::NotFound.into(), "from")),
            Err(error) => Err(to.error("moving", error.into(), "to")),
        }
    })
    .await
}
