//! A running child: the owning [`Process`] handle, the non-owning [`Monitor`], and the
//! [`Supervise`] future that owns the `tokio::process::Child`.
//!
//! Ownership: the child lives in the supervision future, which drains stderr while waiting for
//! it, reaps it, then kills whatever is left of its group (the grandchild an `npx`/`uvx` wrapper
//! leaves behind), reads the last of stderr for at most 250 ms, and publishes how the process
//! ended: first "reaped" (so a connection can end at once even if a descendant holds stdout),
//! then "finished" (the tail is final). Handles only ever signal the group by id, and only
//! until it was reaped and sent its last `SIGKILL`: after that the id may be reused.
//!
//! Nothing here needs a runtime in `Drop`: `kill(2)` is synchronous. Dropping the last
//! [`Process`] kills the group; dropping the [`Supervise`] future before it reaped the child
//! kills the group and reaps the child with a short blocking `waitpid` loop.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr};
use tokio::sync::{OnceCell, watch};

use crate::close::{CloseBudgets, CloseStep, Closed};
use crate::exit::Exit;
use crate::redact::Redactor;
use crate::tail::{self, Forward, Tail};

/// How long stderr is still read after the process was reaped: a descendant that left the
/// group and holds the pipe must not keep supervision alive.
pub const STDERR_AFTER_EXIT: Duration = Duration::from_millis(250);

/// How long dropping an unfinished [`Supervise`] waits, blocking, to reap the child it just
/// killed (SIGKILL takes effect within microseconds).
const DROP_REAP_BUDGET: Duration = Duration::from_millis(50);

/// The size of one stderr read.
const READ_CHUNK: usize = 64 * 1024;

/// Where a child is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    /// Reaped, its group killed; the last of stderr may still be read.
    Reaped(Exit),
    /// Reaped and stderr read to its end (or for [`STDERR_AFTER_EXIT`]).
    Finished(Exit),
}

impl State {
    fn exit(self) -> Option<Exit> {
        match self {
            State::Running => None,
            State::Reaped(exit) | State::Finished(exit) => Some(exit),
        }
    }
}

/// What every handle and the supervision future share.
#[derive(Debug)]
struct Core {
    pid: u32,
    /// The child was reaped and its group sent its last `SIGKILL`: signal nothing more.
    gone: AtomicBool,
    state: watch::Sender<State>,
    tail: Mutex<Tail>,
    redactor: Redactor,
    /// The close sequence runs once; concurrent and later closes wait for it.
    closing: OnceCell<Closed>,
}

impl Core {
    fn signal(&self, signal: Signal) {
        if !self.gone.load(Ordering::Acquire) {
            kill_group(self.pid, signal);
        }
    }

    fn tail(&self) -> MutexGuard<'_, Tail> {
        self.tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn stderr_tail(&self, redactor: &Redactor) -> String {
        // Copy out under the lock, redact outside it: the drain never waits on a redaction.
        let (bytes, cap) = {
            let tail = self.tail();
            (tail.bytes(), tail.cap())
        };
        tail::render(&bytes, cap, redactor)
    }

    async fn wait(&self, finished: bool) -> Exit {
        let mut state = self.state.subscribe();
        let state = state
            .wait_for(|state| match state {
                State::Running => false,
                State::Reaped(_) => !finished,
                State::Finished(_) => true,
            })
            .await
            // The sender lives in `self`, so the channel cannot close while we wait.
            .map(|state| *state)
            .unwrap_or(State::Finished(Exit::Unknown));
        state.exit().unwrap_or(Exit::Unknown)
    }

    /// Waits up to `within` for the reap.
    async fn wait_reaped_for(&self, within: Duration) -> Option<Exit> {
        tokio::time::timeout(within, self.wait(false)).await.ok()
    }
}

/// Sends `signal` to process group `pgid`, ignoring "no such group". Refuses ids that would
/// address every process (0, 1) or our own group.
fn kill_group(pgid: u32, signal: Signal) {
    let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) else {
        return;
    };
    if pgid <= 1 || rustix::process::getpgrp() == pid {
        return;
    }
    // ESRCH (the group is empty) is the goal, not an error.
    let _ = rustix::process::kill_process_group(pid, signal);
}

/// The owning handle on a supervised child (cheap to clone). Dropping the last clone sends
/// `SIGKILL` to the whole group, synchronously, unless it was already reaped.
#[derive(Debug, Clone)]
pub struct Process {
    owner: Arc<Owner>,
}

#[derive(Debug)]
struct Owner {
    core: Arc<Core>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        // Synchronous and runtime-free: an owner dropped without a close (or a panic) still
        // leaves no child behind.
        self.core.signal(Signal::KILL);
    }
}

