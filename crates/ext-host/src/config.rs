//! How a host is set up: where its state lives, which session it serves, what UI it has, and
//! the budgets it runs with.

use std::path::PathBuf;
use std::time::Duration;

use sidewire_ext_protocol::{
    CALL_TIMEOUT, GENERATION_BOOT_BUDGET, HANDSHAKE_TIMEOUT, SHUTDOWN_TIMEOUT_MILLIS, UiHost,
};

/// How long a `host/ui/request` prompt stays open before it is dismissed (the spec sets no
/// deadline; an unbounded wait would let a sidecar pin a prompt for ever).
pub(crate) const PROMPT_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// How many prompts one connection may have open at once by default.
pub(crate) const PROMPTS_PER_CONNECTION: usize = 4;

/// The host's configuration. The budgets default to the spec's values; tests lower them to
/// stay fast, and applications should leave them alone.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HostConfig {
    /// The state directory holding the installed-plugin store (`$SIDEWIRE_HOME`).
    pub state_dir: PathBuf,
    /// The session every sidecar of this runtime serves (non-empty).
    pub session_id: String,
    /// The workspace root, an absolute path.
    pub workspace_root: PathBuf,
    /// The frontend; `headless` answers `host/ui/*` with `unknown_method`.
    pub ui_host: UiHost,
    /// Where audit lines go; default `<state_dir>/audit.jsonl`.
    pub audit_log: PathBuf,
    /// The budget all boots of one generation share (spec: 30 s).
    pub boot_budget: Duration,
    /// The handshake deadline, further bounded by the remaining boot budget (spec: 30 s).
    pub handshake_timeout: Duration,
    /// The `timeoutMillis` sent with `extension/shutdown` (spec default: 5,000).
    pub shutdown_timeout_millis: u64,
    /// The deadline of `extension/ui/action` and `extension/ui/submit` (spec: 30 s).
    pub ui_call_timeout: Duration,
    /// How long a prompt (`host/ui/request`) may stay open before it is dismissed and the
    /// sidecar answered `{"cancelled":true}` (default 5 minutes).
    pub prompt_timeout: Duration,
    /// How many prompts one connection may have open at once (default 4); one more is
    /// answered at once with `invalid_params`.
    pub prompts_per_connection: usize,
}

impl HostConfig {
    /// A configuration with the spec's budgets and a `tui` frontend.
    pub fn new(
        state_dir: impl Into<PathBuf>,
        session_id: impl Into<String>,
        workspace_root: impl Into<PathBuf>,
    ) -> Self {
        let state_dir = state_dir.into();
        HostConfig {
            audit_log: state_dir.join("audit.jsonl"),
            state_dir,
            session_id: session_id.into(),
            workspace_root: workspace_root.into(),
            ui_host: UiHost::Tui,
            boot_budget: GENERATION_BOOT_BUDGET,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            shutdown_timeout_millis: SHUTDOWN_TIMEOUT_MILLIS,
            ui_call_timeout: CALL_TIMEOUT,
            prompt_timeout: PROMPT_TIMEOUT,
            prompts_per_connection: PROMPTS_PER_CONNECTION,
        }
    }

    /// With this frontend.
    pub fn ui_host(mut self, ui_host: UiHost) -> Self {
        self.ui_host = ui_host;
        self
    }

    /// With the audit log at `path`.
    pub fn audit_log(mut self, path: impl Into<PathBuf>) -> Self {
        self.audit_log = path.into();
        self
    }

    /// With another generation boot budget.
    pub fn boot_budget(mut self, budget: Duration) -> Self {
        self.boot_budget = budget;
        self
    }

    /// With another handshake deadline.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// With another `extension/shutdown` budget (at least 1 ms).
    pub fn shutdown_timeout_millis(mut self, millis: u64) -> Self {
        self.shutdown_timeout_millis = millis.max(1);
        self
    }

    /// With another deadline for UI actions and form submissions.
    pub fn ui_call_timeout(mut self, timeout: Duration) -> Self {
        self.ui_call_timeout = timeout;
        self
    }

    /// With another prompt deadline.
    pub fn prompt_timeout(mut self, timeout: Duration) -> Self {
        self.prompt_timeout = timeout;
        self
    }

    /// With another cap on open prompts per connection (at least 1, at most 32: a connection
    /// runs at most 32 requests at once anyway).
    pub fn prompts_per_connection(mut self, prompts: usize) -> Self {
        self.prompts_per_connection = prompts.clamp(1, 32);
        self
    }
}
