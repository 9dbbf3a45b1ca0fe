//! `seqc run`: check a sequence against the storage, run it on the embedded host with a live
//! view, and report.
//!
//! stdout carries what the sequence itself prints (`output_send__stdout`) and, with
//! `--format json`, the run report as the last line; the live view, the summary and warnings go
//! to stderr, so that `seqc run x | tool` sees only the sequence's output.

mod durable;
mod live;
mod summary;

use crate::files::reason;
use crate::host::{policy, root};
use crate::mcp::{McpArgs, Notices};
use crate::signals::{OnSignal, Runtime};
use crate::status::{Status, emit, trouble};
use crate::stored::{self, DataDirArg};
use clap::{Args, ValueEnum};
use seq_catalog::{Catalog, SEQ_RUN};
use seq_exec::Authorizer;
use seq_exec::builtin::{BuiltinHost, OutputSink, Stdout};
use seq_exec::engine::RunRequest;
use seq_exec::engine::{FinishedRun, RunRecorder as _};
use seq_exec::{Caller, Engine, Observer, SequenceSource, ToolHost};
use seq_mcp::{Combined, McpHost};
use seq_service::{SeqConfig, SeqHost, StorageTools};
use seq_store::storage::{SequenceStorage, Storage};
use seq_syntax::Diagnostic;
use seq_syntax::ast::Sequence;
use seq_syntax::names::CallTarget;
use serde_json::{Map, Value};
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The sequence to run: a sequence file, or `#name` for one stored in the data directory.
    /// A file is checked first, against the built-in catalog and the stored sequences; if it
    /// has errors they are printed and nothing runs.
    #[arg(value_name = "FILE|#name")]
    pub target: String,
    /// The run's arguments, a JSON object such as '{"who": "world"}'.
    #[arg(long, value_name = "JSON")]
    pub args: Option<String>,
    #[command(flatten)]
    pub data: DataDirArg,
    /// The directory the file tools are confined to and commands run in [default: the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// A catalog of other tool definitions to check against, as for `seqc check` (repeatable).
    /// Only the check sees them: the run has the embedded host's tools and the `--mcp`
    /// servers', and a call to any other is `not_found` (which the group's `missing` can skip
    /// or degrade).
    #[arg(long = "catalog", value_name = "FILE")]
    pub catalogs: Vec<PathBuf>,
    #[command(flatten)]
    pub mcp: McpArgs,
    /// `human`: a live view and a summary on stderr. `json`: the run report as one JSON line,
    /// last on stdout.
    #[arg(long, value_enum, default_value_t = RunFormat::Human)]
    pub format: RunFormat,
    /// The calling identity, carried into every tool call at every depth.
    #[arg(long, value_name = "ID", default_value = "cli")]
    pub caller: String,
    /// Let the caller use only the tools matching PATTERN, where `*` matches any run of
    /// characters (repeatable; default: every tool). The `seq_*` tools are tools too: allow
    /// `seq_*` for a sequence that calls others.
    #[arg(long = "allow", value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Refuse the tools matching PATTERN; deny wins over allow (repeatable).
    #[arg(long = "deny", value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// Run durably on Restate: submit the checked sequence to the ingress at this URL (such as
    /// http://127.0.0.1:8080), where `seqc worker`s run it, and wait for its report.
    #[arg(long, value_name = "INGRESS_URL")]
    pub restate: Option<String>,
    /// The durable run's id [default: a new one]: a run id submitted twice by the same caller
    /// with the same sequence and arguments runs once, and the second submission gets the first
    /// one's report; with anything else it is refused.
    #[arg(long, value_name = "ID", requires = "restate")]
    pub run_id: Option<String>,
    /// Also write the run's timeline to FILE.svg as it finishes (as `seqc timeline` draws a
    /// saved report).
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// A live view of groups and items, then a summary, on stderr.
    Human,
    /// The run report (what `seq_run` returns) as one compact JSON line, last on stdout.
    Json,
}

