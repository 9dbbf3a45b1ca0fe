//! A cgroup (v2) of its own for each `cmd_run` item, where the machine lets seqc make one
//! (docs/robustness.md, "Processes"): a process cannot leave a cgroup by clearing its
//! environment, changing session or being re-parented, so the one escape the process scan
//! misses (`env -i setsid` plus a double fork, before the item ends) is found there, and
//! `cgroup.kill` ends them all at SIGKILL.
//!
//! Found at run time: the cgroup2 mount (from /proc/self/mountinfo) and seqc's own cgroup (from
//! /proc/self/cgroup); an item's cgroup is made inside seqc's. Where there is no cgroup2
//! hierarchy or seqc may not make a cgroup in it (an unprivileged user without a delegated
//! subtree), the first failure is remembered and items run without one, as before.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// One item's cgroup: a directory under seqc's own cgroup.
#[derive(Debug)]
pub(super) struct ItemGroup {
    dir: PathBuf,
}

/// Set once making a cgroup failed: the machine does not allow it, so no item tries again.
static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

/// Whether items run in a cgroup of their own here: seqc's cgroup2 directory is found and the
/// last attempt to make an item's cgroup did not fail.
pub fn available() -> bool {
    base().is_some() && !UNAVAILABLE.load(Ordering::Relaxed)
}

/// seqc's own cgroup directory in the cgroup2 hierarchy, found once.
fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(find_base).as_deref()
}

fn find_base() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // Fields: id parent major:minor root mount-point options... - fstype source options.
    let mount = mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fstype = after.split_whitespace().next()?;
        (fstype == "cgroup2").then(|| before.split_whitespace().nth(4))?
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let dir = Path::new(mount).join(path.trim_start_matches('/'));
    if !dir.join("cgroup.procs").exists() {
        return None;
    }
    sweep(&dir);
    Some(dir)
}

/// Removes the empty cgroups that seqc processes no longer running left behind (one that
/// exited before its killer removed them); a cgroup with a process in it stays.
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .map(|(pid, _)| pid)
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// The start of an item's cgroup's name, followed by the item's cookie (`PID-N`).
const PREFIX: &str = "seqc-item-";

/// Where the cgroup of the item marked `cookie` is (or would be).
fn dir_of(cookie: &str) -> Option<PathBuf> {
    Some(base()?.join(format!("{PREFIX}{cookie}")))
}

impl ItemGroup {
    /// A new cgroup for the item marked `cookie`, or `None` where none can be made.
    pub(super) fn new(cookie: &str) -> Option<ItemGroup> {
        if UNAVAILABLE.load(Ordering::Relaxed) {
            return None;
        }
        let dir = dir_of(cookie)?;
        match std::fs::create_dir(&dir) {
            Ok(()) => Some(ItemGroup { dir }),
            Err(_) => {
                UNAVAILABLE.store(true, Ordering::Relaxed);
                None
            }
        }
    }

    /// The cgroup already made for the item marked `cookie`, if it is still there: for a
    /// process about to exit, which kills what the killer thread holds without waiting for it.
    pub(super) fn existing(cookie: &str) -> Option<ItemGroup> {
        let dir = dir_of(cookie)?;
        dir.is_dir().then_some(ItemGroup { dir })
    }

    /// The path of the file a process writes `0` to, to move itself into the cgroup: made
    /// before the fork, since the child may not allocate.
    pub(super) fn procs_path(&self) -> Option<CString> {
        CString::new(
            self.dir
                .join("cgroup.procs")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .ok()
    }

    /// The processes in the cgroup now.
    pub(super) fn members(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// SIGKILL to every process in the cgroup, by the kernel (`cgroup.kill`, Linux 5.14):
    /// none can fork away meanwhile. Without it, the processes found by [`Self::members`] are
    /// signalled by the caller.
    pub(super) fn kill(&self) {
        // A kernel without `cgroup.kill`: the members are signalled one by one instead.
        let _ = std::fs::write(self.dir.join("cgroup.kill"), "1");
    }

    /// Removes the cgroup once it is empty; `false` while a process is still in it.
    pub(super) fn remove(&self) -> bool {
        match std::fs::remove_dir(&self.dir) {
            Ok(()) => true,
            Err(error) => error.kind() == std::io::ErrorKind::NotFound,
        }
    }
}

/// Moves the process `command` starts into `group` between fork and exec, so that it is in the
/// cgroup before it can start anything. A child that cannot join fails to start: it is not
/// run uncontained once seqc has a cgroup for it.
#[cfg(target_os = "linux")]
pub(super) fn join(command: &mut tokio::process::Command, group: &ItemGroup) {
    let Some(procs) = group.procs_path() else {
        return;
    };
    #[allow(
        unsafe_code,
        reason = "the only way to act in the child between fork and exec; see SAFETY"
    )]
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: open(2), write(2) and close(2) through rustix on a path made before
    // the fork; nothing allocates or takes a lock (an error is a raw errno).
    unsafe {
        command.pre_exec(move || {
            use rustix::fs::{Mode, OFlags, open};
            let fd = open(
                procs.as_c_str(),
                OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            rustix::io::write(&fd, b"0")?;
            Ok(())
        });
    }
}
