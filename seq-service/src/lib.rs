//! The service layer, the one front door of seqc's service: the six `seq_*` tools as handlers
//! over a storage (seq-store), the checker's admission (`seq_check::admit`) and the engine
//! (`seq_exec::Engine`), so that an agent runtime can offer them. Every door that stores or runs
//! a sequence (the command line, `seqc mcp` on stdio and over HTTP, the durable worker) goes
//! through here; seq-store below it is storage only.
//!
//! - [`StorageTools`]: `seq_create`, `seq_list`, `seq_delete` — the storage and the checker, no
//!   engine. They are also reachable from inside a sequence through a [`SeqHost`].
//! - [`SeqTools`]: all six, with an [`Engine`] for `seq_run`, `seq_call` and `seq_when_call`.
//! - [`SeqHost`]: one [`ToolHost`] offering the seq tools in front of an inner host (the
//!   embedded one, say).
//!
//! Results: [`SeqTools::call`] answers a [`SeqOutcome`]: the result as every tool gives it
//! (`Result<Value, ToolError>`) and what a richer channel (MCP's structured content) can carry
//! beside it: the checker's findings of `seq_create` and the full run report of `seq_run`, also
//! when the call failed. A sequence refused for its errors is an `arg_error` whose `field` is `groups` or
//! `file` (the argument that holds the mistakes; not retryable: the same sequence fails the
//! same way) and whose `detail` counts the errors; the findings go beside it, structured, and
//! [`finding_lines`] writes them one a line, as `error E0502 at 3:14: message (help: ...)` (see
//! [`Finding`] for where positions come from). [`SeqOutcome::into_result`], for a channel without
//! room for them, appends those lines to the `detail`.
//!
//! A run that does not succeed is a failed call (an honest success flag): `seq_run`
//! answers the report's own error when the run could not start, else `failed` with a summary
//! and the compact report in `detail`.
//!
//! The engine's host has to offer `seq_create` & co. to sequences, and the engine is part of
//! `SeqTools`; to avoid a cycle of `Arc`s the engine's host is a storage-only [`SeqHost`]
//! (sequences never send `seq_run`/`seq_call` to a host: the engine runs them itself).
//! [`SeqTools::assemble`] wires it all.

mod create;
mod findings;
mod host;
mod reach;
mod run;
pub mod run_id;

pub use findings::{Finding, lines as finding_lines};
pub use host::SeqHost;
pub use reach::unauthorized;
pub use run_id::Submission;

use seq_catalog::{
    ArgReason, SEQ_CALL, SEQ_CREATE, SEQ_DELETE, SEQ_LIST, SEQ_RUN, SEQ_TOOLS, SEQ_WHEN_CALL,
};
use seq_catalog::{Catalog, ToolDef};
use seq_exec::Authorizer;
use seq_exec::builtin::args;
use seq_exec::engine::CancellationToken;
use seq_exec::engine::{Engine, RunReport, RunRequest};
use seq_exec::error::{Reason, ToolError};
use seq_exec::host::{BoxFuture, Caller, ToolHost};
use seq_exec::policy::{Policy, STORE_ADMIN};
use seq_store::quota::Quotas;
use seq_store::storage::{self, SequenceStorage, Storage, StorageError};
use seq_syntax::ast::Sequence;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// What the seq tools work with.
#[derive(Clone, Debug)]
pub struct SeqConfig {
    /// Where the sequences are kept: a data directory, or a durable engine.
    pub storage: Arc<dyn SequenceStorage>,
    /// Where `seq_create(file=...)` may read from (the escape check of the root applies).
    pub root: PathBuf,
    /// What `seq_create` checks against: the built-in catalog plus any other host's tools.
    pub catalog: CatalogSource,
    /// Who may use what: the seq tools themselves, what `seq_create` stores, and (given to
    /// the engine [`SeqTools::assemble`] builds) every dispatch of the runs.
    pub authorizer: Authorizer,
    /// What each caller may keep stored.
    pub quotas: Quotas,
}

