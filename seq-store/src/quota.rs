//! What each caller may keep stored: the quota `seq_create` asks with the write
//! ([`crate::storage::SequenceStorage::put_within`]). A service setting, not a right: it is read from the policy
//! file by the server (`"quota"` globally and in a caller's layer) and never travels with a run.

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
