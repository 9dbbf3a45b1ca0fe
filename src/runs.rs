//! `seqc runs` and `seqc cancel`: durable runs seen from outside, through the Restate admin API.

use crate::signals::{OnSignal, Runtime};
use crate::status::{Status, emit, trouble};
use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// The Restate admin API (such as http://127.0.0.1:9070).
    #[arg(long, value_name = "ADMIN_URL")]
    pub restate: String,
    /// How to print the runs.
    #[arg(long, value_enum, default_value_t = RunsFormat::Human)]
    pub format: RunsFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunsFormat {
    /// One line per run: id, status, when it started.
    Human,
    /// A JSON array of `{id, status, started}`.
    Json,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The Restate admin API (such as http://127.0.0.1:9070).
    #[arg(long, value_name = "ADMIN_URL")]
    pub restate: String,
    /// The run to cancel (its `--run-id`).
    #[arg(value_name = "RUN_ID")]
    pub run_id: String,
    /// How long the run's invocations get to take the cancellation before they are killed
    /// (such as 30s or 2m): a worker that cannot be reached, or does not answer, never takes
    /// it.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = grace)]
    pub grace: std::time::Duration,
}

fn grace(text: &str) -> Result<std::time::Duration, String> {
    seq_syntax::duration::parse(text).map_err(str::to_owned)
}

/// A signal ends these commands at once: they only ask the Restate server.
fn runtime() -> Result<Runtime, Status> {
    Runtime::start(OnSignal::Exit)
}

pub fn runs(args: &RunsArgs) -> Status {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(status) => return status,
    };
    let runs = match runtime.block_on(seq_restate::runs(&args.restate)) {
        Ok(runs) => runs,
        Err(error) => return trouble(error),
    };
    emit(Status::Clean, |out| match args.format {
        RunsFormat::Json => {
            let json = serde_json::to_string(&runs).map_err(std::io::Error::other)?;
            writeln!(out, "{json}")
        }
        RunsFormat::Human => {
            let width = runs.iter().map(|r| r.id.len()).max().unwrap_or(0);
            runs.iter().try_for_each(|run| {
                writeln!(out, "{:width$}  {:11}  {}", run.id, run.status, run.started)
            })
        }
    })
}

pub fn cancel(args: &CancelArgs) -> Status {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(status) => return status,
    };
    match runtime.block_on(seq_restate::cancel(&args.restate, &args.run_id, args.grace)) {
        Ok(seq_restate::Stopped::Cancelled) => {
            eprintln!("seqc: cancelled durable run `{}`", args.run_id);
            Status::Clean
        }
        Ok(seq_restate::Stopped::Killed) => {
            eprintln!(
                "seqc: durable run `{}` did not stop within {}: killed",
                args.run_id,
                seq_syntax::duration::format(args.grace)
            );
            Status::Clean
        }
        Err(seq_restate::AdminError::NoSuchRun(id)) => {
            trouble(format_args!("no durable run has the id `{id}`"))
        }
        Err(error) => trouble(error),
    }
}
