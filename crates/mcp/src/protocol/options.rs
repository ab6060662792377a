//! Per-call options ([`ToolCallOptions`]) and connection counters ([`ClientStats`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::protocol::session::ProgressFn;
use crate::protocol::tasks::{Task, TaskStatusFn};
use crate::protocol::types::Progress;

/// Options for one call: a `tools/call`, or (through the `_with` methods:
/// [`Client::get_prompt_with`](crate::Client::get_prompt_with),
/// [`Client::read_resource_with`](crate::Client::read_resource_with),
/// [`Client::complete_with`](crate::Client::complete_with)) any other request.
#[derive(Clone, Default)]
pub struct ToolCallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_duration: Option<Duration>,
    pub(crate) progress: Option<ProgressFn>,
    /// Run a tool whose `taskSupport` is `optional` as a task.
    pub(crate) as_task: bool,
    /// The task lifetime to ask for (`task.ttl`).
    pub(crate) task_ttl: Option<Duration>,
    pub(crate) task_status: Option<TaskStatusFn>,
    pub(crate) meta: Map<String, Value>,
    pub(crate) validate_arguments: bool,
    /// Input requests go to the caller, not the handler (`pass_input_through`).
    pub(crate) input: Option<PassedInput>,
}

/// What a call that passes input through carries on its first leg.
#[derive(Debug, Clone, Default)]
pub(crate) struct PassedInput {
    pub(crate) responses: Option<Map<String, Value>>,
    pub(crate) state: Option<String>,
    /// The client capabilities each leg declares in place of the connection's.
    pub(crate) capabilities: Value,
}

impl ToolCallOptions {
    /// Options that change nothing.
    pub fn new() -> Self {
        ToolCallOptions::default()
    }

    /// This call's timeout (for tools/call: the idle timeout, restarted by each progress
    /// report), overriding the tool's and the server's.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// This call's absolute cap (tools/call), overriding the server's.
    pub fn max_duration(mut self, cap: Duration) -> Self {
        self.max_duration = Some(cap);
        self
    }

    /// Called with each progress report of this call (on the driver: do not block). A
    /// tools/call always carries a progress token; another request carries one only when it
    /// has this callback.
    pub fn on_progress(mut self, callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }

    /// Runs a tool whose `execution.taskSupport` is `optional` as a task (a `required` one
    /// always runs as a task; a `forbidden` or unknown one never does), when the server
    /// announces task-augmented `tools/call`. The call still returns the tool's result.
    pub fn as_task(mut self, yes: bool) -> Self {
        self.as_task = yes;
        self
    }

    /// The lifetime to ask the server to keep the task for (`task.ttl`, from its creation);
    /// the server may choose another. None asked by default.
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = Some(ttl);
        self
    }

    /// Called with the task's state each time its status or status message changes, when the
    /// call runs as a task (on the driver or the calling task: do not block).
    pub fn on_task_status(mut self, callback: impl Fn(&Task) + Send + Sync + 'static) -> Self {
        self.task_status = Some(Arc::new(callback));
        self
    }
    /// Adds `key: value` to the request's `_meta`. The client's own members win by refusal:
    /// `progressToken` and any key whose prefix (before `/`) has a `modelcontextprotocol` or
    /// `mcp` label (the spec reserves those; the modern era's envelope is
    /// `io.modelcontextprotocol/...`) make the call fail with
    /// [`Error::is_reserved_meta`](crate::Error::is_reserved_meta) before anything is sent.
    /// The message's frame cap bounds the size.
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta.insert(key.into(), value);
        self
    }

    /// A modern-era call whose server's input requests (sampling, elicitation, roots inside an
    /// `InputRequiredResult`) go to the caller instead of the handler: such a result ends the
    /// call with [`Error::is_input_required`](crate::Error::is_input_required), carrying the
    /// requests and the server's `requestState`; the caller answers them (a gateway: its own
    /// client) and calls again with the `responses` by key and that `request_state`, byte for
    /// byte. The first call passes no responses and no state. Each leg declares
    /// `capabilities` (the answering client's) as the client's, in place of the connection's,
    /// so the server asks only for what that client can give. A legacy-era connection ignores
    /// this (its server asks the handler mid-call).
    pub fn pass_input_through(
        mut self,
        responses: Map<String, Value>,
        request_state: Option<String>,
        capabilities: Map<String, Value>,
    ) -> Self {
        self.input = Some(PassedInput {
            responses: (!responses.is_empty()).then_some(responses),
            state: request_state,
            capabilities: Value::Object(capabilities),
        });
        self
    }

    /// Checks a tools/call's arguments against the tool's `inputSchema` (as last listed)
    /// before sending; a mismatch is [`Error::is_invalid_arguments`](crate::Error::is_invalid_arguments)
    /// and nothing is sent. A tool absent from the last listing is not checked.
    pub fn validate_arguments(mut self, yes: bool) -> Self {
        self.validate_arguments = yes;
        self
    }
}

/// Whether `key` is a `_meta` key the client or the spec reserves.
pub(crate) fn is_reserved_meta_key(key: &str) -> bool {
    if key == "progressToken" {
        return true;
    }
    let Some((prefix, _)) = key.split_once('/') else {
        return false;
    };
    prefix.split('.').any(|label| {
        label.eq_ignore_ascii_case("modelcontextprotocol") || label.eq_ignore_ascii_case("mcp")
    })
}

impl fmt::Debug for ToolCallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCallOptions")
            .field("timeout", &self.timeout)
            .field("max_duration", &self.max_duration)
            .field("progress", &self.progress.is_some())
            .field("as_task", &self.as_task)
            .field("task_ttl", &self.task_ttl)
            .field("task_status", &self.task_status.is_some())
            .field("meta", &self.meta.keys().collect::<Vec<_>>())
            .field("validate_arguments", &self.validate_arguments)
            .finish()
    }
}

/// Counters of what a connection dropped rather than failed on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientStats {
    /// Lines from the server that were not JSON-RPC messages (banners, stray prints).
    pub skipped_lines: u64,
    /// Responses that arrived after their call was abandoned.
    pub late_responses: u64,
    /// Notifications dropped (unknown or malformed).
    pub dropped_notifications: u64,
}
