//! Storage: the sequences kept by name. [`SequenceStorage`] is what the seq tools and the
//! command line use; [`Storage`] keeps them on disk, and a durable engine can keep them itself
//! (seq-restate's `RestateStorage`), in the same envelope ([`encode`], [`decode`]).
//!
//! On disk: `<data_dir>/sequences/<name>.json` holding
//! `{"format": 1, "owner": <caller id>, "sequence": <the checked AST>}`.
//!
//! - `owner` is the id of the caller that created the sequence through `seq_create`. It is
//!   absent in files written before owners existed and in those stored from the command line
//!   (`seqc create`, the local user's own data directory): such an *ownerless* sequence belongs
//!   to no caller, so over the seq tools only a store administrator may replace or delete it.
//!
//! - Names are checked before they touch the file system ([`check_name`]).
//! - Writes are atomic: a temporary file in the same directory, written, fsynced, renamed over
//!   the target, then the directory fsynced. A crash at any point leaves either the old file or
//!   the new one, never a torn one. Temporary files end in `.tmp`, which no sequence file does,
//!   so listing ignores them; the next write removes the ones a crash left behind.
//! - Writes in one process are serialized by one lock (so a write never removes the temporary
//!   file of another in flight). Across processes, leftovers are removed only when older than
//!   [`STALE_TEMP`] or made by this process.
//! - Creating without `replace` publishes with a hard link, which fails when the name is taken:
//!   of two processes creating one name at once, exactly one succeeds.
//! - A file that cannot be read back — corrupt JSON, an unknown format version, a sequence whose
//!   name differs from the file's — is reported as a [`StorageError`], never a panic.
//! - The directory is not trusted: a stored file is opened as a regular file only, without
//!   following a link and without blocking, and refused past [`MAX_STORED_BYTES`] before it is
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
//! - The look-alike check, the quota check and the write (or removal) hold an exclusive lock on
//!   `<data_dir>/sequences.lock` (`flock`), so that two processes on one data directory cannot
//!   both store look-alike names or together pass a caller's quota; every writer counts its
//!   write in that file, so that the others know to list the directory again.

use crate::quota::Quota;
use seq_check::regular_file::{self, Links, ReadError};
use seq_exec::engine::SequenceSource;
use seq_syntax::ast::Sequence;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// The version written in every stored file; a file with another is refused, not guessed at.
pub const FORMAT: u32 = 1;

/// Deepest nesting of arrays and objects a stored file may have. The AST of a checked sequence
/// needs up to about 530 levels (an `args` value nested to the front end's bound, several JSON
/// levels per AST level); reading deeper would only risk the stack.
pub const MAX_STORED_DEPTH: usize = 1024;

/// The largest stored file read. A stored file holds the AST as JSON, a few times the text it
/// was parsed from (at most [`seq_syntax::limits::MAX_FILE_BYTES`]).
pub const MAX_STORED_BYTES: usize = 4 * seq_syntax::limits::MAX_FILE_BYTES;

/// Temporary files older than this are taken for a crash's leftovers, whoever made them.
pub const STALE_TEMP: Duration = Duration::from_secs(60);

const EXTENSION: &str = ".json";
const TEMP_EXTENSION: &str = ".tmp";
/// The lock file of writes across processes, in the data directory beside `sequences/`.
const LOCK_FILE: &str = "sequences.lock";

/// Serializes writes within the process (see the module comment).
static WRITE_LOCK: Mutex<()> = Mutex::new(());
/// Makes temporary names unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Why a name cannot name a stored sequence: the front end's rule
/// ([`seq_syntax::names::sequence_name_problem`]), asked again here because storage is also
/// reached by name alone (`seq_delete`, `seq_run`, `#name`).
pub fn check_name(name: &str) -> Result<(), String> {
    match seq_syntax::names::sequence_name_problem(name) {
        Some(problem) => Err(problem.into_owned()),
        None => Ok(()),
    }
}

