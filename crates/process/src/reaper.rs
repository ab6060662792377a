//! For binaries: becoming a child subreaper, and killing and reaping everything still below the
//! current process at shutdown.
//!
//! A child that calls `setsid()` (a daemon) leaves its process group, so killing the group
//! misses it, and when its parent dies it is re-parented to PID 1 and outlives the host. With
//! `PR_SET_CHILD_SUBREAPER` set, such orphans are re-parented to the host instead, stay in its
//! tree, and [`kill_descendants`] finds them by walking `/proc`.
//!
//! What remains: the flag is process-global (so the libraries only offer it; the binary turns
//! it on), and it cannot help once the host itself is gone. A daemon that double-forks after
//! the host was SIGKILLed is re-parented past the dead host to PID 1 (or the nearest surviving
//! subreaper) and survives; the death signal only reaches the host's direct children.

use std::time::{Duration, Instant};

use rustix::process::{Pid, PidfdFlags, Signal, WaitOptions};

use crate::error::Error;
use crate::procfs;

/// Makes the current process a child subreaper (`PR_SET_CHILD_SUBREAPER`): orphaned
/// descendants are re-parented to it instead of PID 1. Process-global and inherited by
/// nothing; call it once, early, from a binary's `main`.
pub fn set_child_subreaper() -> Result<(), Error> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).map_err(|errno| {
        Error::Os {
            what: "make this process a child subreaper",
            source: errno.into(),
        }
    })
}

/// Sends `SIGKILL` to every process below the current one (children, their children, and the
/// orphans a subreaper adopted) and reaps the direct children among them, repeating until none
/// is left or `budget` has passed. Returns how many processes were killed.
///
/// Blocking (it polls `/proc` every millisecond); call it at the very end of shutdown, after
/// the hosts closed their children: it also reaps children a `tokio::process::Child` would
/// have, whose waits then report [`Exit::Unknown`](crate::Exit::Unknown).
///
/// Each process is signalled through a pidfd opened after its parent was checked, so a pid
/// reused by an unrelated process between the scan and the kill is never signalled.
pub fn kill_descendants(budget: Duration) -> Result<usize, Error> {
    let me = std::process::id();
    let deadline = Instant::now() + budget;
    let mut killed = std::collections::BTreeSet::new();
    loop {
        let table = procfs::all().map_err(|source| Error::Os {
            what: "read the process table from /proc",
            source,
        })?;
        let below = procfs::descendants_in(me, &table);
        if below.is_empty() {
            return Ok(killed.len());
        }
        for stat in &below {
            if stat.is_zombie() {
                continue;
            }
            if kill_checked(stat.pid, stat.ppid) {
                killed.insert(stat.pid);
            }
        }
        for stat in below.iter().filter(|s| s.ppid == me) {
            if let Some(pid) = i32::try_from(stat.pid).ok().and_then(Pid::from_raw) {
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
        if Instant::now() >= deadline {
            return Ok(killed.len());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `SIGKILL` to `pid` if it is still the child of `ppid`.
fn kill_checked(pid: u32, ppid: u32) -> bool {
    let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    let still_ours = || procfs::stat(pid).is_some_and(|now| now.ppid == ppid);
    match rustix::process::pidfd_open(raw, PidfdFlags::empty()) {
        // The pidfd pins the process the pid named when it was opened; if that is still the
        // child of `ppid`, the scan saw this very process.
        Ok(fd) => still_ours() && rustix::process::pidfd_send_signal(&fd, Signal::KILL).is_ok(),
        // Kernels before 5.3 have no pidfds: check and kill by pid (a reuse in between is then
        // possible, but needs the process to have been reaped, which only its parent, one of
        // ours, can do).
        Err(rustix::io::Errno::NOSYS) => {
            still_ours() && rustix::process::kill_process(raw, Signal::KILL).is_ok()
        }
        Err(_) => false,
    }
}
