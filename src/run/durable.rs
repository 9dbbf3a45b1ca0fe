//! `seqc run --restate`: the checked sequence submitted to Restate, where the workers run it;
//! its report printed as a local run's.

use super::{RunArgs, RunFormat, print_report};
use crate::signals::Runtime;
use crate::status::{Status, emit, trouble};
use seq_restate::RunInput;
use seq_syntax::ast::Sequence;
use serde_json::{Map, Value};
use std::io::{self, Write};
use std::time::Instant;

pub(super) fn run(
    args: &RunArgs,
    ingress: &str,
    sequence: &Sequence,
    stored: Vec<Sequence>,
    run_args: Map<String, Value>,
    runtime: &Runtime,
) -> Status {
    let run_id = args.run_id.clone().unwrap_or_else(seq_restate::fresh_id);
    if let Err(error) = seq_service::run_id::check(&run_id) {
        return trouble(format_args!("--run-id: {error}"));
    }
    // What a second submission under the same id is compared with.
    let submission = seq_service::Submission::of(&args.caller, &sequence.name.value, &run_args);
    // The run carries every sequence its `#name` calls may reach, as they are now: a replay
    // on another worker never reads a store.
    // With `--allow`/`--deny`, which the workers hold every dispatch to besides their own
    // bound. The local user's run is ownerless, as its local run is.
    let input = RunInput {
        sequence: sequence.clone(),
        owner: None,
        sequences: stored,
        owners: std::collections::BTreeMap::new(),
        args: run_args,
        caller: args.caller.clone(),
        policy: super::policy(&args.allow, &args.deny),
        traceparent: None,
        submission: Some(submission),
    };
    if args.format == RunFormat::Human {
        let _ = writeln!(
            io::stderr().lock(),
            "seqc: durable run `{run_id}` at {ingress}"
        );
    }
    let started = Instant::now();
    let stop = runtime.stop();
    let submitted = runtime.block_on(async {
        tokio::select! {
            submitted = seq_restate::submit(ingress, &run_id, &input) => Some(submitted),
            () = stop.cancelled() => None,
        }
    });
    let report = match submitted {
        Some(Ok(report)) => report,
        Some(Err(error)) => return trouble(format_args!("durable run `{run_id}`: {error}")),
        // The run is the Restate server's: stopping seqc stops only the wait for it.
        None => {
            let _ = writeln!(
                io::stderr().lock(),
                "seqc: durable run `{run_id}` goes on at {ingress}; `seqc cancel --restate \
                 ADMIN_URL {run_id}` stops it"
            );
            return Status::Failed;
        }
    };
    let elapsed = started.elapsed();
    // What the sequence printed (on the workers), as a local run prints it.
    if args.format == RunFormat::Human
        && let Some(Value::Array(lines)) = report.output.get("stdout")
    {
        let printed = emit(Status::Clean, |out| {
            lines
                .iter()
                .filter_map(Value::as_str)
                .try_for_each(|line| writeln!(out, "{line}"))
        });
        if printed != Status::Clean {
            return printed;
        }
    }
    let status = if report.ok {
        Status::Clean
    } else {
        Status::Failed
    };
    print_report(args, status, sequence, &report, elapsed)
}