/// What went wrong with the storage.
#[derive(Debug)]
pub enum StorageError {
    InvalidName {
        name: String,
        problem: String,
    },
    /// Creating a sequence whose name is taken, without `replace`.
    Exists {
        name: String,
    },
    /// Creating a sequence whose name looks like a stored one's (the same UTS #39 skeleton):
    /// a caller asking for one would be shown the other.
    Confusable {
        name: String,
        stored: String,
    },
    NotFound {
        name: String,
    },
    /// Replacing or deleting a sequence another caller owns (or an ownerless one), refused by
    /// a storage that checks owners itself.
    NotOwner {
        name: String,
        /// Who owns it (`None`: ownerless).
        owner: Option<String>,
        caller: String,
    },
    /// The file is not JSON of the stored shape, or holds another sequence's name.
    Corrupt {
        name: String,
        detail: String,
    },
    UnknownFormat {
        name: String,
        found: String,
    },
    Io {
        path: PathBuf,
        error: io::Error,
    },
    /// A write hook stopped the write (a simulated crash).
    Interrupted {
        stage: WriteStage,
    },
    /// The storage could not be reached, or answered with an error (a durable engine's).
    Unavailable {
        location: String,
        detail: String,
    },
    /// Storing the sequence `name` would take `owner` past its quota: it owns `usage` besides
    /// this name, and the write adds `adding` bytes.
    OverQuota {
        owner: String,
        name: String,
        usage: Usage,
        adding: u64,
        quota: Quota,
    },
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::InvalidName { name, problem } => {
                write!(f, "invalid sequence name `{name}`: {problem}")
            }
            StorageError::Exists { name } => write!(f, "a sequence named `{name}` already exists"),
            StorageError::Confusable { name, stored } => write!(
                f,
                "`{name}` looks like the stored sequence `{stored}` but is another name"
            ),
            StorageError::NotFound { name } => write!(f, "no stored sequence is named `{name}`"),
            StorageError::NotOwner {
                name,
                owner,
                caller,
            } => match owner {
                Some(owner) => write!(
                    f,
                    "`{name}` belongs to `{owner}`; caller `{caller}` may not change it"
                ),
                None => write!(
                    f,
                    "`{name}` has no owner; caller `{caller}` may not change it"
                ),
            },
            StorageError::Corrupt { name, detail } => {
                write!(f, "the stored sequence `{name}` cannot be read: {detail}")
            }
            StorageError::UnknownFormat { name, found } => write!(
                f,
                "the stored sequence `{name}` has format {found}; this version reads format {FORMAT}"
            ),
            StorageError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            StorageError::Interrupted { stage } => {
                write!(f, "the write was interrupted at {stage:?}")
            }
            StorageError::Unavailable { location, detail } => {
                write!(f, "cannot use the storage of {location}: {detail}")
            }
            StorageError::OverQuota {
                owner,
                name,
                usage,
                adding,
                quota,
            } => {
                if usage.sequences >= quota.sequences {
                    write!(
                        f,
                        "caller `{owner}` already owns {} stored sequences, the quota of {} per \
                         caller",
                        usage.sequences, quota.sequences
                    )
                } else {
                    write!(
                        f,
                        "storing `{name}` ({adding} bytes) would take caller `{owner}` to {} \
                         bytes of stored sequences, past the quota of {} bytes per caller",
                        usage.bytes.saturating_add(*adding),
                        quota.bytes
                    )
                }
            }
        }
    }
}

impl std::error::Error for StorageError {}

/// The points of a write at which a [`WriteHook`] is consulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStage {
    /// The temporary file exists and holds the first half of the bytes.
    HalfWritten,
    /// All bytes are written and fsynced; the rename has not happened.
    BeforeRename,
}

/// Fault injection for tests of crash safety: returning `false` stops the write at that stage
/// exactly as a crash would (nothing is cleaned up).
pub type WriteHook = Arc<dyn Fn(WriteStage) -> bool + Send + Sync>;

