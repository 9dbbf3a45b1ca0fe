//! `seq_run`'s `run_id`: a run an agent names so that it can get it back after a lost
//! connection. The same id, from the same caller, for the same sequence and arguments, attaches
//! to the run it names (waits for it, or answers its report); anything else under the id is an
//! error saying which of the three differs.
//!
//! What a run was submitted with is kept as a [`Submission`]: the caller, the sequence's name and
//! a digest of the arguments (never the arguments themselves, which another caller may not
//! see). Durable runs keep it in their workflow's state (seq-restate); runs in this process in
//! `RunIds`, for the life of the process, at most [`MAX_KEPT`] ids in all and
//! [`MAX_KEPT_PER_CALLER`] of one caller's, so that no caller's runs push another's out.

use super::SeqOutcome;
use seq_exec::engine::RunReport;
use seq_exec::error::{Reason, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The parameter's name.
pub const FIELD: &str = "run_id";

/// The longest run id, in bytes.
pub const MAX_LEN: usize = 128;

/// How many run ids a server without a durable engine keeps; past it, the oldest finished run's
/// id of the caller that holds the most is forgotten first.
pub const MAX_KEPT: usize = 10_000;

/// How many of one caller's run ids a server without a durable engine keeps; past it, that
/// caller's oldest finished run's id is forgotten first.
pub const MAX_KEPT_PER_CALLER: usize = 1_000;

/// Whether `id` is a run id: 1 to [`MAX_LEN`] ASCII letters, digits, `-`, `_` and `.`, not
/// starting with `.` (it is a URL path segment and a key, and appears in messages as is).
pub fn check(id: &str) -> Result<(), ToolError> {
    let well_formed = !id.is_empty()
        && id.len() <= MAX_LEN
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if well_formed {
        return Ok(());
    }
    Err(ToolError::new(
        Reason::ArgError,
        format!(
            "`run_id` must be 1 to {MAX_LEN} ASCII letters, digits, `-`, `_` or `.`, not \
             starting with `.`"
        ),
    )
    .with_field(FIELD)
    .with_hint("pass an id such as `deploy-2026-12-07-1`, new for each run you mean to make"))
}

/// What a run with a run id was submitted with, kept to be compared on attach.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    pub caller: String,
    pub sequence: String,
    /// The SHA-256 (hex) of the arguments written canonically (members sorted by key).
    pub args: String,
}

impl Submission {
    pub fn of(caller: &str, sequence: &str, args: &Map<String, Value>) -> Submission {
        let mut hasher = Sha256::new();
        canonical(args, &mut hasher);
        let digest = hasher.finalize();
        let mut hex = String::with_capacity(2 * digest.len());
        for byte in digest.iter() {
            hex.push_str(&format!("{byte:02x}"));
        }
        Submission {
            caller: caller.to_owned(),
            sequence: sequence.to_owned(),
            args: hex,
        }
    }

    /// Whether this request may attach to run `id`, submitted as `first`: the error names what
    /// differs (another caller's sequence and arguments are not told).
    pub fn attach_to(&self, id: &str, first: &Submission) -> Result<(), ToolError> {
        let differs = if self.caller != first.caller {
            "was submitted by another caller".to_owned()
        } else if self.sequence != first.sequence {
            format!(
                "runs sequence `{}`, not `{}`",
                first.sequence, self.sequence
            )
        } else if self.args != first.args {
            "was submitted with other arguments".to_owned()
        } else {
            return Ok(());
        };
        Err(ToolError::new(
            Reason::ArgError,
            format!("run `{id}` {differs}: a `run_id` names one run"),
        )
        .with_field(FIELD)
        .with_hint(
            "to get that run back, call again exactly as it was submitted; to make another run, \
             pass a new `run_id`",
        ))
    }

    /// The refusal for a run under `id` that kept no submission (made before runs kept them):
    /// nothing shows that it is the caller's.
    pub fn unrecorded(id: &str) -> ToolError {
        ToolError::new(
            Reason::ArgError,
            format!("run `{id}` keeps no record of how it was submitted: a `run_id` names one run"),
        )
        .with_field(FIELD)
        .with_hint("pass a new `run_id`")
    }
}

