//! `jq {filter, input?}`: a jq filter (jaq) over `input`, its one output the result.
//!
//! The filter runs on a thread of its own, which stops when the call is dropped (the tool's
//! timeout, the group's, cancellation): the call's future holds a stop flag that jaq's
//! interpreter meets at every step, since every step looks its term up through the data this
//! module gives it ([`Steps`]). A filter that never ends (`def f: f; f`, `repeat(1)`,
//! `last(range(1e18))`) is stopped within a few hundred steps of the drop, and its thread ends:
//! nothing is left computing. The same check bounds the stack a filter's recursion may take.
//! The library is the checker's ([`seq_catalog::jq`]): the run knows exactly the names the check
//! knows, none of which reads the environment, files, the clock or standard input.
//!
//! Compiling a filter compiles jaq's whole library with it, which costs far more than running a
//! small filter: compiled filters are kept by their text ([`cache`]), a bounded number of them.
//!
//! Where that thread runs is the host's choice ([`JqRunner`]). In this process (the default,
//! for embedders) a filter's own recursion and endless loops are bounded, but not what jaq does
//! in Rust outside the interpreter's steps: a native descending a deeply nested value (`tojson`,
//! `==`, dropping it) can overflow the stack, an allocation sized by a value (`"x" * 1e14`) can
//! abort the process, and a native that does not return (`pow` on huge integers) keeps a core
//! busy after the call is dropped. seqc's commands run filters in child processes instead
//! ([`isolated`], served by [`serve()`]), where those end the child, not seqc.

use super::args;
use crate::error::{Reason, ToolError};
use jaq_core::data::HasLut;
use jaq_core::{Ctx, DataT, Vars, unwrap_valr};
use jaq_json::Val;
use serde::Deserialize;
use serde_json::Value;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

mod cache;
mod isolated;
mod serve;

pub use isolated::{MAX_CHILDREN, MAX_PER_CALLER, Pool};
pub use serve::{MEMORY, serve};

/// Where the `jq` tool evaluates filters.
#[derive(Clone, Debug, Default)]
pub enum JqRunner {
    /// On a thread of this process. Not isolated: see the module's documentation for what a
    /// hostile filter can still do to the process.
    #[default]
    InThread,
    /// In child processes running `program args…`, which must serve [`serve()`] (seqc's is
    /// `seqc __jq`).
    Isolated(Arc<isolated::Pool>),
}

impl JqRunner {
    /// Filters evaluated in children started as `program args…`.
    pub fn isolated(
        program: impl Into<std::path::PathBuf>,
        args: impl IntoIterator<Item = impl Into<std::ffi::OsString>>,
    ) -> JqRunner {
        JqRunner::Isolated(Arc::new(isolated::Pool::new(
            program.into(),
            args.into_iter().map(Into::into).collect(),
        )))
    }

    /// The pids of the child processes alive now (none in this process's runner).
    pub fn children(&self) -> Vec<u32> {
        match self {
            JqRunner::InThread => Vec::new(),
            JqRunner::Isolated(pool) => pool.children(),
        }
    }
}

/// The stack of a filter's thread. Only what is touched is committed.
const THREAD_STACK: usize = 64 * 1024 * 1024;
/// What evaluation may take of it; the rest is for dropping what it built.
const EVAL_STACK: usize = 48 * 1024 * 1024;
/// Steps between two looks at the stop flag.
const STEPS_PER_LOOK: u32 = 256;
/// How deep a result may nest.
const MAX_DEPTH: usize = 512;

/// Filters evaluating now, in this process (tests wait for it to reach 0).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// How many filters are evaluating in this process right now.
pub fn running() -> usize {
    RUNNING.load(Ordering::SeqCst)
}

pub(crate) async fn jq(
    args: &Value,
    runner: &JqRunner,
    caller: &crate::Caller,
) -> Result<Value, ToolError> {
    let filter = args::string(args, seq_syntax::jq::FILTER)?.to_owned();
    let input = args::optional(args, seq_syntax::jq::INPUT)?
        .cloned()
        .unwrap_or(Value::Null);
    match runner {
        JqRunner::InThread => in_thread(filter, input).await,
        JqRunner::Isolated(pool) => isolated::call(pool, &caller.id, filter, input).await,
    }
}

/// Evaluates on a thread of this process, stopped through the step guard when dropped.
async fn in_thread(filter: String, input: Value) -> Result<Value, ToolError> {
    let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
    let flag = Arc::clone(&stop.0);
    let (send, receive) = tokio::sync::oneshot::channel();
    RUNNING.fetch_add(1, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("jq".to_owned())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let _running = Running;
            let _ = send.send(evaluate(&filter, input, &flag));
        });
    if let Err(error) = spawned {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(ToolError::new(
            Reason::Failed,
            format!("could not start a thread for the filter: {error}"),
        ));
    }
    receive.await.unwrap_or_else(|_| {
        Err(ToolError::new(
            Reason::Failed,
            "the filter's thread ended without an answer",
        ))
    })
}

/// Sets the stop flag when the call is dropped, however it ends.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Counts a filter's thread out when it ends, however it ends.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Why a filter was stopped from the inside: unwound to [`evaluate`], never past it.
#[derive(Debug)]
enum Stopped {
    Cancelled,
    TooDeep,
}

/// The step counter and stop flag jaq meets at every step.
struct Guard<'a> {
    stop: &'a AtomicBool,
    steps: Cell<u32>,
    /// The address of a local of [`evaluate`]: the stack grows down from about there.
    stack_top: usize,
}