/// One line of [`Storage::list`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub name: String,
    pub groups: usize,
    pub items: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments a run takes, by name, with their types (and default, `required` and
    /// description where declared: `bool, default false`): the inputs of the groups a run runs
    /// (those no item calls).
    pub args: BTreeMap<String, String>,
    /// Who created it (the module comment says what an ownerless one is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

impl Summary {
    pub fn of(sequence: &Sequence) -> Summary {
        let args = seq_catalog::calls::entry_groups(sequence)
            .flat_map(|g| g.inputs.iter())
            .map(|slot| (slot.name.value.to_string(), slot.signature()))
            .collect();
        Summary {
            name: sequence.name.value.clone(),
            groups: sequence.groups.len(),
            items: sequence.groups.iter().map(|g| g.items.len()).sum(),
            description: sequence.description.as_ref().map(|d| d.value.clone()),
            args,
            owner: None,
        }
    }
}

/// A stored sequence with its owner. Cheap to clone: the sequence is shared.
#[derive(Clone, Debug)]
pub struct Stored {
    pub sequence: Arc<Sequence>,
    /// `None` for an ownerless sequence (the module comment).
    pub owner: Option<String>,
}

/// A listed file that could not be read.
#[derive(Debug)]
pub struct Broken {
    pub name: String,
    pub error: StorageError,
}

/// [`Storage::list`]: the readable sequences and the broken files, each sorted by name.
#[derive(Debug, Default)]
pub struct Listing {
    pub sequences: Vec<Summary>,
    pub broken: Vec<Broken>,
}

#[derive(Serialize)]
struct EnvelopeOut<'a> {
    format: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a str>,
    sequence: &'a Sequence,
}

#[derive(Deserialize)]
struct EnvelopeIn {
    format: serde_json::Value,
    #[serde(default)]
    owner: Option<String>,
    sequence: serde_json::Value,
}

/// What one owner keeps stored ([`SequenceStorage::usage`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub sequences: u64,
    pub bytes: u64,
}

/// Refuses a write of `adding` bytes that would take `owner`, who keeps `usage` besides the
/// sequence `name`, past `quota`: one more sequence past the count, or past the bytes.
fn over_quota(
    owner: &str,
    name: &str,
    usage: Usage,
    adding: u64,
    quota: Quota,
) -> Result<(), StorageError> {
    if usage.sequences >= quota.sequences || usage.bytes.saturating_add(adding) > quota.bytes {
        return Err(StorageError::OverQuota {
            owner: owner.to_owned(),
            name: name.to_owned(),
            usage,
            adding,
            quota,
        });
    }
    Ok(())
}

/// A stored sequence's name and what reading it gave.
pub type Loaded = (String, Result<Arc<Sequence>, StorageError>);

/// [`Loaded`] with the owner.
pub type LoadedStored = (String, Result<Stored, StorageError>);

/// Where sequences are kept by name, and how: files in a data directory ([`Storage`]) or a
/// durable engine's state. Blocking: called from the seq tools on tokio's blocking pool and from
/// the command line, never from inside a run (a run's `#name` calls go through [`Self::source`]).
///
/// What every implementation guarantees: a name is checked before it is used
/// ([`check_name`]); a write is whole or absent; of two creators of one name without
/// `replace`, exactly one succeeds, the other gets [`StorageError::Exists`]; a name that looks
/// like a stored one is refused ([`StorageError::Confusable`]); what cannot be read back is a
/// [`StorageError`], never a panic. Storage never checks a sequence: its callers do, before.
pub trait SequenceStorage: fmt::Debug + Send + Sync {
    /// Where the sequences are, for messages: "the data directory .seqc", say.
    fn location(&self) -> String;

    /// The stored sequence `name` with its owner, read afresh; `Ok(None)` when there is none.
    fn get_stored(&self, name: &str) -> Result<Option<Stored>, StorageError>;

    /// Stores `sequence` under its name, recording `owner` (`None`: ownerless); an existing
    /// one is replaced only with `replace`. Whether the writer may replace it is the seq tools'
    /// question, asked before.
    fn put_owned(
        &self,
        sequence: &Sequence,
        replace: bool,
        owner: Option<&str>,
    ) -> Result<(), StorageError>;