impl SeqConfig {
    /// The built-in catalog, a policy that allows everything, the sequences in `storage`'s data
    /// directory.
    pub fn new(storage: Storage, root: impl Into<PathBuf>) -> SeqConfig {
        SeqConfig {
            storage: Arc::new(storage),
            root: root.into(),
            catalog: Catalog::builtin().into(),
            authorizer: Authorizer::allow_all(),
            quotas: Quotas::default(),
        }
    }
}

/// Where the seq tools find the catalog a sequence is checked against: one fixed when they were
/// made, or one read anew at each admission (a server whose downstream tools change, told by
/// `tools/list_changed`), so that what is admitted and what the descriptions list agree.
#[derive(Clone)]
pub struct CatalogSource(Arc<dyn Fn() -> Arc<Catalog> + Send + Sync>);

impl CatalogSource {
    /// A catalog read anew each time from `read`.
    pub fn live(read: impl Fn() -> Arc<Catalog> + Send + Sync + 'static) -> CatalogSource {
        CatalogSource(Arc::new(read))
    }

    /// The catalog as it is now.
    pub fn current(&self) -> Arc<Catalog> {
        (self.0)()
    }
}

impl From<Catalog> for CatalogSource {
    fn from(catalog: Catalog) -> CatalogSource {
        let catalog = Arc::new(catalog);
        CatalogSource::live(move || Arc::clone(&catalog))
    }
}

impl std::fmt::Debug for CatalogSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CatalogSource").finish_non_exhaustive()
    }
}

/// A tool's answer with everything a structured channel can carry besides.
#[derive(Debug)]
pub struct SeqOutcome {
    pub result: Result<Value, ToolError>,
    /// `seq_create`: the errors and warnings on refusal, the warnings on success.
    pub diagnostics: Vec<Finding>,
    /// `seq_run`: the report, whether the run succeeded or not.
    pub report: Option<RunReport>,
}

impl SeqOutcome {
    fn of(result: Result<Value, ToolError>) -> SeqOutcome {
        SeqOutcome {
            result,
            diagnostics: Vec::new(),
            report: None,
        }
    }

    /// The answer as every tool gives it, for a channel without room for findings: they go
    /// into the error's `detail`, one a line.
    pub fn into_result(self) -> Result<Value, ToolError> {
        let lines = findings::lines(&self.diagnostics);
        self.result.map_err(|mut error| {
            if !lines.is_empty() {
                error.detail = Some(error.detail.unwrap_or_default() + &lines);
            }
            error
        })
    }
}

/// The definitions of the six tools, from the catalog (their only source).
pub fn definitions() -> Vec<ToolDef> {
    SEQ_TOOLS
        .iter()
        .filter_map(|name| definition(name).map(|def| def.as_ref().clone()))
        .collect()
}

/// The definition of the seq tool `name`; `None` for any other name.
pub fn definition(name: &str) -> Option<&'static Arc<ToolDef>> {
    static DEFINITIONS: OnceLock<Vec<Arc<ToolDef>>> = OnceLock::new();
    DEFINITIONS
        .get_or_init(|| {
            let catalog = Catalog::builtin();
            SEQ_TOOLS
                .iter()
                .filter_map(|name| catalog.get(name))
                .map(|def| Arc::new(def.clone()))
                .collect()
        })
        .iter()
        .find(|def| def.name == name)
}

/// `seq_create`, `seq_list`, `seq_delete`.
#[derive(Debug)]
pub struct StorageTools {
    config: SeqConfig,
    /// `seq_create` checks against the whole storage and then writes: one at a time, so that two
    /// creations cannot each pass the check without the other (a cycle across both).
    lock: Mutex<()>,
}