/// `traces`: where the run's spans go, when the environment asks for traces.
pub fn run(args: &RunArgs, traces: Option<Arc<seq_trace::Traces>>) -> Status {
    let run_args = match parse_args(args.args.as_deref()) {
        Ok(run_args) => run_args,
        Err(message) => return trouble(message),
    };
    let root = match root(args.root.as_deref()) {
        Ok(root) => root,
        Err(message) => return trouble(message),
    };
    let mut catalog = match crate::catalog::load(&args.catalogs) {
        Ok(catalog) => catalog,
        Err(errors) => {
            for error in errors {
                trouble(error);
            }
            return Status::Trouble;
        }
    };
    let runtime = match Runtime::start(OnSignal::Cancel("cancelling the run")) {
        Ok(runtime) => runtime,
        Err(status) => return status,
    };
    let policy = Arc::new(policy(&args.allow, &args.deny));
    // The servers' live tools join the catalog, so the check sees them as the run will.
    let mcp = match runtime.block_on(crate::mcp::connect(&args.mcp, Notices::Kept)) {
        Ok(mcp) => mcp,
        Err(status) => return runtime.finish(status),
    };
    // As every door: a pattern that matches no tool the run can reach guards nothing.
    if let Err(message) = crate::mcp::known_patterns(&policy, &mcp) {
        runtime.block_on(mcp.shutdown());
        return runtime.finish(trouble(message));
    }
    catalog.merge(mcp.definitions());
    let status = run_with(
        args,
        run_args,
        root,
        catalog,
        Authorizer::new(policy),
        &mcp,
        &runtime,
        traces.as_deref(),
    );
    runtime.block_on(mcp.shutdown());
    // What happened to the servers (one stopped mid-run, say), after the run's own output.
    crate::mcp::report(&mcp);
    // What the run's commands left winding down (in their grace) is killed before seqc exits;
    // after a signal, once the cancelled run's commands had their grace.
    runtime.finish(status)
}

#[allow(
    clippy::too_many_arguments,
    reason = "what `run` set up, each part used once"
)]
fn run_with(
    args: &RunArgs,
    run_args: Map<String, Value>,
    root: PathBuf,
    catalog: Catalog,
    authorizer: Authorizer,
    mcp: &Arc<McpHost>,
    runtime: &Runtime,
    traces: Option<&seq_trace::Traces>,
) -> Status {
    // A stored sequence runs as `seq_run` runs it: with that tool's permission (`--deny seq_run`
    // refuses it, as it refuses the `#name` calls inside runs).
    if CallTarget::parse(&args.target).is_sequence() {
        let caller = Caller::new(args.caller.clone());
        if !authorizer.allows(&caller, SEQ_RUN) {
            let refusal = authorizer.refusal(&caller, SEQ_RUN);
            return trouble(format_args!(
                "{} (a stored sequence runs as `{SEQ_RUN}` does); {}",
                refusal.detail.as_deref().unwrap_or_default(),
                refusal.hint.as_deref().unwrap_or_default()
            ));
        }
    }
    if let Some(ingress) = &args.restate {
        // Durable: the stored sequences are the engine's.
        let storage = match seq_restate::RestateStorage::new(ingress) {
            Ok(storage) => storage,
            Err(error) => return trouble(format_args!("cannot start the runtime: {error}")),
        };
        let (sequence, stored) = match checked(args, &storage, &catalog) {
            Ok(found) => found,
            Err(status) => return status,
        };
        return durable::run(args, ingress, &sequence, stored, run_args, runtime);
    }
    let storage = args.data.storage();
    let sequence = match checked(args, &storage, &catalog) {
        Ok((sequence, _)) => Arc::new(sequence),
        Err(status) => return status,
    };

    let (observer, output): (Option<Arc<dyn Observer>>, Arc<dyn OutputSink>) = match args.format {
        RunFormat::Human => {
            let (observer, output) = live::start(Arc::clone(&sequence));
            (Some(observer), output)
        }
        RunFormat::Json => (None, Arc::new(Stdout)),
    };
    // The file tools never reach the data directory, whatever the root: the stored sequences,
    // and the lock and write count that other processes of the same store rely on.
    let builtin = BuiltinHost::new(&root)
        .with_jq(crate::jq::runner())
        .with_output(output)
        .with_hidden(&args.data.resolve());
    let tools: Arc<dyn ToolHost> = Arc::new(Combined::new(vec![
        Arc::new(builtin),
        Arc::clone(mcp) as Arc<dyn ToolHost>,
    ]));
    let config = SeqConfig {
        storage: Arc::new(storage.clone()),
        root,
        catalog: catalog.into(),
        authorizer: authorizer.clone(),
        quotas: Default::default(),
    };
    // Sequences may create, list and delete sequences; `seq_call` & co. the engine runs itself.
    let host: Arc<dyn ToolHost> =
        Arc::new(SeqHost::new(Arc::new(StorageTools::new(config)), tools));
    let sequences = Arc::new(WithFile {
        sequence: Arc::clone(&sequence),
        storage,
    });
    let mut engine = Engine::new(host, sequences).with_authorizer(authorizer);
    if let Some(observer) = observer {
        engine = engine.with_observer(observer);
    }
    let caller = Caller::new(args.caller.clone());
    let cancel = runtime.stop();
    let started = Instant::now();
    let started_at = SystemTime::now();
    let report = runtime.block_on(engine.run(
        &sequence,
        run_args,
        RunRequest::new(&caller).cancel(&cancel),
    ));
    let elapsed = started.elapsed();
    // A durable run's spans are the worker's to export, where it ran.
    if let Some(traces) = traces {
        traces.finished(&FinishedRun {
            sequence: &sequence.name.value,
            caller: &caller,
            started: started_at,
            report: &report,
            traceparent: None,
        });
    }

    // After a signal the status is the signal's (`Runtime::finish`).
    let status = if report.ok {
        Status::Clean
    } else {
        Status::Failed
    };
    print_report(args, status, &sequence, &report, elapsed)
}

