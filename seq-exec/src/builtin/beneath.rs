//! Opening a path beneath the root without a race: from the root's descriptor, every entry on
//! the way is opened relative to its parent's descriptor with `O_NOFOLLOW`. The path given is
//! the canonical one that [`super::root::resolve_under`] found (links inside the root already
//! resolved), so it holds no link: one swapped in after the resolution (a directory exchanged
//! with a link to `/`) makes the open fail instead of leading outside. This is the walk cap-std
//! does where `openat2(RESOLVE_BENEATH)` is missing; doing it everywhere keeps one code path.

use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{CStr, CString};
use std::io;
use std::path::{Component, Path};

/// How each directory on the way is opened.
const DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// What a file is opened with besides the caller's flags: never through a link, never as a
/// controlling terminal, never inherited by a command.
const FILE: OFlags = OFlags::NOFOLLOW
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// The directory `relative` beneath `root`.
pub(super) fn open_dir(root: &Path, relative: &Path) -> io::Result<OwnedFd> {
    let mut dir = open_root(root)?;
    for name in names(relative) {
        dir = rustix::fs::openat(&dir, name, DIR, Mode::empty())?;
    }
    Ok(dir)
}

/// The directory `relative` beneath `root`, creating what is missing on the way.
pub(super) fn create_dirs(root: &Path, relative: &Path) -> io::Result<OwnedFd> {
    let mut dir = open_root(root)?;
    for name in names(relative) {
        dir = match rustix::fs::openat(&dir, name, DIR, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::NOENT) => {
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(error) => return Err(error.into()),
                }
                rustix::fs::openat(&dir, name, DIR, Mode::empty())?
            }
            Err(error) => return Err(error.into()),
        };
    }
    Ok(dir)
}

/// What the entry `name` of `dir` is, without following a link; `None` when there is none.
#[allow(
    clippy::useless_conversion,
    reason = "st_nlink is a u64 here, narrower on other targets"
)]
pub(super) fn kind_of(dir: &OwnedFd, name: &str) -> io::Result<Option<(FileType, Stat)>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some((
            FileType::from_raw_mode(stat.st_mode),
            Stat {
                mode: stat.st_mode & 0o7777,
                links: u64::from(stat.st_nlink),
            },
        ))),
        Err(Errno::NOENT) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// The entries of `dir`, `.` and `..` left out, each with the kind `readdir` told: see
/// [`known_kind`] for an entry whose kind it did not tell.
pub(super) fn read_entries(dir: &OwnedFd) -> io::Result<Vec<(CString, FileType)>> {
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        entries.push((name.to_owned(), entry.file_type()));
    }
    Ok(entries)
}

/// The kind of the entry `name` of `dir` that `readdir` told as `told`: that, or where the file
/// system did not tell (`DT_UNKNOWN`), the entry's own, without following a link.
pub(super) fn known_kind(dir: &OwnedFd, name: &CStr, told: FileType) -> io::Result<FileType> {
    match told {
        FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|stat| FileType::from_raw_mode(stat.st_mode))
            .map_err(io::Error::from),
        known @ (FileType::RegularFile
        | FileType::Directory
        | FileType::Symlink
        | FileType::Fifo
        | FileType::Socket
        | FileType::CharacterDevice
        | FileType::BlockDevice) => Ok(known),
    }
}

/// The permission bits and the number of names of an entry.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stat {
    pub(super) mode: u32,
    pub(super) links: u64,
}

/// Opens the entry `name` of `dir` with `flags` (plus [`FILE`]'s).
pub(super) fn open_in(dir: &OwnedFd, name: &str, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        dir,
        name,
        flags | FILE,
        Mode::from_raw_mode(mode),
    )?)
}

/// The root itself is canonical (no link to resolve) and chosen by whoever runs seqc.
fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The names of a relative path's entries (it holds no `..`, no root, no prefix: the resolver
/// refused those).
fn names(relative: &Path) -> impl Iterator<Item = &std::ffi::OsStr> {
    relative
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name),
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => None,
        })
}

/// A readable name for a file type, for refusals.
pub(super) fn describe(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "a special file",
    }
}
