//! `seq_create`: parse (parameter form or file), check against the whole storage and the
//! creator's policy, store with its owner.
//!
//! On behalf of a caller (over MCP, or from inside a sequence): `file` needs the right to read
//! files (`files_read`), every tool the sequence reaches must be one the caller may use
//! ([`super::reach`], E0901, reason `unauthorized`), and a stored sequence is replaced only by
//! its owner or a store administrator ([`crate::policy::STORE_ADMIN`]). The command line acts as
//! the local user, who owns the data directory: none of these apply and nothing gets an owner.
//!
//! The checker runs over every stored sequence plus the new one (replacing a stored one of the
//! same name), so that cycles and depth across sequences are seen. The new sequence is
//! refused for its own errors, and also for errors it would cause in *other* stored sequences
//! (a stored `#A` whose chain gets too deep once `#B` exists): those are the errors the stored
//! sequences get with it that they did not have before.

use super::findings::{self, Finding, Origin};
use super::{SeqOutcome, StorageTools, reach, storage_error};
use crate::builtin::files::read_regular;
use crate::builtin::{args, resolve_beneath};
use crate::error::{Reason, ToolError};
use crate::host::Caller;
use crate::storage::{self, StorageError, Summary};
use seq_syntax::ast::Sequence;
use seq_syntax::{Diagnostic, Parse};
use serde_json::{Map, Value, json};
use std::sync::PoisonError;

/// Which argument held the sequence: errors in it are reported on that field.
#[derive(Clone, Copy)]
enum Form {
    Groups,
    File,
}

impl Form {
    fn field(self) -> &'static str {
        match self {
            Form::Groups => "groups",
            Form::File => "file",
        }
    }
}

pub(super) fn create(tools: &StorageTools, args: &Value, caller: Option<&Caller>) -> SeqOutcome {
    match create_inner(tools, args, caller) {
        Ok((value, warnings)) => SeqOutcome {
            result: Ok(value),
            diagnostics: warnings,
            report: None,
        },
        Err((error, diagnostics)) => SeqOutcome {
            result: Err(error),
            diagnostics,
            report: None,
        },
    }
}

type Refusal = (ToolError, Vec<Finding>);

fn plain(error: ToolError) -> Refusal {
    (error, Vec::new())
}

fn create_inner(
    tools: &StorageTools,
    args: &Value,
    caller: Option<&Caller>,
) -> Result<(Value, Vec<Finding>), Refusal> {
    let replace = args::flag(args, "replace").map_err(plain)?;
    let (form, text, parse) = source(tools, args, caller).map_err(plain)?;
    let origin = match form {
        Form::Groups => Origin::Value(&text),
        Form::File => Origin::File(&text, seq_syntax::LineIndex::new(&text)),
    };
    let broken = parse.has_errors();
    let Some(sequence) = parse.sequence else {
        if broken {
            return Err(refuse(form, own(&parse.diagnostics, &origin, None)));
        }
        return Err(plain(
            ToolError::new(Reason::ArgError, "no sequence could be built").with_field(form.field()),
        ));
    };
    if broken {
        // Every independent mistake in one answer: the rules run on the parts that were built
        // (they stay quiet about the parts that were not), beside the syntax errors.
        let stored = stored_sequences(tools)?;
        let checked = seq_check::check_into_store(&sequence, &stored, &tools.config.catalog);
        let mut all = parse.diagnostics;
        all.extend(checked.own);
        seq_syntax::diagnostic::sort(&mut all);
        let mut found = own(&all, &origin, Some(&sequence));
        found.extend(
            checked
                .caused
                .iter()
                .map(|(name, d)| Finding::new(d, &Origin::Stored(name))),
        );
        return Err(refuse(form, found));
    }
    if let (Form::File, Some(name)) = (form, args::optional_string(args, "name").map_err(plain)?)
        && name != sequence.name.value
    {
        return Err(plain(
            ToolError::new(
                Reason::ArgError,
                format!(
                    "`name` is `{name}` but the file names its sequence `{}`",
                    sequence.name.value
                ),
            )
            .with_field("name")
            .with_hint("pass the file's own name as `name`, or rename the sequence in the file"),
        ));
    }
    let name = sequence.name.value.clone();
    storage::check_name(&name).map_err(|problem| {
        plain(storage_error(StorageError::InvalidName {
            name: name.clone(),
            problem,
        }))
    })?;

    let _one_at_a_time = tools.lock.lock().unwrap_or_else(PoisonError::into_inner);
    let storage = tools.storage();
    let exists = storage.exists(&name).map_err(|e| plain(storage_error(e)))?;
    if !replace && exists {
        return Err(plain(storage_error(StorageError::Exists { name })));
    }
    if exists && let Some(caller) = caller {
        tools.may_change(&name, caller, "replace").map_err(plain)?;
    }
    let stored = stored_sequences(tools)?;
    let mut found = check_with(tools, &stored, &sequence, &origin);
    let refused = match caller {
        Some(caller) => reach::unauthorized(&sequence, &stored, &tools.config.policy, caller),
        None => Vec::new(),
    };
    let unauthorized = !refused.is_empty();
    found.extend(own(&refused, &origin, Some(&sequence)));
    if found.iter().any(Finding::is_error) {
        let (mut error, found) = refuse(form, found);
        if unauthorized {
            error.reason = Reason::Unauthorized;
            error.hint = Some(
                "use only tools you may use (each E0901 says which), and fix any other errors listed"
                    .to_owned(),
            );
        }
        return Err((error, found));
    }
    storage
        .put_owned(&sequence, replace, caller.map(|c| c.id.as_str()))
        .map_err(|e| plain(storage_error(e)))?;
    let summary = Summary::of(&sequence);
    // Only errors are taken from other sequences, so what is left is this one's warnings.
    Ok((
        json!({
            "name": summary.name,
            "groups": summary.groups,
            "items": summary.items,
            "warnings": found,
        }),
        found,
    ))
}

