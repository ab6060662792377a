//! Sidecar processes: spawning one per the launch contract inside its own process group,
//! draining its stderr into a bounded tail all the time, watching for its exit, and killing the
//! whole group, synchronously on drop if nothing else did (spec §12.3, §13.4, §13.5).
//!
//! This module knows nothing of the protocol: it hands the connection layer the child's stdin
//! and stdout and reports how the process ended. Killing is `killpg(SIGKILL)` on the group the
//! child leads, so grandchildren die with it; `Drop` needs no runtime.

mod tail;

use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::error::Stage;
use crate::launch::LaunchSpec;
use crate::util::lock;

pub(crate) use self::tail::Tail;

/// How a sidecar process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited with this status code.
    Status(i32),
    /// A signal killed it.
    Signal(i32),
}

impl Exit {
    fn from_status(status: ExitStatus) -> Exit {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Status(code),
            (None, Some(signal)) => Exit::Signal(signal),
            (None, None) => Exit::Status(-1),
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Status(code) => write!(f, "exited with status {code}"),
            Exit::Signal(signal) => write!(f, "killed by signal {signal}"),
        }
    }
}

/// The process group a sidecar leads. Killing it is idempotent, and dropping the last handle
/// kills it unless the group is known to be gone already.
#[derive(Debug)]
pub(crate) struct Group {
    pgid: Pid,
    /// Set once the leader was reaped and the group killed after it: from then on the id may be
    /// reused by an unrelated group, so it is never signalled again.
    gone: AtomicBool,
}

impl Group {
    /// Sends SIGKILL to every process in the group.
    pub(crate) fn kill(&self) {
        if !self.gone.load(Ordering::Acquire) {
            // ESRCH (the group is empty) is the goal, not an error.
            let _ = kill_process_group(self.pgid, Signal::KILL);
        }
    }

    /// The leader's pid (also the group id).
    pub(crate) fn pid(&self) -> u32 {
        self.pgid.as_raw_nonzero().get().unsigned_abs()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Synchronous and runtime-free: a host dropped without `shutdown()` (or a panic) still
        // leaves no sidecar behind.
        self.kill();
    }
}

/// A spawned sidecar: its pipes, its stderr tail, its exit, and its group.
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) group: Arc<Group>,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) tail: Arc<Mutex<Tail>>,
    /// `None` while running; the exit once reaped.
    pub(crate) exit: watch::Receiver<Option<Exit>>,
    /// Set once stderr reached its end (every holder of the pipe is gone).
    pub(crate) drained: watch::Receiver<bool>,
}

/// Spawns the sidecar and starts its stderr drain and exit watcher on the current runtime.
/// Must be called within a Tokio runtime.
pub(crate) fn spawn(spec: &LaunchSpec) -> Result<Process, (Stage, String)> {
    let mut command = Command::new(&spec.command);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A new process group led by the child, so the whole tree can be killed at once.
        .process_group(0)
        // We kill the group ourselves; tokio's per-child kill would miss grandchildren.
        .kill_on_drop(false);
    for (name, value) in &spec.env {
        command.env(name, value);
    }
    let mut child = command.spawn().map_err(|err| {
        (
            Stage::Spawn,
            format!("cannot spawn {}: {err}", spec.command.display()),
        )
    })?;
    let Some(raw_pid) = child.id() else {
        return Err((Stage::Spawn, "the process exited at once".to_owned()));
    };
    let pgid = Pid::from_raw(raw_pid as i32).expect("a child's pid is positive");
    let group = Arc::new(Group {
        pgid,
        gone: AtomicBool::new(false),
    });
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        group.kill();
        return Err((Stage::Pipes, "the child's pipes are missing".to_owned()));
    };
    let tail = Arc::new(Mutex::new(Tail::default()));
    let (drained_tx, drained) = watch::channel(false);
    {
        // Drain stderr continuously: a sidecar blocked on a full stderr pipe would look hung.
        let tail = Arc::clone(&tail);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            loop {
                match stderr.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => lock(&tail).push(&buf[..n]),
                }
            }
            drained_tx.send_replace(true);
        });
    }
    let (exit_tx, exit) = watch::channel(None);
    {
        // Weak: the watcher must not keep the group alive, or dropping the last handle would
        // not kill it.
        let group = Arc::downgrade(&group);
        tokio::spawn(async move {
            let status = child.wait().await;
            // Whatever the leader left behind (grandchildren holding pipes) dies with it.
            if let Some(group) = group.upgrade() {
                group.kill();
                group.gone.store(true, Ordering::Release);
            }
            let exit = match status {
                Ok(status) => Exit::from_status(status),
                Err(_) => Exit::Status(-1),
            };
            exit_tx.send_replace(Some(exit));
        });
    }
    Ok(Process {
        group,
        stdin,
        stdout,
        tail,
        exit,
        drained,
    })
}

#[cfg(test)]
mod tests;
