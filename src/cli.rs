//! The command-line surface (clap derive) and the exit-status convention shared by commands.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
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
    /// directory. `cmd_run` and `files_write` are off unless `--enable` names them; the other
    /// embedded tools (`echo`, `sleep`, `files_read`, `files_list`,
    /// `output_send__stdout`) are on.
    /// `--allow`/`--deny` limit what the client may use, at every depth. The sequences'
    /// `output_send__stdout` lines go to stderr (stdout carries the protocol).
    Mcp(crate::mcp::ServeArgs),
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
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check; a directory means every `*.json` file below it. All of
    /// them are checked together as one store: `#name` calls resolve across files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How to report diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// When to colour human output (`auto`: when stdout is a terminal and NO_COLOR is unset).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// A catalog of tool definitions to check against, added to the built-in one (repeatable):
    /// an array of `{name, description, parameters, parallel_safe}`, or an MCP `tools/list`
    /// result. Later files replace earlier definitions of a tool; the built-in `seq_*` tools
    /// are never replaced.
    #[arg(long = "catalog", value_name = "FILE")]
    pub catalogs: Vec<PathBuf>,
    /// MCP servers whose live `tools/list` joins the catalog (started, listed, stopped).
    #[command(flatten)]
    pub mcp: crate::mcp::McpArgs,
    /// The stored sequences that `#name` calls may reach, as `seqc run` finds them (a file
    /// given here stands in for a stored sequence of its name).
    #[command(flatten)]
    pub data: crate::stored::DataDirArg,
    /// Apply every machine-applicable fix the diagnostics carry (the preferred quick fixes of
    /// the language server), checking again until none is left, write the fixed files, and
    /// report what was fixed, the other fixes as suggestions, and what remains. The exit status
    /// is that of the fixed files.
    #[arg(long)]
    pub fix: bool,
    /// With `--fix` or `--diff`, apply the maybe-incorrect fixes too (running a group serially,
    /// renaming to a similar slot or group, guessing a type): read what they changed.
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print what `--fix` would change as a unified diff, and write nothing. Exit status 1 when
    /// there is something to fix or errors would remain.
    #[arg(long)]
    pub diff: bool,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Files or directories to draw; a directory means every `*.json` file below it.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How to print the graph.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A diagnostic code such as E0101 (case does not matter).
    #[arg(required_unless_present = "list", conflicts_with = "list")]
    pub code: Option<String>,
    /// List every code with its title.
    #[arg(long)]
    pub list: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Reports with source snippets, for people.
    Human,
    /// One JSON object on stdout, for programs.
    Json,
    /// SARIF 2.1.0 on stdout, for code-scanning services.
    Sarif,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz DOT (`seqc graph dir/ | dot -Tsvg > calls.svg`).
    Dot,
    /// `{"sequences": [...], "edges": [...]}`, for programs.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour what goes to stdout; `auto` follows <https://no-color.org>.
    pub fn for_stdout(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// How a command ended: the exit statuses that scripts and CI rely on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Nothing wrong (warnings allowed).
    Clean = 0,
    /// The input has at least one error.
    Failed = 1,
    /// The command could not do its job: bad usage, unreadable input, broken output.
    Trouble = 2,
    /// `seqc run` was cancelled by SIGINT (128 + 2, as shells report it).
    Interrupted = 130,
    /// `seqc run` was cancelled by SIGTERM (128 + 15).
    Terminated = 143,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
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
        Command::Run(args) => crate::run::run(&args),
        Command::Create(args) => crate::storage_cmd::create(&args),
        Command::List(args) => crate::storage_cmd::list(&args),
        Command::Delete(args) => crate::storage_cmd::delete(&args),
        Command::Mcp(args) => crate::mcp::serve(&args),
        Command::Worker(args) => crate::worker::run(&args),
        Command::Runs(args) => crate::runs::runs(&args),
        Command::Cancel(args) => crate::runs::cancel(&args),
    };
    status.into()
}

/// Reports a problem of the command itself (not of the input) on stderr, in one line.
pub fn trouble(message: impl std::fmt::Display) -> Status {
    // If stderr is gone there is nobody left to tell; the exit status still says it.
    let _ = writeln!(io::stderr().lock(), "seqc: {message}");
    Status::Trouble
}

/// Reports something the user should know that does not stop the command, in one line on stderr.
pub fn warn(message: impl std::fmt::Display) {
    let _ = writeln!(io::stderr().lock(), "seqc: warning: {message}");
}

/// Writes a command's output to stdout and turns the outcome into a status. A reader that
/// closes the pipe early (`seqc check x | head`) is not a failure of the check.
pub fn emit(status: Status, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Status {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => status,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => status,
        Err(err) => trouble(format_args!("cannot write output: {err}")),
    }
}
