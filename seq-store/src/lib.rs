//! Sequences kept by name, and what each caller may keep.
//!
//! - [`storage`]: the sequences kept by name ([`storage::SequenceStorage`]); on disk
//!   ([`storage::Storage`]), or in a durable engine (seq-restate's `RestateStorage`).
//! - [`quota`]: what each caller may keep stored.
//!
//! Storage only: the `seq_*` tools, admission and runs over a storage are seq-service's. The
//! engine does not depend on this crate either: it reaches stored sequences through its
//! `SequenceSource` seam, which [`storage::Storage`] implements.

pub mod quota;
pub mod storage;
