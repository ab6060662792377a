//! Test helpers that read the process tree from `/proc`, for this crate's tests and those of
//! the crates that use it: which processes are below a pid, which carry a marker in their
//! environment, their parent, group and nice value, and bounded polling until they are gone.
//! It is the one place sidewire's tests read `/proc`.
//!
//! Zombies (exited, not yet reaped) count as gone everywhere here but in [`exists`].

use std::time::{Duration, Instant};

use crate::procfs;

/// The live processes below `pid` (children, their children, ...).
pub fn descendants(pid: u32) -> Vec<u32> {
    let table = procfs::all().unwrap_or_default();
    procfs::descendants_in(pid, &table)
        .into_iter()
        .filter(|stat| !stat.is_zombie())
        .map(|stat| stat.pid)
        .collect()
}

/// The live processes whose environment has the entry `name=value` (set it on a child to find
/// it and everything it starts, wherever they were re-parented).
pub fn with_env(name: &str, value: &str) -> Vec<u32> {
    let entry = format!("{name}={value}");
    procfs::all()
        .unwrap_or_default()
        .into_iter()
        .filter(|stat| !stat.is_zombie() && procfs::environ_has(stat.pid, entry.as_bytes()))
        .map(|stat| stat.pid)
        .collect()
}

/// Whether `pid` is alive (exists and is not a zombie).
pub fn is_alive(pid: u32) -> bool {
    procfs::stat(pid).is_some_and(|stat| !stat.is_zombie())
}

/// Whether `pid` exists at all, zombie or not (a zombie of ours shows it was not reaped).
pub fn exists(pid: u32) -> bool {
    procfs::stat(pid).is_some()
}

/// The nice value of `pid`, while it exists.
pub fn nice_of(pid: u32) -> Option<i32> {
    procfs::nice(pid)
}

/// The parent of `pid`, while it exists.
pub fn parent_of(pid: u32) -> Option<u32> {
    procfs::stat(pid).map(|stat| stat.ppid)
}

/// The process group of `pid`, while it exists.
pub fn group_of(pid: u32) -> Option<u32> {
    procfs::stat(pid).map(|stat| stat.pgrp)
}

/// Polls `done` every 5 ms until it holds or `timeout` passes; whether it held.
pub fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits up to `timeout` for every process carrying `name=value` to be gone; the survivors.
pub fn survivors_with_env(name: &str, value: &str, timeout: Duration) -> Vec<u32> {
    let mut left = Vec::new();
    wait_until(timeout, || {
        left = with_env(name, value);
        left.is_empty()
    });
    left
}

/// `SIGKILL` to each of `pids` (cleanup after a failed assertion; errors ignored).
pub fn kill_all(pids: &[u32]) {
    for &pid in pids {
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}