    /// As [`Self::put_as`] for `owner`, refused with [`StorageError::OverQuota`] when the
    /// write would take `owner` past `quota` (counting what it owns but the sequence of this
    /// name, which the write replaces). Here the check and the write are two steps; a storage
    /// that can make them one (as [`Storage`] does across processes) does.
    fn put_within(
        &self,
        sequence: &Sequence,
        replace: bool,
        owner: &str,
        quota: Quota,
        admin: bool,
    ) -> Result<(), StorageError> {
        let name = sequence.name.value.as_str();
        let usage = self.usage(owner, name)?;
        let adding = encode(sequence, Some(owner))?.len() as u64;
        over_quota(owner, name, usage, adding, quota)?;
        self.put_as(sequence, replace, Some(owner), admin)
    }

    /// Deletes the stored sequence `name`.
    fn delete(&self, name: &str) -> Result<(), StorageError>;

    /// [`SequenceStorage::put_owned`] on behalf of `owner` (`None`: the command line's user),
    /// who holds the store administrator permission if `admin`. A storage others can reach
    /// without the seq tools (the engine-held one) asks again itself whether the writer may
    /// replace what is stored, and refuses with [`StorageError::NotOwner`]; on disk, where
    /// only the seq tools write, this is `put_owned`.
    fn put_as(
        &self,
        sequence: &Sequence,
        replace: bool,
        owner: Option<&str>,
        admin: bool,
    ) -> Result<(), StorageError> {
        let _ = admin;
        self.put_owned(sequence, replace, owner)
    }

    /// [`SequenceStorage::delete`] on behalf of `caller`, as [`SequenceStorage::put_as`].
    fn delete_as(&self, name: &str, caller: Option<&str>, admin: bool) -> Result<(), StorageError> {
        let _ = (caller, admin);
        self.delete(name)
    }

    /// Every stored sequence, read, with its owner, sorted by name.
    fn load_all_stored(&self) -> Result<Vec<LoadedStored>, StorageError>;

    /// Where a run in this process finds the stored sequences its `#name` calls name.
    fn source(&self) -> Arc<dyn SequenceSource>;

    /// How many sequences `owner` has stored and how many bytes they take, leaving out the
    /// one named `except` (which the write being considered would replace). Unreadable ones
    /// count for no one.
    fn usage(&self, owner: &str, except: &str) -> Result<Usage, StorageError> {
        let mut usage = Usage::default();
        for (name, read) in self.load_all_stored()? {
            if let Ok(stored) = read
                && name != except
                && stored.owner.as_deref() == Some(owner)
            {
                usage.sequences += 1;
                usage.bytes += encode(&stored.sequence, stored.owner.as_deref())
                    .map_or(0, |bytes| bytes.len() as u64);
            }
        }
        Ok(usage)
    }

    /// Whether a sequence is stored under `name` (readable or not).
    fn exists(&self, name: &str) -> Result<bool, StorageError> {
        match self.get_stored(name) {
            Ok(found) => Ok(found.is_some()),
            // It is there, only unreadable.
            Err(StorageError::Corrupt { .. } | StorageError::UnknownFormat { .. }) => Ok(true),
            Err(error) => Err(error),
        }
    }

    /// The stored sequence `name`, read afresh; `Ok(None)` when there is none.
    fn get(&self, name: &str) -> Result<Option<Sequence>, StorageError> {
        Ok(self
            .get_stored(name)?
            .map(|stored| Arc::unwrap_or_clone(stored.sequence)))
    }

    /// Stores `sequence` under its name without an owner.
    fn put(&self, sequence: &Sequence, replace: bool) -> Result<(), StorageError> {
        self.put_owned(sequence, replace, None)
    }

    /// Every stored sequence, by name: the readable ones and the broken ones.
    fn list(&self) -> Result<Listing, StorageError> {
        let mut listing = Listing::default();
        for (name, result) in self.load_all_stored()? {
            match result {
                Ok(stored) => listing.sequences.push(Summary {
                    owner: stored.owner,
                    ..Summary::of(&stored.sequence)
                }),
                Err(error) => listing.broken.push(Broken { name, error }),
            }
        }
        Ok(listing)
    }

    /// Every stored sequence, read, by name (what `seq_create` checks a new one against).
    fn load_all(&self) -> Result<Vec<Loaded>, StorageError> {
        Ok(self
            .load_all_stored()?
            .into_iter()
            .map(|(name, read)| (name, read.map(|stored| stored.sequence)))
            .collect())
    }