impl Guard<'_> {
    fn step(&self) {
        let steps = self.steps.get().wrapping_add(1);
        self.steps.set(steps);
        if steps.is_multiple_of(STEPS_PER_LOOK) && self.stop.load(Ordering::Relaxed) {
            resume_unwind(Box::new(Stopped::Cancelled));
        }
        if self.stack_top.saturating_sub(stack_address()) > EVAL_STACK {
            resume_unwind(Box::new(Stopped::TooDeep));
        }
    }
}

/// Where the stack is now.
fn stack_address() -> usize {
    let here = 0u8;
    std::ptr::from_ref(std::hint::black_box(&here)) as usize
}

/// jaq's data kind for the engine: JSON values, and the look-up table reached through a
/// [`Guard`].
struct Bounded;

impl DataT for Bounded {
    type V<'a> = Val;
    type Data<'a> = Steps<'a>;
}

#[derive(Clone)]
struct Steps<'a> {
    lut: &'a jaq_core::Lut<Bounded>,
    guard: &'a Guard<'a>,
}

impl<'a> HasLut<'a, Bounded> for Steps<'a> {
    fn lut(&self) -> &'a jaq_core::Lut<Bounded> {
        self.guard.step();
        self.lut
    }
}

fn failed(detail: impl Into<String>) -> ToolError {
    ToolError::new(Reason::Failed, detail)
}

fn evaluate(filter: &str, input: Value, stop: &AtomicBool) -> Result<Value, ToolError> {
    let compiled =
        cache::compiled(filter, seq_catalog::jq::compile::<Bounded>).map_err(|problems| {
            let first = problems.first();
            let detail = first.map_or_else(
                || "the filter does not compile".to_owned(),
                |p| format!("the filter does not compile: {}", p.message),
            );
            let error = failed(detail).with_field(seq_syntax::jq::FILTER);
            match first {
                Some(p) => error.with_hint(p.help.clone()),
                None => error,
            }
        })?;
    let input = Val::deserialize(input)
        .map_err(|e| failed(format!("the input is not JSON jq can read: {e}")))?;
    let guard = Guard {
        stop,
        steps: Cell::new(0),
        stack_top: stack_address(),
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let ctx = Ctx::<Bounded>::new(
            Steps {
                lut: &compiled.lut,
                guard: &guard,
            },
            Vars::new([]),
        );
        let mut outputs = compiled.id.run((ctx, input)).map(unwrap_valr);
        let first = outputs.next();
        let second = match &first {
            Some(Ok(_)) => outputs.next(),
            Some(Err(_)) | None => None,
        };
        match (first, second) {
            (None, _) => Err(failed("the filter gave no output").with_hint(
                "a jq result is one value: collect a filter's outputs with `[...]`, or give \
                 a default with `// null`",
            )),
            (Some(Err(error)), _) | (Some(Ok(_)), Some(Err(error))) => {
                Err(failed(format!("the filter failed: {}", error_text(error))))
            }
            (Some(Ok(_)), Some(Ok(_))) => Err(failed("the filter gave several outputs")
                .with_hint("a jq result is one value: collect the outputs with `[...]`, or take one with `first(...)`")),
            (Some(Ok(value)), None) => to_json(&value, 0),
        }
    }));
    match outcome {
        Ok(result) => result,
        Err(payload) => Err(match payload.downcast::<Stopped>() {
            Ok(stopped) => match *stopped {
                Stopped::Cancelled => ToolError::new(Reason::Cancelled, "the filter was stopped"),
                Stopped::TooDeep => failed("the filter recursed too deep").with_hint(
                    "a recursive `def` needs a base case; `reduce`, `foreach` and `until` \
                     loop without growing the stack",
                ),
            },
            Err(_) => failed("the filter stopped on an internal error of jq"),
        }),
    }
}

/// A filter's error as text: the string of `error("...")` as written (not as a JSON string
/// with its quotes and escapes), any other value as its JSON.
fn error_text(error: jaq_core::Error<Val>) -> String {
    let value = error.into_val();
    match to_json(&value, 0) {
        Ok(Value::String(text)) => text,
        Ok(_) | Err(_) => value.to_string(),
    }
}

/// A jq value as JSON: object keys must be strings, numbers that are not finite are null (as
/// jq prints them).
fn to_json(value: &Val, depth: usize) -> Result<Value, ToolError> {
    if depth > MAX_DEPTH {
        return Err(failed(format!(
            "the filter's result nests deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(match value {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => number(&n.to_string()),
        Val::TStr(s) | Val::BStr(s) => Value::String(String::from_utf8_lossy(s).into_owned()),
        Val::Arr(items) => Value::Array(
            items
                .iter()
                .map(|v| to_json(v, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Val::Obj(members) => {
            let mut object = serde_json::Map::with_capacity(members.len());
            for (key, v) in members.iter() {
                let key = match key {
                    Val::TStr(s) | Val::BStr(s) => String::from_utf8_lossy(s).into_owned(),
                    Val::Null | Val::Bool(_) | Val::Num(_) | Val::Arr(_) | Val::Obj(_) => {
                        return Err(failed(format!(
                            "the filter's result has an object key that is not a string: {key}"
                        )));
                    }
                };
                object.insert(key, to_json(v, depth + 1)?);
            }
            Value::Object(object)
        }
    })
}

fn number(text: &str) -> Value {
    serde_json::from_str::<serde_json::Number>(text).map_or(Value::Null, Value::Number)
}
