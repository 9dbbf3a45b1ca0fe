//! The disk store: `<data_dir>/sequences/<name>.json`, each file an envelope
//! ([`crate::storage::encode`]).
//!
//! - Names are checked before they touch the file system ([`crate::storage::check_name`]).
//! - Writes are atomic: a temporary file in the same directory, written, fsynced, renamed over
//!   the target, then the directory fsynced. A crash at any point leaves either the old file or
//!   the new one, never a torn one. Temporary files end in `.tmp`, which no sequence file does,
//!   so listing ignores them; the next write removes the ones a crash left behind.
//! - Writes in one process are serialized by one lock (so a write never removes the temporary
//!   file of another in flight). Across processes, leftovers are removed only when older than a
//!   minute or made by this process.
//! - Creating without `replace` publishes with a hard link, which fails when the name is taken:
//!   of two processes creating one name at once, exactly one succeeds.
//! - A file that cannot be read back — corrupt JSON, an unknown format version, a sequence whose
//!   name differs from the file's — is reported as a [`StorageError`], never a panic.
//! - The directory is not trusted: a stored file is opened as a regular file only, without
//!   following a link and without blocking, and refused past [`MAX_STORED_BYTES`](crate::storage::MAX_STORED_BYTES) before it is
//!   read ([`seq_check::regular_file`]). A FIFO, a link or a huge file is a broken entry.
//! - What was read is kept, shared (`Arc`), keyed by the file's identity (device, inode, size,
//!   modification and change times): listing or loading the store again reads only the files
//!   that changed, and copies none.
//! - The listing itself is kept too, with each name's look-alike skeleton: while nothing changed
//!   in the directory since (its identity, and the writers' generation counted in the lock
//!   file), loading the store neither lists nor stats it again, so that an operation's cost does
//!   not grow with the store. A name read by itself (`get`, `#name`) is always checked against
//!   its file; a file rewritten in place by another program, leaving the directory as it was, is
//!   seen by the next load after the directory changes.
//! - The look-alike check, the quota check and the write (or removal) hold the lock of the data
//!   directory's writers (the `lock` module), so that two processes on one data directory cannot
//!   both store look-alike names or together pass a caller's quota.

mod cache;
mod files;
#[cfg(test)]
mod tests;

use super::{Put, SequenceStorage, StorageError, Stored, encode, lock, valid_name};
use crate::quota::over_quota;
use cache::Cache;
use files::{Stopped, publish_new};
use seq_exec::engine::SequenceSource;
use seq_syntax::ast::Sequence;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

const EXTENSION: &str = ".json";
const TEMP_EXTENSION: &str = ".tmp";

/// The storage under one data directory. Cheap to clone; clones share what was read.
#[derive(Clone)]
pub struct Storage {
    dir: PathBuf,
    cache: Arc<Mutex<Cache>>,
    #[cfg(test)]
    hook: Option<files::WriteHook>,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storage")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Storage {
    /// The storage of `data_dir` (its `sequences` directory is created by the first write).
    pub fn new(data_dir: impl AsRef<Path>) -> Storage {
        Storage {
            dir: data_dir.as_ref().join("sequences"),
            cache: Arc::default(),
            #[cfg(test)]
            hook: None,
        }
    }

