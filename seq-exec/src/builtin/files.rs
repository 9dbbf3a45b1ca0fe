//! `files_read`, `files_write`, `files_list`: confined to the host's root (the tools on an entry
//! itself, `files_stat`, `files_delete` and `files_move`, are in [`super::entries`]). A path is resolved
//! by [`resolve_beneath`] (which says why an escape is refused) and then opened entry by entry
//! without following links ([`beneath`]), so a link swapped in meanwhile cannot lead outside.
//! Only regular files are read or replaced: a FIFO, a socket or a device is refused before it
//! is opened, and checked again on the descriptor, so nothing blocks. The work is blocking file
//! I/O, done on tokio's blocking pool.

use super::beneath::{self, Stat};
use super::root::{Beneath, resolve_beneath};
use super::{MAX_READ_BYTES, args};
use crate::error::{Reason, ToolError};
use rustix::fs::{FileType, OFlags};
use serde_json::{Value, json};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) async fn files_read(
    root: &Path,
    hidden: &[PathBuf],
    args: &Value,
) -> Result<Value, ToolError> {
    let path = args::string(args, "path")?;
    let place = resolve(root, hidden, path, "path")?;
    let shown = path.to_owned();
    let budget = crate::engine::budget::current();
    blocking(move || {
        // The file's size is charged to the run before its bytes are read, so that many reads
        // at once cannot hold more than the run's budget; released once the result is handed
        // to the engine, which charges it where it is kept.
        let mut held = budget.as_ref().map(crate::engine::budget::Held::none);
        let mut charge = |len: u64| match &mut held {
            Some(held) => held
                .take(usize::try_from(len).unwrap_or(usize::MAX))
                .map_err(FileError::Budget),
            None => Ok(()),
        };
        let bytes =
            read_regular(&place, MAX_READ_BYTES, &mut charge).map_err(|error| error.at(&shown))?;
        String::from_utf8(bytes).map(Value::String).map_err(|_| {
            ToolError::new(Reason::Failed, format!("`{shown}` is not UTF-8 text"))
                .with_field("path")
                .with_hint("files_read returns text; read a text file")
        })
    })
    .await
}

