//! A server process: its own process group, supervised by the connection's driver, closed
//! within bounded budgets, and killed synchronously when dropped.
//!
//! Ownership: the `tokio::process::Child` lives in the supervision future (part of the
//! client's driver), which reaps it, then kills whatever is left of its group (the grandchild
//! an `npx`/`uvx` wrapper leaves behind), drains the rest of stderr, and publishes how the
//! process ended. Handles ([`ProcessHandle`]) only ever signal the group by id. A group is
//! signalled only until the supervision future has reaped the child and sent the group its
//! last `SIGKILL`: after that its id may be reused by an unrelated process.
//!
//! Nothing here needs a runtime in `Drop`: `kill(2)` is synchronous, and a child dropped
//! unreaped is reaped with a short `waitpid(WNOHANG)` loop or, failing that, by tokio's
//! orphan queue (`kill_on_drop`).

use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use sidewire_jsonrpc::Peer;
use tokio::process::{Child, ChildStderr};
use tokio::sync::{OnceCell, watch};

use crate::protocol::session::{Background, lock};
use crate::stdio::stderr::{self, StderrTail};

/// How long a closing server gets to exit after its stdin closes.
pub(crate) const STDIN_GRACE: Duration = Duration::from_millis(750);
/// How long it gets after `SIGTERM` to its group.
pub(crate) const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long reaping may take after `SIGKILL`.
pub(crate) const KILL_WAIT: Duration = Duration::from_secs(2);
/// How long stderr is still read after the process exited: a grandchild outside the group
/// holding the pipe open must not keep the driver alive.
const STDERR_AFTER_EXIT: Duration = Duration::from_millis(250);
/// How long a drop waits, blocking, to reap a child it just killed.
const DROP_REAP_BUDGET: Duration = Duration::from_millis(50);

/// A handle on a server process (cheap to clone).
#[derive(Clone)]
pub(crate) struct ProcessHandle {
    inner: Arc<ProcessInner>,
}

struct ProcessInner {
    pid: u32,
    /// The child was reaped and its group sent its last `SIGKILL`: signal nothing more.
    finished: AtomicBool,
    /// How the process ended, in words; set after the last of stderr was read.
    exit: watch::Sender<Option<String>>,
    tail: Arc<Mutex<StderrTail>>,
    /// The close sequence runs once; concurrent and later closes wait for it.
    closing: OnceCell<()>,
}

impl std::fmt::Debug for ProcessHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessHandle")
            .field("pid", &self.inner.pid)
            .field("finished", &self.inner.finished.load(Ordering::Relaxed))
            .field("exit", &*self.inner.exit.borrow())
            .finish()
    }
}