    /// `<data_dir>/sequences`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the sequence `name` is stored; the name is checked first.
    pub fn path_of(&self, name: &str) -> Result<PathBuf, StorageError> {
        valid_name(name)?;
        Ok(self.dir.join(format!("{name}{EXTENSION}")))
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores `put.sequence` (the module comment says how), within `put.quota` when given one
    /// and an owner: the quota is checked under the lock across processes, with the write.
    fn write(&self, put: &Put<'_>) -> Result<(), StorageError> {
        let name = put.sequence.name.value.as_str();
        let target = self.path_of(name)?;
        let bytes = encode(put.sequence, put.owner)?;
        let _lock = lock::within_process();
        fs::create_dir_all(&self.dir).map_err(|error| StorageError::io(&self.dir, error))?;
        // The checks and the publishing are one step for every process.
        let across = lock::across_processes(&lock::path(&self.dir))?;
        let mut cache = self.cache();
        self.refresh(&mut cache)?;
        if cache.listed.as_ref().is_none_or(|listed| listed.temps) {
            let left = self.remove_stale_temps();
            if let Some(listed) = cache.listed.as_mut() {
                listed.temps = left;
            }
        }
        if !put.replace && self.exists(name)? {
            return Err(StorageError::Exists {
                name: name.to_owned(),
            });
        }
        if let (Some(quota), Some(owner)) = (put.quota, put.owner) {
            let usage = self.usage_in(&mut cache, owner, name);
            over_quota(owner, name, usage, bytes.len() as u64, quota)?;
        }
        if let Some(stored) = self.look_alike(&cache, name) {
            return Err(StorageError::Confusable {
                name: name.to_owned(),
                stored,
            });
        }
        let temp = self.temp_path(name);
        match self.write_temp(&temp, &bytes) {
            Ok(()) => {}
            Err(Stopped::Failed(error)) => {
                // A real failure, not a crash: nothing is left behind.
                let _ = fs::remove_file(&temp);
                return Err(error);
            }
            #[cfg(test)]
            Err(Stopped::Crashed(error)) => {
                cache.listed = None;
                return Err(error);
            }
        }
        let published = if put.replace {
            fs::rename(&temp, &target)
        } else {
            publish_new(&temp, &target)
        };
        if let Err(error) = published {
            let _ = fs::remove_file(&temp);
            return Err(if error.kind() == io::ErrorKind::AlreadyExists {
                StorageError::Exists {
                    name: name.to_owned(),
                }
            } else {
                StorageError::io(&target, error)
            });
        }
        self.written(&mut cache, across.as_ref(), name, true);
        self.sync_dir()
    }
}

/// Owners are checked by the seq tools before they write (only they write here): the caller
/// and the permission a [`Put`] or a deletion carries are not asked again.
impl SequenceStorage for Storage {
    fn location(&self) -> String {
        let data_dir = self.dir.parent().unwrap_or(&self.dir);
        format!("the data directory {}", data_dir.display())
    }

    fn get(&self, name: &str) -> Result<Option<Stored>, StorageError> {
        let path = self.path_of(name)?;
        self.read_stored(&mut self.cache(), name, &path)
    }

    /// Atomic (the module comment); without `replace`, published with a hard link.
    fn put(&self, put: Put<'_>) -> Result<(), StorageError> {
        self.write(&put)
    }

    fn delete(&self, name: &str, _caller: Option<&str>, _admin: bool) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        let _lock = lock::within_process();
        // No data directory, no lock file: nothing to delete either.
        let across = match lock::across_processes(&lock::path(&self.dir)) {
            Ok(across) => across,
            Err(StorageError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        let mut cache = self.cache();
        match fs::remove_file(&path) {
            Ok(()) => {
                self.written(&mut cache, across.as_ref(), name, false);
                self.sync_dir()
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => Err(StorageError::NotFound {
                name: name.to_owned(),
            }),
            Err(error) => Err(StorageError::Io { path, error }),
        }
    }

    /// Files that are not `<valid name>.json` (temporary files among them) are not the
    /// storage's and are passed over. Shared from what was read, nothing copied: a create asks
    /// this of a store of thousands.
    fn load(
        &self,
        each: &mut dyn FnMut(&str, Result<&Stored, StorageError>),
    ) -> Result<(), StorageError> {
        let mut cache = self.cache();
        self.refresh(&mut cache)?;
        self.each_loaded(&mut cache, |name, read| {
            each(name, read.map(|(stored, _)| stored))
        });
        Ok(())
    }

    fn source(&self) -> Arc<dyn SequenceSource> {
        Arc::new(self.clone())
    }

    /// A file of that name, readable or not.
    fn exists(&self, name: &str) -> Result<bool, StorageError> {
        let path = self.path_of(name)?;
        match path.symlink_metadata() {
            Ok(_) => Ok(true),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(StorageError::Io { path, error }),
        }
    }
}

/// `#name` calls read the storage afresh each time: a sequence may change between calls.
/// A file that cannot be read counts as absent here; `seq_run` and `seq_list` report why.
impl SequenceSource for Storage {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        Some(self.get(name).ok().flatten()?.sequence)
    }

    fn owned(&self, name: &str) -> Option<(Arc<Sequence>, Option<String>)> {
        let stored = self.get(name).ok().flatten()?;
        Some((stored.sequence, stored.owner))
    }
}
