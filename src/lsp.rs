//! `seqc lsp`: the language server on stdin and stdout (the protocol owns stdout; problems go to
//! stderr, which editors keep in their log).

use crate::cli::{Status, trouble};

pub fn run() -> Status {
    match seq_lsp::run_stdio() {
        Ok(()) => Status::Clean,
        Err(err) => trouble(format_args!("language server: {err}")),
    }
}
