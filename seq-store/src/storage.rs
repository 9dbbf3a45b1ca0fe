//! Storage: the sequences kept by name. [`SequenceStorage`] is what the seq tools and the
//! command line use; [`Storage`] keeps them on disk, and a durable engine can keep them itself
//! (seq-restate's `RestateStorage`), in the same envelope ([`encode`], [`decode`]).
//!
//! - `error`: the names a sequence may be stored under, and [`StorageError`];
//! - `envelope`: the stored bytes, `{"format": 1, "owner": <caller id>, "sequence": <the
//!   checked AST>}`, and the owner rule read from them; the quota of what an owner keeps is
//!   [`crate::quota`]'s;
//! - `disk`: [`Storage`], the files of a data directory, and `lock`, the lock of its writers
//!   within the process and across processes;
//! - here: the trait every storage implements, its one way to put ([`Put`]) and to load
//!   ([`SequenceStorage::load`]), and what is read through them ([`list`], [`readable`], …),
//!   written once for every storage.
//!
//! `owner` is the id of the caller that created the sequence through `seq_create`. It is absent
//! in envelopes written before owners existed and in those stored from the command line (`seqc
//! create`, the local user's own data directory): such an *ownerless* sequence belongs to no
//! caller, so over the seq tools only a store administrator may replace or delete it.

mod disk;
mod envelope;
mod error;
mod lock;

pub use disk::Storage;
pub use envelope::{
    FORMAT, MAX_STORED_BYTES, MAX_STORED_DEPTH, decode, encode, may_change, owner_of,
};
pub use error::{StorageError, check_name, valid_name};

use crate::quota::Quota;
use seq_exec::engine::SequenceSource;
use seq_syntax::ast::Sequence;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// One line of [`list`].
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

/// [`list`]: the readable sequences and the broken files, each sorted by name.
#[derive(Debug, Default)]
pub struct Listing {
    pub sequences: Vec<Summary>,
    pub broken: Vec<Broken>,
}

/// A stored sequence's name and what reading it gave.
pub type Loaded = (String, Result<Arc<Sequence>, StorageError>);

/// [`Loaded`] with the owner.
pub type LoadedStored = (String, Result<Stored, StorageError>);

/// A write ([`SequenceStorage::put`]): the sequence, and on whose behalf it is stored.
/// `Put::new(&sequence)` creates it ownerless; the builder methods say the rest.
#[derive(Clone, Copy, Debug)]
pub struct Put<'a> {
    pub sequence: &'a Sequence,
    /// Whether a stored sequence of this name is replaced; without it, a taken name is
    /// [`StorageError::Exists`].
    pub replace: bool,
    /// The writer, recorded as the owner (`None`: the command line's user; the sequence is then
    /// ownerless).
    pub owner: Option<&'a str>,
    /// Whether the writer holds the store administrator permission. A storage others can reach
    /// without the seq tools (the engine-held one) asks again itself whether the writer may
    /// replace what is stored, and refuses with [`StorageError::NotOwner`]; on disk, where only
    /// the seq tools write, it is not asked.
    pub admin: bool,
    /// With an owner: refused with [`StorageError::OverQuota`] when the write would take the
    /// owner past it, counting what it owns but the sequence of this name (which the write
    /// replaces).
    pub quota: Option<Quota>,
}

impl<'a> Put<'a> {
    /// Stores `sequence` under its name, ownerless, unless the name is taken.
    pub fn new(sequence: &'a Sequence) -> Put<'a> {
        Put {
            sequence,
            replace: false,
            owner: None,
            admin: false,
            quota: None,
        }
    }

    /// Replaces a stored sequence of the name when `replace`.
    pub fn replace(self, replace: bool) -> Put<'a> {
        Put { replace, ..self }
    }

    /// On behalf of `owner`, who owns what is stored.
    pub fn owner(self, owner: Option<&'a str>) -> Put<'a> {
        Put { owner, ..self }
    }

    /// By a writer who holds the store administrator permission when `admin`.
    pub fn admin(self, admin: bool) -> Put<'a> {
        Put { admin, ..self }
    }

    /// Within `quota` (with an owner).
    pub fn within(self, quota: Quota) -> Put<'a> {
        Put {
            quota: Some(quota),
            ..self
        }
    }
}

