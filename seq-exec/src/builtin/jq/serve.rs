//! The child's side of isolated evaluation (`seqc __jq`, [`super::isolated`]): limits itself,
//! then answers one request line with one answer line until its standard input ends.
//!
//! The limits: [`MEMORY`] of address space (an allocation past it fails, and the process
//! aborts), no core file. Evaluation runs as in-process evaluation does, on a thread with a
//! large stack and the step guard (a filter's own recursion fails cleanly); what the guard
//! cannot see (a native's recursion over a deep value, dropping one, a huge allocation)
//! ends this process, which the parent reports as a failed call. Time is the parent's to
//! bound: it kills this process when the call is dropped.

use super::isolated::{Answer, Request};
use super::{THREAD_STACK, evaluate, failed};
use serde::Deserialize;
use std::io::{BufRead, Write};
use std::sync::atomic::AtomicBool;

/// The address space a child may use: its binary and libraries, the evaluation's thread stack,
/// the compile's (`seq_catalog::jq` runs jaq on a stack of its own), and the values a filter
/// builds.
pub const MEMORY: u64 = 1024 * 1024 * 1024;

/// Serves requests on standard input until it ends.
pub fn serve() -> std::io::Result<()> {
    limit()?;
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if stdin.lock().read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let request = std::mem::take(&mut line);
        let answer = std::thread::Builder::new()
            .name("jq".to_owned())
            .stack_size(THREAD_STACK)
            .spawn(move || answer(&request))?
            .join()
            // A panic the evaluation did not catch: the call fails, the process goes on.
            .unwrap_or_else(|_| {
                let error = failed("the filter stopped on an internal error of jq");
                serde_json::to_vec(&Answer::Err(error)).unwrap_or_default()
            });
        stdout.write_all(&answer)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
}

/// The answer to one request line, as JSON.
fn answer(request: &[u8]) -> Vec<u8> {
    let mut reader = serde_json::Deserializer::from_slice(request);
    // The parent's values are bounded in depth where they are made.
    reader.disable_recursion_limit();
    let answer = match Request::deserialize(&mut reader) {
        Ok(Request { filter, input }) => match evaluate(&filter, input, &AtomicBool::new(false)) {
            Ok(value) => Answer::Ok(value),
            Err(error) => Answer::Err(error),
        },
        Err(error) => Answer::Err(failed(format!("the request is not one: {error}"))),
    };
    serde_json::to_vec(&answer).unwrap_or_else(|error| {
        let error = failed(format!("the result cannot be written as JSON: {error}"));
        serde_json::to_vec(&Answer::Err(error)).unwrap_or_default()
    })
}

/// Sets this process's limits.
fn limit() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, Rlimit, setrlimit};
        setrlimit(
            Resource::As,
            Rlimit {
                current: Some(MEMORY),
                maximum: Some(MEMORY),
            },
        )?;
        setrlimit(
            Resource::Core,
            Rlimit {
                current: Some(0),
                maximum: Some(0),
            },
        )?;
    }
    Ok(())
}
