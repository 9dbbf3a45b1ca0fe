//! `seq_run`, `seq_call`, `seq_when_call` made directly, outside any sequence.

use super::findings::{self, Finding, Origin};
use super::run_id::{self, Claimed, Submission};
use super::{RemoteRun, SeqOutcome, SeqTools, StorageTools, storage_error};
use seq_catalog::SEQ_WHEN_CALL;
use seq_catalog::calls::{ELSE, ELSE_ARGS};
use seq_exec::builtin::args;
use seq_exec::engine::{CancellationToken, GroupStatus, RunReport, RunRequest};
use seq_exec::error::{Reason, ToolError};
use seq_exec::host::Caller;
use seq_store::storage::{self, StorageError};
use seq_syntax::ast::Sequence;
use seq_syntax::names::CallTarget;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

impl SeqTools {
    pub(super) async fn run(&self, args: &Value, request: RunRequest<'_>) -> SeqOutcome {
        let caller = request.caller;
        let name = match args::string(args, "name") {
            Ok(name) => name,
            Err(error) => return SeqOutcome::of(Err(error)),
        };
        if let CallTarget::Sequence(bare) = CallTarget::parse(name) {
            return SeqOutcome::of(Err(ToolError::new(
                Reason::ArgError,
                format!("`seq_run` takes a sequence's bare name, not `{name}`"),
            )
            .with_field("name")
            .with_hint(format!("pass `{bare}`"))));
        }
        let run_args = match args::optional_object(args, "args") {
            Ok(found) => found.cloned().unwrap_or_default(),
            Err(error) => return SeqOutcome::of(Err(error)),
        };
        let id = match args::optional_string(args, run_id::FIELD) {
            Ok(id) => id,
            Err(error) => return SeqOutcome::of(Err(error)),
        };
        let Some(id) = id else {
            return self.run_named(name, run_args, request, None).await;
        };
        if let Err(error) = run_id::check(id) {
            return SeqOutcome::of(Err(error));
        }
        let submission = Submission::of(&caller.id, name, &run_args);
        // A run already made under the id is answered whatever the store holds now.
        match &self.remote {
            Some(remote) => {
                let attached = remote.attach(id, &submission, request.observer);
                let never = CancellationToken::new();
                let cancel = request.cancel.unwrap_or(&never);
                let attached = tokio::select! {
                    attached = attached => attached,
                    // Stops the wait only: the run is its first request's.
                    () = cancel.cancelled() => Err(run_id::stopped_waiting(id)),
                };
                match attached {
                    Ok(Some(report)) => return answer(name, report),
                    Ok(None) => {}
                    Err(error) => return SeqOutcome::of(Err(error)),
                }
            }
            None => match self.run_ids.find(id, &submission) {
                Ok(Some(ending)) => return run_id::wait(ending, id, request.cancel).await,
                Ok(None) => {}
                Err(error) => return SeqOutcome::of(Err(error)),
            },
        }
        self.run_named(name, run_args, request, Some((id, &submission)))
            .await
    }