impl StorageTools {
    pub fn new(config: SeqConfig) -> StorageTools {
        StorageTools {
            config,
            lock: Mutex::new(()),
        }
    }

    pub fn storage(&self) -> &dyn SequenceStorage {
        self.config.storage.as_ref()
    }

    pub fn authorizer(&self) -> &Authorizer {
        &self.config.authorizer
    }

    /// Whether `caller` holds the store administrator permission ([`STORE_ADMIN`]).
    pub fn is_store_admin(&self, caller: &Caller) -> bool {
        self.config.authorizer.policy().is_store_admin(caller)
    }

    /// Whether `name` is one of the three tools here.
    pub fn handles(name: &str) -> bool {
        matches!(name, SEQ_CREATE | SEQ_LIST | SEQ_DELETE)
    }

    /// Runs one of the three tools on behalf of `caller` (blocking file I/O: on tokio's
    /// blocking pool). `None` is the local user of the command line, who owns the data
    /// directory: no policy at create, no owner recorded or enforced.
    pub async fn call(
        self: &Arc<Self>,
        name: &str,
        args: Value,
        caller: Option<&Caller>,
    ) -> SeqOutcome {
        let tools = Arc::clone(self);
        let name = name.to_owned();
        let caller = caller.cloned();
        tokio::task::spawn_blocking(move || tools.call_blocking(&name, &args, caller.as_ref()))
            .await
            .unwrap_or_else(|error| {
                SeqOutcome::of(Err(ToolError::new(
                    Reason::Failed,
                    format!("the store operation did not complete: {error}"),
                )))
            })
    }

    /// [`StorageTools::call`] on the current thread.
    pub fn call_blocking(&self, name: &str, args: &Value, caller: Option<&Caller>) -> SeqOutcome {
        match name {
            SEQ_CREATE => create::create(self, args, caller),
            SEQ_LIST => SeqOutcome::of(self.list()),
            SEQ_DELETE => SeqOutcome::of(self.delete(args, caller)),
            other => SeqOutcome::of(Err(not_here(other))),
        }
    }

    fn list(&self) -> Result<Value, ToolError> {
        let listing = storage::list(self.storage()).map_err(storage_error)?;
        let mut rows: Vec<(String, Value)> = listing
            .sequences
            .iter()
            .map(|s| (s.name.clone(), json!(s)))
            .chain(listing.broken.iter().map(|b| {
                (
                    b.name.clone(),
                    json!({"name": b.name, "error": b.error.to_string()}),
                )
            }))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Value::Array(rows.into_iter().map(|(_, row)| row).collect()))
    }

    fn delete(&self, args: &Value, caller: Option<&Caller>) -> Result<Value, ToolError> {
        let name = args::string(args, "name")?;
        let _one_at_a_time = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(caller) = caller
            && self.storage().exists(name).map_err(storage_error)?
        {
            self.may_change(name, caller, "delete")?;
        }
        // Asked again by a storage that checks owners itself (one others reach directly).
        let admin = caller.is_some_and(|caller| self.is_store_admin(caller));
        self.storage()
            .delete(name, caller.map(|c| c.id.as_str()), admin)
            .map_err(storage_error)?;
        Ok(json!({"deleted": name}))
    }

    /// Whether `caller` may replace or delete (`what`) the stored sequence `name`: its owner
    /// may, a store administrator may; nobody else, and an ownerless one only an administrator.
    fn may_change(&self, name: &str, caller: &Caller, what: &str) -> Result<(), ToolError> {
        if self.is_store_admin(caller) {
            return Ok(());
        }
        // A file that cannot be read has no owner anyone can prove.
        let owner = self
            .storage()
            .get(name)
            .ok()
            .flatten()
            .and_then(|s| s.owner);
        if storage::may_change(owner.as_deref(), Some(&caller.id), false) {
            return Ok(());
        }
        let whose = match &owner {
            Some(owner) => format!("belongs to `{owner}`"),
            None => {
                "has no owner (it was stored from the command line, or before sequences had owners)"
                    .to_owned()
            }
        };
        Err(ToolError::new(
            Reason::Unauthorized,
            format!("`{name}` {whose}; caller `{}` may not {what} it", caller.id),
        )
        .with_field("name")
        .with_hint(format!(
            "choose another name, or ask for the store administrator permission (`{STORE_ADMIN}`)"
        )))
    }
}

