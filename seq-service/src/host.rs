//! [`SeqHost`]: the seq tools and an inner host behind one [`ToolHost`].
//!
//! Two shapes:
//! - storage-only ([`SeqHost::new`]): `seq_create`, `seq_list`, `seq_delete` plus the inner host.
//!   This is the engine's own host, so that sequences can create, list and delete sequences;
//!   `seq_run`, `seq_call` and `seq_when_call` are not offered (the engine runs those itself).
//! - running ([`SeqTools::host_for`]): all six, each run on behalf of the caller of its
//!   dispatch, which the engine carries into every nested dispatch.
//!
//! Like every host, it says what it offers; who may use it is the engine's authorizer's to say.

use super::{SeqTools, StorageTools, definition, not_here};
use seq_catalog::ToolDef;
use seq_catalog::{SEQ_CALL, SEQ_RUN, SEQ_TOOLS, SEQ_WHEN_CALL};
use seq_exec::engine::RunRequest;
use seq_exec::host::{Caller, ToolCall, ToolHost};
use serde_json::Value;
use std::sync::Arc;

pub struct SeqHost {
    storage_tools: Arc<StorageTools>,
    inner: Arc<dyn ToolHost>,
    running: Option<SeqTools>,
}

impl std::fmt::Debug for SeqHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeqHost")
            .field("storage_tools", &self.storage_tools)
            .field("running", &self.running.is_some())
            .finish_non_exhaustive()
    }
}

impl SeqHost {
    /// The storage tools in front of `inner`.
    pub fn new(storage_tools: Arc<StorageTools>, inner: Arc<dyn ToolHost>) -> SeqHost {
        SeqHost {
            storage_tools,
            inner,
            running: None,
        }
    }

    /// Also offers `seq_run`, `seq_call`, `seq_when_call`, run by `tools`.
    pub fn running(mut self, tools: SeqTools) -> SeqHost {
        self.running = Some(tools);
        self
    }

    fn runs(name: &str) -> bool {
        matches!(name, SEQ_RUN | SEQ_CALL | SEQ_WHEN_CALL)
    }

    fn offers(&self, name: &str) -> bool {
        StorageTools::handles(name) || (Self::runs(name) && self.running.is_some())
    }
}

impl ToolHost for SeqHost {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        if SEQ_TOOLS.contains(&name) {
            return if self.offers(name) {
                definition(name).cloned()
            } else {
                None
            };
        }
        self.inner.lookup(name)
    }

    fn call<'a>(&'a self, caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        Box::pin(async move {
            if StorageTools::handles(name) {
                return self
                    .storage_tools
                    .call(name, args, Some(caller))
                    .await
                    .result;
            }
            if Self::runs(name) {
                return match &self.running {
                    Some(tools) => tools
                        .call(name, args, RunRequest::new(caller))
                        .await
                        .into_result(),
                    None => Err(not_here(name)),
                };
            }
            self.inner.call(caller, name, args).await
        })
    }
}
