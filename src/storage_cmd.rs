//! `seqc create`, `seqc list`, `seqc delete`: the storage of the data directory, through the
//! handlers of the `seq_create`, `seq_list` and `seq_delete` tools, so that a sequence stored
//! from the command line passes exactly the checks a model's would.

use crate::files::reason;
use crate::status::{Status, emit, trouble};
use crate::stored::{self, DataDirArg};
use clap::{Args, ValueEnum};
use seq_catalog::{SEQ_DELETE, SEQ_LIST};
use seq_exec::{Reason, ToolError};
use seq_service::{Finding, SeqConfig, StorageTools};
use seq_store::storage::SequenceStorage;
use seq_syntax::printable::{Lines, printable};
use serde_json::{Value, json};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The sequence file to store, under the name the file gives its sequence.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Overwrite a stored sequence of the same name.
    #[arg(long)]
    pub replace: bool,
    #[command(flatten)]
    pub data: DataDirArg,
    #[command(flatten)]
    pub restate: RestateArg,
    /// A catalog of other tool definitions to check against, as for `seqc check` (repeatable).
    #[arg(long = "catalog", value_name = "FILE")]
    pub catalogs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
    #[command(flatten)]
    pub data: DataDirArg,
    #[command(flatten)]
    pub restate: RestateArg,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The stored sequence to delete (`NAME` or `#NAME`).
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub data: DataDirArg,
    #[command(flatten)]
    pub restate: RestateArg,
}

#[derive(Debug, Args)]
pub struct RestateArg {
    /// Durable mode: the sequences kept in the Restate server whose ingress is at this URL
    /// (such as http://127.0.0.1:8080), which every worker and `seqc mcp --restate` sees,
    /// instead of the data directory.
    #[arg(long, value_name = "INGRESS_URL")]
    pub restate: Option<String>,
}