/// Where `seq_run` runs its sequences when not in this process: a durable engine
/// (seq-restate's `Submitter`). The seq tools stay the same; only the run happens elsewhere.
pub trait Remote: std::fmt::Debug + Send + Sync {
    /// Runs `run`; its report, or why there is none. Cancelling `cancel` cancels the run,
    /// whose report then says so.
    fn run<'a>(
        &'a self,
        run: RemoteRun<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<RunReport, ToolError>>;

    /// The report of the run made here under `run_id` (waited for while it runs), once
    /// `submission` may attach to it ([`Submission::attach_to`]); `None` when there is none
    /// yet. `observer` is told what the run finishes meanwhile.
    fn attach<'a>(
        &'a self,
        run_id: &'a str,
        submission: &'a Submission,
        observer: Option<&'a dyn seq_exec::engine::Observer>,
    ) -> BoxFuture<'a, Result<Option<RunReport>, ToolError>> {
        let _ = (run_id, submission, observer);
        Box::pin(std::future::ready(Ok(None)))
    }
}

/// A run for a [`Remote`]: everything the place it runs needs, so that it looks nothing up.
pub struct RemoteRun<'a> {
    /// The checked sequence to run.
    pub sequence: &'a Sequence,
    /// Who stored it (`None`: ownerless).
    pub owner: Option<&'a str>,
    /// The readable stored sequences, read now, for its `#name` calls.
    pub sequences: Vec<Sequence>,
    /// Their owners, by sequence name (the ownerless ones left out).
    pub owners: BTreeMap<String, String>,
    pub args: Map<String, Value>,
    pub caller: &'a Caller,
    /// This server's policy for the caller and every owner above ([`Policy::effective_for`]):
    /// where the run goes, every dispatch is held to it as well as to that place's own bound.
    pub policy: Policy,
    /// The W3C `traceparent` of the request that asked for the run, if any: where the run
    /// goes, its spans are exported under it.
    pub traceparent: Option<&'a str>,
    /// Told of the run's items as they finish where it runs ([`Observer::item_finished`]),
    /// and of its groups ([`Observer::group_finished_elsewhere`]), as far as that place tells.
    ///
    /// [`Observer::item_finished`]: seq_exec::engine::Observer::item_finished
    /// [`Observer::group_finished_elsewhere`]: seq_exec::engine::Observer::group_finished_elsewhere
    pub observer: Option<&'a dyn seq_exec::engine::Observer>,
    /// The run's id, given by its caller (`seq_run`'s `run_id`), and what it is submitted with,
    /// to be compared by a later request under the same id; `None`: a fresh id.
    pub run_id: Option<(&'a str, &'a Submission)>,
}

impl std::fmt::Debug for RemoteRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteRun")
            .field("sequence", &self.sequence.name.value)
            .field("owner", &self.owner)
            .field("owners", &self.owners)
            .field("caller", &self.caller)
            .field("traceparent", &self.traceparent)
            .field("observed", &self.observer.is_some())
            .field("run_id", &self.run_id.map(|(id, _)| id))
            .finish_non_exhaustive()
    }
}

/// All six tools.
#[derive(Clone, Debug)]
pub struct SeqTools {
    storage_tools: Arc<StorageTools>,
    engine: Arc<Engine>,
    /// Where `seq_run` runs, when not on `engine`.
    remote: Option<Arc<dyn Remote>>,
    /// The runs made here under a `run_id` (not used with `remote`, which keeps its own).
    run_ids: Arc<run_id::RunIds>,
}

