//! Stopping everything a `cmd_run` started, whatever way its processes went (docs/reference.md,
//! "Cancellation"; docs/robustness.md, "Processes").
//!
//! Each command runs as the leader of its own process group, with a per-item cookie in its
//! environment (`SEQC_ITEM`). When the item ends — success, failure, timeout, cancellation or a
//! dropped future alike — the item's processes are found and stopped: SIGTERM at once, SIGKILL
//! after [`GRACE`]. An item's processes are
//! - its process group (signalled directly with kill(2), which cannot fail for lack of
//!   resources as spawning `kill` did);
//! - every process whose environment carries the item's cookie: the environment is inherited
//!   through fork and exec, so this finds children that left the group with `setsid` or
//!   `setpgid`, and double-forked daemons, wherever they were re-parented;
//! - every descendant of those (by parent id in /proc), which covers a child that cleared its
//!   environment while its parent lives.
//!
//! - where the machine allows it, every process in the item's cgroup ([`cgroup`]), which a
//!   process cannot leave by clearing its environment or being re-parented; SIGKILL then goes
//!   to the whole cgroup at once (`cgroup.kill`).
//!
//! seqc makes itself the child subreaper ([`become_subreaper`]), so orphans are re-parented to
//! it rather than to PID 1; those it killed are reaped here. Without a cgroup, a process that
//! both clears its environment and is orphaned before the item ends is not found (documented in
//! robustness.md).
//!
//! The work happens on one background thread, never on the engine's workers: dropping a future
//! only hands the item over. [`kill_all_now`] is for a process about to exit.

use super::cgroup::{self, ItemGroup};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable that marks an item's processes.
pub(super) const COOKIE_VAR: &str = "SEQC_ITEM";

/// Between SIGTERM and SIGKILL: long enough for a process to clean up, short enough that a
/// cancelled run winds down at once.
pub const GRACE: Duration = Duration::from_millis(500);

/// One running item's processes; dropping it stops them.
#[derive(Debug)]
pub(super) struct Tracked {
    cookie: String,
    leader: Option<i32>,
    group: Option<ItemGroup>,
}

impl Tracked {
    pub(super) fn new() -> Tracked {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let cookie = format!("{}-{n}", std::process::id());
        let group = ItemGroup::new(&cookie);
        Tracked {
            cookie,
            leader: None,
            group,
        }
    }

    pub(super) fn cookie(&self) -> &str {
        &self.cookie
    }

    /// Makes the process `command` starts join the item's cgroup, where it has one.
    pub(super) fn contain(&self, command: &mut tokio::process::Command) {
        #[cfg(target_os = "linux")]
        if let Some(group) = &self.group {
            cgroup::join(command, group);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = command;
    }

    /// The group leader (the shell), once spawned: it is registered, so that
    /// [`kill_all_now`] finds it.
    pub(super) fn started(&mut self, leader: Option<u32>) {
        self.leader = leader.and_then(|pid| i32::try_from(pid).ok());
        if let Ok(mut live) = live().lock() {
            live.insert(self.cookie.clone(), self.leader);
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        // An empty cgroup (the usual end: nothing was left running) goes now, on this thread:
        // a test or a short-lived process may exit before the killer thread gets to it.
        let group = self
            .group
            .take()
            .filter(|group| !(group.members().is_empty() && group.remove()));
        let job = Job {
            cookie: std::mem::take(&mut self.cookie),
            leader: self.leader,
            group,
        };
        let now = |job: Job| {
            stop(&job, Signal::Kill);
            // Best effort: the processes killed may not have left the cgroup yet.
            if let Some(group) = &job.group {
                group.remove();
            }
        };
        match killer() {
            Some(sender) => {
                if let Err(mpsc::SendError(job)) = sender.send(job) {
                    now(job);
                }
            }
            // No thread could be started: stop everything now, without a grace.
            None => now(job),
        }
    }
}

/// Makes this process the child subreaper (Linux's `PR_SET_CHILD_SUBREAPER`, as init systems
/// and tini do): orphaned descendants are re-parented to it, not to PID 1.
pub fn become_subreaper() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    }
    Ok(())
}

