//! The lock of a data directory's writers: one within the process (so that a write never
//! removes the temporary file of another in flight), and `flock` on
//! `<data_dir>/sequences.lock` across processes, held over the look-alike check, the quota
//! check and the write (or removal). The lock file also counts the writes (its first eight
//! bytes), so that the other processes know to list the directory again.

use super::StorageError;
use seq_check::regular_file::{self, Links};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The lock file, in the data directory beside `sequences/`.
const LOCK_FILE: &str = "sequences.lock";

/// Serializes writes within the process.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// The lock file of the data directory that holds `dir` (`<data_dir>/sequences`).
pub(super) fn path(dir: &Path) -> PathBuf {
    dir.parent().unwrap_or(dir).join(LOCK_FILE)
}

/// Holds the lock of this process's writers until dropped.
pub(super) fn within_process() -> MutexGuard<'static, ()> {
    WRITE_LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The writers' generation as the lock file at `path` counts it (0 without one); `None` when
/// the file cannot be read as the storage keeps it.
pub(super) fn generation(path: &Path) -> Option<u64> {
    match regular_file::read(path, 64, Links::Refuse) {
        Ok(bytes) => Some(count_in(&bytes)),
        Err(error) if error.is_not_found() => Some(0),
        Err(_) => None,
    }
}

/// The count of writes the lock file holds: its first eight bytes (0 when it has fewer).
fn count_in(bytes: &[u8]) -> u64 {
    bytes
        .get(..8)
        .and_then(|count| <[u8; 8]>::try_from(count).ok())
        .map_or(0, u64::from_le_bytes)
}

/// Counts one more write in the lock file, held: the new count, or `None` when it could not
/// be counted.
#[cfg(unix)]
pub(super) fn count_write(lock: &File) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let mut count = [0u8; 8];
    let known = lock.read_at(&mut count, 0).ok()?;
    let next = count_in(count.get(..known).unwrap_or_default()).wrapping_add(1);
    lock.write_all_at(&next.to_le_bytes(), 0).ok()?;
    Some(next)
}

#[cfg(not(unix))]
pub(super) fn count_write(_lock: &File) -> Option<u64> {
    None
}

/// Holds the exclusive lock of the data directory's writers (the lock file at `path`), across
/// processes, until the returned file is dropped (`None` where there is no such lock).
#[cfg(unix)]
pub(super) fn across_processes(path: &Path) -> Result<Option<File>, StorageError> {
    use std::os::unix::fs::OpenOptionsExt;
    // The data directory is trusted for nothing: a link put there would have the lock's
    // count written into whatever file it names (O_NOFOLLOW refuses it, a dangling one
    // too), and a FIFO would block the open (O_NONBLOCK); only a regular file is a lock.
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(i32::try_from(flags.bits()).unwrap_or(0))
        .open(path)
        .map_err(|error| StorageError::io(path, error))?;
    let regular = file
        .metadata()
        .map_err(|error| StorageError::io(path, error))?
        .is_file();
    if !regular {
        return Err(StorageError::io(
            path,
            std::io::Error::other("the lock file is not a regular file"),
        ));
    }
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|error| StorageError::io(path, error.into()))?;
    Ok(Some(file))
}

#[cfg(not(unix))]
pub(super) fn across_processes(_path: &Path) -> Result<Option<File>, StorageError> {
    Ok(None)
}
