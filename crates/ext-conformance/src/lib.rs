#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod checks;
mod error;
mod report;
mod session;
mod statements;
mod target;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

/// The protocol versions a sidecar can be checked against ([`RunOptions::protocol`]).
pub use sidewire_ext_protocol::ProtocolProfile;

pub use crate::error::Error;
pub use crate::report::{Frame, FrameDirection, Report, StatementResult, StatementVerdict};
pub use crate::statements::{Statement, StatementKind, statements};

/// The sidecar to check: where it and its manifest come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sidecar {
    /// An installed plugin, launched exactly as a host launches it (spec §12.3): its install
    /// record's id, root and version (what `sidewire_ext_host::PluginStore::get` gives), and
    /// the manifest under `root`. The kit reads no store of its own.
    Installed {
        /// The plugin id.
        id: String,
        /// The installed root: the copy under the host's state directory, or the linked
        /// directory.
        root: PathBuf,
        /// The version the install record holds.
        version: String,
    },
    /// A package directory holding `reasonix-plugin.json`, launched as if installed there (id
    /// and version from the manifest).
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
pub struct RunOptions {
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
    /// The protocol to check the sidecar against; `None` (the default): the one its
    /// manifest's `apiVersion` picks, as a host would (spec delta §1.4 P2).
    pub protocol: Option<ProtocolProfile>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            only: Vec::new(),
            slow: false,
            reply_timeout: Duration::from_secs(5),
            start_timeout: Duration::from_secs(10),
            exit_budget: sidewire_ext_protocol::SHUTDOWN_EXIT_WAIT,
            parallel: 4,
            run_budget: Duration::from_secs(60),
            protocol: None,
        }
    }
}

impl RunOptions {
    /// The defaults: every statement, the spec's budgets, 4 processes at a time.
    pub fn new() -> Self {
        RunOptions::default()
    }

    /// Adds a selector (a spec section such as `2.3`, a checklist item such as `17.10`, or a
    /// statement id; see [`Statement::matches`]).
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

    /// Checks against `profile` rather than the one the manifest picks (`sidewire ext
    /// conformance --protocol 1|2`): a sidecar that speaks both can be checked in each.
    pub fn protocol(mut self, profile: ProtocolProfile) -> Self {
        self.protocol = Some(profile);
        self
    }

    /// Sets how many sidecar processes run at once (at least 1).
    pub fn parallel(mut self, parallel: usize) -> Self {
        self.parallel = parallel.max(1);
        self
    }

    /// Whether `statement` is selected: it matches one of the selectors, or there are none.
    pub fn selects(&self, statement: &Statement) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| statement.matches(s))
    }
}

/// Runs the kit against `sidecar` and returns the report (one result per selected statement).
/// An `Err` means the sidecar could not be launched at all (no manifest, no runtime, a command
/// the launch contract refuses or that cannot be found); everything the sidecar does is in the
/// report.
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
pub async fn run(sidecar: &Sidecar, options: &RunOptions) -> Result<Report, Error> {
    let launch = target::resolve(sidecar).await?;
    Ok(checks::run(launch, options).await)
}

#[cfg(test)]
mod tests;