/// Sets the parent-death signal (Linux's `PR_SET_PDEATHSIG`) of the process `command` starts
/// to SIGKILL: if seqc is killed outright (SIGKILL, a crash), where nothing of it runs to stop
/// it, the process dies with it. Every child seqc starts has it: each command's shell, and each
/// MCP server it starts as a client (`--mcp`). The signal is not inherited through fork, so
/// only that process is covered; its own children are orphaned then (docs/reference.md,
/// "Cancellation").
///
/// The kernel sends it when the *thread* that started the child ends: children are started on
/// the runtime's threads (or the one blocked on it), which live as long as seqc runs.
#[cfg(target_os = "linux")]
pub fn die_with_parent(command: &mut tokio::process::Command) {
    let parent = rustix::process::getpid();
    #[allow(
        unsafe_code,
        reason = "the only way to act in the child between fork and exec; see SAFETY"
    )]
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: it makes two system calls (prctl, getppid) through rustix, which
    // neither allocates nor takes locks, and builds an `io::Error` from a raw errno, which does
    // not allocate either.
    unsafe {
        command.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // seqc died between the fork and the prctl: the signal will never come.
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::from_raw_os_error(
                    rustix::io::Errno::SRCH.raw_os_error(),
                ));
            }
            Ok(())
        });
    }
}

