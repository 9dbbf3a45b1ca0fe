//! How the commands that run things start and stop (docs/reference.md, "Cancellation"): the
//! runtime `run`, `mcp` and `worker` run on, with seqc the child subreaper of what their
//! commands leave, and SIGINT, SIGTERM, SIGHUP and SIGQUIT, which stop what runs as a cancellation does
//! before seqc exits with 128 plus the signal's number. `lsp`, which runs nothing, only exits.
//!
//! The signals are watched on a thread of their own, with a runtime of its own, registered
//! before the command starts anything: no signal is lost to the default action (which would
//! end seqc and leave every command running), and a second one is heard while the first winds
//! down, even once the command's runtime is gone.

use crate::status::{Status, trouble};
use seq_exec::builtin::{KILL_GRACE, kill_all_now, wait_stopped};
use seq_exec::engine::CancellationToken;
use std::future::Future;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// What the first signal does; a second one always exits at once, killing what still runs.
#[derive(Clone, Copy, Debug)]
pub enum OnSignal {
    /// Cancel the runs (`run`, `mcp`): the command's [`Runtime::stop`] token is cancelled, the
    /// runs wind down as a cancelled run does (their commands get their grace), then seqc exits.
    /// The text is what seqc says on stderr.
    Cancel(&'static str),
    /// Stop serving (`worker`): the attempts in flight are dropped before their processes are
    /// stopped, so that none records a command killed under it as the step's outcome; the
    /// Restate server runs them again elsewhere, as after a crash.
    Abandon,
    /// Exit at once (`lsp`): nothing runs that could be stopped.
    Exit,
}

/// Past the grace, how long seqc waits for its runs to wind down before it kills what is left.
const WIND_DOWN: Duration = Duration::from_secs(2);

/// How long stopping the runtime waits for its blocking work (a read of stdin never ends).
const SHUTDOWN: Duration = Duration::from_millis(500);

/// The runtime of a command that runs sequences or serves them, and the signals that stop it.
#[derive(Debug)]
pub struct Runtime {
    tokio: tokio::runtime::Runtime,
    watch: Watch,
    on_signal: OnSignal,
}

impl Runtime {
    /// seqc made the child subreaper (orphans of the runs' commands — double forks, `setsid` —
    /// come back to it, to be stopped with their item; not fatal where unsupported: the item's
    /// mark still finds them), the signals watched, and a multi-threaded runtime.
    pub fn start(on_signal: OnSignal) -> Result<Runtime, Status> {
        let _ = seq_exec::builtin::become_subreaper();
        let watch = Watch::start(on_signal)
            .map_err(|error| trouble(format_args!("cannot watch for signals: {error}")))?;
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|error| trouble(format_args!("cannot start the runtime: {error}")))?;
        Ok(Runtime {
            tokio,
            watch,
            on_signal,
        })
    }

    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.tokio.block_on(future)
    }

    /// Cancelled by the first signal.
    pub fn stop(&self) -> CancellationToken {
        self.watch.stop.clone()
    }

    /// Ends the command: after a signal, its runs are given the time to wind down (see
    /// [`OnSignal`]); then the runtime stops, whatever its commands still have running is
    /// killed, and the status is the signal's if one came, else `status`.
    pub fn finish(self, status: Status) -> Status {
        let signalled = self.watch.received();
        if signalled.is_some() && matches!(self.on_signal, OnSignal::Cancel(_)) {
            wait_stopped(KILL_GRACE + WIND_DOWN);
        }
        // Drops every task still running (a worker's attempts), which stops their items.
        self.tokio.shutdown_timeout(SHUTDOWN);
        if signalled.is_some() {
            wait_stopped(KILL_GRACE + WIND_DOWN);
        }
        kill_all_now();
        signalled.unwrap_or(status)
    }
}

/// The signals watched, and what came.
#[derive(Debug)]
pub struct Watch {
    stop: CancellationToken,
    received: Arc<AtomicU8>,
}

impl Watch {
    /// Registers SIGINT, SIGTERM, SIGHUP and SIGQUIT before returning, then watches them on a thread of
    /// its own.
    pub fn start(on_signal: OnSignal) -> io::Result<Watch> {
        let stop = CancellationToken::new();
        let received = Arc::new(AtomicU8::new(0));
        let (registered, registration) = std::sync::mpsc::sync_channel(1);
        let watched = (stop.clone(), Arc::clone(&received));
        std::thread::Builder::new()
            .name("seqc-signals".to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = registered.send(Err(error));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match Signals::register() {
                        Ok(signals) => {
                            let _ = registered.send(Ok(()));
                            signals.watch(on_signal, &watched.0, &watched.1).await;
                        }
                        Err(error) => {
                            let _ = registered.send(Err(error));
                        }
                    }
                });
            })?;
        registration
            .recv()
            .map_err(|_| io::Error::other("the signal thread ended"))??;
        Ok(Watch { stop, received })
    }

    /// The status of the first signal, if one came.
    fn received(&self) -> Option<Status> {
        status_of(self.received.load(Ordering::SeqCst))
    }
}

struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
    /// SIGQUIT's default action ends seqc at once (with a core) and leaves every command it
    /// started running: it is a request to stop like SIGTERM.
    quit: tokio::signal::unix::Signal,
}

impl Signals {
    fn register() -> io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    async fn watch(mut self, on_signal: OnSignal, stop: &CancellationToken, received: &AtomicU8) {
        loop {
            let status = tokio::select! {
                Some(()) = self.interrupt.recv() => Status::Interrupted,
                Some(()) = self.terminate.recv() => Status::Terminated,
                Some(()) = self.hangup.recv() => Status::HungUp,
                Some(()) = self.quit.recv() => Status::Quit,
                else => return,
            };
            let first = received
                .compare_exchange(0, status as u8, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            let says = match on_signal {
                OnSignal::Cancel(says) => Some(says),
                OnSignal::Abandon => Some("stopping the worker"),
                OnSignal::Exit => None,
            };
            match says {
                Some(says) if first => {
                    // Whoever watched stderr may be gone (a closed terminal): the exit status
                    // still tells.
                    let _ = writeln!(
                        io::stderr().lock(),
                        "seqc: {says}; send the signal again to stop at once"
                    );
                    stop.cancel();
                }
                Some(_) | None => {
                    kill_all_now();
                    std::process::exit(i32::from(status as u8));
                }
            }
        }
    }
}

fn status_of(code: u8) -> Option<Status> {
    [
        Status::Interrupted,
        Status::Terminated,
        Status::HungUp,
        Status::Quit,
    ]
    .into_iter()
    .find(|status| *status as u8 == code)
}
