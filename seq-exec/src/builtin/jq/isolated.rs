//! Filters evaluated in child processes of seqc's own binary (`seqc __jq`, [`super::serve()`]):
//! what the step guard of an in-process evaluation cannot bound, a child's limits do. A value
//! nested deep enough to overflow a native's recursion (`tojson`, `==`, dropping it), an
//! allocation sized by a value (`"x" * 1e14`), a native that does not return (`pow` on huge
//! integers): the child crashes, hits its memory limit, or is killed with SIGKILL when the
//! call is dropped (the step's timeout, the run's cancellation), and the call fails. seqc
//! itself never runs the filter.
//!
//! Children are kept warm (each with its own compile cache), at most [`MAX_IDLE`] idle; at
//! most [`MAX_CHILDREN`] evaluate at once, more calls wait for one, and at most
//! [`MAX_PER_CALLER`] of them for one caller, so that one caller's filters that never end
//! (each holding its child to the tool's timeout) cannot keep every other caller waiting. A child is started with
//! the parent-death signal (it dies with seqc) and `kill_on_drop`; a call dropped mid-way
//! kills its child and reaps it on the runtime, so nothing is left computing.
//!
//! The exchange is one JSON line each way: `{"filter", "input"}` in, `{"ok": value}` or
//! `{"err": ToolError}` out.

use super::failed;
use crate::error::{Reason, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Semaphore;

/// Children kept warm between calls.
pub const MAX_IDLE: usize = 4;
/// Children evaluating at once; further calls wait for one of them.
pub const MAX_CHILDREN: usize = 16;
/// Children evaluating at once for one caller: a quarter of them.
pub const MAX_PER_CALLER: usize = MAX_CHILDREN / 4;
/// The most bytes of an answer read from a child: the engine's bound on a result, plus room
/// for the answer's envelope. A longer answer fails the call (and its child is killed).
const MAX_ANSWER: u64 = super::super::MAX_READ_BYTES as u64 + 4096;

/// One call, as the child reads it.
#[derive(Serialize, Deserialize)]
pub(super) struct Request {
    pub filter: String,
    pub input: Value,
}

/// One answer, as the parent reads it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Answer {
    Ok(Value),
    Err(ToolError),
}

/// The children of one runner: how to start one, the warm ones, and the pids of all alive.
pub struct Pool {
    program: PathBuf,
    args: Vec<OsString>,
    idle: Mutex<Vec<Warm>>,
    permits: Arc<Semaphore>,
    /// Each caller's share of [`Pool::permits`], by caller id.
    shares: Mutex<HashMap<String, Arc<Semaphore>>>,
    live: Arc<Mutex<BTreeSet<u32>>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("program", &self.program)
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

/// A child with its pipes.
struct Warm {
    child: Child,
    pid: u32,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// A child lent to one call: killed and reaped if the call ends without giving it back.
struct Lease {
    warm: Option<Warm>,
    live: Arc<Mutex<BTreeSet<u32>>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(mut warm) = self.warm.take() else {
            return;
        };
        let _ = warm.child.start_kill();
        let live = Arc::clone(&self.live);
        let pid = warm.pid;
        // Reap it on the runtime, then count it out; without a runtime, `kill_on_drop` and
        // tokio's own reaping of orphans do it.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = warm.child.wait().await;
                    forget(&live, pid);
                });
            }
            Err(_) => forget(&live, pid),
        }
    }
}

fn forget(live: &Mutex<BTreeSet<u32>>, pid: u32) {
    live.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&pid);
}

