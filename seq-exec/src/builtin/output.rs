//! Where `output_send__stdout` goes: standard output by default, or any sink a caller injects
//! (a test that captures lines, the command line's live view that interleaves them with
//! progress).

use seq_syntax::printable::{Lines, printable};
use std::io::{self, IsTerminal, Write};
use std::sync::{Mutex, PoisonError};
use tokio::sync::mpsc::UnboundedSender;

/// Receives the lines a sequence sends to its standard output channel, in the order sent (the
/// engine keeps calls to one channel in order).
pub trait OutputSink: Send + Sync {
    fn send(&self, text: &str) -> io::Result<()>;
}

/// The process's standard output: one line per send, flushed, so that the lines come before a
/// report printed after the run. On a terminal, control characters are escaped (as `ls` does):
/// a line may quote what a command printed; piped, the lines are passed on as sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stdout;

impl OutputSink for Stdout {
    fn send(&self, text: &str) -> io::Result<()> {
        let mut out = io::stdout().lock();
        if out.is_terminal() {
            writeln!(out, "{}", printable(text, Lines::Kept))?;
        } else {
            writeln!(out, "{text}")?;
        }
        out.flush()
    }
}

/// Keeps the lines in memory.
#[derive(Debug, Default)]
pub struct Captured {
    lines: Mutex<Vec<String>>,
}

impl Captured {
    pub fn new() -> Captured {
        Captured::default()
    }

    /// The lines sent so far, in order.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl OutputSink for Captured {
    fn send(&self, text: &str) -> io::Result<()> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(text.to_owned());
        Ok(())
    }
}

/// Forwards each line to a channel (for a live view); fails once the receiver is gone.
impl OutputSink for UnboundedSender<String> {
    fn send(&self, text: &str) -> io::Result<()> {
        UnboundedSender::send(self, text.to_owned())
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the output receiver is gone"))
    }
}
