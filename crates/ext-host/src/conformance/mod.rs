//! The conformance kit: a scripted host that tells a sidecar author, in any language, whether
//! their sidecar speaks Extension Protocol v1.
//!
//! [`run`] starts the sidecar itself, several times (a fresh process for each group of
//! statements that needs a fresh connection: handshake variants, fatal framing, shutdown and end
//! of input), writes exact frames, malformed ones included, and checks every sidecar-side (S)
//! statement of the spec's §17 checklist that can be observed from outside, plus the sidecar-side
//! rules of other sections (intercept answers per subscribed point, events never answered, UI
//! calls within the declared capability, content reads, `timeoutMillis`, shutdown and exit
//! codes, the provider streams when the manifest declares `providers`). [`statements`] lists
//! them all, the ones that cannot be observed from outside with the reason.
//!
//! Bounds: every read and write waits at most [`Options::reply_timeout`] (5 s by default; the
//! answer to `extension/initialize` [`Options::start_timeout`], 10 s), every
//! process is killed when its group of checks ends (killed on drop through `sidewire-process`,
//! reaped by its supervision task), at most [`Options::parallel`] processes run at once, and the
//! whole run stops at [`Options::run_budget`] (60 s by default: a well-behaved sidecar takes a
//! few seconds). Lines read from a sidecar are bounded by the frame limit plus one read chunk;
//! evidence keeps at most 4 frames of at most 300 characters per failed statement, with terminal
//! controls escaped, so a report is always safe to print.
//!
//! The kit plays a host: it answers `host/ui/publish` with `{"accepted":true}`,
//! `host/ui/request` with `{"cancelled":true}`, and `host/content/read` from the payloads it
//! externalized (or holds the answer when a check needs a callback to stay pending).
//!
//! # Where the spec leaves room, and what the kit chose
//!
//! * **A request kept pending** (items 11, 16, 88's cancelled callback, 49's overrun) is an
//!   intercept at a subscribed point whose payload the kit externalized and whose
//!   `host/content/read` it holds: the only way a host can keep any sidecar's callback busy.
//!   Without a subscribed point these statements do not apply.
//! * **Item 49's overrun** expects the answer within `timeoutMillis` + 2 s of an intercept
//!   whose content read is never answered: the budget covers the work on the way to the
//!   callback (the host stops waiting at `timeoutMillis` whatever the sidecar is doing).
//! * **An error answer to an intercept** is legal on the wire (`S-intercept` passes it when its
//!   reason is one of §3's; item 15 checks its `data`): a host treats it as a failure of the
//!   plugin, not of the protocol.
//! * **Item 14** applies only when the manifest lacks capability `ui` (with it, the sidecar may
//!   well have a UI handler); **item 50**'s stderr line is required only from a sidecar that
//!   claims something under its own manifest (it has handlers to leave out).
//! * **End of input in state `new`** may come before the sidecar finished starting, so that
//!   exit is waited for `start_timeout`; after `ready` and after shutdown the host's 750 ms
//!   apply.
//! * **A command target** (`Target::Command`) is resolved on `PATH` and may be a shell script
//!   or an interpreter: the kit is a development tool, and only installed plugins are bound by
//!   the launch contract (which `Target::Installed` and `Target::Package` apply).
//!
//! # How the kit itself is checked
//!
//! `tests/it/conformance.rs` runs it on the SDK's examples, `tests/fixtures/conformance/` (a
//! stdlib-only Python sidecar with `--flaw` switches, and a shell launcher that greets on stdout)
//! and the Python provider `tests/fixtures/python_provider/`, asserting the exact set of failed
//! statements of each: none for the examples and the unflawed Python sidecars, and for each flaw
//! the statements it breaks, so every checked statement is failed by at least one flaw.

mod checks;
mod report;
mod session;
mod statements;
mod target;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

pub use report::{Frame, FrameDirection, Report, StatementResult, Verdict};
pub use statements::{Statement, StatementKind, statements};

use crate::error::Error;

