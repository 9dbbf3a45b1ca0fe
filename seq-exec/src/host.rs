//! The boundary between the engine and whatever provides tools: the embedded host, MCP servers,
//! an agent runtime. The engine looks every tool up afresh for every call (no cached definitions:
//! a tool may vanish or be replaced under the same name). A host says what it offers; whether
//! the *calling identity* may use it is the engine's [`crate::Authorizer`]'s to say, at every
//! dispatch at every depth.

use crate::error::ToolError;
use seq_catalog::ToolDef;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed future, so that hosts can be combined behind `dyn ToolHost`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What [`ToolHost::call`] answers: the tool's result, or why it has none, once it is done.
pub type ToolCall<'a> = BoxFuture<'a, Result<Value, ToolError>>;

/// Who is calling: the agent (or user) on whose behalf a sequence runs. Carried unchanged into
/// every nested dispatch, through `seq_call` and `#sequence` calls, so that a sequence can never
/// reach a tool its caller may not use.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Caller {
    pub id: String,
}

impl Caller {
    pub fn new(id: impl Into<String>) -> Caller {
        Caller { id: id.into() }
    }
}

/// A provider of tools.
pub trait ToolHost: Send + Sync {
    /// The tool's current definition, or `None` when the host has no such tool now. Shared, not
    /// copied: the engine asks for it on every call.
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>>;

    /// Runs the tool on behalf of `caller`: what the engine calls at every dispatch. A host
    /// that lost the tool between `lookup` and `call` answers `Reason::NotFound`; a tool that
    /// ran and failed answers `Reason::Failed`. Most tools do not care who calls; the store
    /// tools do, since `seq_create` checks what a sequence reaches against its caller and
    /// records the owner.
    fn call<'a>(&'a self, caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a>;
}
