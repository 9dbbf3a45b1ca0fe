//! The path of every host tool call, at every depth: the tool looked up afresh (no cached
//! definitions), authorization of the calling identity and of the owner of every stored
//! sequence on the stack ([`authorize`]), parameter pre-validation,
//! the per-tool timeout, and the result contract. The `__arg_error` short-circuit comes
//! before all of it, in [`arg_error`].

use super::driver::{Attempt, Step};
use super::failure::{Failure, cancelled_error};
use super::size;
use super::stack::Stack;
use super::tool_timeout::ToolTimeout;
use super::values::describe;
use super::{Cx, format_duration};
use crate::error::{Reason, ToolError};
use crate::host::Caller;
use futures::FutureExt;
use seq_catalog::ParallelSafety;
use seq_catalog::{ArgProblem, ArgReason, Schema};
use seq_catalog::{SEQ_CREATE, SEQ_DELETE};
use seq_syntax::ast::Item;
use serde_json::{Map, Value};
use std::any::Any;
use std::panic::AssertUnwindSafe;
use tokio::sync::RwLock;

/// The `__arg_error` short-circuit: arguments that were cut off or malformed upstream are never
/// sent to a tool.
pub(crate) fn arg_error(item: &Item) -> Option<ToolError> {
    let value = item.arg("__arg_error")?;
    let detail = match &value.kind {
        seq_syntax::ast::ValueKind::String(template) => template.as_literal().map(str::to_owned),
        seq_syntax::ast::ValueKind::Null
        | seq_syntax::ast::ValueKind::Bool(_)
        | seq_syntax::ast::ValueKind::Number(_)
        | seq_syntax::ast::ValueKind::Ref(_)
        | seq_syntax::ast::ValueKind::Array(_)
        | seq_syntax::ast::ValueKind::Object(_) => None,
    };
    Some(arg_error_of(&item.tool.value, detail))
}

pub(crate) fn arg_error_of(tool: &str, detail: Option<String>) -> ToolError {
    let mut text = format!("the arguments of `{tool}` were malformed upstream");
    if let Some(detail) = detail.filter(|d| !d.is_empty()) {
        text.push_str(&format!(": {detail}"));
    }
    ToolError::new(Reason::ArgError, text)
        .with_field("__arg_error")
        .with_hint("the arguments were probably cut off; write long content to a file and pass its path, or split the call")
}

/// Runs host tool `tool` with `args` (already filled in). `lock` and `timeout` are the group's:
/// a tool that is not parallel-safe by its *current* definition takes `lock` exclusively, so it
/// never runs beside another item of the group even if it was replaced since the sequence was
/// checked; `timeout` cuts the call off at the per-tool bound.
pub(crate) async fn host_tool(
    cx: Cx<'_>,
    step: Step<'_>,
    args: Map<String, Value>,
    lock: &RwLock<()>,
    timeout: &ToolTimeout,
    began: &mut Option<u64>,
) -> Result<Value, Failure> {
    if cx.cancel.is_cancelled() {
        return Err(cancelled_error().into());
    }
    let tool = step.tool;
    // An output channel's line, kept for the report once the call succeeds (also when a
    // durable driver replays the call's outcome).
    let sent = seq_catalog::is_output_send(tool)
        .then(|| args.get("text").and_then(Value::as_str).map(str::to_owned))
        .flatten();
    // The in-process driver's attempts are awaited here, without boxing them, nor copying the
    // arguments.
    let Attempt {
        outcome,
        missing,
        started_at,
    } = if cx.driver.intercepts() {
        let shown = args.clone();
        let work = async move { attempt(cx, step.stack, tool, args, lock, timeout).await };
        cx.driver.attempt(step, &shown, Box::pin(work)).await
    } else {
        attempt(cx, step.stack, tool, args, lock, timeout).await
    };
    *began = started_at;
    match outcome {
        Ok(value) => {
            cx.output.record(tool, sent.as_deref());
            Ok(value)
        }
        Err(error) => Err(Failure { error, missing }),
    }
}

/// One attempt's work, as a driver is given it.
pub(crate) async fn attempt(
    cx: Cx<'_>,
    stack: &Stack,
    tool: &str,
    args: Map<String, Value>,
    lock: &RwLock<()>,
    timeout: &ToolTimeout,
) -> Attempt {
    match call_host(cx, stack, tool, args, lock, timeout).await {
        Ok(value) => Attempt {
            outcome: Ok(value),
            missing: false,
            started_at: None,
        },
        Err(failure) => Attempt {
            outcome: Err(failure.error),
            missing: failure.missing,
            started_at: None,
        },
    }
}

