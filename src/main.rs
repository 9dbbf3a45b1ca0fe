//! `seqc`: the command line of the seqc toolchain. It reads files, calls the libraries, renders
//! what they report and sets the exit status; the language itself lives in the library crates.

mod catalog;
mod check;
mod cli;
mod explain;
mod files;
mod fix;
mod graph;
mod host;
mod jq;
mod lsp;
mod mcp;
mod render;
mod run;
mod runs;
mod signals;
mod status;
mod storage_cmd;
mod stored;
mod timeline;
mod traces;
mod worker;

fn main() -> std::process::ExitCode {
    cli::run()
}
