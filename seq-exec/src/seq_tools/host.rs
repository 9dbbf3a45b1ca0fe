//! [`SeqHost`]: the seq tools and an inner host behind one [`ToolHost`].
//!
//! Two shapes:
//! - storage-only ([`SeqHost::new`]): `seq_create`, `seq_list`, `seq_delete` plus the inner host.
//!   This is the engine's own host, so that sequences can create, list and delete sequences;
//!   `seq_run`, `seq_call` and `seq_when_call` are not offered (the engine runs those itself).
//! - running ([`SeqTools::host_for`]): all six, runs on behalf of one caller. `ToolHost::call`
//!   carries no caller, so a host that runs sequences is bound to the identity it runs them for
//!   (one per agent); the engine carries that identity into every nested dispatch.
//!
//! `can_use` answers for the seq tools from the seq tools' policy and asks the inner host for
//! everything else.

use super::{SeqTools, StorageTools, definition, not_here};
use crate::error::ToolError;
use crate::host::{BoxFuture, Caller, ToolHost};
use seq_check::ToolDef;
use seq_check::catalog::{SEQ_CALL, SEQ_RUN, SEQ_TOOLS, SEQ_WHEN_CALL};
use serde_json::Value;
use std::sync::Arc;

pub struct SeqHost {
    storage_tools: Arc<StorageTools>,
    inner: Arc<dyn ToolHost>,
    running: Option<(SeqTools, Caller)>,
}

impl std::fmt::Debug for SeqHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeqHost")
            .field("storage_tools", &self.storage_tools)
            .field("caller", &self.running.as_ref().map(|(_, caller)| caller))
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

    /// Also offers `seq_run`, `seq_call`, `seq_when_call`, run by `tools` for `caller`.
    pub fn running(mut self, tools: SeqTools, caller: Caller) -> SeqHost {
        self.running = Some((tools, caller));
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

    fn call<'a>(&'a self, name: &'a str, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            if StorageTools::handles(name) {
                // The store tools act for a caller; without one (not the engine's way) only the
                // bound one is known.
                return match &self.running {
                    Some((_, caller)) => {
                        self.storage_tools
                            .call(name, args, Some(caller))
                            .await
                            .result
                    }
                    None => Err(ToolError::new(
                        crate::error::Reason::Unauthorized,
                        format!("`{name}` needs a caller: it is run through `call_as`"),
                    )),
                };
            }
            if Self::runs(name) {
                return match &self.running {
                    Some((tools, caller)) => tools.call(name, args, caller).await,
                    None => Err(not_here(name)),
                };
            }
            self.inner.call(name, args).await
        })
    }

    fn call_as<'a>(
        &'a self,
        caller: &'a Caller,
        name: &'a str,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            if StorageTools::handles(name) {
                return self
                    .storage_tools
                    .call(name, args, Some(caller))
                    .await
                    .result;
            }
            if Self::runs(name) {
                return self.call(name, args).await;
            }
            self.inner.call_as(caller, name, args).await
        })
    }

    fn can_use(&self, caller: &Caller, tool: &str, args: &Value) -> bool {
        if SEQ_TOOLS.contains(&tool) {
            self.storage_tools.policy().allows(caller, tool)
        } else {
            self.inner.can_use(caller, tool, args)
        }
    }

    fn refusal_hint(&self, caller: &Caller, tool: &str) -> Option<String> {
        if SEQ_TOOLS.contains(&tool) {
            self.storage_tools.policy().turn_on_hint(&[tool])
        } else {
            self.inner.refusal_hint(caller, tool)
        }
    }
}
