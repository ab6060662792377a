//! How a host is set up: where its state lives, which session it serves, what UI it has, and
//! the budgets it runs with.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sidewire_ext_protocol::{
    CALL_TIMEOUT, GENERATION_BOOT_BUDGET, HANDSHAKE_TIMEOUT, SHUTDOWN_TIMEOUT_MILLIS,
    STREAM_CANCEL_TIMEOUT, STREAM_GAP_TIMEOUT, TOOL_CALL_TIMEOUT, UiHost,
};

use crate::member::{ChainMember, Members};

/// How long a `host/ui/request` prompt stays open before it is dismissed (the spec sets no
/// deadline; an unbounded wait would let a sidecar pin a prompt for ever).
pub(crate) const PROMPT_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// How many prompts one connection may have open at once by default.
pub(crate) const PROMPTS_PER_CONNECTION: usize = 4;

/// The host's configuration. The budgets default to the spec's values; tests lower them to
/// stay fast, and applications should leave them alone.
///
/// The fields are private so that what a setter clamps stays clamped; the `get_*` methods read
/// them back (named as `std::process::Command`'s getters, since the setters own the plain names).
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The state directory holding the installed-plugin store (`$SIDEWIRE_HOME`).
    state_dir: PathBuf,
    /// The session every sidecar of this runtime serves (non-empty).
    session_id: String,
    /// The workspace root, an absolute path.
    workspace_root: PathBuf,
    /// The frontend; `headless` answers `host/ui/*` with `unknown_method`.
    ui_host: UiHost,
    /// Where audit lines go; default `<state_dir>/audit.jsonl`.
    audit_log: PathBuf,
    /// The budget all boots of one generation share (spec: 30 s).
    boot_budget: Duration,
    /// The handshake deadline, further bounded by the remaining boot budget (spec: 30 s).
    handshake_timeout: Duration,
    /// The `timeoutMillis` sent with `extension/shutdown` (spec default: 5,000).
    shutdown_timeout_millis: u64,
    /// The deadline of `extension/ui/action` and `extension/ui/submit` (spec: 30 s).
    ui_call_timeout: Duration,
    /// How long a prompt (`host/ui/request`) may stay open before it is dismissed and the
    /// sidecar answered `{"cancelled":true}` (default 5 minutes).
    prompt_timeout: Duration,
    /// How many prompts one connection may have open at once (default 4); one more is
    /// answered at once with `invalid_params`.
    prompts_per_connection: usize,
    /// The deadline of `extension/provider/catalog` and `extension/provider/stream/open`
    /// (spec: 30 s).
    provider_call_timeout: Duration,
    /// The budget of one `extension/tool/call`: sent as its `timeoutMillis` and the call's
    /// deadline (default [`TOOL_CALL_TIMEOUT`], 5 minutes).
    tool_call_timeout: Duration,
    /// How long a chunk may still be missing after `stream/end` (spec: 1 s).
    stream_gap_timeout: Duration,
    /// The best-effort deadline of `extension/provider/stream/cancel` (spec: 2 s).
    stream_cancel_timeout: Duration,
    /// How long a provider stream may go with nothing arriving (the host's own bound; default
    /// [`HostConfig::DEFAULT_STREAM_IDLE_TIMEOUT`]).
    stream_idle_timeout: Duration,
    /// The in-process chain members ([`HostConfig::member`]), in the order they were added.
    members: Members,
}

impl HostConfig {
    /// The default idle bound of a provider stream: 60 s with nothing arriving. The spec sets
    /// none; without one, a provider that sends a chunk and then nothing is waited for for
    /// ever. Models that think for a long time before their first token may need more.
    pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

    /// The most in-process chain members one host takes ([`HostConfig::member`]).
    pub const MAX_MEMBERS: usize = 16;

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
            provider_call_timeout: CALL_TIMEOUT,
            tool_call_timeout: TOOL_CALL_TIMEOUT,
            stream_gap_timeout: STREAM_GAP_TIMEOUT,
            stream_cancel_timeout: STREAM_CANCEL_TIMEOUT,
            stream_idle_timeout: Self::DEFAULT_STREAM_IDLE_TIMEOUT,
            members: Members::default(),
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

