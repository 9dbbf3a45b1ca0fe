//! How a command ends and what it says on the way: the exit statuses scripts and CI rely on,
//! the one-line reports on stderr, and stdout written as a pipe expects. Every command uses
//! these; they use no command.

use seq_syntax::printable::{Lines, printable};
use std::io::{self, Write};
use std::process::ExitCode;

/// How a command ended: the exit statuses that scripts and CI rely on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Nothing wrong (warnings allowed).
    Clean = 0,
    /// The input has at least one error.
    Failed = 1,
    /// The command could not do its job: bad usage, unreadable input, broken output.
    Trouble = 2,
    /// Stopped by SIGHUP (128 + 1, as shells report it): what ran was cancelled first.
    HungUp = 129,
    /// Stopped by SIGINT (128 + 2).
    Interrupted = 130,
    /// Stopped by SIGQUIT (128 + 3), handled as SIGTERM: what ran is cancelled first, and no
    /// core is dumped.
    Quit = 131,
    /// Stopped by SIGTERM (128 + 15).
    Terminated = 143,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
}

/// Reports a problem of the command itself (not of the input) on stderr, in one line.
pub fn trouble(message: impl std::fmt::Display) -> Status {
    // If stderr is gone there is nobody left to tell; the exit status still says it.
    let message = message.to_string();
    let _ = writeln!(
        io::stderr().lock(),
        "seqc: {}",
        printable(&message, Lines::Kept)
    );
    Status::Trouble
}

/// Reports something the user should know that does not stop the command, in one line on stderr.
pub fn warn(message: impl std::fmt::Display) {
    let message = message.to_string();
    let _ = writeln!(
        io::stderr().lock(),
        "seqc: warning: {}",
        printable(&message, Lines::Kept)
    );
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