/// The storage a command works on: the Restate server's with `--restate`, else the data
/// directory's.
fn storage_of(data: &DataDirArg, restate: &RestateArg) -> Result<Arc<dyn SequenceStorage>, Status> {
    match &restate.restate {
        Some(ingress) => match seq_restate::RestateStorage::new(ingress) {
            Ok(storage) => Ok(Arc::new(storage)),
            Err(error) => Err(trouble(format_args!("cannot start the runtime: {error}"))),
        },
        None => Ok(Arc::new(data.storage())),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// One line per sequence: name, groups and items, description.
    Human,
    /// What `seq_list` returns, as one JSON line.
    Json,
}

/// Stores the file with `seq_create`'s one admission (against the whole storage): its own
/// errors and warnings are shown as `seqc check` shows them, and a sequence that has errors, or
/// that would give a stored sequence some (a cycle through it, a chain too deep), is refused.
pub fn create(args: &CreateArgs) -> Status {
    let shown = args.file.display().to_string();
    let bytes = match crate::files::read_named(&args.file) {
        Ok(bytes) => bytes,
        Err(error) => return trouble(format_args!("cannot read {shown}: {}", reason(&error))),
    };
    let catalog = match crate::catalog::load(&args.catalogs) {
        Ok(catalog) => catalog,
        Err(errors) => {
            for error in errors {
                trouble(error);
            }
            return Status::Trouble;
        }
    };
    let storage = match storage_of(&args.data, &args.restate) {
        Ok(storage) => storage,
        Err(status) => return status,
    };
    // The unreadable stored sequences are warned about here (the admission leaves them out).
    if let Err(message) = stored::load(storage.as_ref()) {
        return trouble(message);
    }
    // The file's bytes are given: `seq_create`'s root (for `file=`) is not used.
    let mut config = SeqConfig::new(args.data.storage(), ".");
    config.storage = Arc::clone(&storage);
    config.catalog = catalog.into();
    let (admission, outcome) = StorageTools::new(config).create_file(&bytes, args.replace);
    let Some(admission) = admission else {
        // Refused before the admission: the storage failed, or the name cannot be stored.
        return match &outcome.result {
            Ok(_) => trouble(format_args!("{shown} was stored without being checked")),
            Err(error) => refusal(&shown, &[], error),
        };
    };
    let file = stored::source_file(&shown, &bytes, &admission);
    if !file.diagnostics.is_empty() {
        let _ = stored::render_to_stderr(std::slice::from_ref(&file));
    }
    let name = match &admission.sequence {
        Some(sequence) if admission.errors().next().is_none() => sequence.name.value.clone(),
        Some(_) | None => return refused(&shown, "it has errors"),
    };
    match outcome.result {
        Ok(value) => {
            let groups = count(&value, "groups", "group");
            let items = count(&value, "items", "item");
            let path = match &args.restate.restate {
                Some(_) => storage.location(),
                None => args
                    .data
                    .storage()
                    .path_of(&name)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            };
            emit(Status::Clean, |out| {
                writeln!(out, "stored `{name}` ({groups}, {items}) in {path}")
            })
        }
        Err(_) if !args.replace && storage.exists(&name).unwrap_or(false) => refused(
            &shown,
            format_args!(
                "a sequence named `{name}` is already stored in {} (pass --replace to overwrite it)",
                where_stored(storage.as_ref(), &args.data, &args.restate)
            ),
        ),
        Err(error) => refusal(&shown, &outcome.diagnostics, &error),
    }
}

/// `seq_create` said no although the file's own check is clean: the new sequence breaks a
/// stored one, or the storage failed. Its findings say why.
fn refusal(shown: &str, findings: &[Finding], error: &ToolError) -> Status {
    if findings.is_empty() {
        let status = failure(error);
        let _ = writeln!(
            io::stderr().lock(),
            "seqc: {shown} was not stored: {}",
            detail(error)
        );
        if let Some(hint) = &error.hint {
            let _ = writeln!(io::stderr().lock(), "  help: {hint}");
        }
        return status;
    }
    let mut err = io::stderr().lock();
    for finding in findings.iter().filter(|f| f.is_error()) {
        let _ = writeln!(err, "{}", finding.to_line());
    }
    drop(err);
    refused(shown, "it would give stored sequences the errors above")
}

fn refused(shown: &str, why: impl std::fmt::Display) -> Status {
    let _ = writeln!(io::stderr().lock(), "seqc: {shown} was not stored: {why}");
    Status::Failed
}

/// 1 for a refusal, 2 when the storage itself failed (I/O).
fn failure(error: &ToolError) -> Status {
    match error.reason {
        Reason::Failed | Reason::Timeout | Reason::Budget | Reason::Cancelled => Status::Trouble,
        Reason::Required
        | Reason::Type
        | Reason::Unauthorized
        | Reason::NotFound
        | Reason::Absent
        | Reason::ArgError
        | Reason::Depth
        | Reason::Cycle => Status::Failed,
    }
}

/// `2 groups` from `{"groups": 2}`.
fn count(value: &Value, field: &str, noun: &str) -> String {
    let n = value.get(field).and_then(Value::as_u64).unwrap_or(0);
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub fn list(args: &ListArgs) -> Status {
    let storage = match storage_of(&args.data, &args.restate) {
        Ok(storage) => storage,
        Err(status) => return status,
    };
    let rows = match storage_tools(&args.data, &storage)
        .call_blocking(SEQ_LIST, &json!({}), None)
        .result
    {
        Ok(Value::Array(rows)) => rows,
        Ok(other) => vec![other],
        Err(error) => return trouble(detail(&error)),
    };
    match args.format {
        ListFormat::Json => emit(Status::Clean, |out| {
            serde_json::to_writer(&mut *out, &rows).map_err(io::Error::from)?;
            writeln!(out)
        }),
        ListFormat::Human => emit(Status::Clean, |out| {
            if rows.is_empty() {
                let place = where_stored(storage.as_ref(), &args.data, &args.restate);
                return writeln!(out, "no sequences stored in {place}");
            }
            write_table(out, &rows)
        }),
    }
}

/// `NAME  GROUPS, ITEMS  DESCRIPTION`, names padded to one column; unreadable entries say why.
fn write_table(out: &mut dyn Write, rows: &[Value]) -> io::Result<()> {
    // Names, descriptions and errors are stored text: escaped, each on its one line.
    let text = |row: &Value, field: &str| {
        printable(
            row.get(field).and_then(Value::as_str).unwrap_or_default(),
            Lines::Escaped,
        )
        .into_owned()
    };
    let width = rows
        .iter()
        .map(|row| text(row, "name").chars().count())
        .max()
        .unwrap_or(0);
    for row in rows {
        let name = text(row, "name");
        let pad = " ".repeat(width.saturating_sub(name.chars().count()));
        let error = text(row, "error");
        if !error.is_empty() {
            writeln!(out, "{name}{pad}  unreadable: {error}")?;
            continue;
        }
        let size = format!(
            "{}, {}",
            count(row, "groups", "group"),
            count(row, "items", "item")
        );
        let description = text(row, "description");
        writeln!(out, "{name}{pad}  {size:<20}  {description}")?;
    }
    Ok(())
}

pub fn delete(args: &DeleteArgs) -> Status {
    let storage = match storage_of(&args.data, &args.restate) {
        Ok(storage) => storage,
        Err(status) => return status,
    };
    let place = where_stored(storage.as_ref(), &args.data, &args.restate);
    let name = seq_syntax::names::strip_sequence_prefix(&args.name);
    match storage_tools(&args.data, &storage)
        .call_blocking(SEQ_DELETE, &json!({"name": name}), None)
        .result
    {
        Ok(_) => emit(Status::Clean, |out| {
            writeln!(out, "deleted `{name}` from {place}")
        }),
        // A name that is not stored (or cannot be) is a usage problem, like a missing file.
        Err(error) => trouble(format_args!("{} (in {place})", detail(&error))),
    }
}

/// What went wrong, without the tool-level `reason `field`:` prefix a model reads.
fn detail(error: &ToolError) -> String {
    error
        .detail
        .clone()
        .unwrap_or_else(|| error.reason.to_string())
}

/// The store tools over `storage` (`seq_create`'s `file` is not used here: any root will do).
fn storage_tools(data: &DataDirArg, storage: &Arc<dyn SequenceStorage>) -> StorageTools {
    let files = data.storage();
    let root = files.dir().to_path_buf();
    let mut config = SeqConfig::new(files, root);
    config.storage = Arc::clone(storage);
    StorageTools::new(config)
}

/// Where the sequences are, as the messages say it: the data directory's `sequences`
/// directory, or the Restate server.
fn where_stored(storage: &dyn SequenceStorage, data: &DataDirArg, restate: &RestateArg) -> String {
    match restate.restate {
        Some(_) => storage.location(),
        None => data.storage().dir().display().to_string(),
    }
}
