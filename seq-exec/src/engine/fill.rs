//! Turning an item's arguments (and a `fallback`) into the JSON a tool receives.
//!
//! A bare reference substitutes the typed value; a reference inside a string interpolates the
//! value written as text. Reading a path that does not exist (an unset input or slot, a missing
//! field, an index past the end) is an error of reason `required` naming the reference: a tool
//! never receives an empty string that stands for a value that does not exist.
//!
//! Filling in is bounded ([`Budget`]): a template that names a large value many times
//! (`"$out.a $out.a ..."`) fails the item once its arguments pass the bound, before the bytes
//! are held, instead of multiplying a 16 MiB result into gigabytes. The same bytes count
//! against the run's budget (`budget`), so that many items filling arguments in at once cannot add up
//! past it either.

use super::budget::{Held, RunBudget};
use super::values::{self, Scope};
use super::within;
use crate::error::{Reason, ToolError};
use seq_syntax::ast::{Member, Template, TemplatePart, Value as Arg, ValueKind};
use seq_syntax::shell::{self, Context};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What one item's filled-in arguments may still take, in bytes (of text, and of JSON for the
/// values substituted whole). Every byte is charged to the run's budget too as it is filled in,
/// and held there as long as the budget is: while the call runs, or in the slot a `fallback`
/// fills.
#[derive(Debug)]
pub(crate) struct Budget {
    left: usize,
    bound: usize,
    held: Held,
}

impl Budget {
    pub(crate) fn new(bound: usize, run: &Arc<RunBudget>) -> Budget {
        Budget {
            left: bound,
            bound,
            held: Held::none(run),
        }
    }

    /// The charge of what was filled in, to travel with the value.
    pub(crate) fn into_held(self) -> Held {
        self.held
    }

    fn take(&mut self, bytes: usize) -> Result<(), ToolError> {
        let Some(left) = self.left.checked_sub(bytes) else {
            return Err(ToolError::new(
                Reason::Failed,
                format!(
                    "the item's arguments come to more than {} once their references are \
                     filled in, the bound on one call's arguments",
                    super::size::format_bytes(self.bound)
                ),
            )
            .with_hint(
                "pass large data by file: write it with `files_write` and give the tool its path",
            ));
        };
        self.held
            .take(bytes)
            .map_err(|error| within(error, "filling in the item's arguments"))?;
        self.left = left;
        Ok(())
    }

    /// A value substituted whole, counted by its size as compact JSON.
    fn take_value(&mut self, value: &Value) -> Result<(), ToolError> {
        let size = super::size::json_size_within(value, self.left).unwrap_or(usize::MAX);
        self.take(size)
    }
}

/// The text of a value as a model or a template reads it: strings, numbers and
/// bools as they are, arrays and objects as compact JSON, `null` as the empty string.
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(_) | Value::Object(_) => value.to_string(),
    }
}

/// The value of `arg` in `scope`.
pub(crate) fn value(arg: &Arg, scope: Scope<'_>, budget: &mut Budget) -> Result<Value, ToolError> {
    Ok(match &arg.kind {
        ValueKind::Null => Value::Null,
        ValueKind::Bool(b) => Value::Bool(*b),
        ValueKind::Number(n) => Value::Number(n.clone()),
        ValueKind::String(template) => Value::String(template_text(template, scope, budget)?),
        ValueKind::Ref(reference) => {
            let value = values::read(scope, reference)?;
            budget.take_value(value)?;
            value.clone()
        }
        ValueKind::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| value(item, scope, budget))
                .collect::<Result<_, _>>()?,
        ),
        ValueKind::Object(members) => Value::Object(object(members, scope, &[], budget)?),
    })
}

/// The members as an object, leaving out the members named in `skip`.
pub(crate) fn object(
    members: &[Member],
    scope: Scope<'_>,
    skip: &[&str],
    budget: &mut Budget,
) -> Result<Map<String, Value>, ToolError> {
    let mut out = Map::new();
    for member in members {
        if skip.contains(&member.key.value.as_str()) {
            continue;
        }
        out.insert(
            member.key.value.to_string(),
            value(&member.value, scope, budget)?,
        );
    }
    Ok(out)
}

fn template_text(
    template: &Template,
    scope: Scope<'_>,
    budget: &mut Budget,
) -> Result<String, ToolError> {
    fill(template, scope, budget, |text, raw| text.push_str(raw))
}

/// The template's text with each reference's value put in by `place` (as it is, or escaped),
/// every byte charged to the budget, what `place` adds beyond the value included.
fn fill(
    template: &Template,
    scope: Scope<'_>,
    budget: &mut Budget,
    mut place: impl FnMut(&mut String, &str),
) -> Result<String, ToolError> {
    let mut text = String::new();
    for part in &template.parts {
        match part {
            TemplatePart::Text(t) => {
                budget.take(t.len())?;
                text.push_str(t);
            }
            TemplatePart::Ref(reference) => {
                let value = values::read(scope, reference)?;
                let raw = text_within(value, budget)?;
                let before = text.len();
                place(&mut text, &raw);
                budget.take((text.len() - before).saturating_sub(raw.len()))?;
            }
        }
    }
    Ok(text)
}

