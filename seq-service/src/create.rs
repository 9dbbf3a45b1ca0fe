//! `seq_create`: parse (parameter form or file), check against the whole storage and the
//! creator's policy, store with its owner.
//!
//! On behalf of a caller (over MCP, or from inside a sequence): `file` needs the right to read
//! files (`files_read`), every tool the sequence reaches must be one the caller may use
//! ([`super::reach`], E0901, reason `unauthorized`), and a stored sequence is replaced only by
//! its owner or a store administrator ([`seq_exec::policy::STORE_ADMIN`]). The command line acts as
//! the local user, who owns the data directory: none of these apply and nothing gets an owner.
//!
//! The checker runs over every stored sequence plus the new one (replacing a stored one of the
//! same name), so that cycles and depth across sequences are seen. The new sequence is
//! refused for its own errors, and also for errors it would cause in *other* stored sequences
//! (a stored `#A` whose chain gets too deep once `#B` exists): those are the errors the stored
//! sequences get with it that they did not have before.

use super::findings::{self, Finding, Origin};
use super::{SeqOutcome, StorageTools, reach, storage_error};
use seq_exec::builtin::{args, read_regular, resolve_beneath};
use seq_exec::error::{Reason, ToolError};
use seq_exec::host::Caller;
use seq_store::storage::{self, Put, StorageError, Summary};
use seq_syntax::ast::Sequence;
use seq_syntax::{Diagnostic, Parse};
use serde_json::{Value, json};
use std::sync::{Arc, PoisonError};

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
    let result = args::flag(args, "replace")
        .and_then(|replace| Ok((replace, source(tools, args, caller)?)))
        .map_err(plain)
        .and_then(|(replace, (form, text, parse))| {
            let name = match form {
                Form::File => args::optional_string(args, "name").map_err(plain)?,
                Form::Groups => None,
            };
            admit_and_store(tools, form, &text, parse, name, replace, caller).1
        });
    outcome(result)
}

impl StorageTools {
    /// `seqc create`: a sequence file's bytes, admitted once and stored as `seq_create` stores
    /// them, for the local user (no caller, no owner). The admission comes back whenever it was
    /// made, so that the command line renders its diagnostics with the file's text.
    pub fn create_file(
        &self,
        bytes: &[u8],
        replace: bool,
    ) -> (Option<seq_check::Admission>, SeqOutcome) {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let parse = seq_syntax::parse_bytes(bytes);
        let (admission, result) =
            admit_and_store(self, Form::File, &text, parse, None, replace, None);
        (admission, outcome(result))
    }
}

