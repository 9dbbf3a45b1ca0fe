//! Sequences kept by name, and the six `seq_*` tools that create, list, delete and run them.
//!
//! - [`storage`]: the sequences kept by name ([`storage::SequenceStorage`]); on disk
//!   ([`storage::Storage`]), or in a durable engine (seq-restate's `RestateStorage`).
//! - [`seq_tools`]: the `seq_*` tools as handlers over a storage, the checker's admission
//!   (`seq_check::admit`) and the engine (`seq_exec::Engine`), so that an agent runtime can offer
//!   them.
//!
//! The engine does not depend on this crate: it reaches stored sequences through its
//! `SequenceSource` seam, which [`storage::Storage`] implements.

pub mod quota;
pub mod seq_tools;
pub mod storage;
