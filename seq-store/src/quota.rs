//! What each caller may keep stored: the quota `seq_create` asks with the write
//! ([`crate::storage::Put::within`]), and what an owner keeps stored against it. A service
//! setting, not a right: it is read from the policy file by the server (`"quota"` globally and
//! in a caller's layer) and never travels with a run.

use crate::storage::{self, Put, SequenceStorage, StorageError};
use seq_exec::Caller;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many stored sequences one caller may own, and how many bytes their files may take in
/// all. Sequences stored from the command line (ownerless) count for no one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    #[serde(default = "Quota::default_sequences")]
    pub sequences: u64,
    #[serde(default = "Quota::default_bytes")]
    pub bytes: u64,
}

impl Quota {
    /// 1,000 sequences and 64 MiB per caller.
    pub const DEFAULT: Quota = Quota {
        sequences: 1000,
        bytes: 64 * 1024 * 1024,
    };

    fn default_sequences() -> u64 {
        Quota::DEFAULT.sequences
    }

    fn default_bytes() -> u64 {
        Quota::DEFAULT.bytes
    }
}

impl Default for Quota {
    fn default() -> Quota {
        Quota::DEFAULT
    }
}

/// The quota of every caller, each on its own, and those callers who have one of their own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quotas {
    pub global: Quota,
    pub callers: BTreeMap<String, Quota>,
}

impl Quotas {
    /// What `caller` may keep stored: its own quota, else the global one.
    pub fn of(&self, caller: &Caller) -> Quota {
        self.callers.get(&caller.id).copied().unwrap_or(self.global)
    }
}

/// What one owner keeps stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub sequences: u64,
    pub bytes: u64,
}

/// Refuses a write of `adding` bytes that would take `owner`, who keeps `usage` besides the
/// sequence `name`, past `quota`: one more sequence past the count, or past the bytes.
pub(crate) fn over_quota(
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

/// Refuses `put` when it has a quota and an owner and would take the owner past it, counting
/// what the owner keeps in `storage` but the sequence of this name (which the write replaces);
/// unreadable ones count for no one. The check and the write are two steps here: a storage
/// that can make them one (as the data directory's does, across processes) does so itself.
pub fn check(storage: &dyn SequenceStorage, put: &Put<'_>) -> Result<(), StorageError> {
    let (Some(quota), Some(owner)) = (put.quota, put.owner) else {
        return Ok(());
    };
    let name = put.sequence.name.value.as_str();
    let mut usage = Usage::default();
    storage.load(&mut |stored_name, read| {
        if let Ok(stored) = read
            && stored_name != name
            && stored.owner.as_deref() == Some(owner)
        {
            usage.sequences += 1;
            usage.bytes += storage::encode(&stored.sequence, stored.owner.as_deref())
                .map_or(0, |bytes| bytes.len() as u64);
        }
    })?;
    let adding = storage::encode(put.sequence, Some(owner))?.len() as u64;
    over_quota(owner, name, usage, adding, quota)
}