/// What to check: where the sidecar and its manifest come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// An installed plugin of the store under `state_dir`, launched exactly as the host would
    /// (spec §12.3).
    Installed {
        /// The host's state directory (the [`PluginStore`](crate::PluginStore)'s).
        state_dir: PathBuf,
        /// The plugin id.
        id: String,
    },
    /// A package directory holding `reasonix-plugin.json`, launched as if installed there.
    Package(PathBuf),
    /// Any command, with the manifest that describes it. The command is resolved on `PATH`
    /// when it has no `/` (unlike a plugin's, so `python3 my_sidecar.py` works), and runs in
    /// the manifest's directory with the manifest `env` and the `REASONIX_PLUGIN_*` variables.
    Command {
        /// The manifest file.
        manifest: PathBuf,
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// How to run the kit.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Only statements matching one of these selectors ([`Statement::matches`]); empty = all.
    pub only: Vec<String>,
    /// Also check the statements that need a spec deadline to pass in real time (item 19).
    pub slow: bool,
    /// The longest wait for one answer, one write, or an exit that a check expects.
    pub reply_timeout: Duration,
    /// The longest wait for the answer to `extension/initialize`, and for an exit at end of
    /// input in state `new`: they include the sidecar's start (an interpreter's, on a busy
    /// machine). 10 s by default; the host's handshake deadline is 30 s.
    pub start_timeout: Duration,
    /// How long a sidecar may take to exit once stdin is closed (spec §6.6: 750 ms).
    pub exit_budget: Duration,
    /// How many sidecar processes run at once.
    pub parallel: usize,
    /// The whole run's budget (`slow` adds 45 s); statements not done by then fail with the
    /// reason.
    pub run_budget: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            only: Vec::new(),
            slow: false,
            reply_timeout: Duration::from_secs(5),
            start_timeout: Duration::from_secs(10),
            exit_budget: sidewire_ext_protocol::SHUTDOWN_EXIT_WAIT,
            parallel: 4,
            run_budget: Duration::from_secs(60),
        }
    }
}

impl Options {
    /// The defaults: every statement, the spec's budgets, 4 processes at a time.
    pub fn new() -> Self {
        Options::default()
    }

    /// Adds a `--only` selector.
    pub fn only(mut self, selector: impl Into<String>) -> Self {
        self.only.push(selector.into());
        self
    }

    /// Includes the slow statements.
    pub fn slow(mut self, slow: bool) -> Self {
        self.slow = slow;
        self
    }

    /// Sets the longest wait for one answer, write or expected exit (tests shorten it: a
    /// broken sidecar is often found by waiting for an answer that never comes).
    pub fn reply_timeout(mut self, timeout: Duration) -> Self {
        self.reply_timeout = timeout;
        self
    }

    /// Sets the whole run's budget.
    pub fn run_budget(mut self, budget: Duration) -> Self {
        self.run_budget = budget;
        self
    }

    /// Sets how many sidecar processes run at once (at least 1).
    pub fn parallel(mut self, parallel: usize) -> Self {
        self.parallel = parallel.max(1);
        self
    }

    /// Whether `statement` is selected.
    fn selects(&self, statement: &Statement) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| statement.matches(s))
    }
}

/// Runs the kit against `target` and returns the report (one result per selected statement).
/// An `Err` means the target could not be resolved (no such plugin, no manifest, no runtime, a
/// command the launch contract refuses); everything the sidecar does is in the report.
///
/// Must be called within a Tokio runtime with the time and I/O drivers enabled, from a thread
/// that outlives the run (a runtime worker, or the thread driving the runtime): the children's
/// death signal follows the spawning thread. Each child's supervision runs on a task of the
/// caller's runtime.
///
/// # Cancel safety
///
/// Dropping the future kills every sidecar it started (synchronously, through
/// `sidewire-process`); their supervision tasks then reap them.
pub async fn run(target: &Target, options: &Options) -> Result<Report, Error> {
    let launch = target::resolve(target).await?;
    Ok(checks::run(launch, options).await)
}

#[cfg(test)]
mod tests;