    /// With another budget for `extension/tool/call` (sent as `timeoutMillis`, and the call's
    /// deadline; at least 1 ms, so that it is never "no deadline").
    pub fn tool_call_timeout(mut self, timeout: Duration) -> Self {
        self.tool_call_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// With another deadline for `extension/provider/catalog` and `…/stream/open`.
    pub fn provider_call_timeout(mut self, timeout: Duration) -> Self {
        self.provider_call_timeout = timeout;
        self
    }

    /// With another gap timeout: how long a chunk may still be missing after `stream/end`.
    pub fn stream_gap_timeout(mut self, timeout: Duration) -> Self {
        self.stream_gap_timeout = timeout;
        self
    }

    /// With another deadline for `extension/provider/stream/cancel`, after which a cancelled
    /// stream that has not ended ends with `stream_cancelled`.
    pub fn stream_cancel_timeout(mut self, timeout: Duration) -> Self {
        self.stream_cancel_timeout = timeout;
        self
    }

    /// With another idle bound for provider streams (at least 1 ms): a stream with nothing
    /// arriving for that long after its open's answer or its last new chunk fails
    /// [`Error::is_stream_idle`](crate::Error::is_stream_idle) and is cancelled on the sidecar.
    /// A stream can have its own ([`StreamRequest::idle_timeout`](crate::StreamRequest::idle_timeout)).
    pub fn stream_idle_timeout(mut self, timeout: Duration) -> Self {
        self.stream_idle_timeout = timeout.max(crate::provider::MIN_IDLE_TIMEOUT);
        self
    }

    /// With `member`, a chain member answering in this process (command hooks, a policy in
    /// Rust), in the chain of every point it intercepts, ordered with the sidecars by
    /// (priority, id). At most [`HostConfig::MAX_MEMBERS`]; one more is not added.
    pub fn member(mut self, member: Arc<dyn ChainMember>) -> Self {
        if self.members.0.len() < Self::MAX_MEMBERS {
            self.members.0.push(member);
        }
        self
    }

    /// The state directory holding the installed-plugin store.
    pub fn get_state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The session every sidecar of this runtime serves.
    pub fn get_session_id(&self) -> &str {
        &self.session_id
    }

    /// The workspace root.
    pub fn get_workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// The frontend.
    pub fn get_ui_host(&self) -> UiHost {
        self.ui_host
    }

    /// Where audit lines go.
    pub fn get_audit_log(&self) -> &Path {
        &self.audit_log
    }

    /// The budget all boots of one generation share.
    pub fn get_boot_budget(&self) -> Duration {
        self.boot_budget
    }

    /// The handshake deadline.
    pub fn get_handshake_timeout(&self) -> Duration {
        self.handshake_timeout
    }

    /// The `timeoutMillis` sent with `extension/shutdown` (at least 1).
    pub fn get_shutdown_timeout_millis(&self) -> u64 {
        self.shutdown_timeout_millis
    }

    /// The deadline of UI actions and form submissions.
    pub fn get_ui_call_timeout(&self) -> Duration {
        self.ui_call_timeout
    }

    /// How long a prompt may stay open.
    pub fn get_prompt_timeout(&self) -> Duration {
        self.prompt_timeout
    }

    /// How many prompts one connection may have open at once (1 to 32).
    pub fn get_prompts_per_connection(&self) -> usize {
        self.prompts_per_connection
    }

    /// The budget of `extension/tool/call`.
    pub fn get_tool_call_timeout(&self) -> Duration {
        self.tool_call_timeout
    }

    /// The deadline of `extension/provider/catalog` and `…/stream/open`.
    pub fn get_provider_call_timeout(&self) -> Duration {
        self.provider_call_timeout
    }

    /// How long a chunk may still be missing after `stream/end`.
    pub fn get_stream_gap_timeout(&self) -> Duration {
        self.stream_gap_timeout
    }

    /// The deadline of `extension/provider/stream/cancel`.
    pub fn get_stream_cancel_timeout(&self) -> Duration {
        self.stream_cancel_timeout
    }

    /// The idle bound of provider streams.
    pub fn get_stream_idle_timeout(&self) -> Duration {
        self.stream_idle_timeout
    }

    /// The in-process chain members, in the order they were added.
    pub fn get_members(&self) -> &[Arc<dyn ChainMember>] {
        &self.members.0
    }
}

#[cfg(test)]
mod tests;
