//! Reading a file that someone else may control (a stored sequence, a path named on the command
//! line, a file a directory walk found) as a regular file only, without ever blocking on it or
//! reading more than a bound: the one way seqc reads such files.
//!
//! A FIFO would block `open` until a writer comes, a device could be endless, a file could grow
//! while it is read. So: the file is opened non-blocking (and, for files seqc keeps itself,
//! without following a symbolic link), its kind and size are taken from the open file, anything
//! but a regular file is refused, a size past the bound is refused before a byte is read, and the
//! read stops one byte past the bound, so that a file growing meanwhile is refused too.

use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Whether a symbolic link at the path itself is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Followed: a path the user named (`<(...)` and links are theirs to give).
    Follow,
    /// Refused: a file seqc keeps itself, which is never a link.
    Refuse,
}

/// Why a file was not read. Displayed as the reason after the path: "it is a FIFO, not a
/// regular file".
#[derive(Debug)]
pub enum ReadError {
    /// A FIFO, a device, a socket, a directory, or (with [`Links::Refuse`]) a symbolic link.
    NotRegular(&'static str),
    /// Larger than the bound: `size` is what the metadata said, or the bound plus one when the
    /// file grew while it was read.
    TooLarge {
        size: u64,
        bound: usize,
    },
    Io(io::Error),
}

impl ReadError {
    /// Whether the file is simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(error) if error.kind() == io::ErrorKind::NotFound)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            ReadError::TooLarge { size, bound } => write!(
                f,
                "it is {size} bytes, more than the {} a sequence file may have",
                bytes(*bound)
            ),
            ReadError::Io(error) => {
                // The operating system's reason without Rust's ` (os error N)`.
                let text = error.to_string();
                match text.rfind(" (os error ") {
                    Some(at) if text.ends_with(')') => f.write_str(text.get(..at).unwrap_or(&text)),
                    Some(_) | None => f.write_str(&text),
                }
            }
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for io::Error {
    fn from(error: ReadError) -> io::Error {
        match error {
            ReadError::Io(error) => error,
            ReadError::NotRegular(_) => {
                io::Error::new(io::ErrorKind::InvalidInput, error.to_string())
            }
            ReadError::TooLarge { .. } => {
                io::Error::new(io::ErrorKind::FileTooLarge, error.to_string())
            }
        }
    }
}

/// A bound in the unit it is written in: "64 MiB", "100 bytes".
fn bytes(bound: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bound >= MIB && bound.is_multiple_of(MIB) {
        format!("{} MiB", bound / MIB)
    } else {
        format!("{bound} bytes")
    }
}

/// What the open file was: its bytes and its identity when read.
#[derive(Debug)]
pub struct Contents {
    pub bytes: Vec<u8>,
    pub metadata: Metadata,
}

/// The bytes of the regular file at `path`, at most `bound` of them; anything else is a
/// [`ReadError`] at once (module comment).
pub fn read(path: &Path, bound: usize, links: Links) -> Result<Vec<u8>, ReadError> {
    read_with_metadata(path, bound, links).map(|read| read.bytes)
}

/// As [`read`], with the open file's metadata (what a cache keys on).
pub fn read_with_metadata(path: &Path, bound: usize, links: Links) -> Result<Contents, ReadError> {
    // The kind is asked first too, so that a device is never even opened (opening some has
    // effects); asked again of the open file, which may have been replaced in between.
    let before = match links {
        Links::Follow => std::fs::metadata(path),
        Links::Refuse => std::fs::symlink_metadata(path),
    }
    .map_err(ReadError::Io)?;
    regular(&before)?;
    let file = open(path, links)?;
    let metadata = file.metadata().map_err(ReadError::Io)?;
    regular(&metadata)?;
    let limit = u64::try_from(bound).unwrap_or(u64::MAX);
    if metadata.len() > limit {
        return Err(ReadError::TooLarge {
            size: metadata.len(),
            bound,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() > bound {
        return Err(ReadError::TooLarge {
            size: limit.saturating_add(1),
            bound,
        });
    }
    Ok(Contents { bytes, metadata })
}

fn regular(meta: &Metadata) -> Result<(), ReadError> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(ReadError::NotRegular(kind(meta)))
    }
}

#[cfg(unix)]
fn kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let ty = meta.file_type();
    if ty.is_symlink() {
        "a symbolic link"
    } else if ty.is_fifo() {
        "a FIFO"
    } else if ty.is_socket() {
        "a socket"
    } else if ty.is_char_device() || ty.is_block_device() {
        "a device"
    } else if ty.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn kind(meta: &Metadata) -> &'static str {
    if meta.is_dir() {
        "a directory"
    } else if meta.file_type().is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

#[cfg(unix)]
fn open(path: &Path, links: Links) -> Result<File, ReadError> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = OFlags::NONBLOCK;
    if links == Links::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    OpenOptions::new()
        .read(true)
        .custom_flags(i32::try_from(flags.bits()).unwrap_or(0))
        .open(path)
        .map_err(|error| {
            // A link swapped in after the first look: O_NOFOLLOW's ELOOP.
            if links == Links::Refuse
                && error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
            {
                ReadError::NotRegular("a symbolic link")
            } else {
                ReadError::Io(error)
            }
        })
}

#[cfg(not(unix))]
fn open(path: &Path, _links: Links) -> Result<File, ReadError> {
    OpenOptions::new()
        .read(true)
        .open(path)
        .map_err(ReadError::Io)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn fifo_symlink_device_and_size_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f.json");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        assert!(matches!(
            read(&fifo, 100, Links::Follow),
            Err(ReadError::NotRegular("a FIFO"))
        ));
        let link = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(matches!(
            read(&link, 100, Links::Refuse),
            Err(ReadError::NotRegular("a symbolic link"))
        ));
        assert!(matches!(
            read(&link, 100, Links::Follow),
            Err(ReadError::NotRegular("a device"))
        ));
        let big = dir.path().join("big.json");
        std::fs::write(&big, [b' '; 101]).unwrap();
        let error = read(&big, 100, Links::Refuse).unwrap_err();
        assert_eq!(
            error.to_string(),
            "it is 101 bytes, more than the 100 bytes a sequence file may have"
        );
        std::fs::write(&big, [b' '; 100]).unwrap();
        assert_eq!(read(&big, 100, Links::Refuse).unwrap().len(), 100);
    }
}