impl Pool {
    pub(super) fn new(program: PathBuf, args: Vec<OsString>) -> Pool {
        Pool {
            program,
            args,
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(MAX_CHILDREN)),
            shares: Mutex::new(HashMap::new()),
            live: Arc::new(Mutex::new(BTreeSet::new())),
        }
    }

    /// The pids of the children alive now, warm or evaluating (tests).
    pub(super) fn children(&self) -> Vec<u32> {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect()
    }

    fn lease(&self, warm: Warm) -> Lease {
        Lease {
            warm: Some(warm),
            live: Arc::clone(&self.live),
        }
    }

    fn start(&self) -> Result<Lease, ToolError> {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        #[cfg(target_os = "linux")]
        super::super::procs::die_with_parent(&mut command);
        let mut child = command.spawn().map_err(|error| {
            failed(format!(
                "could not start a process for the filter ({}): {error}",
                self.program.display()
            ))
        })?;
        let (Some(stdin), Some(stdout), Some(pid)) =
            (child.stdin.take(), child.stdout.take(), child.id())
        else {
            return Err(failed("the filter's process has no pipes"));
        };
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(pid);
        Ok(self.lease(Warm {
            child,
            pid,
            stdin,
            stdout: BufReader::new(stdout),
        }))
    }

    /// A warm child that took the request, or a new one.
    async fn send(&self, request: &[u8]) -> Result<Lease, ToolError> {
        loop {
            let warm = self
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop();
            let Some(warm) = warm else { break };
            let mut lease = self.lease(warm);
            // A warm child that is gone (killed from outside) is dropped for another.
            if let Some(warm) = lease.warm.as_mut()
                && warm.stdin.write_all(request).await.is_ok()
                && warm.stdin.flush().await.is_ok()
            {
                return Ok(lease);
            }
        }
        let mut lease = self.start()?;
        if let Some(warm) = lease.warm.as_mut() {
            let written = match warm.stdin.write_all(request).await {
                Ok(()) => warm.stdin.flush().await,
                Err(error) => Err(error),
            };
            written.map_err(|error| {
                failed(format!("could not hand the filter to its process: {error}"))
            })?;
        }
        Ok(lease)
    }

    /// Gives a child back for the next call, or lets it go when enough are warm.
    fn give_back(&self, mut lease: Lease) {
        let Some(warm) = lease.warm.take() else {
            return;
        };
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(warm);
        } else {
            drop(idle);
            lease.warm = Some(warm);
        }
    }
}

/// `caller`'s share of the children: a semaphore of its own, made on its first call. Shares
/// nobody holds are let go once there are many.
fn share(pool: &Pool, caller: &str) -> Arc<Semaphore> {
    let mut shares = pool.shares.lock().unwrap_or_else(PoisonError::into_inner);
    if shares.len() > 1024 {
        shares.retain(|_, share| Arc::strong_count(share) > 1);
    }
    Arc::clone(
        shares
            .entry(caller.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(MAX_PER_CALLER))),
    )
}

/// Evaluates `filter` over `input` in a child, for `caller`.
pub(super) async fn call(
    pool: &Pool,
    caller: &str,
    filter: String,
    input: Value,
) -> Result<Value, ToolError> {
    // The caller's own share first: waiting for it holds none of the others'.
    let _share = share(pool, caller)
        .acquire_owned()
        .await
        .map_err(|_| failed("the filter's processes are shut down"))?;
    let _permit = Arc::clone(&pool.permits)
        .acquire_owned()
        .await
        .map_err(|_| failed("the filter's processes are shut down"))?;
    let mut request = serde_json::to_vec(&Request { filter, input })
        .map_err(|error| failed(format!("the input cannot be written as JSON: {error}")))?;
    request.push(b'\n');
    let mut lease = pool.send(&request).await?;
    let Some(warm) = lease.warm.as_mut() else {
        return Err(failed("the filter's process is gone"));
    };
    let mut line = Vec::new();
    let read = (&mut warm.stdout)
        .take(MAX_ANSWER)
        .read_until(b'\n', &mut line)
        .await;
    match read {
        Ok(_) if line.last() == Some(&b'\n') => {}
        Ok(_) if line.len() as u64 >= MAX_ANSWER => {
            return Err(failed(format!(
                "the filter's result is larger than {} bytes",
                super::super::MAX_READ_BYTES
            )));
        }
        // The child ended without an answer: it crashed or hit its limits.
        Ok(_) | Err(_) => return Err(exhausted()),
    }
    let mut reader = serde_json::Deserializer::from_slice(&line);
    // The child bounds a result's depth (`super::MAX_DEPTH`) before writing it.
    reader.disable_recursion_limit();
    let answer = Answer::deserialize(&mut reader)
        .map_err(|error| failed(format!("the filter's process answered nonsense: {error}")))?;
    pool.give_back(lease);
    match answer {
        Answer::Ok(value) => Ok(value),
        Answer::Err(error) => Err(error),
    }
}

/// What a call whose child died says.
fn exhausted() -> ToolError {
    ToolError::new(
        Reason::Failed,
        "the filter exhausted the memory or stack it may use",
    )
    .with_hint(format!(
        "a filter may use {} MiB of memory, and a value it builds may nest only as deep as \
         jq's functions can descend (some thousands of levels): build less at once, or split \
         the work over several `jq` items",
        super::serve::MEMORY / (1024 * 1024)
    ))
}
