//! The disk store's files: a write goes to a temporary file in the same directory, written,
//! fsynced, then put in place and the directory fsynced; leftovers of a crash are removed by a
//! later write.

use super::{EXTENSION, Storage, TEMP_EXTENSION};
use crate::storage::StorageError;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Temporary files older than this are taken for a crash's leftovers, whoever made them.
const STALE_TEMP: Duration = Duration::from_secs(60);

/// Makes temporary names unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How writing a temporary file stopped.
#[derive(Debug)]
pub(super) enum Stopped {
    /// It failed: what was written is the caller's to remove.
    Failed(StorageError),
    /// A test's hook stopped it where a crash would: nothing is cleaned up.
    #[cfg(test)]
    Crashed(StorageError),
}

/// The points of a write at which a test's hook is consulted.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WriteStage {
    /// The temporary file exists and holds the first half of the bytes.
    HalfWritten,
    /// All bytes are written and fsynced; the rename has not happened.
    BeforeRename,
}

/// Fault injection for the tests of crash safety: returning `false` stops the write at that
/// stage exactly as a crash would.
#[cfg(test)]
pub(super) type WriteHook = std::sync::Arc<dyn Fn(WriteStage) -> bool + Send + Sync>;

impl Storage {
    /// A fresh temporary name for a write of the sequence `name`.
    pub(super) fn temp_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!(
            ".{name}{EXTENSION}.{}-{}{TEMP_EXTENSION}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ))
    }

    pub(super) fn write_temp(&self, temp: &Path, bytes: &[u8]) -> Result<(), Stopped> {
        let failed = |error| Stopped::Failed(StorageError::io(temp, error));
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(temp)
            .map_err(failed)?;
        let (first, second) = bytes.split_at(bytes.len() / 2);
        file.write_all(first).map_err(failed)?;
        #[cfg(test)]
        self.stage(temp, WriteStage::HalfWritten)?;
        file.write_all(second).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        #[cfg(test)]
        self.stage(temp, WriteStage::BeforeRename)?;
        Ok(())
    }

    #[cfg(test)]
    fn stage(&self, temp: &Path, stage: WriteStage) -> Result<(), Stopped> {
        match &self.hook {
            Some(hook) if !hook(stage) => Err(Stopped::Crashed(StorageError::io(
                temp,
                io::Error::new(
                    io::ErrorKind::Interrupted,
                    format!("a simulated crash at {stage:?}"),
                ),
            ))),
            Some(_) | None => Ok(()),
        }
    }

    /// Makes the rename (or removal) durable: the directory entry itself is fsynced.
    pub(super) fn sync_dir(&self) -> Result<(), StorageError> {
        #[cfg(unix)]
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|error| StorageError::io(&self.dir, error))?;
        Ok(())
    }

    /// Removes temporary files left by a crash: this process's (none can be in flight while the
    /// write lock is held) and anybody's older than [`STALE_TEMP`]. Best effort; returns
    /// whether any temporary file is left.
    pub(super) fn remove_stale_temps(&self) -> bool {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return false;
        };
        let mine = format!(".{}-", std::process::id());
        let now = SystemTime::now();
        let mut left = false;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(stem) = name.strip_suffix(TEMP_EXTENSION) else {
                continue;
            };
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok())
                .is_some_and(|age| age >= STALE_TEMP);
            let own = stem
                .rfind(&mine)
                .is_some_and(|at| stem.get(at + mine.len()..).is_some_and(is_digits));
            if !(stale || own) || fs::remove_file(entry.path()).is_err() {
                left = true;
            }
        }
        left
    }
}

/// Puts `temp` in place at `target` unless `target` exists, atomically even against other
/// processes: a hard link fails when its name is taken, where a rename would replace. On a file
/// system without hard links, falls back to an existence check and a rename.
pub(super) fn publish_new(temp: &Path, target: &Path) -> io::Result<()> {
    match fs::hard_link(temp, target) {
        Ok(()) => {
            // The temporary name is only an extra link now; a crash before this leaves a
            // leftover that the next write removes.
            let _ = fs::remove_file(temp);
            Ok(())
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Err(error),
        Err(_) => {
            if target.symlink_metadata().is_ok() {
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            fs::rename(temp, target)
        }
    }
}

fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}