/// SIGKILL to the processes of every item still running or winding down: for a process that
/// exits now (a second SIGINT) and cannot wait for the grace. Where items have cgroups, each
/// item's whole cgroup is killed too, so a process that cleared its environment and was
/// orphaned is not left running.
pub fn kill_all_now() {
    let jobs: Vec<Job> = match live().lock() {
        Ok(live) => live
            .iter()
            .map(|(cookie, leader)| Job {
                cookie: cookie.clone(),
                leader: *leader,
                // A handle on the directory alone: the item (or the killer thread) still
                // removes it once empty.
                group: ItemGroup::existing(cookie),
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    for job in &jobs {
        stop(job, Signal::Kill);
    }
}

/// How many items have processes that may still run (started and not yet killed after their
/// grace).
pub fn live_items() -> usize {
    live().lock().map_or(0, |live| live.len())
}

/// Waits up to `within` for every item started to have ended and its processes to have been
/// killed after their grace; whether they all were. A process that stops its runs (a signal to
/// seqc) waits here so that their commands get the grace a cancellation gives them.
pub fn wait_stopped(within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let Ok(mut live) = live().lock() else {
        return false;
    };
    while !live.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        live = match ended().wait_timeout(live, left) {
            Ok((live, _)) => live,
            Err(_) => return false,
        };
    }
    true
}

#[derive(Debug)]
struct Job {
    cookie: String,
    leader: Option<i32>,
    group: Option<ItemGroup>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Signal {
    Stop,
    Cont,
    Term,
    Kill,
}

fn live() -> &'static Mutex<HashMap<String, Option<i32>>> {
    static LIVE: OnceLock<Mutex<HashMap<String, Option<i32>>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Notified whenever items leave [`live`].
fn ended() -> &'static Condvar {
    static KILLED: Condvar = Condvar::new();
    &KILLED
}

fn killer() -> Option<&'static Sender<Job>> {
    static KILLER: OnceLock<Option<Sender<Job>>> = OnceLock::new();
    KILLER
        .get_or_init(|| {
            let (sender, receiver) = mpsc::channel();
            std::thread::Builder::new()
                .name("seqc-killer".to_owned())
                .spawn(move || killer_loop(&receiver))
                .ok()
                .map(|_| sender)
        })
        .as_ref()
}

/// How long a killed process that is this process's child may take to die before it is
/// reaped; past it, it is left (it cannot be: SIGKILL always ends a process).
const REAP_PATIENCE: Duration = Duration::from_secs(10);

/// How often the processes killed but not yet dead are looked at again.
const REAP_TICK: Duration = Duration::from_millis(20);

/// SIGTERM as jobs arrive, SIGKILL once their grace is over, and the killed reaped once dead.
fn killer_loop(receiver: &Receiver<Job>) {
    let mut waiting: Vec<(Instant, Job, HashSet<i32>)> = Vec::new();
    let mut unreaped: Vec<(Instant, i32)> = Vec::new();
    // Cgroups whose killed processes have not all left yet.
    let mut unremoved: Vec<(Instant, ItemGroup)> = Vec::new();
    loop {
        let next = waiting
            .iter()
            .map(|(deadline, _, _)| *deadline)
            .chain(
                (!unreaped.is_empty() || !unremoved.is_empty()).then(|| Instant::now() + REAP_TICK),
            )
            .min();
        let received = match next {
            Some(deadline) => {
                receiver.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            }
            None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(mut job) => {
                // An item whose processes all ended: its cgroup goes now, not after the grace
                // (a process that exits meanwhile would leave it behind).
                if job
                    .group
                    .as_ref()
                    .is_some_and(|group| group.members().is_empty() && group.remove())
                {
                    job.group = None;
                }
                let seen = stop(&job, Signal::Term);
                waiting.push((Instant::now() + GRACE, job, seen));
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                for (_, job, _) in waiting.drain(..) {
                    stop(&job, Signal::Kill);
                }
                return;
            }
        }
        let now = Instant::now();
        let (due, later): (Vec<_>, Vec<_>) = waiting
            .into_iter()
            .partition(|(deadline, _, _)| *deadline <= now);
        waiting = later;
        for (_, mut job, seen) in due {
            let mut killed = stop(&job, Signal::Kill);
            killed.extend(seen);
            unreaped.extend(to_reap(&killed, job.leader).map(|pid| (now + REAP_PATIENCE, pid)));
            if let Some(group) = job.group.take()
                && !group.remove()
            {
                unremoved.push((now + REAP_PATIENCE, group));
            }
            if let Ok(mut live) = live().lock() {
                live.remove(&job.cookie);
            }
            ended().notify_all();
        }
        unreaped.retain(|&(give_up, pid)| give_up > now && !reaped(pid));
        unremoved.retain(|(give_up, group)| *give_up > now && !group.remove());
    }
}

/// Signals the item's group and every process found to be the item's; returns their ids.
///
/// They are stopped (SIGSTOP) first, scan after scan until a scan finds none that is not yet
/// stopped: a stopped process can neither fork nor react to the death of a child (a shell that
/// would go on to its next command once its `sleep` is killed), so the set is complete before
/// any of them is signalled. After SIGTERM they are continued, so that they can end cleanly in
/// their grace.
fn stop(job: &Job, signal: Signal) -> HashSet<i32> {
    const ROUNDS: usize = 20;
    let mut stopped = HashSet::new();
    for _ in 0..ROUNDS {
        if let Some(leader) = job.leader {
            signal_group(leader, Signal::Stop);
        }
        let (mut found, uncertain) = members(&job.cookie, job.leader);
        found.extend(job.group.iter().flat_map(ItemGroup::members));
        let new: Vec<i32> = found
            .into_iter()
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if new.is_empty() && !uncertain {
            break;
        }
        for &pid in &new {
            signal_process(pid, Signal::Stop);
        }
        stopped.extend(new);
        if uncertain {
            // A process in the middle of exec shows no environment for an instant.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    if let Some(leader) = job.leader {
        signal_group(leader, signal);
    }
    for &pid in &stopped {
        signal_process(pid, signal);
    }
    if signal == Signal::Kill
        && let Some(group) = &job.group
    {
        group.kill();
    }
    if signal == Signal::Term {
        if let Some(leader) = job.leader {
            signal_group(leader, Signal::Cont);
        }
        for &pid in &stopped {
            signal_process(pid, Signal::Cont);
        }
    }
    stopped
}

#[cfg(unix)]
fn signal_group(pgid: i32, signal: Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        // A group that is already gone (ESRCH) is what we want.
        let _ = rustix::process::kill_process_group(pid, rustix_signal(signal));
    }
}

#[cfg(unix)]
fn signal_process(pid: i32, signal: Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix_signal(signal));
    }
}