    /// Runs the stored sequence `name`, under the run id `named` gives if any.
    async fn run_named(
        &self,
        name: &str,
        run_args: Map<String, Value>,
        request: RunRequest<'_>,
        named: Option<(&str, &Submission)>,
    ) -> SeqOutcome {
        let caller = request.caller;
        // Storage blocks (files, or a durable engine's state): on the blocking pool.
        let tools = Arc::clone(&self.storage_tools);
        let owned = name.to_owned();
        let loaded = tokio::task::spawn_blocking(move || load_checked(&tools, &owned))
            .await
            .unwrap_or_else(|error| {
                Err(Box::new(SeqOutcome::of(Err(ToolError::new(
                    Reason::Failed,
                    format!("reading the stored sequence did not complete: {error}"),
                )))))
            });
        let Loaded {
            sequence,
            owner,
            stored,
            owners,
        } = match loaded {
            Ok(loaded) => loaded,
            Err(refused) => return *refused,
        };
        let report = match &self.remote {
            Some(remote) => {
                // The run's tools are authorized where it runs, on a worker that does not
                // know this server's policy: every tool it can reach is fixed now (the stored
                // sequences travel with it), so the policy is asked of them all before.
                if let Some(refused) = self.unreachable_tools(name, &sequence, &stored, caller) {
                    return refused;
                }
                let ids = std::iter::once(caller.id.as_str())
                    .chain(owner.as_deref())
                    .chain(owners.values().map(String::as_str));
                let run = RemoteRun {
                    sequence: &sequence,
                    owner: owner.as_deref(),
                    policy: self.storage_tools.authorizer().policy().effective_for(ids),
                    // The durable run carries its own copy.
                    sequences: stored.iter().map(|s| Sequence::clone(s)).collect(),
                    owners,
                    args: run_args,
                    caller,
                    traceparent: request.traceparent,
                    observer: request.observer,
                    run_id: named,
                };
                let never = CancellationToken::new();
                match remote.run(run, request.cancel.unwrap_or(&never)).await {
                    Ok(report) => report,
                    Err(error) => return SeqOutcome::of(Err(error)),
                }
            }
            None => {
                let claim =
                    match named.map(|(id, submission)| (id, self.run_ids.claim(id, submission))) {
                        None => None,
                        Some((_, Err(error))) => return SeqOutcome::of(Err(error)),
                        Some((id, Ok(Claimed::Attach(ending)))) => {
                            return run_id::wait(ending, id, request.cancel).await;
                        }
                        Some((_, Ok(Claimed::Run(claim)))) => Some(claim),
                    };
                let report = self
                    .engine
                    .run(&sequence, run_args, request.owner(owner.as_deref()))
                    .await;
                let outcome = answer(name, report);
                if let Some(claim) = claim {
                    claim.ended(&outcome);
                }
                return outcome;
            }
        };
        answer(name, report)
    }

    /// The refusal of a remote run of the stored `name` that reaches tools `caller` may not use
    /// (E0901 on each item that does); `None` when it reaches none.
    fn unreachable_tools(
        &self,
        name: &str,
        sequence: &Sequence,
        stored: &[Arc<Sequence>],
        caller: &Caller,
    ) -> Option<SeqOutcome> {
        let authorizer = self.storage_tools.authorizer();
        let refused = super::reach::unauthorized(sequence, stored, authorizer, caller);
        if refused.is_empty() {
            return None;
        }
        let origin = Origin::Stored(name);
        let found: Vec<Finding> = refused.iter().map(|d| Finding::new(d, &origin)).collect();
        let error = ToolError::new(
            Reason::Unauthorized,
            format!(
                "stored sequence `{name}` is not run: {}",
                findings::render(&found)
            ),
        )
        .with_field("name")
        .with_hint("ask for access to the tools listed, or run a sequence that uses only tools you may use");
        Some(SeqOutcome {
            result: Err(error),
            diagnostics: found,
            report: None,
        })
    }

    /// `seq_call` / `seq_when_call` from outside any sequence: only `#name` has a meaning.
    pub(super) async fn call_target(
        &self,
        tool: &str,
        args: &Value,
        request: RunRequest<'_>,
    ) -> Result<Value, ToolError> {
        let sequence_only = |field: &str| -> Result<&str, ToolError> {
            let target = args::string(args, field)?;
            if CallTarget::parse(target).is_sequence() {
                return Ok(target);
            }
            Err(ToolError::new(
                Reason::ArgError,
                format!("`{target}` names a group, and a call made outside a sequence has no sequence to find it in"),
            )
            .with_field(field)
            .with_hint("call a stored sequence as `#name`, or run one with `seq_run`"))
        };
        let target = sequence_only("target")?;
        let call_args: Map<String, Value> = args::optional_object(args, "args")?
            .cloned()
            .unwrap_or_default();
        if tool == SEQ_WHEN_CALL {
            let when = args::string(args, "when")?;
            let otherwise = match args::optional_string(args, ELSE)? {
                None => None,
                Some(_) => {
                    let else_args = match args::optional_object(args, ELSE_ARGS)? {
                        Some(else_args) => else_args.clone(),
                        None => call_args.clone(),
                    };
                    Some((sequence_only(ELSE)?, else_args))
                }
            };
            self.engine
                .when_call(None, target, call_args, when, otherwise, request)
                .await
        } else {
            self.engine.call(None, target, call_args, request).await
        }
    }
}