    /// The readable stored sequences with their owners (what a durable run takes with it).
    fn readable_stored(&self) -> Result<Vec<Stored>, StorageError> {
        Ok(self
            .load_all_stored()?
            .into_iter()
            .filter_map(|(_, read)| read.ok())
            .collect())
    }

    /// The readable stored sequences, shared; the unreadable ones are left out (`#name` calls
    /// cannot reach them either).
    fn readable(&self) -> Result<Vec<Arc<Sequence>>, StorageError> {
        Ok(self
            .load_all()?
            .into_iter()
            .filter_map(|(_, read)| read.ok())
            .collect())
    }
}

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
struct Listed {
    generation: Option<u64>,
    dir: Option<Identity>,
    /// Whether the directory had settled when listed, or was last changed by this process's
    /// own write under the lock: only then do equal times mean an unchanged directory.
    trusted: bool,
    names: BTreeMap<String, Name>,
    /// Whether temporary files were listed (the next write looks for leftovers).
    temps: bool,
}

/// What was read: the stored sequences by name, with the identity of the file each came from,
/// and the listing.
#[derive(Debug, Default)]
struct Cache {
    read: HashMap<String, (Identity, Stored)>,
    /// Files that could not be decoded, by the identity they had: asked for again, the same
    /// error is given without reading and parsing the file again until it changes.
    broken: HashMap<String, (Identity, Undecodable)>,
    listed: Option<Listed>,
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
            | StorageError::Interrupted { .. }
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

/// The storage under one data directory. Cheap to clone; clones share what was read.
#[derive(Clone)]
pub struct Storage {
    dir: PathBuf,
    hook: Option<WriteHook>,
    cache: Arc<Mutex<Cache>>,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storage")
            .field("dir", &self.dir)
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

impl Storage {
    /// The storage of `data_dir` (its `sequences` directory is created by the first write).
    pub fn new(data_dir: impl AsRef<Path>) -> Storage {
        Storage {
            dir: data_dir.as_ref().join("sequences"),
            hook: None,
            cache: Arc::default(),
        }
    }

    /// Consults `hook` during writes (see [`WriteHook`]).
    pub fn with_write_hook(mut self, hook: WriteHook) -> Storage {
        self.hook = Some(hook);
        self
    }

    /// `<data_dir>/sequences`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the sequence `name` is stored; the name is checked first.
    pub fn path_of(&self, name: &str) -> Result<PathBuf, StorageError> {
        check_name(name).map_err(|problem| StorageError::InvalidName {
            name: name.to_owned(),
            problem,
        })?;
        Ok(self.dir.join(format!("{name}{EXTENSION}")))
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.parent().unwrap_or(&self.dir).join(LOCK_FILE)
    }

    /// The writers' generation as the lock file counts it (0 without one); `None` when the
    /// file cannot be read as this storage keeps it.
    fn generation(&self) -> Option<u64> {
        match regular_file::read(&self.lock_path(), 64, Links::Refuse) {
            Ok(bytes) => Some(count_in(&bytes)),
            Err(error) if error.is_not_found() => Some(0),
            Err(_) => None,
        }
    }

    /// Whether the listing kept is the directory as it is: no writer counted a write since and
    /// the directory's identity is the same.
    fn listing_is_current(&self, cache: &Cache) -> bool {
        let Some(listed) = &cache.listed else {
            return false;
        };
        listed.trusted
            && self.generation() == listed.generation
            && fs::metadata(&self.dir)
                .ok()
                .as_ref()
                .and_then(Identity::of_dir)
                == listed.dir
    }

