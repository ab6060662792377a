//! Per-call options ([`ToolCallOptions`]) and connection counters ([`ClientStats`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::protocol::session::ProgressFn;
use crate::protocol::tasks::{Task, TaskStatusFn};
use crate::protocol::types::Progress;

/// Options for one call.
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

    /// Called with each progress report of this tools/call (on the driver: do not block).
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