#[cfg(unix)]
fn rustix_signal(signal: Signal) -> rustix::process::Signal {
    match signal {
        Signal::Stop => rustix::process::Signal::STOP,
        Signal::Cont => rustix::process::Signal::CONT,
        Signal::Term => rustix::process::Signal::TERM,
        Signal::Kill => rustix::process::Signal::KILL,
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: i32, _signal: Signal) {}

#[cfg(not(unix))]
fn signal_process(_pid: i32, _signal: Signal) {}

/// Of the killed processes, those this process must reap: the ones re-parented to it (the
/// subreaper), and the zombies of the item's group that exited on their own once orphaned (a
/// double fork's middle process). The group leader is the runtime's child and is reaped by it.
#[cfg(unix)]
fn to_reap(killed: &HashSet<i32>, leader: Option<i32>) -> impl Iterator<Item = i32> {
    let me = std::process::id();
    let mut ours: Vec<i32> = killed
        .iter()
        .copied()
        .filter(|&pid| Some(pid) != leader && stat(pid).is_some_and(|s| s.parent == me))
        .collect();
    if let (Some(leader), Ok(entries)) = (leader, std::fs::read_dir("/proc")) {
        let orphans = entries.flatten().filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = stat(pid)?;
            (pid != leader && stat.zombie && stat.parent == me && stat.group == leader)
                .then_some(pid)
        });
        ours.extend(orphans);
    }
    ours.sort_unstable();
    ours.dedup();
    ours.into_iter()
}

/// Whether `pid` has been reaped now (or is not a child to wait for).
#[cfg(unix)]
fn reaped(pid: i32) -> bool {
    use rustix::process::{Pid, WaitOptions, waitpid};
    Pid::from_raw(pid)
        .is_none_or(|pid| !matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None)))
}

#[cfg(not(unix))]
fn to_reap(_killed: &HashSet<i32>, _leader: Option<i32>) -> impl Iterator<Item = i32> {
    std::iter::empty()
}

#[cfg(not(unix))]
fn reaped(_pid: i32) -> bool {
    true
}

/// The processes that are the item's: its cookie in their environment, or descended from the
/// leader or from one of those; and whether a process re-parented to this one showed no
/// environment (one in the middle of exec), so that the scan should be repeated. Empty where
/// there is no /proc.
fn members(cookie: &str, leader: Option<i32>) -> (HashSet<i32>, bool) {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return (HashSet::new(), false);
    };
    let mut uncertain = false;
    let me = i32::try_from(std::process::id()).unwrap_or(-1);
    let needle = format!("{COOKIE_VAR}={cookie}");
    let mut found: HashSet<i32> = HashSet::new();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let stat = stat(pid);
        if let Some(ppid) = stat.as_ref().and_then(|s| i32::try_from(s.parent).ok()) {
            children.entry(ppid).or_default().push(pid);
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if environ
            .split(|&b| b == 0)
            .any(|var| var == needle.as_bytes())
        {
            found.insert(pid);
        } else if environ.is_empty()
            && stat.is_some_and(|s| !s.zombie && i32::try_from(s.parent).ok() == Some(me))
        {
            uncertain = true;
        }
    }
    let mut stack: Vec<i32> = found.iter().copied().chain(leader).collect();
    while let Some(pid) = stack.pop() {
        for &child in children.get(&pid).map_or(&[][..], Vec::as_slice) {
            if child != me && found.insert(child) {
                stack.push(child);
            }
        }
    }
    (found, uncertain)
}

struct Stat {
    zombie: bool,
    parent: u32,
    group: i32,
}

/// State, parent and process group of `pid`, from /proc/PID/stat (the fields after the
/// parenthesised name, which may itself hold spaces and parentheses).
fn stat(pid: i32) -> Option<Stat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let zombie = fields.next()? == "Z";
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(Stat {
        zombie,
        parent,
        group,
    })
}