/// The end of a run, local or durable: the report as JSON on stdout, or the summary on stderr;
/// and its timeline, if asked for.
fn print_report(
    args: &RunArgs,
    status: Status,
    sequence: &Sequence,
    report: &seq_exec::RunReport,
    elapsed: std::time::Duration,
) -> Status {
    // The run is over whatever happens to the picture: its status stays the run's, unless
    // the picture could not be written.
    let status = match args
        .timeline
        .as_deref()
        .map(|path| crate::timeline::write(path, report))
    {
        Some(Err(message)) => trouble(message),
        Some(Ok(())) | None => status,
    };
    match args.format {
        RunFormat::Json => emit(status, |out| {
            serde_json::to_writer(&mut *out, report).map_err(io::Error::from)?;
            writeln!(out)
        }),
        RunFormat::Human => {
            // The summary is for whoever watches stderr; if it is gone, the status still tells.
            let _ = summary::render(&mut io::stderr().lock(), sequence, report, elapsed);
            status
        }
    }
}

/// `--args`: absent means no arguments; anything but a JSON object is a usage error.
fn parse_args(text: Option<&str>) -> Result<Map<String, Value>, String> {
    let Some(text) = text else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(members)) => Ok(members),
        Ok(other) => Err(format!(
            "--args must be a JSON object such as '{{\"who\": \"world\"}}', not {}",
            kind(&other)
        )),
        Err(error) => Err(format!("--args is not valid JSON: {error}")),
    }
}

fn kind(value: &Value) -> &'static str {
    seq_syntax::kind::described(value)
}

/// The sequence to run, checked against the readable stored sequences, and those; on refusal
/// the diagnostics are printed and the status comes back.
fn checked(
    args: &RunArgs,
    storage: &dyn SequenceStorage,
    catalog: &Catalog,
) -> Result<(Sequence, Vec<Sequence>), Status> {
    let stored = stored::load(storage).map_err(trouble)?;
    let sequence = target(args, storage, &stored, catalog)?;
    Ok((sequence, stored))
}