/// Feeds `args` to `hasher` as JSON with every object's members sorted by key, without
/// recursion (arguments may nest deeply).
fn canonical(args: &Map<String, Value>, hasher: &mut Sha256) {
    enum Next<'a> {
        Value(&'a Value),
        Object(&'a Map<String, Value>),
        Key(&'a str),
        Text(&'static str),
    }
    let mut stack = vec![Next::Object(args)];
    while let Some(next) = stack.pop() {
        match next {
            Next::Text(text) => hasher.update(text.as_bytes()),
            // A string or a scalar written by serde_json cannot fail.
            Next::Key(key) => hasher.update(serde_json::to_vec(key).unwrap_or_default()),
            Next::Object(members) => {
                let mut sorted: Vec<_> = members.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                stack.push(Next::Text("}"));
                for (i, (key, value)) in sorted.into_iter().enumerate().rev() {
                    stack.push(Next::Value(value));
                    stack.push(Next::Text(":"));
                    stack.push(Next::Key(key));
                    if i > 0 {
                        stack.push(Next::Text(","));
                    }
                }
                stack.push(Next::Text("{"));
            }
            Next::Value(Value::Object(members)) => stack.push(Next::Object(members)),
            Next::Value(Value::Array(items)) => {
                stack.push(Next::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Next::Value(item));
                    if i > 0 {
                        stack.push(Next::Text(","));
                    }
                }
                stack.push(Next::Text("["));
            }
            Next::Value(scalar) => hasher.update(serde_json::to_vec(scalar).unwrap_or_default()),
        }
    }
}

/// How a run kept under an id ended: what `seq_run` answered.
#[derive(Clone, Debug)]
pub(crate) struct Ended {
    result: Result<Value, ToolError>,
    report: Option<RunReport>,
}

impl Ended {
    fn outcome(&self) -> SeqOutcome {
        SeqOutcome {
            result: self.result.clone(),
            diagnostics: Vec::new(),
            report: self.report.clone(),
        }
    }
}

/// A run's end, once it has one.
type Ending = watch::Receiver<Option<Arc<Ended>>>;

/// The runs of this process named by a run id, for the life of the process: at most `per_caller`
/// ids of one caller and `max` in all. To make room, the caller's own oldest finished run is
/// forgotten first; past `max`, the oldest finished run of the caller that holds the most, so a
/// caller within its fair share loses nothing to another's many runs. With every run it could
/// forget still running, a new id is refused.
#[derive(Debug)]
pub(crate) struct RunIds {
    max: usize,
    per_caller: usize,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    runs: HashMap<String, Entry>,
    /// Each caller's ids, running and finished, and its finished runs' ids, oldest first.
    callers: HashMap<String, Held>,
    /// Tells a claim's entry from a later one under the same id.
    generation: u64,
}

#[derive(Debug, Default)]
struct Held {
    ids: usize,
    finished: VecDeque<String>,
}

impl Kept {
    /// Forgets `caller`'s oldest finished run; `false` when it has none.
    fn forget_oldest_of(&mut self, caller: &str) -> bool {
        let Some(held) = self.callers.get_mut(caller) else {
            return false;
        };
        let Some(oldest) = held.finished.pop_front() else {
            return false;
        };
        self.runs.remove(&oldest);
        self.release(caller);
        true
    }

    /// The caller that holds the most ids with a finished run among them.
    fn largest_with_finished(&self) -> Option<String> {
        self.callers
            .iter()
            .filter(|(_, held)| !held.finished.is_empty())
            .max_by_key(|(_, held)| held.ids)
            .map(|(caller, _)| caller.clone())
    }

    fn release(&mut self, caller: &str) {
        if let Some(held) = self.callers.get_mut(caller) {
            held.ids = held.ids.saturating_sub(1);
            if held.ids == 0 {
                self.callers.remove(caller);
            }
        }
    }
}

#[derive(Debug)]
struct Entry {
    submission: Submission,
    generation: u64,
    ending: Ending,
}

/// What a run id names here.
pub(crate) enum Claimed {
    /// A run: wait for its end.
    Attach(Ending),
    /// Nothing yet: the caller runs it and says how it ended.
    Run(Claim),
}

impl RunIds {
    /// At most `max` ids in all, and [`MAX_KEPT_PER_CALLER`] of one caller's.
    pub(crate) fn new(max: usize) -> RunIds {
        RunIds {
            max,
            per_caller: max.min(MAX_KEPT_PER_CALLER),
            kept: Mutex::new(Kept::default()),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The run kept under `id`, if any, once `submission` may attach to it.
    pub(crate) fn find(
        &self,
        id: &str,
        submission: &Submission,
    ) -> Result<Option<Ending>, ToolError> {
        let kept = self.kept();
        let Some(entry) = kept.runs.get(id) else {
            return Ok(None);
        };
        submission.attach_to(id, &entry.submission)?;
        Ok(Some(entry.ending.clone()))
    }

    /// The run kept under `id`, or the right to make it.
    pub(crate) fn claim(
        self: &Arc<Self>,
        id: &str,
        submission: &Submission,
    ) -> Result<Claimed, ToolError> {
        let mut kept = self.kept();
        if let Some(entry) = kept.runs.get(id) {
            submission.attach_to(id, &entry.submission)?;
            return Ok(Claimed::Attach(entry.ending.clone()));
        }
        let caller = submission.caller.as_str();
        let mine = kept.callers.get(caller).map_or(0, |held| held.ids);
        if mine >= self.per_caller && !kept.forget_oldest_of(caller) {
            return Err(full(format!(
                "{mine} of your runs with a `run_id` are under way here, as many as this server \
                 keeps for one caller"
            )));
        }
        if kept.runs.len() >= self.max {
            let forgotten = kept
                .largest_with_finished()
                .is_some_and(|largest| kept.forget_oldest_of(&largest));
            if !forgotten {
                return Err(full(format!(
                    "{} runs with a `run_id` are under way here, as many as this server keeps",
                    self.max
                )));
            }
        }
        kept.generation += 1;
        let generation = kept.generation;
        let (sender, ending) = watch::channel(None);
        kept.callers.entry(caller.to_owned()).or_default().ids += 1;
        kept.runs.insert(
            id.to_owned(),
            Entry {
                submission: submission.clone(),
                generation,
                ending,
            },
        );
        Ok(Claimed::Run(Claim {
            ids: Arc::clone(self),
            id: id.to_owned(),
            generation,
            sender: Some(sender),
        }))
    }
}

/// The right to make the run kept under an id. Dropped before [`Claim::ended`] (its request
/// went away before the run could start or end), the id is forgotten and those waiting told.
pub(crate) struct Claim {
    ids: Arc<RunIds>,
    id: String,
    generation: u64,
    sender: Option<watch::Sender<Option<Arc<Ended>>>>,
}

impl Claim {
    /// The run ended with `outcome`: kept, and told to those waiting.
    pub(crate) fn ended(mut self, outcome: &SeqOutcome) {
        let ended = Arc::new(Ended {
            result: outcome.result.clone(),
            report: outcome.report.clone(),
        });
        if let Some(sender) = self.sender.take() {
            sender.send_replace(Some(ended));
        }
        let mut kept = self.ids.kept();
        let caller = kept
            .runs
            .get(&self.id)
            .filter(|entry| entry.generation == self.generation)
            .map(|entry| entry.submission.caller.clone());
        if let Some(caller) = caller {
            kept.callers
                .entry(caller)
                .or_default()
                .finished
                .push_back(self.id.clone());
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.sender.is_none() {
            return;
        }
        let mut kept = self.ids.kept();
        if kept
            .runs
            .get(&self.id)
            .is_some_and(|entry| entry.generation == self.generation)
            && let Some(entry) = kept.runs.remove(&self.id)
        {
            kept.release(&entry.submission.caller);
        }
    }
}

/// The refusal of a new run id while every kept one is still running.
fn full(message: String) -> ToolError {
    ToolError::new(Reason::Failed, message)
        .with_field(FIELD)
        .with_hint("call again once one of them has ended")
}

/// The answer of run `id` once it ends; told to stop waiting (`cancel`), an error saying the
/// run goes on.
pub(crate) async fn wait(
    mut ending: Ending,
    id: &str,
    cancel: Option<&seq_exec::engine::CancellationToken>,
) -> SeqOutcome {
    let never = seq_exec::engine::CancellationToken::new();
    let cancel = cancel.unwrap_or(&never);
    loop {
        if let Some(ended) = ending.borrow_and_update().as_ref() {
            return ended.outcome();
        }
        tokio::select! {
            changed = ending.changed() => {
                if changed.is_err() && ending.borrow().is_none() {
                    return SeqOutcome::of(Err(ToolError::new(
                        Reason::Failed,
                        format!("run `{id}` stopped before it had a report: the request that made it went away"),
                    )
                    .with_field(FIELD)
                    .with_hint("call again with the same `run_id` to make the run")));
                }
            }
            () = cancel.cancelled() => return SeqOutcome::of(Err(stopped_waiting(id))),
        }
    }
}

/// The answer of a request that attached to run `id` and was cancelled: it stops waiting, the
/// run (its first request's) goes on.
pub(crate) fn stopped_waiting(id: &str) -> ToolError {
    ToolError::new(
        Reason::Cancelled,
        format!("stopped waiting for run `{id}`, which goes on"),
    )
    .with_field(FIELD)
    .with_hint("call again with the same `run_id` to get its report")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests may unwrap")]

    use super::*;

    fn ended(ids: &Arc<RunIds>, id: &str, submission: &Submission) {
        let Claimed::Run(claim) = ids.claim(id, submission).unwrap() else {
            panic!("`{id}` was kept already");
        };
        claim.ended(&SeqOutcome::of(Ok(Value::from(id))));
    }

    #[test]
    fn the_oldest_finished_id_is_forgotten_first_and_none_while_all_run() {
        let ids = Arc::new(RunIds::new(2));
        let mine = Submission::of("tester", "hello", &Map::new());
        ended(&ids, "a", &mine);
        ended(&ids, "b", &mine);
        ended(&ids, "c", &mine);
        assert!(ids.find("a", &mine).unwrap().is_none());
        assert!(ids.find("b", &mine).unwrap().is_some());
        // Two running: a third is refused until one ends.
        let ids = Arc::new(RunIds::new(2));
        let running: Vec<_> = ["x", "y"]
            .iter()
            .map(|id| ids.claim(id, &mine).unwrap())
            .collect();
        let refused = ids.claim("z", &mine).err().unwrap();
        assert_eq!(refused.field.as_deref(), Some(FIELD));
        // A claim dropped before its run ended forgets its id.
        drop(running);
        assert!(ids.find("x", &mine).unwrap().is_none());
        assert!(matches!(ids.claim("z", &mine), Ok(Claimed::Run(_))));
    }

    #[test]
    fn a_caller_with_many_runs_forgets_its_own_before_anothers() {
        let ids = Arc::new(RunIds {
            max: 4,
            per_caller: 3,
            kept: Mutex::new(Kept::default()),
        });
        let quiet = Submission::of("quiet", "hello", &Map::new());
        let busy = Submission::of("busy", "hello", &Map::new());
        ended(&ids, "q1", &quiet);
        for i in 0..20 {
            ended(&ids, &format!("b{i}"), &busy);
        }
        // The busy caller's share is 3: its oldest went, the quiet caller's one stays.
        assert!(ids.find("q1", &quiet).unwrap().is_some());
        assert!(ids.find("b16", &busy).unwrap().is_none());
        assert!(ids.find("b19", &busy).unwrap().is_some());
        // All full (4): the caller holding the most gives room.
        ended(&ids, "q2", &quiet);
        assert!(ids.find("q1", &quiet).unwrap().is_some());
        assert!(ids.find("b17", &busy).unwrap().is_none());
        // Three of one caller's running: its fourth is refused, another caller's is not.
        let ids = Arc::new(RunIds {
            max: 10,
            per_caller: 3,
            kept: Mutex::new(Kept::default()),
        });
        let running: Vec<_> = ["x", "y", "z"]
            .iter()
            .map(|id| ids.claim(id, &busy).unwrap())
            .collect();
        assert!(ids.claim("w", &busy).is_err());
        assert!(matches!(ids.claim("v", &quiet), Ok(Claimed::Run(_))));
        drop(running);
        assert!(matches!(ids.claim("w", &busy), Ok(Claimed::Run(_))));
    }

    #[test]
    fn the_digest_ignores_the_order_of_members() {
        let a: Map<String, Value> =
            serde_json::from_str(r#"{"x": {"p": 1, "q": [1, {"b": 2, "a": 3}]}, "y": "s"}"#)
                .unwrap();
        let b: Map<String, Value> =
            serde_json::from_str(r#"{"y": "s", "x": {"q": [1, {"a": 3, "b": 2}], "p": 1}}"#)
                .unwrap();
        let c: Map<String, Value> =
            serde_json::from_str(r#"{"y": "s", "x": {"q": [{"a": 3, "b": 2}, 1], "p": 1}}"#)
                .unwrap();
        let of = |m| Submission::of("c", "s", m).args;
        assert_eq!(of(&a), of(&b));
        assert_ne!(of(&a), of(&c));
    }
}