/// `seq_run`'s answer for the run of `name` that reported `report`.
fn answer(name: &str, report: RunReport) -> SeqOutcome {
    let result = if report.ok {
        serde_json::to_value(&report).map_err(|error| {
            ToolError::new(
                Reason::Failed,
                format!("the report cannot be written: {error}"),
            )
        })
    } else {
        Err(run_failure(name, &report))
    };
    SeqOutcome {
        result,
        diagnostics: Vec::new(),
        report: Some(report),
    }
}

/// A stored sequence to run and the stored ones beside it, with their owners.
struct Loaded {
    sequence: Sequence,
    owner: Option<String>,
    stored: Vec<Arc<Sequence>>,
    owners: BTreeMap<String, String>,
}

/// The stored sequence `name` and the readable stored sequences beside it, `name` checked
/// again before it runs, as `seqc run '#name'` does: what it calls may have changed since it
/// was stored, and the engine runs only sequences without errors. On refusal, the outcome to
/// answer (a missing sequence, or its errors as findings).
fn load_checked(tools: &StorageTools, name: &str) -> Result<Loaded, Box<SeqOutcome>> {
    let refused = |error| Box::new(SeqOutcome::of(Err(storage_error(error))));
    let (sequence, owner) = match tools.storage().get(name) {
        Ok(Some(stored)) => (Arc::unwrap_or_clone(stored.sequence), stored.owner),
        Ok(None) => {
            return Err(refused(StorageError::NotFound {
                name: name.to_owned(),
            }));
        }
        Err(error) => return Err(refused(error)),
    };
    let mut owners = BTreeMap::new();
    let stored: Vec<Arc<Sequence>> = storage::readable_stored(tools.storage())
        .map_err(refused)?
        .into_iter()
        .map(|stored| {
            if let Some(owner) = stored.owner {
                owners.insert(stored.sequence.name.value.to_string(), owner);
            }
            stored.sequence
        })
        .collect();
    let admission = seq_check::admit_stored(sequence, &stored, &tools.config.catalog.current());
    let origin = Origin::Stored(name);
    let errors: Vec<Finding> = admission
        .errors()
        .map(|d| Finding::new(d, &origin))
        .collect();
    if let Some(sequence) = admission.sequence.filter(|_| errors.is_empty()) {
        return Ok(Loaded {
            sequence,
            owner,
            stored,
            owners,
        });
    }
    let error = ToolError::new(
        Reason::Failed,
        format!(
            "stored sequence `{name}` is not run: {}",
            findings::render(&errors)
        ),
    )
    .with_field("name")
    .with_hint(
        "fix the errors listed and store the sequence again with `seq_create` (`replace: true`)",
    );
    Err(Box::new(SeqOutcome {
        result: Err(error),
        diagnostics: errors,
        report: None,
    }))
}

/// The error of a run that did not succeed: the run's own error when it could not start, else
/// `failed` naming what failed; the report, for the whole story, goes beside it.
fn run_failure(name: &str, report: &RunReport) -> ToolError {
    if let Some(error) = &report.error {
        return error.clone();
    }
    let mut failures = Vec::new();
    for placed in report.placed_groups() {
        let group = placed.at.group;
        // A called group that did not tolerate its failure failed its call item: said there.
        if placed.at.depth > 0
            && matches!(group.status(), GroupStatus::Failed | GroupStatus::Cancelled)
        {
            continue;
        }
        let first = group
            .items()
            .iter()
            .enumerate()
            .filter(|(_, item)| placed.tells(item))
            .find_map(|(i, item)| item.error.as_ref().map(|e| (i, &item.tool, e)));
        let why = match (group.error(), first) {
            // "failed: failed: …" says it twice.
            (Some(error), _) if error.reason == Reason::Failed => {
                error.detail.clone().unwrap_or_else(|| error.to_string())
            }
            (Some(error), _) => error.to_string(),
            (None, Some((index, tool, error))) => format!("item {} `{tool}`: {error}", index + 1),
            (None, None) => continue,
        };
        failures.push(format!(
            "{} {}: {why}",
            placed.described(),
            group.status().predicate()
        ));
    }
    // The report itself travels beside the error (`Outcome::report`), structured, once.
    ToolError::new(
        Reason::Failed,
        format!(
            "sequence `{name}` did not succeed: {}",
            if failures.is_empty() {
                "no group reported why".to_owned()
            } else {
                failures.join("; ")
            }
        ),
    )
    .with_hint("read each failed item's error in the report; fix the cause and run again")
}