/// A non-owning view of a supervised child (cheap to clone): its exit and its stderr tail.
/// Holding one does not keep the child alive.
#[derive(Debug, Clone)]
pub struct Monitor {
    core: Arc<Core>,
}

impl Process {
    pub(crate) fn start(
        pid: u32,
        child: Child,
        stderr: ChildStderr,
        redactor: Redactor,
        tail_bytes: usize,
        forward: Option<Forward>,
    ) -> (Process, Supervise) {
        let core = Arc::new(Core {
            pid,
            gone: AtomicBool::new(false),
            state: watch::channel(State::Running).0,
            tail: Mutex::new(Tail::new(tail_bytes)),
            redactor,
            closing: OnceCell::new(),
        });
        // The reaper is built here, not inside the future: a `Supervise` dropped before its
        // first poll must still kill the group and reap the child.
        let reaper = Reaper {
            child,
            core: Arc::clone(&core),
            armed: true,
        };
        let supervise = Supervise {
            inner: Box::pin(supervise(reaper, stderr, Arc::clone(&core), forward)),
        };
        let process = Process {
            owner: Arc::new(Owner { core }),
        };
        (process, supervise)
    }

    fn core(&self) -> &Arc<Core> {
        &self.owner.core
    }

    /// The child's pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.core().pid
    }

    /// A non-owning view of this child.
    pub fn monitor(&self) -> Monitor {
        Monitor {
            core: Arc::clone(self.core()),
        }
    }

    /// `SIGKILL` to the whole group, now (nothing once it was reaped).
    pub fn kill(&self) {
        self.core().signal(Signal::KILL);
    }

    /// `SIGTERM` to the whole group, now (nothing once it was reaped).
    pub fn terminate(&self) {
        self.core().signal(Signal::TERM);
    }

    /// How it ended, once reaped.
    pub fn exit(&self) -> Option<Exit> {
        self.core().state.borrow().exit()
    }

    /// Waits until the child was reaped (needs the [`Supervise`] future running).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future only stops waiting.
    pub async fn exited(&self) -> Exit {
        self.core().wait(false).await
    }

    /// The last of its stderr, redacted (see [`Monitor::stderr_tail`]).
    pub fn stderr_tail(&self) -> String {
        self.core().stderr_tail(&self.core().redactor)
    }

    /// Closes the child within `budgets`: runs `close_stdin` (the caller's way to close the
    /// child's stdin: drop the pipe, or shut down the protocol layer that owns it) and waits
    /// for the reap until `budgets.stdin` has passed since the start; then, if `budgets.term`
    /// is set, sends `SIGTERM` to the group and waits that long; then sends `SIGKILL` and waits
    /// up to `budgets.kill`. Returns the exit (`None` if the child was not reaped within the
    /// budgets: the [`Supervise`] future is not running, or the child is stuck in the kernel)
    /// and the last step taken.
    ///
    /// Idempotent: concurrent and later calls wait for the one sequence and get its result;
    /// their own `budgets` and `close_stdin` are not used.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops the sequence where it is (signals already sent stay sent); a
    /// later call starts it again from the beginning. Dropping the last `Process` still kills
    /// the group.
    pub async fn close<F>(&self, budgets: CloseBudgets, close_stdin: F) -> Closed
    where
        F: Future<Output = ()>,
    {
        let core = self.core();
        *core
            .closing
            .get_or_init(|| close_sequence(core, budgets, close_stdin))
            .await
    }
}

async fn close_sequence<F>(core: &Core, budgets: CloseBudgets, close_stdin: F) -> Closed
where
    F: Future<Output = ()>,
{
    let start = Instant::now();
    let _ = tokio::time::timeout(budgets.stdin, close_stdin).await;
    let left = budgets.stdin.saturating_sub(start.elapsed());
    if let Some(exit) = core.wait_reaped_for(left).await {
        return Closed {
            exit: Some(exit),
            step: CloseStep::Stdin,
        };
    }
    if let Some(term) = budgets.term {
        tracing::debug!(
            pid = core.pid,
            "the process outlived its stdin; sending its group SIGTERM"
        );
        core.signal(Signal::TERM);
        if let Some(exit) = core.wait_reaped_for(term).await {
            return Closed {
                exit: Some(exit),
                step: CloseStep::Term,
            };
        }
    }
    tracing::debug!(
        pid = core.pid,
        "the process outlived its close budget; killing its group"
    );
    core.signal(Signal::KILL);
    Closed {
        exit: core.wait_reaped_for(budgets.kill).await,
        step: CloseStep::Kill,
    }
}