/// `cmd_run`'s `command` (docs/reference.md, "Shell text"), and the values it references: each
/// value goes in an environment variable of its own (`SEQ_V1`, ...) and the reference becomes
/// that variable's expansion, so that the shell never parses a value. A bare reference is one
/// word. Any other kind of value is filled in as usual, with no variables (the tool refuses it).
pub(crate) fn shell_command(arg: &Arg, scope: Scope<'_>, budget: &mut Budget) -> ShellCommand {
    let mut variables = Vec::new();
    let template = match &arg.kind {
        ValueKind::String(template) => template,
        ValueKind::Ref(reference) => {
            let value = values::read(scope, reference)?;
            let raw = text_within(value, budget)?;
            let variable = variable(0, raw, &mut variables)?;
            let mut text = String::new();
            shell::expansion_into(&mut text, &variable, Context::Word);
            budget.take(text.len())?;
            let shown = shell::shown(
                &[TemplatePart::Ref(reference.clone())],
                variables
                    .iter()
                    .map(|(_, raw)| (raw.as_str(), Context::Word)),
            );
            return Ok((Value::String(text), variables, Some(shown)));
        }
        ValueKind::Null
        | ValueKind::Bool(_)
        | ValueKind::Number(_)
        | ValueKind::Array(_)
        | ValueKind::Object(_) => return Ok((value(arg, scope, budget)?, variables, None)),
    };
    let contexts = shell::contexts(&template.parts).map_err(|problem| {
        ToolError::new(
            Reason::ArgError,
            format!("`command` cannot take values safely: {problem:?}"),
        )
        .with_field("command")
        .with_hint("run `seqc check`: it explains the shell text it cannot follow")
    })?;
    let shown_contexts = contexts.clone();
    let mut contexts = contexts.into_iter();
    let mut refused = None;
    // Each value is charged as it is read, each expansion by what it adds beyond the value.
    let text = fill(template, scope, budget, |text, raw| {
        let n = variables.len();
        match variable(n, raw.to_owned(), &mut variables) {
            Ok(name) => {
                shell::expansion_into(text, &name, contexts.next().unwrap_or(Context::Word));
            }
            Err(error) => {
                refused.get_or_insert(error);
            }
        }
    })?;
    if let Some(error) = refused {
        return Err(error);
    }
    let shown = shell::shown(
        &template.parts,
        variables
            .iter()
            .map(|(_, raw)| raw.as_str())
            .zip(shown_contexts),
    );
    Ok((Value::String(text), variables, Some(shown)))
}

/// `cmd_run`'s `command` filled in ([`shell_command`]): the text the shell runs, the values'
/// variables, and the command shown with its values in place (for the report only; `None`
/// for a `command` that is not text).
pub(crate) type ShellCommand = Result<(Value, Vec<(String, String)>, Option<String>), ToolError>;

/// Adds the values' variables to `cmd_run`'s `env`, refusing an `env` of the sequence's own that
/// names the reserved prefix (it could stand in for a value). An `env` that is not an object is
/// left for the tool to refuse.
pub(crate) fn pass_variables(
    args: &mut Map<String, Value>,
    variables: Vec<(String, String)>,
) -> Result<(), ToolError> {
    if let Some(Value::Object(env)) = args.get("env")
        && let Some(name) = env.keys().find(|name| shell::is_reserved(name))
    {
        return Err(ToolError::new(
            Reason::ArgError,
            format!(
                "`env` sets `{name}`: names starting with `{}` carry the values of `command`",
                shell::VALUE_PREFIX
            ),
        )
        .with_field("env")
        .with_hint("rename the variable"));
    }
    if variables.is_empty() {
        return Ok(());
    }
    let env = args
        .entry("env")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(env) = env {
        for (name, value) in variables {
            env.insert(name, Value::String(value));
        }
    }
    Ok(())
}

/// Keeps `raw` as the `n`th value's variable, and names it; a NUL byte cannot be in the
/// environment (the C interface ends the text there), so such a value is refused.
fn variable(
    n: usize,
    raw: String,
    variables: &mut Vec<(String, String)>,
) -> Result<String, ToolError> {
    if raw.contains('\0') {
        return Err(ToolError::new(
            Reason::ArgError,
            "a value in `command` holds a NUL byte, which no shell variable can hold",
        )
        .with_field("command")
        .with_hint(
            "pass binary data by file (`files_write`), or remove the NUL with a `jq` step first",
        ));
    }
    let name = shell::value_variable(n);
    variables.push((name.clone(), raw));
    Ok(name)
}

/// [`text`], charged to the budget first (so that a huge value is refused before it is
/// copied).
fn text_within(value: &Value, budget: &mut Budget) -> Result<String, ToolError> {
    match value {
        Value::String(s) => budget.take(s.len())?,
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            budget.take_value(value)?;
        }
    }
    Ok(text(value))
}
