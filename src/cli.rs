//! The command-line surface (clap derive) and the dispatch to one module per command: the
//! entry layer, which no other module imports.

use crate::check::CheckArgs;
use crate::explain::ExplainArgs;
use crate::graph::GraphArgs;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Checks tool sequences: JSON files that describe named groups of tool calls.
#[derive(Debug, Parser)]
#[command(name = "seqc", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check sequence files and report every problem found in them.
    Check(CheckArgs),
    /// Explain a diagnostic code, with an example and its fix.
    Explain(ExplainArgs),
    /// Print the call graph of groups and sequences (Graphviz DOT or JSON).
    ///
    /// The files given form one store, as for `check`: `#name` calls point at the sequence of
    /// that name in any of them. Only the front end runs (no rules): a file with syntax errors
    /// is still drawn with whatever could be read from it, and its errors are printed on
    /// stderr, one line each (`FILE:LINE:COLUMN: error[CODE]: message`); the exit status is
    /// then 1, so that a script knows the picture may be incomplete.
    Graph(GraphArgs),
    /// Serve the language server protocol on stdin and stdout, for editors.
    ///
    /// Diagnostics, hover, go to definition, references, rename, completion, quick fixes,
    /// document symbols and semantic tokens for the sequence files of the editor's workspace.
    /// See docs/editors.md for Neovim, Helix and VS Code.
    Lsp,
    /// Run a sequence file or a stored `#name` on the embedded host.
    ///
    /// A file is checked first (with the stored sequences, so `#name` calls resolve); if it has
    /// errors they are printed and nothing runs. The sequence's `output_send__stdout` lines go to
    /// stdout; `--format human` shows the groups and items live on stderr, then a summary of
    /// every failure; `--format json` prints the run report as the last line of stdout. Exit
    /// status: 0 when the run succeeded, 1 when it failed or the sequence has errors, 2 for a
    /// problem of the command (usage, unreadable files).
    Run(crate::run::RunArgs),
    /// Check a sequence file against the stored ones and store it in the data directory.
    Create(crate::storage_cmd::CreateArgs),
    /// List the sequences stored in the data directory (or the Restate server: `--restate`).
    List(crate::storage_cmd::ListArgs),
    /// Delete a sequence from the data directory.
    Delete(crate::storage_cmd::DeleteArgs),
    /// Serve the six seq_* tools to an MCP client on stdin and stdout.
    ///
    /// Sequences created over MCP are stored in the data directory and run on the embedded
    /// host plus the `--mcp` servers' tools (with `--restate`, stored in the Restate server and
    /// run there by `seqc worker`s); `seq_create`'s and `seq_run`'s descriptions list
    /// the tools a client can reach. `--root DIR` is required and must not contain the data
    /// directory. `cmd_run` and `files_write` are off unless `--enable` names them
    /// (`files_write` turns on every file write: `files_delete` and `files_move` too); the other
    /// embedded tools (`echo`, `sleep`, `files_read`, `files_list`, `files_stat`,
    /// `output_send__stdout`) are on.
    /// `--allow`/`--deny` limit what the client may use, at every depth. The sequences'
    /// `output_send__stdout` lines go to stderr (stdout carries the protocol).
    Mcp(crate::mcp::ServeArgs),
    /// Print a fresh bearer token for `seqc mcp --http`, and the SHA-256 a policy file keeps.
    ///
    /// The first line is the token (give it to the client, and keep it nowhere else); the
    /// second is `"token_sha256": "HEX"`, for the caller's entry under `callers` in the
    /// policy file.
    Token,
    /// Serve durable runs (`seqc run --restate`) to a Restate server, on the embedded host and
    /// the `--mcp` servers' tools. See "Durable runs" in docs/reference.md.
    Worker(crate::worker::WorkerArgs),
    /// List the durable runs a Restate server knows: id, status, when it started.
    Runs(crate::runs::RunsArgs),
    /// Draw a saved run report as a timeline (SVG): groups as bands in run order, items as bars
    /// on one time axis, retries, called groups under their call, the slowest path outlined.
    ///
    /// The report is the output of `seqc run --format json`, a `seq_run` result, or a durable
    /// run's report. `seqc run --timeline FILE.svg` draws one as the run finishes.
    Timeline(crate::timeline::TimelineArgs),
    /// Cancel a durable run and the child invocations it waits for: the step running stops
    /// being waited for, nothing new starts, and its report says `cancelled`.
    Cancel(crate::runs::CancelArgs),
    /// Evaluate jq filters for a seqc process that started this one (not for people): one
    /// JSON request per line on stdin, one answer per line on stdout.
    #[command(name = "__jq", hide = true)]
    Jq,
}

pub fn run() -> ExitCode {
    // clap prints its own usage errors and exits with 2, help and version with 0.
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Check(args) => crate::check::run(&args),
        Command::Explain(args) => crate::explain::run(&args),
        Command::Graph(args) => crate::graph::run(&args),
        Command::Timeline(args) => crate::timeline::run(&args),
        Command::Lsp => crate::lsp::run(),
        Command::Run(args) => crate::traces::with_traces(|traces| crate::run::run(&args, traces)),
        Command::Create(args) => crate::storage_cmd::create(&args),
        Command::List(args) => crate::storage_cmd::list(&args),
        Command::Delete(args) => crate::storage_cmd::delete(&args),
        Command::Mcp(args) => crate::traces::with_traces(|traces| crate::mcp::serve(&args, traces)),
        Command::Token => crate::mcp::token(),
        Command::Worker(args) => {
            crate::traces::with_traces(|traces| crate::worker::run(&args, traces))
        }
        Command::Runs(args) => crate::runs::runs(&args),
        Command::Cancel(args) => crate::runs::cancel(&args),
        Command::Jq => crate::jq::serve(),
    };
    status.into()
}
