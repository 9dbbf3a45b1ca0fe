//! Reading a sequence file found by a directory walk (the server's workspace, `seqc check DIR`)
//! without ever blocking on it or reading more than the parser accepts.
//!
//! A FIFO named `x.json` would block `open` until a writer comes, a device could be endless: only
//! regular files are read, decided from metadata before opening, and the file is opened
//! non-blocking and checked again (it may have been replaced in between). Its size comes from
//! metadata too: of a file larger than [`MAX_FILE_BYTES`], only enough is read for the parser to
//! report it as too large (E0009).

use seq_syntax::limits::MAX_FILE_BYTES;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// The bytes of the regular file at `path` (symbolic links followed), at most
/// [`MAX_FILE_BYTES`] + 1. Anything else is an error saying what it is, at once.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    regular(&std::fs::metadata(path)?)?;
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    regular(&meta)?;
    let bound = u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX);
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(bound + 1)).unwrap_or(0));
    file.take(bound + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn regular(meta: &Metadata) -> io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file", kind(meta)),
    ))
}

#[cfg(unix)]
fn kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let ty = meta.file_type();
    if ty.is_fifo() {
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
    } else {
        "a special file"
    }
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NONBLOCK.bits();
    OpenOptions::new()
        .read(true)
        .custom_flags(i32::try_from(flags).unwrap_or(0))
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).open(path)
}