/// Why a file could not be read or written.
#[derive(Debug)]
pub enum FileError {
    /// Not a regular file: refused without reading or writing.
    NotRegular(&'static str),
    /// Larger than the bound, told from its size before reading.
    TooLarge(usize),
    /// More than one name: replacing it would leave the other names on the old content.
    Linked(u64),
    /// `files_write` of the root or of a path ending in a directory.
    NoFileName,
    /// Reading it would take the run past its byte budget: the budget's error.
    Budget(ToolError),
    Io(&'static str, io::Error),
}

impl FileError {
    /// The tool error of this failure on the file shown as `shown`.
    pub fn at(&self, shown: &str) -> ToolError {
        match self {
            FileError::NotRegular(kind) => ToolError::new(
                Reason::Failed,
                format!("`{shown}` is {kind}, not a regular file"),
            )
            .with_field("path")
            .with_hint("the file tools read and write regular files only"),
            FileError::TooLarge(bound) => ToolError::new(
                Reason::Failed,
                format!("`{shown}` is larger than {} MiB", bound / (1024 * 1024)),
            )
            .with_field("path")
            .with_hint("read a smaller file, or a part of it with `cmd_run` (`head -c`)"),
            FileError::Linked(links) => ToolError::new(
                Reason::Unauthorized,
                format!("`{shown}` has {links} names (hard links); it is not replaced"),
            )
            .with_field("path")
            .with_hint("write to a file with a single name, or a new file"),
            FileError::NoFileName => ToolError::new(
                Reason::ArgError,
                format!("`{shown}` names no file to write"),
            )
            .with_field("path")
            .with_hint("give the path of a file, such as `out/report.txt`"),
            FileError::Budget(error) => {
                let mut error = error.clone();
                error.detail = error.detail.map(|d| format!("reading `{shown}`: {d}"));
                error.with_field("path")
            }
            // One stable text for the common failure, so that a caught error can be told apart
            // (`$out.e.detail contains "does not exist"`) without the system's wording.
            FileError::Io(_, error) if error.kind() == io::ErrorKind::NotFound => {
                ToolError::new(Reason::Absent, format!("`{shown}` does not exist"))
                    .with_field("path")
                    .with_hint("check the path; `files_list` lists what a directory holds")
            }
            FileError::Io(doing, error) => {
                // The canonical path holds no link: meeting one means it was swapped in.
                let changed = error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error());
                let error = ToolError::new(Reason::Failed, format!("{doing} `{shown}`: {error}"))
                    .with_field("path");
                if changed {
                    error.with_hint(
                        "an entry on the way changed while it was opened (a directory \
                         replaced by a link?); nothing outside the root was touched",
                    )
                } else {
                    error
                }
            }
        }
    }
}

/// A regular file's bytes, at most `bound` of them (a file larger than that is refused from
/// its size, or, when it grows meanwhile, after one byte more).
pub fn read_regular(
    place: &Beneath,
    bound: usize,
    charge: &mut dyn FnMut(u64) -> Result<(), FileError>,
) -> Result<Vec<u8>, FileError> {
    let reading = |error: io::Error| FileError::Io("reading", error);
    let (parent, name) = split(&place.relative);
    let dir = beneath::open_dir(&place.root, parent).map_err(reading)?;
    let Some(name) = name else {
        return Err(FileError::NotRegular(beneath::describe(
            FileType::Directory,
        )));
    };
    match beneath::kind_of(&dir, name).map_err(reading)? {
        Some((FileType::RegularFile, _)) | None => {}
        Some((kind, _)) => return Err(FileError::NotRegular(beneath::describe(kind))),
    }
    // Non-blocking: what was a regular file a moment ago may be a FIFO now.
    let file = File::from(
        beneath::open_in(&dir, name, OFlags::RDONLY | OFlags::NONBLOCK, 0).map_err(reading)?,
    );
    let metadata = file.metadata().map_err(reading)?;
    if !metadata.is_file() {
        let kind = FileType::from_raw_mode(std::os::unix::fs::MetadataExt::mode(&metadata));
        return Err(FileError::NotRegular(beneath::describe(kind)));
    }
    let limit = u64::try_from(bound).unwrap_or(u64::MAX);
    if metadata.len() > limit {
        return Err(FileError::TooLarge(bound));
    }
    charge(metadata.len())?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(reading)?;
    if bytes.len() > bound {
        return Err(FileError::TooLarge(bound));
    }
    Ok(bytes)
}

/// Replaces (or creates) a regular file with `content`, atomically: the bytes go to a new file
/// beside it, flushed to disk, which is then renamed over it. A failed write (a full disk)
/// leaves the old file as it was; a reader sees the old content or the new, never a part.
fn write_regular(place: &Beneath, content: &[u8]) -> Result<(), FileError> {
    let writing = |error: io::Error| FileError::Io("writing", error);
    let (parent, name) = split(&place.relative);
    let name = name.ok_or(FileError::NoFileName)?;
    let dir = beneath::create_dirs(&place.root, parent)
        .map_err(|error| FileError::Io("creating the directories of", error))?;
    let mode = match beneath::kind_of(&dir, name).map_err(writing)? {
        None => None,
        Some((FileType::RegularFile, Stat { links, .. })) if links > 1 => {
            return Err(FileError::Linked(links));
        }
        Some((FileType::RegularFile, Stat { mode, .. })) => Some(mode),
        Some((kind, _)) => return Err(FileError::NotRegular(beneath::describe(kind))),
    };
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let temporary = format!(
        ".seqc-write-{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
    let fd = beneath::open_in(&dir, &temporary, flags, mode.unwrap_or(0o666)).map_err(writing)?;
    let written = (|| {
        let mut file = File::from(fd);
        if let Some(mode) = mode {
            // The umask applied at creation; the replaced file's own bits are kept.
            rustix::fs::fchmod(&file, rustix::fs::Mode::from_raw_mode(mode))?;
        }
        file.write_all(content)?;
        file.sync_data()?;
        rustix::fs::renameat(&dir, temporary.as_str(), &dir, name)?;
        Ok::<(), io::Error>(())
    })();
    if let Err(error) = written {
        let _ = rustix::fs::unlinkat(&dir, temporary.as_str(), rustix::fs::AtFlags::empty());
        return Err(writing(error));
    }
    Ok(())
}

/// The directory part and the last name of a canonical relative path.
fn split(relative: &Path) -> (&Path, Option<&str>) {
    match (
        relative.parent(),
        relative.file_name().and_then(|name| name.to_str()),
    ) {
        (Some(parent), Some(name)) => (parent, Some(name)),
        (None, _) | (_, None) => (relative, None),
    }
}

/// `content` is written as is when it is a string; any other value is written as compact JSON,
/// so that a structured result can be saved without a conversion step.
pub(super) async fn files_write(
    root: &Path,
    hidden: &[PathBuf],
    args: &Value,
) -> Result<Value, ToolError> {
    let path = args::string(args, "path")?;
    let content = match args::required(args, "content")? {
        Value::String(text) => text.clone(),
        other @ (Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::Array(_)
        | Value::Object(_)) => other.to_string(),
    };
    let place = resolve(root, hidden, path, "path")?;
    let shown = path.to_owned();
    blocking(move || {
        write_regular(&place, content.as_bytes()).map_err(|error| error.at(&shown))?;
        Ok(json!({"path": shown, "bytes": content.len()}))
    })
    .await
}

/// The entries' names, sorted; directories end in `/`. Links are listed as themselves.
pub(super) async fn files_list(
    root: &Path,
    hidden: &[PathBuf],
    args: &Value,
) -> Result<Value, ToolError> {
    let path = args::string(args, "path")?;
    let place = resolve(root, hidden, path, "path")?;
    let shown = path.to_owned();
    blocking(move || {
        let listing = |error: io::Error| FileError::Io("listing", error).at(&shown);
        let dir = beneath::open_dir(&place.root, &place.relative).map_err(listing)?;
        let mut names = Vec::new();
        for (entry, told) in beneath::read_entries(&dir).map_err(listing)? {
            let mut name = entry.to_string_lossy().into_owned();
            // An entry that cannot be told (gone meanwhile) is listed all the same.
            let kind = beneath::known_kind(&dir, &entry, told).unwrap_or(FileType::Unknown);
            if kind == FileType::Directory {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(Value::Array(names.into_iter().map(Value::String).collect()))
    })
    .await
}

/// `path` (the argument `field`) resolved beneath the root, outside the hidden directories.
pub(super) fn resolve(
    root: &Path,
    hidden: &[PathBuf],
    path: &str,
    field: &str,
) -> Result<Beneath, ToolError> {
    let place = resolve_beneath(root, path).map_err(|error| error.to_tool_error(field))?;
    let full = place.root.join(&place.relative);
    if hidden.iter().any(|dir| full.starts_with(dir)) {
        return Err(ToolError::new(
            Reason::Unauthorized,
            format!("`{path}` is inside seqc's data directory, which the file tools do not reach"),
        )
        .with_field(field)
        .with_hint("stored sequences change through `seq_create` and `seq_delete`"));
    }
    Ok(place)
}

pub(super) async fn blocking<F>(work: F) -> Result<Value, ToolError>
where
    F: FnOnce() -> Result<Value, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| {
            Err(ToolError::new(
                Reason::Failed,
                format!("the file operation did not complete: {error}"),
            ))
        })
}
