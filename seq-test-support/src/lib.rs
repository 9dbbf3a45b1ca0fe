//! What the tests of several crates share, written once: [`EchoHost`], a host whose only tool
//! is a pure `echo`; [`parsed`], a test sequence's text parsed; [`hello`], the least a store
//! keeps; [`checked`], texts checked clean; [`files_in`], a directory's
//! names; [`assert_refused`], [`assert_detail`] and [`assert_field`], what a `ToolError` must
//! say; [`call_local`] and [`refused`], a tool called as the local caller; [`strings_at`], one
//! string member of each object of a JSON array; [`finished`], what progress told finished; and (feature `store`) [`Store`], a data
//! directory with its seq tools and helpers to read it. A dev-dependency only; never published.

#![allow(
    clippy::unwrap_used,
    reason = "test support: a fixture that cannot set up should stop the test there"
)]

use seq_catalog::{Catalog, ToolDef};
use seq_check::Source;
use seq_exec::{Caller, Reason, ToolCall, ToolError, ToolHost};
use seq_syntax::ast::Sequence;
use serde_json::Value;
use std::path::{Path, PathBuf};
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

/// `texts` checked as one batch against `catalog`, each named `fN.json` by its place; panics
/// on any error, naming each.
pub fn checked(texts: &[String], catalog: &Catalog) -> Vec<Sequence> {
    let sources: Vec<Source> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| Source::new(format!("f{i}.json"), text.clone()))
        .collect();
    checked_sources(&sources, catalog)
}

/// `sources` checked as one batch against `catalog`; panics on any error, naming each file by
/// its source's label.
pub fn checked_sources(sources: &[Source], catalog: &Catalog) -> Vec<Sequence> {
    let check = seq_check::check(sources, catalog);
    for file in &check.files {
        let errors: Vec<String> = file
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}: {}", d.code.as_str(), d.message))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", file.path);
    }
    check
        .files
        .into_iter()
        .map(|f| f.sequence.unwrap())
        .collect()
}

/// `text` checked clean against `catalog`.
pub fn checked_one(text: String, catalog: &Catalog) -> Sequence {
    checked(&[text], catalog).into_iter().next().unwrap()
}

/// The sequence `name` of one group that echoes `hi`, as its file's JSON: the least a store
/// keeps.
pub fn hello_json(name: &str) -> Value {
    serde_json::json!({
        "name": name,
        "groups": [{"name": "one", "tools": r#"{"tool":"echo","args":{"value":"hi"}} ;"#}]
    })
}

/// [`hello_json`] parsed.
pub fn hello(name: &str) -> Sequence {
    parsed(&hello_json(name).to_string())
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

/// The directories `root` and `outside` made side by side in `dir`, holding `inside` and
/// `beyond` (a path and its content each, parents made): a root for the file tools, and a place
/// they must never reach.
pub fn root_beside_outside(
    dir: &Path,
    inside: &[(&str, &str)],
    beyond: &[(&str, &str)],
) -> (PathBuf, PathBuf) {
    let (root, outside) = (dir.join("root"), dir.join("outside"));
    for (base, files) in [(&root, inside), (&outside, beyond)] {
        std::fs::create_dir_all(base).unwrap();
        for (path, content) in files {
            let path = base.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
    }
    (root, outside)
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

/// Asserts that `error` is for `reason` and names the argument `field`.
#[track_caller]
pub fn assert_field(error: &ToolError, reason: Reason, field: &str) {
    assert_eq!(
        (error.reason, error.field.as_deref()),
        (reason, Some(field)),
        "{error:?}"
    );
}

/// `tool` called on `host` with `args` by the caller `local`.
pub async fn call_local(host: &impl ToolHost, tool: &str, args: Value) -> Result<Value, ToolError> {
    host.call(&Caller::new("local"), tool, args).await
}

/// The error of `tool` called on `host` with `args` by `local`, which must fail.
pub async fn refused(host: &impl ToolHost, tool: &str, args: Value) -> ToolError {
    match call_local(host, tool, args).await {
        Ok(value) => panic!("{tool} answered {value} where it must fail"),
        Err(error) => error,
    }
}

/// The string member `key` of each object of the array `array`, in order.
#[track_caller]
pub fn strings_at<'a>(array: &'a Value, key: &str) -> Vec<&'a str> {
    let Some(elements) = array.as_array() else {
        panic!("not an array: {array}");
    };
    elements
        .iter()
        .map(|element| {
            element[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string `{key}` in {element}"))
        })
        .collect()
}

/// The messages of the progress notifications `told` (progress, message) but the heartbeats
/// (`… is still running`): what finished, in order.
pub fn finished<P>(told: &[(P, String)]) -> Vec<&str> {
    told.iter()
        .map(|(_, message)| message.as_str())
        .filter(|message| !message.contains("still running"))
        .collect()
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
