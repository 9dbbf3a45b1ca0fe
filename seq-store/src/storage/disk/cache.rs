//! What the disk store has read, kept: the stored sequences, keyed by their files' identity
//! (device, inode, size, modification and change times), and the directory's listing with
//! each name's look-alike skeleton, kept while nothing changed in the directory since.

use super::{EXTENSION, Storage, TEMP_EXTENSION};
use crate::quota::Usage;
use crate::storage::{MAX_STORED_BYTES, StorageError, Stored, check_name, decode, lock};
use seq_check::regular_file::{self, Links, ReadError};
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A file as `stat` sees it: equal identities mean the same bytes (writes always make a new
/// file and rename it, so a change is a new inode; the times catch the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    /// A regular file's.
    fn of(metadata: &fs::Metadata) -> Option<Identity> {
        metadata
            .is_file()
            .then(|| Identity::stamp(metadata))
            .flatten()
    }

    /// A directory's: an entry added, removed or renamed changes its times.
    fn of_dir(metadata: &fs::Metadata) -> Option<Identity> {
        metadata
            .is_dir()
            .then(|| Identity::stamp(metadata))
            .flatten()
    }

    #[cfg(unix)]
    fn stamp(metadata: &fs::Metadata) -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        Some(Identity {
            dev: metadata.dev(),
            ino: metadata.ino(),
            len: metadata.len(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn stamp(_metadata: &fs::Metadata) -> Option<Identity> {
        None
    }
}

/// How long a directory must have been left alone for its times to tell that nothing changed
/// since it was listed: on some kernels file times tick coarsely, and a change within the same
/// tick as the one before leaves them as they were.
const SETTLED: Duration = Duration::from_millis(100);

/// A name listed in the directory: the stem of a `*.json` file.
#[derive(Clone, Debug)]
struct Name {
    /// Its look-alike skeleton, computed once.
    skeleton: String,
    /// Whether it is a sequence name (files of other names are passed over).
    valid: bool,
}

impl Name {
    fn of(stem: &str) -> Name {
        Name {
            skeleton: seq_syntax::names::confusable_skeleton(stem),
            valid: check_name(stem).is_ok(),
        }
    }
}

/// The directory's names as listed, and what tells that nothing changed since: the writers'
/// generation (counted in the lock file) and the directory's identity, both as they were.
#[derive(Debug)]
pub(super) struct Listed {
    generation: Option<u64>,
    dir: Option<Identity>,
    /// Whether the directory had settled when listed, or was last changed by this process's
    /// own write under the lock: only then do equal times mean an unchanged directory.
    trusted: bool,
    names: BTreeMap<String, Name>,
    /// Whether temporary files were listed (the next write looks for leftovers).
    pub(super) temps: bool,
}

/// What was read: the stored sequences by name, with the identity of the file each came from,
/// and the listing.
#[derive(Debug, Default)]
pub(super) struct Cache {
    read: HashMap<String, (Identity, Stored)>,
    /// Files that could not be decoded, by the identity they had: asked for again, the same
    /// error is given without reading and parsing the file again until it changes.
    broken: HashMap<String, (Identity, Undecodable)>,
    pub(super) listed: Option<Listed>,
}

/// Why a stored file could not be decoded, kept to be given again.
#[derive(Clone, Debug)]
enum Undecodable {
    Corrupt(String),
    UnknownFormat(String),
}

impl Undecodable {
    fn of(error: &StorageError) -> Option<Undecodable> {
        match error {
            StorageError::Corrupt { detail, .. } => Some(Undecodable::Corrupt(detail.clone())),
            StorageError::UnknownFormat { found, .. } => {
                Some(Undecodable::UnknownFormat(found.clone()))
            }
            StorageError::InvalidName { .. }
            | StorageError::Exists { .. }
            | StorageError::Confusable { .. }
            | StorageError::NotFound { .. }
            | StorageError::NotOwner { .. }
            | StorageError::Io { .. }
            | StorageError::OverQuota { .. }
            | StorageError::Unavailable { .. } => None,
        }
    }

    fn error(&self, name: &str) -> StorageError {
        match self {
            Undecodable::Corrupt(detail) => StorageError::Corrupt {
                name: name.to_owned(),
                detail: detail.clone(),
            },
            Undecodable::UnknownFormat(found) => StorageError::UnknownFormat {
                name: name.to_owned(),
                found: found.clone(),
            },
        }
    }
}

impl Storage {
    /// Whether the listing kept is the directory as it is: no writer counted a write since and
    /// the directory's identity is the same.
    fn listing_is_current(&self, cache: &Cache) -> bool {
        let Some(listed) = &cache.listed else {
            return false;
        };
        listed.trusted
            && lock::generation(&lock::path(&self.dir)) == listed.generation
            && fs::metadata(&self.dir)
                .ok()
                .as_ref()
                .and_then(Identity::of_dir)
                == listed.dir
    }

    /// Makes the listing kept the directory's as it is, listing it again (and asking each
    /// sequence file's identity, to forget what changed) only when something may have changed.
    pub(super) fn refresh(&self, cache: &mut Cache) -> Result<(), StorageError> {
        if self.listing_is_current(cache) {
            return Ok(());
        }
        let since = SystemTime::now();
        let generation = lock::generation(&lock::path(&self.dir));
        let missing = |cache: &mut Cache| {
            cache.listed = None;
            cache.read.clear();
            cache.broken.clear();
        };
        let dir = match fs::metadata(&self.dir) {
            Ok(dir) => dir,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                missing(cache);
                return Ok(());
            }
            Err(error) => return Err(StorageError::io(&self.dir, error)),
        };
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                missing(cache);
                return Ok(());
            }
            Err(error) => return Err(StorageError::io(&self.dir, error)),
        };
        let old = cache.listed.take();
        let mut names = BTreeMap::new();
        let mut temps = false;
        for entry in entries {
            let entry = entry.map_err(|error| StorageError::io(&self.dir, error))?;
            let file_name = entry.file_name();
            let Some(file_name) = file_name.to_str() else {
                continue;
            };
            if file_name.ends_with(TEMP_EXTENSION) {
                temps = true;
                continue;
            }
            let Some(stem) = file_name.strip_suffix(EXTENSION) else {
                continue;
            };
            let name = old
                .as_ref()
                .and_then(|old| old.names.get(stem))
                .cloned()
                .unwrap_or_else(|| Name::of(stem));
            if name.valid {
                // A file that is not the one read is read again when it is asked for.
                let identity = entry.metadata().ok().as_ref().and_then(Identity::of);
                if cache
                    .read
                    .get(stem)
                    .is_some_and(|(known, _)| Some(*known) != identity)
                {
                    cache.read.remove(stem);
                }
            }
            names.insert(stem.to_owned(), name);
        }
        cache.read.retain(|name, _| names.contains_key(name));
        cache.broken.retain(|name, _| names.contains_key(name));
        let settled = dir
            .modified()
            .ok()
            .and_then(|modified| since.duration_since(modified).ok())
            .is_some_and(|age| age > SETTLED);
        let dir = Identity::of_dir(&dir);
        cache.listed = Some(Listed {
            trusted: settled && generation.is_some() && dir.is_some(),
            generation,
            dir,
            names,
            temps,
        });
        Ok(())
    }

    /// Records this process's own write (or removal) of `name`, made under the lock across
    /// processes: it is counted in the lock file, so that other processes list the directory
    /// again, and the listing kept follows it without listing the directory again.
    pub(super) fn written(
        &self,
        cache: &mut Cache,
        held: Option<&File>,
        name: &str,
        present: bool,
    ) {
        cache.read.remove(name);
        cache.broken.remove(name);
        let generation = held.and_then(lock::count_write);
        let dir = fs::metadata(&self.dir)
            .ok()
            .as_ref()
            .and_then(Identity::of_dir);
        match (cache.listed.as_mut(), generation, dir) {
            (Some(listed), Some(generation), Some(dir)) => {
                if present {
                    listed
                        .names
                        .entry(name.to_owned())
                        .or_insert_with(|| Name::of(name));
                } else {
                    listed.names.remove(name);
                }
                listed.generation = Some(generation);
                listed.dir = Some(dir);
                listed.trusted = true;
            }
            (None | Some(_), _, _) => cache.listed = None,
        }
    }

    /// Walks the stored sequences listed, in name order, each read (through the cache, without
    /// copying it) with the size of its file as kept (0 when not kept), or why it could not be.
    pub(super) fn each_loaded(
        &self,
        cache: &mut Cache,
        mut each: impl FnMut(&str, Result<(&Stored, u64), StorageError>),
    ) {
        // Reading a file not kept yet changes only what was read, never the listing.
        let listed = cache.listed.take();
        let names = listed
            .iter()
            .flat_map(|listed| &listed.names)
            .filter(|(_, name)| name.valid)
            .map(|(name, _)| name.as_str());
        for name in names {
            if let Some((identity, stored)) = cache.read.get(name) {
                each(name, Ok((stored, identity.len)));
                continue;
            }
            let path = self.dir.join(format!("{name}{EXTENSION}"));
            match self.read_stored(cache, name, &path) {
                Ok(Some(stored)) => {
                    let len = cache.read.get(name).map_or(0, |(identity, _)| identity.len);
                    each(name, Ok((&stored, len)));
                }
                Ok(None) => each(
                    name,
                    Err(StorageError::NotFound {
                        name: name.to_owned(),
                    }),
                ),
                Err(error) => each(name, Err(error)),
            }
        }
        cache.listed = listed;
    }

    /// What `owner` keeps stored, but the sequence `except`, from the listing kept: the files'
    /// sizes, as read. Unreadable ones count for no one.
    pub(super) fn usage_in(&self, cache: &mut Cache, owner: &str, except: &str) -> Usage {
        let mut usage = Usage::default();
        self.each_loaded(cache, |name, read| {
            if let Ok((stored, len)) = read
                && name != except
                && stored.owner.as_deref() == Some(owner)
            {
                usage.sequences += 1;
                usage.bytes += len;
            }
        });
        usage
    }

    /// A listed name other than `name` that looks like it (the same UTS #39 skeleton).
    pub(super) fn look_alike(&self, cache: &Cache, name: &str) -> Option<String> {
        let skeleton = seq_syntax::names::confusable_skeleton(name);
        cache
            .listed
            .iter()
            .flat_map(|listed| &listed.names)
            .find(|(stored, listed)| {
                !stored.starts_with('.') && *stored != name && listed.skeleton == skeleton
            })
            .map(|(stored, _)| stored.clone())
    }

    /// The stored sequence `name` read from `path`, through the cache when the file is the one
    /// read before.
    pub(super) fn read_stored(
        &self,
        cache: &mut Cache,
        name: &str,
        path: &Path,
    ) -> Result<Option<Stored>, StorageError> {
        let seen = path.symlink_metadata().ok().as_ref().and_then(Identity::of);
        if let Some(seen) = seen
            && let Some((identity, stored)) = cache.read.get(name)
            && *identity == seen
        {
            return Ok(Some(stored.clone()));
        }
        if let Some(seen) = seen
            && let Some((identity, undecodable)) = cache.broken.get(name)
            && *identity == seen
        {
            return Err(undecodable.error(name));
        }
        cache.broken.remove(name);
        let read = match regular_file::read_with_metadata(path, MAX_STORED_BYTES, Links::Refuse) {
            Ok(read) => read,
            Err(error) if error.is_not_found() => {
                cache.read.remove(name);
                return Ok(None);
            }
            Err(error) => {
                cache.read.remove(name);
                return Err(match error {
                    ReadError::Io(error) => StorageError::io(path, error),
                    ReadError::NotRegular(_) | ReadError::TooLarge { .. } => {
                        StorageError::Corrupt {
                            name: name.to_owned(),
                            detail: error.to_string(),
                        }
                    }
                });
            }
        };
        let decoded = decode(name, &read.bytes);
        match (&decoded, Identity::of(&read.metadata)) {
            (Ok(stored), Some(identity)) => {
                cache
                    .read
                    .insert(name.to_owned(), (identity, stored.clone()));
            }
            (Err(error), Some(identity)) => {
                cache.read.remove(name);
                if let Some(undecodable) = Undecodable::of(error) {
                    cache
                        .broken
                        .insert(name.to_owned(), (identity, undecodable));
                }
            }
            (Ok(_) | Err(_), None) => {
                cache.read.remove(name);
            }
        }
        decoded.map(Some)
    }
}