impl SeqTools {
    /// `engine` should run on a host that offers `storage_tools`' tools (a [`SeqHost`]) and read
    /// sequences from the same storage; [`SeqTools::assemble`] does that.
    pub fn new(engine: Arc<Engine>, storage_tools: Arc<StorageTools>) -> SeqTools {
        SeqTools {
            storage_tools,
            engine,
            remote: None,
            run_ids: Arc::new(run_id::RunIds::new(run_id::MAX_KEPT)),
        }
    }

    /// `seq_run` runs on `remote` instead of this process's engine. `seq_call` and
    /// `seq_when_call` made directly are then not offered: they would run here.
    pub fn with_remote(mut self, remote: Arc<dyn Remote>) -> SeqTools {
        self.remote = Some(remote);
        self
    }

    /// Whether `seq_run` runs elsewhere (a durable engine), which then reports its runs itself.
    pub fn runs_elsewhere(&self) -> bool {
        self.remote.is_some()
    }

    /// Whether the seq tool `name` is offered here (all six, unless runs are remote).
    pub fn offers(&self, name: &str) -> bool {
        definition(name).is_some() && !(self.remote.is_some() && Catalog::is_call(name))
    }

    /// The usual wiring: an engine on `SeqHost(storage tools, inner)` reading `config.storage`,
    /// set up further by `configure` (limits, an observer).
    pub fn assemble(
        inner: Arc<dyn ToolHost>,
        config: SeqConfig,
        configure: impl FnOnce(Engine) -> Engine,
    ) -> SeqTools {
        let sequences = config.storage.source();
        let authorizer = config.authorizer.clone();
        let storage_tools = Arc::new(StorageTools::new(config));
        let host = Arc::new(SeqHost::new(Arc::clone(&storage_tools), inner));
        let engine = Arc::new(configure(
            Engine::new(host, sequences).with_authorizer(authorizer),
        ));
        SeqTools {
            storage_tools,
            engine,
            remote: None,
            run_ids: Arc::new(run_id::RunIds::new(run_id::MAX_KEPT)),
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn storage_tools(&self) -> &Arc<StorageTools> {
        &self.storage_tools
    }

    /// A host offering all six tools in front of `inner`.
    pub fn host_for(&self, inner: Arc<dyn ToolHost>) -> SeqHost {
        SeqHost::new(Arc::clone(&self.storage_tools), inner).running(self.clone())
    }

    /// Runs seq tool `name` with `args` as `request` says: on behalf of its caller, and for
    /// `seq_run`, `seq_call` and `seq_when_call` with its cancellation, its observer (told as
    /// the run's groups and items start and finish, when it runs in process) and its trace
    /// context (taken along by a `seq_run` run elsewhere, so that its spans join that trace).
    /// The answer carries the findings and report beside the result (module comment);
    /// [`SeqOutcome::into_result`] folds them into the result for a channel without room for
    /// them. The seq tool itself is checked against the policy and its parameters first; the
    /// tools a run reaches are checked by the engine at every dispatch.
    pub async fn call(&self, name: &str, args: Value, request: RunRequest<'_>) -> SeqOutcome {
        if let Err(error) = self.admit(name, &args, request.caller) {
            return SeqOutcome::of(Err(error));
        }
        match name {
            SEQ_RUN => self.run(&args, request).await,
            SEQ_CALL | SEQ_WHEN_CALL => {
                SeqOutcome::of(self.call_target(name, &args, request).await)
            }
            other => {
                self.storage_tools
                    .call(other, args, Some(request.caller))
                    .await
            }
        }
    }

    fn admit(&self, name: &str, args: &Value, caller: &Caller) -> Result<(), ToolError> {
        let Some(definition) = definition(name) else {
            return Err(not_here(name));
        };
        if !self.offers(name) {
            return Err(ToolError::new(
                Reason::NotFound,
                format!(
                    "`{name}` is not offered here: runs here are durable, and a call made \
                     directly would run in this server instead"
                ),
            )
            .with_hint("run the stored sequence with `seq_run`"));
        }
        // Every right the call needs: `seq_call` of `#name` runs a stored sequence.
        let authorizer = self.storage_tools.authorizer();
        if let Some(right) = authorizer.missing(caller, name, args) {
            return Err(authorizer.refusal(caller, right));
        }
        definition.parameters.validate(args).map_err(|problem| {
            let field = problem.field.clone();
            let error = match problem.reason {
                ArgReason::Required => ToolError::new(
                    Reason::Required,
                    format!("`{name}` needs `{field}` ({})", problem.expected),
                )
                .with_hint(format!("pass `{field}`")),
                ArgReason::Type => ToolError::new(
                    Reason::Type,
                    format!("`{field}` of `{name}` must be {}", problem.expected),
                )
                .with_hint(format!("pass {} as `{field}`", problem.expected)),
                // The same answer as the engine's for a tool it calls.
                ArgReason::Unknown => ToolError::unknown_parameter(
                    name,
                    &field,
                    definition
                        .parameters
                        .properties
                        .iter()
                        .map(|(p, _)| p.as_str()),
                ),
            };
            if field.is_empty() {
                error
            } else {
                error.with_field(field)
            }
        })
    }
}

/// A storage error as the result contract says it: a name that cannot be, a name that is taken
/// or absent (`not_found`, as for a missing `#name`), or storage that cannot be read.
pub(crate) fn storage_error(error: StorageError) -> ToolError {
    let detail = error.to_string();
    match error {
        StorageError::InvalidName { .. } => ToolError::new(Reason::ArgError, detail)
            .with_field("name")
            .with_hint("use a name without `/`, `\\`, control or invisible characters, spaces at the ends or a leading `#`, at most 64 characters"),
        StorageError::Confusable { ref stored, .. } => {
            let hint = format!(
                "choose a name that cannot be mistaken for `{stored}`, or replace `{stored}` itself"
            );
            ToolError::new(Reason::ArgError, detail)
                .with_field("name")
                .with_hint(hint)
        }
        StorageError::Exists { .. } => ToolError::new(Reason::ArgError, detail)
            .with_field("name")
            .with_hint("pass `replace: true` to overwrite it, or choose another name"),
        StorageError::NotFound { .. } => ToolError::new(Reason::NotFound, detail)
            .with_field("name")
            .with_hint("`seq_list` shows the stored sequences"),
        StorageError::NotOwner { .. } => ToolError::new(Reason::Unauthorized, detail)
            .with_field("name")
            .with_hint(format!(
                "choose another name, or ask for the store administrator permission (`{STORE_ADMIN}`)"
            )),
        StorageError::Corrupt { .. } | StorageError::UnknownFormat { .. } => {
            ToolError::new(Reason::Failed, detail).with_field("name").with_hint(
                "create the sequence again with `seq_create` and `replace: true`, or delete it",
            )
        }
        StorageError::Io { .. } => {
            ToolError::new(Reason::Failed, detail)
                .with_hint("check that the data directory exists and is writable")
        }
        StorageError::OverQuota { .. } => ToolError::new(Reason::Failed, detail).with_hint(
            "delete stored sequences you no longer need (`seq_delete`), or ask whoever runs the \
             server for a larger quota (`quota` in the policy file)",
        ),
        StorageError::Unavailable { .. } => ToolError::new(Reason::Failed, detail)
            .with_hint("check that the server is up and a `seqc worker` is registered with it"),
    }
}

fn not_here(name: &str) -> ToolError {
    ToolError::new(
        Reason::NotFound,
        format!("`{name}` is not one of the seq tools here"),
    )
    .with_hint(format!("the seq tools are {}", SEQ_TOOLS.join(", ")))
}