impl Monitor {
    /// The child's pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.core.pid
    }

    /// How it ended, once reaped.
    pub fn exit(&self) -> Option<Exit> {
        self.core.state.borrow().exit()
    }

    /// Waits until the child was reaped and its group killed. This is the moment a connection
    /// over the child's pipes should end (after a short grace for its last frames), even if a
    /// descendant that left the group still holds stdout.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future only stops waiting.
    pub async fn exited(&self) -> Exit {
        self.core.wait(false).await
    }

    /// Waits until supervision is over: reaped, and stderr read to its end or for at most
    /// [`STDERR_AFTER_EXIT`] more. From then on the stderr tail is final.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future only stops waiting.
    pub async fn finished(&self) -> Exit {
        self.core.wait(true).await
    }

    /// The last of its stderr (16 KiB unless configured), redacted: lossy UTF-8, starting
    /// after a line feed once older bytes were dropped, each line cut at 4 KiB.
    pub fn stderr_tail(&self) -> String {
        self.core.stderr_tail(&self.core.redactor)
    }

    /// The same with `redactor` instead of the one given at spawn (a host whose set of
    /// secrets changed since).
    pub fn stderr_tail_with(&self, redactor: &Redactor) -> String {
        self.core.stderr_tail(redactor)
    }
}

/// The supervision future of one child: drains stderr, reaps the child, kills what is left of
/// its group, reads the last of stderr (bounded) and publishes the exit. It resolves to the
/// exit. The library never spawns it: run it on a task of your own or inside a driver.
///
/// Dropping it before the child was reaped kills the group and reaps the child synchronously
/// (bounded); the exit is then published as [`Exit::Unknown`] if the reap did not happen in
/// time.
pub struct Supervise {
    inner: Pin<Box<dyn Future<Output = Exit> + Send>>,
}

impl std::fmt::Debug for Supervise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervise").finish_non_exhaustive()
    }
}

impl Future for Supervise {
    type Output = Exit;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Exit> {
        self.inner.as_mut().poll(cx)
    }
}

async fn supervise(
    mut reaper: Reaper,
    stderr: ChildStderr,
    core: Arc<Core>,
    forward: Option<Forward>,
) -> Exit {
    let drain = drain(stderr, &core, forward);
    tokio::pin!(drain);
    let mut drained = false;
    // Both at once: a child blocked on a full stderr pipe would never exit.
    let status = tokio::select! {
        status = reaper.child.wait() => status,
        () = &mut drain => {
            drained = true;
            reaper.child.wait().await
        }
    };
    let exit = status.map_or(Exit::Unknown, Exit::from_status);
    // The child is gone; nothing it started may outlive it. After this kill the group id may
    // be reused, so it is never signalled again.
    core.signal(Signal::KILL);
    core.gone.store(true, Ordering::Release);
    reaper.armed = false;
    core.state.send_replace(State::Reaped(exit));
    if !drained {
        let _ = tokio::time::timeout(STDERR_AFTER_EXIT, &mut drain).await;
    }
    core.state.send_replace(State::Finished(exit));
    exit
}

/// Reads stderr to its end into the tail (and the forwarder). Read errors end it like end of
/// file: the tail is a diagnostic, and a broken stderr must not end supervision.
async fn drain(mut stderr: ChildStderr, core: &Core, mut forward: Option<Forward>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                core.tail().push(&buf[..n]);
                if let Some(forward) = &mut forward {
                    forward.push(&buf[..n]);
                }
            }
        }
    }
    if let Some(forward) = &mut forward {
        forward.finish();
    }
}

/// Owns the child inside the supervision future; if that future is dropped before the child
/// was reaped, kills the group and reaps synchronously.
struct Reaper {
    child: Child,
    core: Arc<Core>,
    armed: bool,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if !self.armed {
            // Reaped, but dropped while reading the last of stderr: the tail is as final as it
            // will get.
            let state = *self.core.state.borrow();
            if let State::Reaped(exit) = state {
                self.core.state.send_replace(State::Finished(exit));
            }
            return;
        }
        self.core.signal(Signal::KILL);
        // A short blocking wait reaps the child here so no zombie depends on a runtime. If it
        // is still not gone, tokio's orphan queue reaps it later (kill_on_drop).
        let deadline = Instant::now() + DROP_REAP_BUDGET;
        let exit = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.core.gone.store(true, Ordering::Release);
                    break Exit::from_status(status);
                }
                Err(_) => break Exit::Unknown,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(None) => break Exit::Unknown,
            }
        };
        self.core.state.send_replace(State::Finished(exit));
    }
}
