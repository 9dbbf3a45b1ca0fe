//! Reading a sequence file found by a directory walk (the server's workspace, `seqc check DIR`)
//! without ever blocking on it or reading more than the parser accepts: a regular file only, no
//! larger than [`MAX_FILE_BYTES`] ([`seq_check::regular_file`], the one way seqc reads such files).

use seq_check::regular_file::{self, Links};
use seq_syntax::limits::MAX_FILE_BYTES;
use std::io;
use std::path::Path;

/// The bytes of the regular file at `path` (symbolic links followed), at most
/// [`MAX_FILE_BYTES`]. Anything else is an error saying what it is, at once.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    Ok(regular_file::read(path, MAX_FILE_BYTES, Links::Follow)?)
}
