//! The budgets of the bounded close sequence, with the two hosts' defaults, and what a close
//! came to.

use std::time::Duration;

use crate::exit::Exit;

/// The last step a close took before the child was reaped (or the budgets ran out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseStep {
    /// It exited on its own after its stdin closed (or had already exited).
    Stdin,
    /// It needed `SIGTERM`.
    Term,
    /// It needed `SIGKILL`.
    Kill,
}

/// What [`Process::close`](crate::Process::close) came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    /// How it ended; `None` if it was not reaped within the budgets.
    pub exit: Option<Exit>,
    /// The last step taken.
    pub step: CloseStep,
}

/// How long each step of [`Process::close`](crate::Process::close) may take: close stdin and
/// wait, optionally `SIGTERM` the group and wait, then `SIGKILL` the group and wait for the
/// reap. The worst case is `stdin + term + kill`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseBudgets {
    /// From the start of the close until the child must have exited on its own (closing stdin
    /// is how it is asked to).
    pub stdin: Duration,
    /// `Some`: then `SIGTERM` to the group and wait this long. `None`: go straight to
    /// `SIGKILL`.
    pub term: Option<Duration>,
    /// After `SIGKILL`, how long to wait for the reap.
    pub kill: Duration,
}

impl CloseBudgets {
    /// MCP stdio servers: stdin closed, 750 ms; `SIGTERM`, 2 s; `SIGKILL`, 2 s.
    pub const MCP_STDIO: CloseBudgets = CloseBudgets {
        stdin: Duration::from_millis(750),
        term: Some(Duration::from_secs(2)),
        kill: Duration::from_secs(2),
    };

    /// Extension Protocol v1 sidecars (spec §6.6): stdin closed, 750 ms; then `SIGKILL`
    /// (no `SIGTERM` step) and up to 5 s for the reap.
    pub const EXTENSION_SIDECAR: CloseBudgets = CloseBudgets {
        stdin: Duration::from_millis(750),
        term: None,
        kill: Duration::from_secs(5),
    };
}

impl Default for CloseBudgets {
    /// [`CloseBudgets::MCP_STDIO`]: the sequence with every step.
    fn default() -> Self {
        CloseBudgets::MCP_STDIO
    }
}
