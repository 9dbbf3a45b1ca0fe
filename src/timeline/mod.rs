//! `seqc timeline` and `seqc run --timeline`: a run report drawn as a timeline (SVG).
//!
//! `layout` lays the report out as rows on one time axis, `svg` draws them; [`draw`] is the
//! pure whole. A saved report is read here: `seqc run --format json` output (its last line),
//! a `seq_run` result (its `structuredContent`, also inside a JSON-RPC response), or a report
//! as such (a durable run's is the same).

mod layout;
mod svg;
mod words;

use crate::files::reason;
use crate::status::{Status, trouble};
use clap::Args;
use seq_exec::RunReport;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// A saved run report: `seqc run --format json` output, a `seq_run` result, or a durable
    /// run's report.
    #[arg(value_name = "REPORT.json")]
    pub report: PathBuf,
    /// Where to write the SVG.
    #[arg(short, long, value_name = "FILE.svg")]
    pub output: PathBuf,
}

/// The timeline of `report` as a self-contained SVG document.
pub fn draw(report: &RunReport) -> String {
    svg::render(&layout::chart(report))
}

pub fn run(args: &TimelineArgs) -> Status {
    let text = match std::fs::read_to_string(&args.report) {
        Ok(text) => text,
        Err(error) => {
            return trouble(format_args!(
                "cannot read {}: {}",
                args.report.display(),
                reason(&error)
            ));
        }
    };
    let report = match read_report(&text) {
        Ok(report) => report,
        Err(message) => return trouble(format_args!("{}: {message}", args.report.display())),
    };
    match write(&args.output, &report) {
        Ok(()) => Status::Clean,
        Err(message) => trouble(message),
    }
}

/// Writes the timeline of `report` to `path`.
pub fn write(path: &Path, report: &RunReport) -> Result<(), String> {
    std::fs::write(path, draw(report))
        .map_err(|error| format!("cannot write {}: {}", path.display(), reason(&error)))
}

/// The report in `text`: the whole text, or its last line (what `seqc run --format json`
/// prints after the sequence's own output), as a report or a `seq_run` result holding one.
fn read_report(text: &str) -> Result<RunReport, String> {
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(whole) => {
            let last = text.lines().rev().find(|line| !line.trim().is_empty());
            match last.map(serde_json::from_str::<Value>) {
                Some(Ok(value)) => value,
                Some(Err(_)) | None => return Err(format!("not JSON: {whole}")),
            }
        }
    };
    let inner = |v: &Value| v.get("structuredContent").cloned();
    let report = inner(&value)
        .or_else(|| value.get("result").and_then(inner))
        .unwrap_or(value);
    serde_json::from_value(report).map_err(|error| {
        format!(
            "not a run report ({error}); give the output of `seqc run --format json`, a \
             `seq_run` result, or a durable run's report"
        )
    })
}

#[cfg(test)]
mod tests;
