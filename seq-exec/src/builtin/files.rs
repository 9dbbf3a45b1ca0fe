//! `files_read`, `files_write`, `files_list`: confined to the host's root by [`resolve_under`].
//! The work is blocking file I/O, done on tokio's blocking pool.

use super::args;
use super::root::resolve_under;
use crate::error::{Reason, ToolError};
use serde_json::{Value, json};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub(super) async fn files_read(root: &Path, args: &Value) -> Result<Value, ToolError> {
    let path = args::string(args, "path")?;
    let target = resolve(root, path)?;
    let shown = path.to_owned();
    blocking(move || {
        let bytes = fs::read(&target).map_err(|error| io_error("reading", &shown, &error))?;
        String::from_utf8(bytes).map(Value::String).map_err(|_| {
            ToolError::new(Reason::Failed, format!("`{shown}` is not UTF-8 text"))
                .with_field("path")
                .with_hint("files_read returns text; read a text file")
        })
    })
    .await
}

/// `content` is written as is when it is a string; any other value is written as compact JSON,
/// so that a structured result can be saved without a conversion step.
pub(super) async fn files_write(root: &Path, args: &Value) -> Result<Value, ToolError> {
    let path = args::string(args, "path")?;
    let content = match args::required(args, "content")? {
        Value::String(text) => text.clone(),
        other @ (Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::Array(_)
        | Value::Object(_)) => other.to_string(),
    };
    let target = resolve(root, path)?;
    let shown = path.to_owned();
    blocking(move || {
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|error| io_error("creating", &shown, &error))?;
        }
        fs::write(&target, content.as_bytes())
            .map_err(|error| io_error("writing", &shown, &error))?;
        Ok(json!({"path": shown, "bytes": content.len()}))
    })
    .await
}

/// The entries' names, sorted; directories end in `/`. Links are listed as themselves.
pub(super) async fn files_list(root: &Path, args: &Value) -> Result<Value, ToolError> {
    let path = args::string(args, "path")?;
    let target = resolve(root, path)?;
    let shown = path.to_owned();
    blocking(move || {
        let listing = |error: io::Error| io_error("listing", &shown, &error);
        let mut names = Vec::new();
        for entry in fs::read_dir(&target).map_err(listing)? {
            let entry = entry.map_err(listing)?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().map_err(listing)?.is_dir() {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(Value::Array(names.into_iter().map(Value::String).collect()))
    })
    .await
}

fn resolve(root: &Path, path: &str) -> Result<PathBuf, ToolError> {
    resolve_under(root, path).map_err(|error| error.to_tool_error("path"))
}

async fn blocking<F>(work: F) -> Result<Value, ToolError>
where
    F: FnOnce() -> Result<Value, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| {
            Err(ToolError::new(
                Reason::Failed,
                format!("the file operation did not complete: {error}"),
            ))
        })
}

fn io_error(doing: &str, path: &str, error: &io::Error) -> ToolError {
    ToolError::new(Reason::Failed, format!("{doing} `{path}`: {error}")).with_field("path")
}