/// The text and its parse, from `groups` or from `file` (exactly one of them).
fn source(
    tools: &StorageTools,
    args: &Value,
    caller: Option<&Caller>,
) -> Result<(Form, String, Parse), ToolError> {
    let groups = args::optional(args, "groups")?;
    let file = args::optional_string(args, "file")?;
    match (groups, file) {
        (Some(groups), None) => {
            let mut value = Map::new();
            value.insert(
                "name".to_owned(),
                Value::String(args::string(args, "name")?.to_owned()),
            );
            if let Some(description) = args::optional(args, "description")? {
                value.insert("description".to_owned(), description.clone());
            }
            value.insert("groups".to_owned(), groups.clone());
            let (text, parse) = seq_syntax::parse_value(&Value::Object(value));
            Ok((Form::Groups, text, parse))
        }
        (None, Some(file)) => {
            if args::optional(args, "description")?.is_some() {
                return Err(ToolError::new(
                    Reason::ArgError,
                    "a sequence loaded from `file` takes its description from the file",
                )
                .with_field("description")
                .with_hint("drop `description`, or write it into the file"));
            }
            if let Some(caller) = caller
                && !tools.config.policy.allows(caller, FILES_READ)
            {
                return Err(ToolError::new(
                    Reason::Unauthorized,
                    format!(
                        "caller `{}` may not read files (`{FILES_READ}`), which `file` needs",
                        caller.id
                    ),
                )
                .with_field("file")
                .with_hint(
                    "give the sequence inline as `groups`, or ask for access to `files_read`",
                ));
            }
            let place = resolve_beneath(&tools.config.root, file)
                .map_err(|error| error.to_tool_error("file"))?;
            // Confined and bounded as `files_read` is: a regular file only, sized from its
            // metadata before it is read.
            let bytes = read_regular(&place, seq_syntax::limits::MAX_FILE_BYTES, &mut |_| Ok(()))
                .map_err(|error| error.at(file).with_field("file"))?;
            if !looks_like_a_sequence(&bytes) {
                // Whatever the file holds (a `.env`, a key) is not quoted back.
                return Err(ToolError::new(
                    Reason::ArgError,
                    format!("`{file}` is not a sequence file: it is not a JSON object"),
                )
                .with_field("file")
                .with_hint(
                    "give the path of a sequence file (a JSON object with `name` and `groups`)",
                ));
            }
            let parse = seq_syntax::parse_bytes(&bytes);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            Ok((Form::File, text, parse))
        }
        (Some(_), Some(_)) => Err(ToolError::new(
            Reason::ArgError,
            "`groups` and `file` were both given",
        )
        .with_field("file")
        .with_hint("give the groups inline as `groups`, or a sequence file as `file`, not both")),
        (None, None) => Err(ToolError::new(
            Reason::Required,
            "`seq_create` needs `groups` or `file`",
        )
        .with_field("groups")
        .with_hint("give the groups inline as `groups`, or a sequence file as `file`")),
    }
}

/// The tool whose right `seq_create(file=...)` needs: reading a file is what it does.
const FILES_READ: &str = "files_read";

/// Whether the file starts as a JSON object does, so that its findings may quote it. Anything
/// else (a `.env`, a key, a binary) is not a sequence, and quoting its bytes would echo it.
fn looks_like_a_sequence(bytes: &[u8]) -> bool {
    bytes.trim_ascii_start().first() == Some(&b'{')
}

/// The new sequence's findings, and the errors it causes in stored ones.
fn check_with(
    tools: &StorageTools,
    stored: &[Sequence],
    sequence: &Sequence,
    origin: &Origin<'_>,
) -> Vec<Finding> {
    let checked = seq_check::check_into_store(sequence, stored, &tools.config.catalog);
    let mut found = own(&checked.own, origin, Some(sequence));
    found.extend(
        checked
            .caused
            .iter()
            .map(|(name, d)| Finding::new(d, &Origin::Stored(name))),
    );
    found
}

/// The stored sequences a new one is checked against. Unreadable stored files are left out:
/// `#name` calls cannot reach them either.
fn stored_sequences(tools: &StorageTools) -> Result<Vec<Sequence>, Refusal> {
    tools
        .storage()
        .readable()
        .map_err(|e| plain(storage_error(e)))
}

/// The findings of the new sequence itself, each with where it is in `sequence` when built.
fn own(
    diagnostics: &[Diagnostic],
    origin: &Origin<'_>,
    sequence: Option<&Sequence>,
) -> Vec<Finding> {
    diagnostics
        .iter()
        .map(|d| {
            let mut finding = Finding::new(d, origin);
            finding.path = sequence.and_then(|s| findings::locate(s, d.span));
            // Inside a `tools` string the text is escaped once more than its author wrote it.
            let in_tools = sequence
                .is_some_and(|s| s.groups.iter().any(|g| g.tools_span.contains(d.span.start)));
            if in_tools && let Some(excerpt) = &mut finding.excerpt {
                *excerpt = seq_syntax::escape::unescape(excerpt, 0).0.text.into_owned();
            }
            finding
        })
        .collect()
}

fn refuse(form: Form, found: Vec<Finding>) -> Refusal {
    let error = ToolError::new(Reason::ArgError, findings::render(&found))
        .with_field(form.field())
        .with_hint("fix the errors listed and call `seq_create` again");
    (error, found)
}
