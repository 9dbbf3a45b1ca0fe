//! How many more attempts `on_error: retry` gives a group's failed items: its `retries`, or
//! the value of the input `"retries": "$args.NAME"` names, held to the bound when the group's
//! inputs are admitted (a run's start, a call's).

use crate::error::{Reason, ToolError};
use seq_syntax::ast::Group;
use seq_syntax::limits::MAX_RETRIES;
use serde_json::{Map, Value};

/// The group's retries with `inputs` (its admitted inputs); an error names the input whose
/// value is no count within the bound.
pub(crate) fn allowed(group: &Group, inputs: &Map<String, Value>) -> Result<u32, ToolError> {
    let Some(from) = &group.retries_from else {
        return Ok(group.retries());
    };
    let name = from.value.as_str();
    let value = inputs.get(name).filter(|v| !v.is_null());
    match value.and_then(Value::as_u64) {
        Some(n) if n <= u64::from(MAX_RETRIES) => Ok(u32::try_from(n).unwrap_or(MAX_RETRIES)),
        Some(_) | None => {
            let found = match value {
                Some(value) => format!("is `{value}`"),
                None => "was not passed and has no `default`".to_owned(),
            };
            Err(ToolError::new(
                Reason::Type,
                format!(
                    "group `{}` takes its `retries` from `{name}`, which {found}: a count from 0 \
                     to {MAX_RETRIES} is needed",
                    group.name.value
                ),
            )
            .with_field(name)
            .with_hint(format!(
                "pass `{name}` as a whole number from 0 to {MAX_RETRIES}"
            )))
        }
    }
}
