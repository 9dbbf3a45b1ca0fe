//! What the tests of several crates share, written once: [`EchoHost`], a host whose only tool
//! is a pure `echo`; [`parsed`], a test sequence's text parsed; [`files_in`], a directory's
//! names; [`assert_refused`] and [`assert_detail`], what a `ToolError` must say; and (feature `store`) [`Store`], a data directory with its seq tools and helpers to
//! read it. A dev-dependency only; never published.

#![allow(
    clippy::unwrap_used,
    reason = "test support: a fixture that cannot set up should stop the test there"
)]

use seq_catalog::{Catalog, ToolDef};
use seq_exec::{Caller, Reason, ToolCall, ToolError, ToolHost};
use seq_syntax::ast::Sequence;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, OnceLock};

#[cfg(feature = "store")]
mod store;
#[cfg(feature = "store")]
pub use store::{Store, put, stored};

/// The built-in catalog, built once per process.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(Catalog::builtin)
}

/// `text` parsed, which must parse without errors: a sequence for a test to run or store.
pub fn parsed(text: &str) -> Sequence {
    let parse = seq_syntax::parse(text);
    assert!(!parse.has_errors(), "{:#?}", parse.diagnostics);
    parse.sequence.unwrap()
}

/// The names in the directory `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Asserts that `error` is for `reason` and that its detail says `says`.
#[track_caller]
pub fn assert_refused(error: &ToolError, reason: Reason, says: &str) {
    assert_eq!(error.reason, reason, "{error:?}");
    assert_detail(error, says);
}

/// Asserts that `error`'s detail says `says`.
#[track_caller]
pub fn assert_detail(error: &ToolError, says: &str) {
    assert!(
        error.detail.as_deref().unwrap_or_default().contains(says),
        "{error:?}"
    );
}

/// A host offering `echo` only: pure, instant, the built-in signature.
#[derive(Debug)]
pub struct EchoHost {
    echo: Option<Arc<ToolDef>>,
}

impl EchoHost {
    pub fn new() -> EchoHost {
        EchoHost {
            echo: catalog().get("echo").cloned().map(Arc::new),
        }
    }
}

impl Default for EchoHost {
    fn default() -> EchoHost {
        EchoHost::new()
    }
}

impl ToolHost for EchoHost {
    fn lookup(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.echo.clone().filter(|_| name == "echo")
    }

    fn call<'a>(&'a self, _caller: &'a Caller, name: &'a str, args: Value) -> ToolCall<'a> {
        Box::pin(async move {
            match (name, args.get("value")) {
                ("echo", Some(value)) => Ok(value.clone()),
                _ => Err(ToolError::new(
                    Reason::NotFound,
                    format!("no `{name}` here"),
                )),
            }
        })
    }
}
