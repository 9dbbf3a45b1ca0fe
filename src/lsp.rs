//! `seqc lsp`: the language server on stdin and stdout (the protocol owns stdout; problems go to
//! stderr, which editors keep in their log).

use crate::status::{Status, trouble};

pub fn run() -> Status {
    // The server runs nothing that a signal should stop first: it exits at once, with 128 plus
    // the signal's number, as `seqc mcp` and `seqc run` do.
    if let Err(error) = crate::signals::Watch::start(crate::signals::OnSignal::Exit) {
        return trouble(format_args!("cannot watch for signals: {error}"));
    }
    match seq_lsp::run_stdio() {
        Ok(seq_lsp::Ending::Orderly) => Status::Clean,
        // The protocol: 1 when `exit` came without `shutdown` (or the client vanished).
        Ok(seq_lsp::Ending::Abrupt) => Status::Failed,
        Err(err) => trouble(format_args!("language server: {err}")),
    }
}