    /// Makes the listing kept the directory's as it is, listing it again (and asking each
    /// sequence file's identity, to forget what changed) only when something may have changed.
    fn refresh(&self, cache: &mut Cache) -> Result<(), StorageError> {
        if self.listing_is_current(cache) {
            return Ok(());
        }
        let since = SystemTime::now();
        let generation = self.generation();
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
            Err(error) => return Err(self.io(&self.dir, error)),
        };
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                missing(cache);
                return Ok(());
            }
            Err(error) => return Err(self.io(&self.dir, error)),
        };
        let old = cache.listed.take();
        let mut names = BTreeMap::new();
        let mut temps = false;
        for entry in entries {
            let entry = entry.map_err(|error| self.io(&self.dir, error))?;
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
    fn written(&self, cache: &mut Cache, lock: Option<&File>, name: &str, present: bool) {
        cache.read.remove(name);
        cache.broken.remove(name);
        let generation = lock.and_then(count_write);
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
    fn each_loaded(
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

    /// The stored sequences listed, each read (through the cache) or why it could not be.
    fn loaded(&self, cache: &mut Cache) -> Vec<LoadedStored> {
        let mut loaded = Vec::new();
        self.each_loaded(cache, |name, read| {
            loaded.push((name.to_owned(), read.map(|(stored, _)| stored.clone())));
        });
        loaded
    }

    /// What `owner` keeps stored, but the sequence `except`, from the listing kept: the files'
    /// sizes, as read. Unreadable ones count for no one.
    fn usage_in(&self, cache: &mut Cache, owner: &str, except: &str) -> Usage {
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
    fn look_alike(&self, cache: &Cache, name: &str) -> Option<String> {
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

    fn write_temp(&self, temp: &Path, bytes: &[u8]) -> Result<(), StorageError> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(temp)
            .map_err(|error| self.io(temp, error))?;
        let (first, second) = bytes.split_at(bytes.len() / 2);
        file.write_all(first)
            .map_err(|error| self.io(temp, error))?;
        self.stage(WriteStage::HalfWritten)?;
        file.write_all(second)
            .map_err(|error| self.io(temp, error))?;
        file.sync_all().map_err(|error| self.io(temp, error))?;
        self.stage(WriteStage::BeforeRename)
    }

    fn stage(&self, stage: WriteStage) -> Result<(), StorageError> {
        match &self.hook {
            Some(hook) if !hook(stage) => Err(StorageError::Interrupted { stage }),
            Some(_) | None => Ok(()),
        }
    }

    /// Makes the rename (or removal) durable: the directory entry itself is fsynced.
    fn sync_dir(&self) -> Result<(), StorageError> {
        #[cfg(unix)]
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|error| self.io(&self.dir, error))?;
        Ok(())
    }

    /// Removes temporary files left by a crash: this process's (none can be in flight while the
    /// write lock is held) and anybody's older than [`STALE_TEMP`]. Best effort; returns
    /// whether any temporary file is left.
    fn remove_stale_temps(&self) -> bool {
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

    /// Holds the exclusive lock of the data directory's writers, across processes, until the
    /// returned file is dropped (`None` where there is no such lock).
    #[cfg(unix)]
    fn lock_across_processes(&self) -> Result<Option<File>, StorageError> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.lock_path();
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
            .open(&path)
            .map_err(|error| self.io(&path, error))?;
        let regular = file
            .metadata()
            .map_err(|error| self.io(&path, error))?
            .is_file();
        if !regular {
            return Err(self.io(
                &path,
                std::io::Error::other("the lock file is not a regular file"),
            ));
        }
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|error| self.io(&path, error.into()))?;
        Ok(Some(file))
    }

    #[cfg(not(unix))]
    fn lock_across_processes(&self) -> Result<Option<File>, StorageError> {
        Ok(None)
    }

    /// The stored sequence `name` read from `path`, through the cache when the file is the one
    /// read before.
    fn read_stored(
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
                    ReadError::Io(error) => self.io(path, error),
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

    fn io(&self, path: &Path, error: io::Error) -> StorageError {
        StorageError::Io {
            path: path.to_path_buf(),
            error,
        }
    }

    /// Stores `sequence` (the module comment says how), within `quota` when given one.
    fn write(
        &self,
        sequence: &Sequence,
        replace: bool,
        owner: Option<&str>,
        quota: Option<Quota>,
    ) -> Result<(), StorageError> {
        let name = sequence.name.value.as_str();
        let target = self.path_of(name)?;
        let bytes = encode(sequence, owner)?;
        let _lock = WRITE_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        fs::create_dir_all(&self.dir).map_err(|error| self.io(&self.dir, error))?;
        // The checks and the publishing are one step for every process.
        let across = self.lock_across_processes()?;
        let mut cache = self.cache();
        self.refresh(&mut cache)?;
        if cache.listed.as_ref().is_none_or(|listed| listed.temps) {
            let left = self.remove_stale_temps();
            if let Some(listed) = cache.listed.as_mut() {
                listed.temps = left;
            }
        }
        if !replace && self.exists(name)? {
            return Err(StorageError::Exists {
                name: name.to_owned(),
            });
        }
        if let (Some(quota), Some(owner)) = (quota, owner) {
            let usage = self.usage_in(&mut cache, owner, name);
            over_quota(owner, name, usage, bytes.len() as u64, quota)?;
        }
        if let Some(stored) = self.look_alike(&cache, name) {
            return Err(StorageError::Confusable {
                name: name.to_owned(),
                stored,
            });
        }
        let temp = self.dir.join(format!(
            ".{name}{EXTENSION}.{}-{}{TEMP_EXTENSION}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        match self.write_temp(&temp, &bytes) {
            Ok(()) => {}
            Err(error @ StorageError::Interrupted { .. }) => {
                cache.listed = None;
                return Err(error);
            }
            Err(error) => {
                // A real failure, not a crash: nothing is left behind.
                let _ = fs::remove_file(&temp);
                return Err(error);
            }
        }
        let published = if replace {
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
                self.io(&target, error)
            });
        }
        self.written(&mut cache, across.as_ref(), name, true);
        self.sync_dir()
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
fn count_write(lock: &File) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let mut count = [0u8; 8];
    let known = lock.read_at(&mut count, 0).ok()?;
    let next = count_in(count.get(..known).unwrap_or_default()).wrapping_add(1);
    lock.write_all_at(&next.to_le_bytes(), 0).ok()?;
    Some(next)
}

#[cfg(not(unix))]
fn count_write(_lock: &File) -> Option<u64> {
    None
}

impl SequenceStorage for Storage {
    fn location(&self) -> String {
        let data_dir = self.dir.parent().unwrap_or(&self.dir);
        format!("the data directory {}", data_dir.display())
    }

    /// The files' sizes, as read (through the cache).
    fn usage(&self, owner: &str, except: &str) -> Result<Usage, StorageError> {
        let mut cache = self.cache();
        self.refresh(&mut cache)?;
        Ok(self.usage_in(&mut cache, owner, except))
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

    /// Atomic (the module comment); without `replace`, published with a hard link.
    fn put_owned(
        &self,
        sequence: &Sequence,
        replace: bool,
        owner: Option<&str>,
    ) -> Result<(), StorageError> {
        self.write(sequence, replace, owner, None)
    }

    /// The quota is checked under the lock across processes, with the write (owners were
    /// checked by the seq tools: only they write here).
    fn put_within(
        &self,
        sequence: &Sequence,
        replace: bool,
        owner: &str,
        quota: Quota,
        _admin: bool,
    ) -> Result<(), StorageError> {
        self.write(sequence, replace, Some(owner), Some(quota))
    }

    fn get_stored(&self, name: &str) -> Result<Option<Stored>, StorageError> {
        let path = self.path_of(name)?;
        self.read_stored(&mut self.cache(), name, &path)
    }

    fn delete(&self, name: &str) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        let _lock = WRITE_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        // No data directory, no lock file: nothing to delete either.
        let across = match self.lock_across_processes() {
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
    /// storage's and are passed over.
    fn load_all_stored(&self) -> Result<Vec<LoadedStored>, StorageError> {
        let mut cache = self.cache();
        self.refresh(&mut cache)?;
        Ok(self.loaded(&mut cache))
    }

    /// Shared from what was read, nothing copied: a create asks this of a store of thousands.
    fn readable(&self) -> Result<Vec<Arc<Sequence>>, StorageError> {
        let mut cache = self.cache();
        self.refresh(&mut cache)?;
        let mut readable = Vec::new();
        self.each_loaded(&mut cache, |_, read| {
            if let Ok((stored, _)) = read {
                readable.push(Arc::clone(&stored.sequence));
            }
        });
        Ok(readable)
    }

    fn source(&self) -> Arc<dyn SequenceSource> {
        Arc::new(self.clone())
    }
}

/// Puts `temp` in place at `target` unless `target` exists, atomically even against other
/// processes: a hard link fails when its name is taken, where a rename would replace. On a file
/// system without hard links, falls back to an existence check and a rename.
fn publish_new(temp: &Path, target: &Path) -> io::Result<()> {
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

/// How deeply the JSON text `bytes` nests arrays and objects (strings skipped), counted in one
/// pass without recursion.
fn nesting(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                (false, _) => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A sequence and its owner as stored: `{"format": 1, "owner": ..., "sequence": ...}`.
pub fn encode(sequence: &Sequence, owner: Option<&str>) -> Result<Vec<u8>, StorageError> {
    serde_json::to_vec(&EnvelopeOut {
        format: FORMAT,
        owner,
        sequence,
    })
    .map_err(|error| StorageError::Corrupt {
        name: sequence.name.value.to_string(),
        detail: error.to_string(),
    })
}

/// The owner an envelope [`encode`] wrote names (`None`: ownerless), read without reading its
/// sequence; an envelope that is not one is an error.
pub fn owner_of(name: &str, bytes: &[u8]) -> Result<Option<String>, StorageError> {
    #[derive(Deserialize)]
    struct Owner {
        #[serde(default)]
        owner: Option<String>,
        #[serde(rename = "sequence")]
        _sequence: serde::de::IgnoredAny,
    }
    let corrupt = |detail: String| StorageError::Corrupt {
        name: name.to_owned(),
        detail,
    };
    let depth = nesting(bytes);
    if depth > MAX_STORED_DEPTH {
        return Err(corrupt(format!(
            "it nests {depth} levels deep, more than {MAX_STORED_DEPTH}"
        )));
    }
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    reader.disable_recursion_limit();
    Owner::deserialize(&mut reader)
        .and_then(|envelope| reader.end().map(|()| envelope.owner))
        .map_err(|error| corrupt(error.to_string()))
}

/// What [`encode`] wrote for the sequence `name`, read back: a corrupt or foreign envelope, or
/// one holding another name, is an error.
pub fn decode(name: &str, bytes: &[u8]) -> Result<Stored, StorageError> {
    let corrupt = |detail: String| StorageError::Corrupt {
        name: name.to_owned(),
        detail,
    };
    let depth = nesting(bytes);
    if depth > MAX_STORED_DEPTH {
        return Err(corrupt(format!(
            "it nests {depth} levels deep, more than {MAX_STORED_DEPTH}"
        )));
    }
    // serde_json's own bound (128 levels) is below what a checked sequence can need: the AST
    // of an `args` value nested 40 deep already passes it. The scan above bounds the recursion.
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    reader.disable_recursion_limit();
    let envelope = EnvelopeIn::deserialize(&mut reader)
        .and_then(|envelope| reader.end().map(|()| envelope))
        .map_err(|error| corrupt(error.to_string()))?;
    if envelope.format.as_u64() != Some(u64::from(FORMAT)) {
        return Err(StorageError::UnknownFormat {
            name: name.to_owned(),
            found: envelope.format.to_string(),
        });
    }
    let sequence: Sequence =
        serde_json::from_value(envelope.sequence).map_err(|error| corrupt(error.to_string()))?;
    if sequence.name.value != name {
        return Err(corrupt(format!(
            "the file holds the sequence `{}`",
            sequence.name.value
        )));
    }
    Ok(Stored {
        sequence: Arc::new(sequence),
        owner: envelope.owner,
    })
}

/// `#name` calls read the storage afresh each time: a sequence may change between calls.
/// A file that cannot be read counts as absent here; `seq_run` and `seq_list` report why.
impl SequenceSource for Storage {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        Some(self.get_stored(name).ok().flatten()?.sequence)
    }

    fn owned(&self, name: &str) -> Option<(Arc<Sequence>, Option<String>)> {
        let stored = self.get_stored(name).ok().flatten()?;
        Some((stored.sequence, stored.owner))
    }
}