/// The sequence to run, checked; on refusal the diagnostics are printed and the status comes
/// back.
fn target(
    args: &RunArgs,
    storage: &dyn SequenceStorage,
    stored: &[Sequence],
    catalog: &Catalog,
) -> Result<Sequence, Status> {
    match CallTarget::parse(&args.target) {
        CallTarget::Sequence(name) => stored_target(name, storage, stored, catalog),
        CallTarget::Group(path) => file_target(path, args.format, stored, catalog),
    }
}

/// A stored sequence, checked again against the store as it is now (as `seq_run` does): what it
/// calls may have changed since it was created.
fn stored_target(
    name: &str,
    storage: &dyn SequenceStorage,
    stored: &[Sequence],
    catalog: &Catalog,
) -> Result<Sequence, Status> {
    let sequence = match stored.iter().find(|s| s.name.value == name) {
        Some(sequence) => sequence.clone(),
        // Not among the readable ones: ask again, for the precise reason.
        None => match storage.get(name) {
            Ok(Some(stored)) => Arc::unwrap_or_clone(stored.sequence),
            Ok(None) => {
                return Err(trouble(format_args!(
                    "no sequence named `{name}` is stored in {} (`seqc list` shows the stored ones)",
                    storage.location()
                )));
            }
            Err(error) => return Err(trouble(error)),
        },
    };
    // The one admission, as `seq_run` asks it of a stored sequence.
    let admission = seq_check::admit_stored(sequence, stored, catalog);
    let errors: Vec<Diagnostic> = admission.errors().cloned().collect();
    match admission.sequence.filter(|_| errors.is_empty()) {
        Some(sequence) => Ok(sequence),
        None => {
            stored::report_stored(name, &errors);
            Err(Status::Failed)
        }
    }
}

/// A sequence file, checked against the storage. Errors are printed as `seqc check` prints them
/// (as its JSON object on stdout with `--format json`); warnings go to stderr and the run goes
/// on.
fn file_target(
    path: &str,
    format: RunFormat,
    stored: &[Sequence],
    catalog: &Catalog,
) -> Result<Sequence, Status> {
    let bytes = crate::files::read_named(std::path::Path::new(path))
        .map_err(|error| trouble(format_args!("cannot read {path}: {}", reason(&error))))?;
    // Running a file stores nothing: its own diagnostics decide.
    let (file, admission) = stored::check_file(path, &bytes, stored, catalog);
    let failed = file.diagnostics.iter().any(Diagnostic::is_error);
    let sequence = admission.sequence;
    let files = [file];
    match (failed, format, sequence) {
        (true, RunFormat::Json, _) => Err(emit(Status::Failed, |out| {
            crate::render::json::render(out, &files)
        })),
        (true, RunFormat::Human, _) | (false, _, None) => {
            let _ = stored::render_to_stderr(&files);
            Err(Status::Failed)
        }
        (false, _, Some(sequence)) => {
            if files.iter().any(|f| !f.diagnostics.is_empty()) {
                let _ = stored::render_to_stderr(&files);
            }
            Ok(sequence)
        }
    }
}

/// `#name` calls find the sequence being run under its own name (the file's version, as the
/// check saw it), every other one in the storage, read afresh at each call.
struct WithFile {
    sequence: Arc<Sequence>,
    storage: Storage,
}

impl SequenceSource for WithFile {
    fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        self.owned(name).map(|(sequence, _)| sequence)
    }

    /// A stored sequence keeps its owner: its dispatches are bounded by the owner's rights.
    fn owned(&self, name: &str) -> Option<(Arc<Sequence>, Option<String>)> {
        if name == self.sequence.name.value {
            Some((Arc::clone(&self.sequence), None))
        } else {
            self.storage.owned(name)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    #[test]
    fn args_must_be_one_json_object() {
        assert_eq!(parse_args(None).unwrap(), Map::new());
        let args = parse_args(Some(r#"{"who": "world"}"#)).unwrap();
        assert_eq!(args.get("who"), Some(&Value::from("world")));
        let not_object = parse_args(Some("[1]")).unwrap_err();
        assert!(not_object.contains("not an array"), "{not_object}");
        let not_json = parse_args(Some("{who}")).unwrap_err();
        assert!(
            not_json.starts_with("--args is not valid JSON"),
            "{not_json}"
        );
    }
}