fn outcome(result: Created) -> SeqOutcome {
    match result {
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

/// What storing a sequence gave: its summary and warnings, or why it was refused.
type Created = Result<(Value, Vec<Finding>), Refusal>;

fn plain(error: ToolError) -> Refusal {
    (error, Vec::new())
}

/// The one admission of a new sequence and, when it passes, the store: its text's syntax
/// errors and the rules' findings in one answer, against the store as it is under the lock.
/// Returns the admission whenever it was made.
fn admit_and_store(
    tools: &StorageTools,
    form: Form,
    text: &str,
    parse: Parse,
    name_given: Option<&str>,
    replace: bool,
    caller: Option<&Caller>,
) -> (Option<seq_check::Admission>, Created) {
    let origin = match form {
        Form::Groups => Origin::Value(text),
        Form::File => Origin::File(text, seq_syntax::LineIndex::new(text)),
    };
    let mut admission = None;
    let result = admit_into(
        tools,
        form,
        &origin,
        parse,
        name_given,
        replace,
        caller,
        &mut admission,
    );
    (admission, result)
}

#[allow(
    clippy::too_many_arguments,
    reason = "the steps of one admission, private"
)]
fn admit_into(
    tools: &StorageTools,
    form: Form,
    origin: &Origin<'_>,
    parse: Parse,
    name_given: Option<&str>,
    replace: bool,
    caller: Option<&Caller>,
    made: &mut Option<seq_check::Admission>,
) -> Created {
    let broken = parse.has_errors();
    if parse.sequence.is_none() && !broken {
        return Err(plain(
            ToolError::new(Reason::ArgError, "no sequence could be built").with_field(form.field()),
        ));
    }
    if let (Some(name), Some(sequence)) = (name_given, &parse.sequence)
        && !broken
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

    let _one_at_a_time = tools.lock.lock().unwrap_or_else(PoisonError::into_inner);
    // The one admission (the rules run on whatever was built, beside any syntax errors: every
    // independent mistake in one answer), against the store as it is under the lock. A text
    // with syntax errors is refused for its findings before anything else is asked.
    let stored = stored_sequences(tools)?;
    let admission = made.insert(seq_check::admit(
        parse,
        &stored,
        &tools.config.catalog.current(),
    ));
    let mut found = findings_of(admission, origin);
    let Some(sequence) = admission.sequence.as_ref().filter(|_| !broken) else {
        return Err(refuse(form, found));
    };
    let name = &sequence.name.value;
    storage::valid_name(name).map_err(|e| plain(storage_error(e)))?;
    let storage = tools.storage();
    let exists = storage.exists(name).map_err(|e| plain(storage_error(e)))?;
    if !replace && exists {
        return Err(plain(storage_error(StorageError::Exists {
            name: name.clone(),
        })));
    }
    if exists && let Some(caller) = caller {
        tools.may_change(name, caller, "replace").map_err(plain)?;
    }
    let refused = match caller {
        Some(caller) => reach::unauthorized(sequence, &stored, &tools.config.authorizer, caller),
        None => Vec::new(),
    };
    let unauthorized = !refused.is_empty();
    found.extend(own(&refused, origin, Some(sequence)));
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
    // The quota is asked with the write, in one step for every process on the store; owners
    // are asked again by a storage that checks them itself (one others reach directly).
    let admin = caller.is_some_and(|caller| tools.is_store_admin(caller));
    let put = Put::new(sequence).replace(replace).admin(admin);
    let put = match caller {
        Some(caller) => put
            .owner(Some(&caller.id))
            .within(tools.config.quotas.of(caller)),
        None => put,
    };
    storage.put(put).map_err(|e| plain(storage_error(e)))?;
    let summary = Summary::of(sequence);
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

/// The sequence `seq_create` is given as parameters, in the order a file writes them.
#[derive(serde::Serialize)]
struct ParameterForm<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a Value>,
    groups: &'a Value,
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
            // Borrowed, not copied: `groups` may be megabytes of JSON.
            let form = ParameterForm {
                name: args::string(args, "name")?,
                description: args::optional(args, "description")?,
                groups,
            };
            let (text, parse) = seq_syntax::parse_value(&form);
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
                && !tools.config.authorizer.allows(caller, FILES_READ)
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
use seq_catalog::FILES_READ;

/// Whether the file starts as a JSON object does, so that its findings may quote it. Anything
/// else (a `.env`, a key, a binary) is not a sequence, and quoting its bytes would echo it.
fn looks_like_a_sequence(bytes: &[u8]) -> bool {
    bytes.trim_ascii_start().first() == Some(&b'{')
}

/// The admission's findings: the new sequence's own, and the errors it causes in stored ones.
fn findings_of(admission: &seq_check::Admission, origin: &Origin<'_>) -> Vec<Finding> {
    let mut found = own(&admission.own, origin, admission.sequence.as_ref());
    found.extend(
        admission
            .caused
            .iter()
            .map(|(name, d)| Finding::new(d, &Origin::Stored(name))),
    );
    found
}

/// The stored sequences a new one is checked against. Unreadable stored files are left out:
/// `#name` calls cannot reach them either.
fn stored_sequences(tools: &StorageTools) -> Result<Vec<Arc<Sequence>>, Refusal> {
    storage::readable(tools.storage()).map_err(|e| plain(storage_error(e)))
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