/// One attempt's work: lookup, authorization, pre-validation, the call within the per-tool
/// timeout, the result contract.
async fn call_host(
    cx: Cx<'_>,
    stack: &Stack,
    tool: &str,
    args: Map<String, Value>,
    lock: &RwLock<()>,
    timeout: &ToolTimeout,
) -> Result<Value, Failure> {
    let Some(def) = cx.host.lookup(tool) else {
        return Err(Failure::missing(not_found(tool)));
    };
    let args = Value::Object(args);
    authorize(cx, stack, tool, &args)?;
    def.parameters
        .validate(&args)
        .map_err(|problem| invalid(tool, &def.parameters, &problem, &args))?;
    // Held (for their Drop) until the call ends.
    let (_shared, _exclusive) = match def.parallel_safe {
        ParallelSafety::Unsafe => (None, Some(lock.write().await)),
        ParallelSafety::Safe | ParallelSafety::ThroughTarget => (Some(lock.read().await), None),
    };
    // A panicking host call is that tool's failure, not the run's: caught, it fails this item.
    // With the run's budget at hand: a built-in tool charges what it reads before reading.
    let call = AssertUnwindSafe(super::budget::scoped(cx.budget, async {
        cx.host.call(cx.caller, tool, args).await
    }))
    .catch_unwind();
    // Cancellation drops the call (and whatever it started: `cmd_run`'s processes, an MCP
    // request) at once.
    let outcome = tokio::select! {
        biased;
        () = cx.cancel.cancelled() => return Err(cancelled_error().into()),
        outcome = timeout.run(call) => outcome,
    };
    let result = match outcome {
        Some(Ok(result)) => result,
        Some(Err(panic)) => return Err(panicked(tool, panic.as_ref()).into()),
        None => {
            return Err(ToolError::new(
                Reason::Timeout,
                format!(
                    "`{tool}` ran past the per-tool bound of {}",
                    format_duration(cx.limits.tool_timeout)
                ),
            )
            .with_hint("make the call do less, or split it into several calls")
            .into());
        }
    };
    // Only the host's `Err` is a failure: an `Ok` value is data, whatever its shape (a value
    // shaped like an error never steers the run).
    let result =
        result.and_then(|value| within_result_bound(tool, value, cx.limits.max_result_bytes));
    result.map_err(|error| Failure {
        // A host that lost the tool between lookup and call answers `not_found` (host.rs).
        missing: error.reason == Reason::NotFound,
        error,
    })
}

/// A host call that panicked, as a failure of the tool.
fn panicked(tool: &str, panic: &(dyn Any + Send)) -> ToolError {
    let message = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    ToolError::new(Reason::Failed, format!("`{tool}` panicked: {message}"))
        .with_hint("the tool's host has a bug; the rest of the run was not affected")
}

/// `value`, unless it is larger than `bound` bytes as compact JSON: then the item fails rather
/// than the run holding (and passing on) a value of any size.
fn within_result_bound(tool: &str, value: Value, bound: usize) -> Result<Value, ToolError> {
    if size::json_size_within(&value, bound).is_some() {
        return Ok(value);
    }
    Err(ToolError::new(
        Reason::Failed,
        format!(
            "`{tool}` returned more than {} of JSON, the bound on one tool result",
            size::format_bytes(bound)
        ),
    )
    .with_hint("make the tool return less: write large output to a file and pass its path"))
}

pub(crate) fn not_found(tool: &str) -> ToolError {
    ToolError::new(Reason::NotFound, format!("no host provides `{tool}` now"))
        .with_field("tool")
        .with_hint("its host may be down or have removed it; `missing: \"skip\"` or `\"degrade\"` lets the group go on without it")
}

/// Whether the run may use `tool` with `args` on `stack`, by the engine's authorizer: every right the dispatch needs
/// ([`crate::policy::rights`]) held by the caller and by the owner of every stored sequence on
/// the stack, so that a sequence never does more than its author may, nor more than its
/// caller may. `seq_create` and `seq_delete` are a client's tools, never a step of a run.
pub(crate) fn authorize(
    cx: Cx<'_>,
    stack: &Stack,
    tool: &str,
    args: &Value,
) -> Result<(), ToolError> {
    if tool == SEQ_CREATE || tool == SEQ_DELETE {
        return Err(ToolError::new(
            Reason::Unauthorized,
            format!(
                "`{tool}` manages what others run: it is a client's tool, never a step of a run"
            ),
        )
        .with_field("tool")
        .with_hint("call it from the client; remove the item from the sequence"));
    }
    let owners = stack.owners();
    for right in crate::policy::rights(tool, args) {
        if !cx.authorizer.allows(cx.caller, right) {
            return Err(cx.authorizer.refusal(cx.caller, right));
        }
        for &(sequence, owner) in &owners {
            let owner = Caller::new(owner);
            if owner != *cx.caller && !cx.authorizer.allows(&owner, right) {
                return Err(cx.authorizer.refusal_to_owner(sequence, &owner, right));
            }
        }
    }
    Ok(())
}

/// A pre-validation problem as the result contract says it: `required` or `type`, with
/// the parameter as `field`. An unknown parameter of a closed schema is a `type` error: the
/// arguments object does not fit the tool's signature.
pub(crate) fn invalid(
    tool: &str,
    schema: &Schema,
    problem: &ArgProblem,
    args: &Value,
) -> ToolError {
    let field = problem.field.as_str();
    let error = match problem.reason {
        ArgReason::Required => ToolError::new(
            Reason::Required,
            format!("`{tool}` needs `{field}` ({})", problem.expected),
        )
        .with_hint(format!("pass `{field}`: {}", problem.expected)),
        ArgReason::Type => {
            let found = lookup_path(args, field).map_or("nothing", describe);
            ToolError::new(
                Reason::Type,
                format!(
                    "`{field}` of `{tool}` must be {}, found {found}",
                    problem.expected
                ),
            )
            .with_hint(format!("pass {} as `{field}`", problem.expected))
        }
        ArgReason::Unknown => ToolError::unknown_parameter(
            tool,
            field,
            schema.properties.iter().map(|(name, _)| name.as_str()),
        ),
    };
    if field.is_empty() {
        error
    } else {
        error.with_field(field)
    }
}

/// The value at `a.b.c` in `args`.
fn lookup_path<'v>(args: &'v Value, path: &str) -> Option<&'v Value> {
    if path.is_empty() {
        return Some(args);
    }
    path.split('.').try_fold(args, |value, key| value.get(key))
}
