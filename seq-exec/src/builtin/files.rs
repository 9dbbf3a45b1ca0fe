//! `files_read`, `files_write`, `files_list`: confined to the host's root by [`resolve_under`].
//! The work is blocking file I/O, done on tokio's blocking pool.

use super::root::resolve_under;
use super::{MAX_READ_BYTES, args};
use crate::error::{Reason, ToolError};
use serde_json::{Value, json};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub(super) async fn files_read(root: &Path, args: &Value) -> Result<Value, ToolError> {
    let path = args::string(args, "path")?;
    let target = resolve(root, path)?;
    let shown = path.to_owned();
    blocking(move || {
        let bytes = read_capped(&target).map_err(|error| io_error("reading", &shown, &error))?;
        if bytes.len() > MAX_READ_BYTES {
            return Err(ToolError::new(
                Reason::Failed,
                format!(
                    "`{shown}` is larger than {} MiB",
                    MAX_READ_BYTES / (1024 * 1024)
                ),
            )
            .with_field("path")
            .with_hint("read a smaller file, or a part of it with `cmd_run` (`head -c`)"));
        }
        String::from_utf8(bytes).map(Value::String).map_err(|_| {
            ToolError::new(Reason::Failed, format!("`{shown}` is not UTF-8 text"))
                .with_field("path")
                .with_hint("files_read returns text; read a text file")
        })
    })
    .await
}

/// At most one byte more than [`MAX_READ_BYTES`]: enough to tell that a file is too large
/// without reading all of it (a FIFO or a device never ends).
fn read_capped(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let bound = u64::try_from(MAX_READ_BYTES).unwrap_or(u64::MAX);
    fs::File::open(path)?
        .take(bound.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(bytes)
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
