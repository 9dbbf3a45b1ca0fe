//! A store for tests: a fresh data directory and root, the built-in host writing its output to
//! a capture, and the seq tools over them.

use seq_exec::builtin::{BuiltinHost, Captured};
use seq_exec::engine::RunRequest;
use seq_exec::policy::Policy;
use seq_exec::{Authorizer, Caller};
use seq_service::{SeqConfig, SeqOutcome, SeqTools};
use seq_store::storage::{Put, SequenceStorage, Storage, StorageError};
use seq_syntax::ast::Sequence;
use serde_json::Value;
use std::sync::Arc;
use tempfile::TempDir;

/// A data directory's storage with the seq tools over it, under a policy.
#[derive(Debug)]
pub struct Store {
    pub data: TempDir,
    /// The root the built-in tools work in.
    pub root: TempDir,
    pub storage: Storage,
    pub output: Arc<Captured>,
    pub builtin: Arc<BuiltinHost>,
    pub tools: SeqTools,
}

impl Store {
    /// Everybody may use everything.
    pub fn new() -> Store {
        Store::with_policy(Policy::allow_all())
    }

    pub fn with_policy(policy: Policy) -> Store {
        Store::with_config(policy, |config| config)
    }

    /// With the configuration of the seq tools changed by `configure` (quotas, a remote).
    pub fn with_config(policy: Policy, configure: impl FnOnce(SeqConfig) -> SeqConfig) -> Store {
        let data = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let output = Arc::new(Captured::new());
        let builtin = Arc::new(BuiltinHost::new(root.path()).with_output(output.clone()));
        let storage = Storage::new(data.path());
        let mut config = SeqConfig::new(storage.clone(), root.path());
        config.authorizer = Authorizer::new(Arc::new(policy));
        let tools = SeqTools::assemble(builtin.clone(), configure(config), |engine| engine);
        Store {
            data,
            root,
            storage,
            output,
            builtin,
            tools,
        }
    }

    /// The seq tool `tool` called by `who`.
    pub async fn call(&self, who: &str, tool: &str, args: Value) -> SeqOutcome {
        self.tools
            .call(tool, args, RunRequest::new(&Caller::new(who)))
            .await
    }

    /// `seq_create` called by `who` with `args`: what most tests of the store start with.
    pub async fn create(&self, who: &str, args: Value) -> SeqOutcome {
        self.call(who, "seq_create", args).await
    }
}

impl Default for Store {
    fn default() -> Store {
        Store::new()
    }
}

/// Stores `sequence` ownerless, replacing one of its name when `replace`.
pub fn put(
    storage: &dyn SequenceStorage,
    sequence: &Sequence,
    replace: bool,
) -> Result<(), StorageError> {
    storage.put(Put::new(sequence).replace(replace))
}

/// The stored sequence `name`, read afresh (`None`: there is none).
pub fn stored(storage: &dyn SequenceStorage, name: &str) -> Result<Option<Sequence>, StorageError> {
    Ok(storage
        .get(name)?
        .map(|stored| Arc::unwrap_or_clone(stored.sequence)))
}
