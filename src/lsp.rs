//! `seqc lsp`: the language server on stdin and stdout (the protocol owns stdout; problems go to
//! stderr, which editors keep in their log).

use crate::status::{Status, trouble};

pub fn run() -> Status {
    match seq_lsp::run_stdio() {
        Ok(seq_lsp::Ending::Orderly) => Status::Clean,
        // The protocol: 1 when `exit` came without `shutdown` (or the client vanished).
        Ok(seq_lsp::Ending::Abrupt) => Status::Failed,
        Err(err) => trouble(format_args!("language server: {err}")),
    }
}