impl ProcessHandle {
    pub(crate) fn new(pid: u32, tail: Arc<Mutex<StderrTail>>) -> Self {
        ProcessHandle {
            inner: Arc::new(ProcessInner {
                pid,
                finished: AtomicBool::new(false),
                exit: watch::channel(None).0,
                tail,
                closing: OnceCell::new(),
            }),
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.inner.pid
    }

    fn signal(&self, signal: Signal) {
        if !self.inner.finished.load(Ordering::SeqCst) {
            kill_group(self.inner.pid, signal);
        }
    }

    /// `SIGKILL` to the whole group, now.
    pub(crate) fn kill_now(&self) {
        self.signal(Signal::KILL);
    }

    /// Waits up to `within` for the exit to be published; `true` if it was.
    pub(crate) async fn wait_exit(&self, within: Duration) -> bool {
        let mut exit = self.inner.exit.subscribe();
        // The sender lives in `inner`, which we hold, so `wait_for` cannot fail.
        tokio::time::timeout(within, exit.wait_for(Option::is_some))
            .await
            .is_ok()
    }

    pub(crate) fn exit_status(&self) -> Option<String> {
        self.inner.exit.borrow().clone()
    }

    pub(crate) fn stderr_tail(&self) -> String {
        lock(&self.inner.tail).snapshot()
    }

    /// Closes the server: close its stdin (through the jsonrpc shutdown, which flushes what is
    /// queued and fails what is pending) and wait 750 ms, then `SIGTERM` the group and wait
    /// 2 s, then `SIGKILL` the group and wait up to 2 s for the reaping. Idempotent: later and
    /// concurrent calls wait for the same sequence. Needs the client's driver running to see
    /// the exit; without it the budgets run out and the group is killed all the same.
    pub(crate) async fn close(&self, peer: &Peer) {
        self.inner
            .closing
            .get_or_init(|| async {
                let start = Instant::now();
                let _ = tokio::time::timeout(STDIN_GRACE, peer.shutdown(Duration::ZERO)).await;
                if self
                    .wait_exit(STDIN_GRACE.saturating_sub(start.elapsed()))
                    .await
                {
                    return;
                }
                self.signal(Signal::TERM);
                if self.wait_exit(TERM_GRACE).await {
                    return;
                }
                tracing::debug!(
                    pid = self.inner.pid,
                    "the server ignored SIGTERM; killing its group"
                );
                self.signal(Signal::KILL);
                self.wait_exit(KILL_WAIT).await;
            })
            .await;
    }
}

/// Sends `signal` to process group `pgid`, ignoring "no such group". Refuses ids that would
/// address every process (0, 1) or our own group.
pub(crate) fn kill_group(pgid: u32, signal: Signal) {
    let Ok(raw) = i32::try_from(pgid) else {
        return;
    };
    let Some(pid) = Pid::from_raw(raw) else {
        return;
    };
    if raw <= 1 || rustix::process::getpgrp() == pid {
        return;
    }
    let _ = rustix::process::kill_process_group(pid, signal);
}

/// Lowers the scheduling priority of every process in the group (nice 10). Applied to the
/// group right after spawning, so anything the child already started is covered, and what it
/// starts later inherits it.
pub(crate) fn lower_priority(pgid: u32) -> std::io::Result<()> {
    let pid = i32::try_from(pgid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| std::io::Error::other("invalid process group id"))?;
    rustix::process::setpriority_pgrp(Some(pid), 10).map_err(std::io::Error::from)
}

/// The supervision future: drains stderr while waiting for the child, then kills what is left
/// of its group, reads the last of stderr (bounded) and publishes how the process ended.
pub(crate) fn supervise(child: Child, stderr: ChildStderr, handle: ProcessHandle) -> Background {
    Box::pin(async move {
        let mut reaper = Reaper {
            child,
            handle: handle.clone(),
            armed: true,
        };
        let drain = stderr::drain(stderr, Arc::clone(&handle.inner.tail));
        tokio::pin!(drain);
        let mut drained = false;
        let status = tokio::select! {
            status = reaper.child.wait() => status,
            () = &mut drain => {
                drained = true;
                reaper.child.wait().await
            }
        };
        // The server is gone; nothing it started may outlive it.
        handle.signal(Signal::KILL);
        handle.inner.finished.store(true, Ordering::SeqCst);
        reaper.armed = false;
        if !drained {
            let _ = tokio::time::timeout(STDERR_AFTER_EXIT, &mut drain).await;
        }
        let text = match status {
            Ok(status) => describe(status),
            Err(err) => format!("could not be waited for: {err}"),
        };
        handle.inner.exit.send_replace(Some(text));
    })
}

fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("ended ({status})"),
    }
}

/// Owns the child inside the supervision future; if that future is dropped before the child
/// was reaped, kills the group and reaps synchronously.
struct Reaper {
    child: Child,
    handle: ProcessHandle,
    armed: bool,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.handle.signal(Signal::KILL);
        // SIGKILL takes effect within microseconds; a short blocking wait reaps the child here
        // so no zombie depends on a runtime. If it is still not gone, tokio's kill-on-drop
        // hands it to the orphan queue.
        let deadline = Instant::now() + DROP_REAP_BUDGET;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => {
                    self.handle.inner.finished.store(true, Ordering::SeqCst);
                    return;
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(None) => return,
            }
        }
    }
}