/// Where sequences are kept by name, and how: files in a data directory ([`Storage`]) or a
/// durable engine's state. Blocking: called from the seq tools on tokio's blocking pool and from
/// the command line, never from inside a run (a run's `#name` calls go through [`Self::source`]).
///
/// What every implementation guarantees: a name is checked before it is used
/// ([`valid_name`]); a write is whole or absent; of two creators of one name without
/// `replace`, exactly one succeeds, the other gets [`StorageError::Exists`]; a name that looks
/// like a stored one is refused ([`StorageError::Confusable`]); a write past its quota is
/// refused ([`crate::quota::check`]); what cannot be read back is a [`StorageError`], never a
/// panic. Storage never checks a sequence: its callers do, before. What is read through
/// [`Self::load`] ([`list`], [`readable`], …) is written once, below, for every storage.
pub trait SequenceStorage: fmt::Debug + Send + Sync {
    /// Where the sequences are, for messages: "the data directory .seqc", say.
    fn location(&self) -> String;

    /// The stored sequence `name` with its owner, read afresh; `Ok(None)` when there is none.
    fn get(&self, name: &str) -> Result<Option<Stored>, StorageError>;

    /// Stores `put.sequence` under its name, as [`Put`] says. Whether the writer may replace
    /// what is stored is the seq tools' question, asked before.
    fn put(&self, put: Put<'_>) -> Result<(), StorageError>;

    /// Deletes the stored sequence `name` on behalf of `caller` (`None`: the command line's
    /// user), who holds the store administrator permission if `admin`; asked again as for
    /// [`Put::admin`].
    fn delete(&self, name: &str, caller: Option<&str>, admin: bool) -> Result<(), StorageError>;

    /// Walks every stored sequence, in name order: each read, with its owner, or why it could
    /// not be.
    fn load(
        &self,
        each: &mut dyn FnMut(&str, Result<&Stored, StorageError>),
    ) -> Result<(), StorageError>;

    /// Where a run in this process finds the stored sequences its `#name` calls name.
    fn source(&self) -> Arc<dyn SequenceSource>;

    /// Whether a sequence is stored under `name` (readable or not).
    fn exists(&self, name: &str) -> Result<bool, StorageError> {
        match self.get(name) {
            Ok(found) => Ok(found.is_some()),
            // It is there, only unreadable.
            Err(StorageError::Corrupt { .. } | StorageError::UnknownFormat { .. }) => Ok(true),
            Err(error) => Err(error),
        }
    }
}

/// Every stored sequence, by name: the readable ones and the broken ones.
pub fn list(storage: &dyn SequenceStorage) -> Result<Listing, StorageError> {
    let mut listing = Listing::default();
    storage.load(&mut |name, read| match read {
        Ok(stored) => listing.sequences.push(Summary {
            owner: stored.owner.clone(),
            ..Summary::of(&stored.sequence)
        }),
        Err(error) => listing.broken.push(Broken {
            name: name.to_owned(),
            error,
        }),
    })?;
    Ok(listing)
}

/// Every stored sequence, read, by name (what the command line checks a file against).
pub fn load_all(storage: &dyn SequenceStorage) -> Result<Vec<Loaded>, StorageError> {
    let mut loaded = Vec::new();
    storage.load(&mut |name, read| {
        loaded.push((
            name.to_owned(),
            read.map(|stored| Arc::clone(&stored.sequence)),
        ));
    })?;
    Ok(loaded)
}

/// The readable stored sequences with their owners (what a durable run takes with it).
pub fn readable_stored(storage: &dyn SequenceStorage) -> Result<Vec<Stored>, StorageError> {
    let mut readable = Vec::new();
    storage.load(&mut |_, read| readable.extend(read.ok().cloned()))?;
    Ok(readable)
}

/// The readable stored sequences, shared; the unreadable ones are left out (`#name` calls
/// cannot reach them either). What `seq_create` checks a new one against.
pub fn readable(storage: &dyn SequenceStorage) -> Result<Vec<Arc<Sequence>>, StorageError> {
    let mut readable = Vec::new();
    storage.load(&mut |_, read| {
        if let Ok(stored) = read {
            readable.push(Arc::clone(&stored.sequence));
        }
    })?;
    Ok(readable)
}
