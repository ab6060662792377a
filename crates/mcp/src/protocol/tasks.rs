//! MCP tasks (2025-11-25, experimental in the spec): a `tools/call` that runs as a task, and the
//! `tasks/*` requests.
//!
//! A tool says in its listing whether it may run as a task (`execution.taskSupport`:
//! [`TaskSupport`]), and a server says in its capabilities whether it takes task-augmented
//! `tools/call` at all ([`TasksCapability`]). [`Client::call_tool`] runs a tool as a task when
//! the server announces task-augmented calls and the tool's support is `required` (or
//! `optional` and the caller asked, [`ToolCallOptions::as_task`](crate::ToolCallOptions::as_task));
//! the call then goes like this:
//!
//! 1. `tools/call` carrying `task` (and the call's progress token): the answer is a
//!    `CreateTaskResult` with the task in `working` (a server that answers with the tool's
//!    result instead is taken at its word: that is the result).
//! 2. The task is followed until it is terminal or asks for input: by `notifications/tasks/status`
//!    (routed to the call by task id) and by `tasks/get` at the server's `pollInterval`,
//!    clamped to [`MIN_POLL_INTERVAL`]..[`MAX_POLL_INTERVAL`] ([`DEFAULT_POLL_INTERVAL`] when
//!    it gives none). A status the client does not know is followed like `working`.
//! 3. `completed`, `failed` or `input_required`: `tasks/result`, which the server holds until
//!    the task is terminal; its requests on the way (elicitation, sampling, tagged with the
//!    task) reach the [`ClientHandler`](crate::ClientHandler) as any server request does. The
//!    answer is the tool's result, returned as an ordinary call returns it (a failed tool is
//!    `Ok` with `is_error`); a failed task with no result to fetch is
//!    [`Error::is_task_failed`]. `cancelled` (by the server or another client) is
//!    [`Error::is_task_cancelled`].
//!
//! The call's idle timeout runs over the whole task (a progress report, or a change of status
//! or status message, restarts it), and its absolute cap bounds it all. Giving up (a timeout,
//! or dropping the future) sends `tasks/cancel` when the server announces `tasks.cancel`: one
//! frame queued synchronously from `Drop` (no task is spawned; when the outbound queue is full
//! it is not sent), whose answer is ignored. A connection follows at most
//! [`MAX_TRACKED_TASKS`] tasks at once; a call past that is [`Error::is_task_limit`] and sends
//! nothing.
//!
//! The client offers no `tasks` capability of its own: it never runs a server's sampling or
//! elicitation as a task, so a server must ask for those the ordinary way.
//!
//! The modern era (2026-07-28) has no tasks in its core: they moved to an extension
//! (`io.modelcontextprotocol/tasks`, with `tasks/update` and `resultType: "task"`) which this
//! client does not speak. Over a modern connection `call_tool` never asks for a task, and the
//! explicit task requests are [`Error::is_unsupported`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sidewire_jsonrpc::{Activity, CallOptions, Peer, RawResult, Router, lock};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::Kind;
use crate::protocol::client::Client;
use crate::protocol::era::Era;
use crate::protocol::listing;
use crate::protocol::methods::{CallToolParams, ListMethod};
use crate::protocol::modern;
use crate::protocol::session::{Shared, TOOLS};
use crate::protocol::types::{CallToolResult, Tool};
use crate::{Error, List};

/// The shortest wait between two `tasks/get` of one task, whatever the server's `pollInterval`.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// The longest wait between two `tasks/get` of one task, whatever the server's `pollInterval`.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);
/// The wait between two `tasks/get` when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The most tasks one connection follows at once (task-augmented `tools/call` in flight).
pub const MAX_TRACKED_TASKS: usize = 128;

/// The method names.
const TASKS_GET: &str = "tasks/get";
const TASKS_RESULT: &str = "tasks/result";
const TASKS_CANCEL: &str = "tasks/cancel";
const TASK_STATUS: &str = "notifications/tasks/status";

/// A per-call task status callback.
pub(crate) type TaskStatusFn = Arc<dyn Fn(&Task) + Send + Sync>;

/// Whether a tool may run as a task (`execution.taskSupport`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// It never runs as a task (also when the tool says nothing).
    #[default]
    Forbidden,
    /// It may run as a task or as an ordinary call.
    Optional,
    /// It runs only as a task (an ordinary call gets `-32601`).
    Required,
    /// A value this client does not know, as sent (a string's text, else the JSON text). The
    /// tool is called as an ordinary call, as for `forbidden`.
    Unknown(String),
}

impl TaskSupport {
    fn of(value: &Value) -> Self {
        match value {
            Value::String(text) => match text.as_str() {
                "forbidden" => TaskSupport::Forbidden,
                "optional" => TaskSupport::Optional,
                "required" => TaskSupport::Required,
                other => TaskSupport::Unknown(other.to_owned()),
            },
            Value::Null => TaskSupport::Forbidden,
            other => TaskSupport::Unknown(other.to_string()),
        }
    }

    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
            TaskSupport::Unknown(text) => text,
        }
    }
}

/// How a tool runs (its `execution`). Reading it never fails a listing: a member of the
/// wrong shape reads as absent, an unknown `taskSupport` as [`TaskSupport::Unknown`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolExecution {
    /// Whether it may run as a task.
    pub task_support: TaskSupport,
}

impl Serialize for ToolExecution {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        json!({ "taskSupport": self.task_support.as_str() }).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolExecution {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let task_support = value
            .get("taskSupport")
            .map(TaskSupport::of)
            .unwrap_or_default();
        Ok(ToolExecution { task_support })
    }
}

impl Tool {
    /// Whether the tool may run as a task (its `execution.taskSupport`; `Forbidden` when it
    /// says nothing).
    pub fn task_support(&self) -> TaskSupport {
        self.execution
            .as_ref()
            .map(|execution| execution.task_support.clone())
            .unwrap_or_default()
    }
}

/// The server's `tasks` capability: which task operations it supports. A present member
/// means support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TasksCapability {
    /// `tasks/list`.
    pub list: bool,
    /// `tasks/cancel`.
    pub cancel: bool,
    /// Task-augmented `tools/call` (`requests.tools.call`).
    pub tool_calls: bool,
}

impl Serialize for TasksCapability {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serde_json::Map::new();
        if self.list {
            map.insert("list".to_owned(), json!({}));
        }
        if self.cancel {
            map.insert("cancel".to_owned(), json!({}));
        }
        if self.tool_calls {
            map.insert("requests".to_owned(), json!({ "tools": { "call": {} } }));
        }
        Value::Object(map).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TasksCapability {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let present = |member: Option<&Value>| member.is_some_and(|member| !member.is_null());
        Ok(TasksCapability {
            list: present(value.get("list")),
            cancel: present(value.get("cancel")),
            tool_calls: present(value.pointer("/requests/tools/call")),
        })
    }
}

/// Where a task is.
///
/// | from | to |
/// |---|---|
/// | (created) | `Working` |
/// | `Working` | `InputRequired`, `Completed`, `Failed`, `Cancelled` |
/// | `InputRequired` | `Working`, `Completed`, `Failed`, `Cancelled` |
/// | `Completed`, `Failed`, `Cancelled` | none: terminal |
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStatus {
    /// Running.
    Working,
    /// It waits for the client: `tasks/result` carries the server's requests.
    InputRequired,
    /// Done; the result is ready.
    Completed,
    /// It did not complete (for a tool: also a result with `isError`).
    Failed,
    /// Cancelled before it completed.
    Cancelled,
    /// A status this client does not know, as sent; followed like `Working`.
    Unknown(String),
}

impl TaskStatus {
    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Unknown(text) => text,
        }
    }

    /// `Completed`, `Failed` or `Cancelled`: it changes no more.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

impl Serialize for TaskStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskStatus {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(match text.as_str() {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => TaskStatus::Unknown(text),
        })
    }
}

/// A task's state, as a server reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Its id (the server's).
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What is happening, for people (escape it before showing it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601, as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When its status last changed (ISO 8601, as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// How long the server keeps it from its creation, in milliseconds (`None`: no limit, or
    /// not said).
    #[serde(
        default,
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl: Option<u64>,
    /// The server's suggested wait between polls, in milliseconds.
    #[serde(
        default,
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub poll_interval: Option<u64>,
}

impl Task {
    /// The wait before the next `tasks/get`: the server's `pollInterval` within
    /// [`MIN_POLL_INTERVAL`]..[`MAX_POLL_INTERVAL`], else [`DEFAULT_POLL_INTERVAL`].
    pub fn next_poll(&self) -> Duration {
        self.poll_interval
            .map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis)
            .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
    }
}

/// A count of milliseconds that reads any JSON number (a fraction is cut, a negative one is
/// 0) and anything else as absent, so an odd value never fails a task.
fn millis<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(match value {
        Value::Number(number) => number
            .as_u64()
            .or_else(|| number.as_f64().map(|f| f.max(0.0) as u64)),
        _ => None,
    })
}

/// The `task` member of a task-augmented request.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TaskParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ttl: Option<u64>,
}

/// The params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskIdParams<'a> {
    task_id: &'a str,
}

/// A `CreateTaskResult`, or (no `task` member) some other result.
#[derive(Debug, Deserialize)]
struct Created {
    #[serde(default)]
    task: Option<Value>,
}

/// `tasks/list`.
pub(crate) struct ListTasks;

impl ListMethod for ListTasks {
    const METHOD: &'static str = "tasks/list";
    const KIND: List = List::Tasks;
    type Item = Task;
    fn key(item: &Task) -> &str {
        &item.task_id
    }
}

/// The tasks a connection follows: each task-augmented call in flight holds a slot, and its
/// task's status notices are routed to it by task id. At most [`MAX_TRACKED_TASKS`] slots.
#[derive(Default)]
pub(crate) struct Registry {
    inner: Mutex<RegistryInner>,
}

#[derive(Default)]
struct RegistryInner {
    /// Slots taken (with or without a task id yet).
    taken: usize,
    /// The latest notice for each followed task.
    watchers: HashMap<String, watch::Sender<Option<Task>>>,
}

impl Registry {
    /// Takes a slot, or fails when every slot is taken.
    fn reserve(&self) -> Result<Slot<'_>, Error> {
        let mut inner = lock(&self.inner);
        if inner.taken >= MAX_TRACKED_TASKS {
            return Err(Error::new(Kind::TaskLimit(format!(
                "this connection already follows {MAX_TRACKED_TASKS} tasks, the most it follows at once"
            ))));
        }
        inner.taken += 1;
        Ok(Slot {
            registry: self,
            task_id: None,
        })
    }

    /// A status notice: handed to the call that follows the task, if any.
    fn notice(&self, task: Task) {
        if let Some(sender) = lock(&self.inner).watchers.get(&task.task_id) {
            sender.send_replace(Some(task));
        }
    }

    /// How many slots are taken.
    #[cfg(test)]
    pub(crate) fn taken(&self) -> usize {
        lock(&self.inner).taken
    }
}

/// One call's slot in the [`Registry`]; freed on drop.
struct Slot<'a> {
    registry: &'a Registry,
    task_id: Option<String>,
}

impl Slot<'_> {
    /// Names the slot's task; its notices come through the receiver. (A task id another call
    /// already follows gets no notices: that call keeps them, this one polls.)
    fn follow(&mut self, task_id: &str) -> Option<watch::Receiver<Option<Task>>> {
        let mut inner = lock(&self.registry.inner);
        if inner.watchers.contains_key(task_id) {
            return None;
        }
        let (sender, receiver) = watch::channel(None);
        inner.watchers.insert(task_id.to_owned(), sender);
        self.task_id = Some(task_id.to_owned());
        Some(receiver)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut inner = lock(&self.registry.inner);
        inner.taken -= 1;
        if let Some(task_id) = &self.task_id {
            inner.watchers.remove(task_id);
        }
    }
}

/// Adds the route of `notifications/tasks/status` (a notice that does not decode, or names a
/// task no call follows, is dropped).
pub(crate) fn route(router: Router, shared: &Arc<Shared>) -> Router {
    let shared = Arc::clone(shared);
    router.notification_raw(TASK_STATUS, move |params| {
        let Some(params) = params else { return };
        match serde_json::from_str::<Task>(params.get()) {
            Ok(task) => shared.tasks.notice(task),
            Err(err) => {
                tracing::debug!(server = %shared.name, %err, "dropped a task status notice that does not decode");
            }
        }
    })
}

/// Whether `method` is `tasks/cancel` (an abandoned one is not itself cancelled: see
/// `McpHooks`).
pub(crate) fn is_cancel(method: &str) -> bool {
    method == TASKS_CANCEL
}

/// Sends `tasks/cancel` for a task when dropped, unless disarmed: one frame queued
/// synchronously, its answer ignored.
struct CancelOnDrop<'a> {
    peer: &'a Peer,
    task_id: String,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let params = TaskIdParams {
            task_id: &self.task_id,
        };
        let call = self.peer.call(
            TASKS_CANCEL,
            Some(&params),
            CallOptions::timeout(MAX_POLL_INTERVAL),
        );
        let mut call = std::pin::pin!(call);
        // One poll queues the frame when the outbound queue has room (the jsonrpc peer's fast
        // path) and then waits for the answer; dropping it then abandons the wait only (the
        // hook sends no `notifications/cancelled` for a `tasks/cancel`). When the queue is
        // full nothing is sent: best effort, without spawning.
        let mut cx = Context::from_waker(std::task::Waker::noop());
        if let Poll::Ready(Err(err)) = call.as_mut().poll(&mut cx) {
            tracing::debug!(task = %self.task_id, %err, "tasks/cancel was not sent");
        }
    }
}

/// Decides whether a tools/call of `name` runs as a task: the task params to send, or `None`.
/// Lists the tools first when the server takes task-augmented calls and the connection has
/// not listed them yet (a tool's task support is in its listing).
pub(crate) async fn plan(
    client: &Client,
    name: &str,
    as_task: bool,
    ttl: Option<Duration>,
) -> Option<TaskParams> {
    let shared = client.shared();
    if shared.era() == Some(Era::Modern) {
        return None;
    }
    let capability = client.capabilities().tasks?;
    if !capability.tool_calls {
        return None;
    }
    if shared.listed.load(std::sync::atomic::Ordering::SeqCst) & TOOLS == 0 {
        // A failure here shows again in the call itself, if it matters.
        let _ = client.relist::<crate::protocol::methods::ListTools>().await;
    }
    let support = shared
        .find_tool(name)
        .map(|(tools, at)| tools[at].task_support())
        .unwrap_or_default();
    let task = match support {
        TaskSupport::Required => true,
        TaskSupport::Optional => as_task,
        TaskSupport::Forbidden | TaskSupport::Unknown(_) => false,
    };
    task.then(|| TaskParams {
        ttl: ttl.map(|ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
    })
}

/// What [`follow`] needs besides the request.
pub(crate) struct Follow<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) peer: &'a Peer,
    /// `tools/call NAME`, for errors (formatted only when one happens).
    pub(crate) what: &'a (dyn std::fmt::Display + Sync),
    /// The call's absolute deadline.
    pub(crate) deadline: Instant,
    /// Restarts the call's idle timer.
    pub(crate) activity: &'a Activity,
    pub(crate) on_status: Option<TaskStatusFn>,
}

/// The time left before `deadline`, or the call's timeout error.
fn left(
    what: &(impl std::fmt::Display + ?Sized),
    deadline: Instant,
    cap: Duration,
) -> Result<Duration, Error> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(Error::new(Kind::Timeout {
            what: what.to_string(),
            after: cap,
            idle: false,
        }));
    }
    Ok(left)
}

/// Runs a task-augmented tools/call to its end (see the module docs): the raw result of
/// `tasks/result` (or of the call, when the server answered it without a task).
///
/// Cancel safety: dropping the future sends `tasks/cancel` for a task that is not terminal
/// (when the server announces `tasks.cancel`), and frees its slot.
pub(crate) async fn follow(
    follow: Follow<'_>,
    params: &CallToolParams,
    cap: Duration,
) -> Result<RawResult, Error> {
    let Follow {
        shared,
        peer,
        what,
        deadline,
        activity,
        on_status,
    } = follow;
    let mut slot = shared.tasks.reserve()?;
    let timeout = left(what, deadline, cap)?;
    let raw = modern::call(
        shared,
        peer,
        what,
        <crate::protocol::methods::CallTool as sidewire_jsonrpc::Request>::METHOD,
        params,
        CallOptions::timeout(timeout),
    )
    .await?;
    let created = raw.decode::<Created>().map_err(|err| {
        Error::new(Kind::InvalidResponse(format!(
            "the result of {what} does not decode: {err}"
        )))
    })?;
    let Some(task) = created.task else {
        // The server ran it as an ordinary call: that is the result.
        return Ok(raw);
    };
    let mut task = serde_json::from_value::<Task>(task).map_err(|err| {
        Error::new(Kind::InvalidResponse(format!(
            "the task {what} created does not decode: {err}"
        )))
    })?;
    let task_id = task.task_id.clone();
    let mut notices = slot.follow(&task_id);
    let cancels = shared
        .init
        .get()
        .and_then(|init| init.capabilities.tasks)
        .is_some_and(|tasks| tasks.cancel);
    let mut cancel = CancelOnDrop {
        peer,
        task_id: task_id.clone(),
        armed: cancels && !task.status.is_terminal(),
    };
    let report = |task: &Task| {
        activity.touch();
        if let Some(on_status) = &on_status {
            on_status(task);
        }
    };
    report(&task);
    // Takes a newer state of the task; a terminal one is final.
    let update = |task: &mut Task, newer: Task| {
        if task.status.is_terminal() || newer.task_id != task.task_id {
            return;
        }
        let changed = newer.status != task.status || newer.status_message != task.status_message;
        *task = newer;
        if changed {
            report(task);
        }
    };
    let mut next_poll = Instant::now() + task.next_poll();
    while matches!(task.status, TaskStatus::Working | TaskStatus::Unknown(_)) {
        tokio::select! {
            notice = next_notice(&mut notices) => update(&mut task, notice),
            () = tokio::time::sleep_until(next_poll.min(deadline)) => {
                let timeout = left(what, deadline, cap)?;
                let polled = get(shared, peer, &task_id, timeout).await?;
                update(&mut task, polled);
                next_poll = Instant::now() + task.next_poll();
            }
        }
    }
    if task.status == TaskStatus::Cancelled {
        cancel.armed = false;
        return Err(Error::new(Kind::TaskCancelled {
            what: what.to_string(),
            task_id,
            message: task.status_message,
        }));
    }
    // `completed`, `failed`, `input_required`: the server holds `tasks/result` until the task
    // is terminal, sending its input requests meanwhile; notices still reach the caller.
    let timeout = left(what, deadline, cap)?;
    let params = TaskIdParams { task_id: &task_id };
    let fetch = modern::call(
        shared,
        peer,
        TASKS_RESULT,
        TASKS_RESULT,
        &params,
        CallOptions::timeout(timeout),
    );
    tokio::pin!(fetch);
    let outcome = loop {
        tokio::select! {
            biased;
            outcome = &mut fetch => break outcome,
            notice = next_notice(&mut notices) => update(&mut task, notice),
        }
    };
    match outcome {
        Ok(raw) => {
            cancel.armed = false;
            Ok(raw)
        }
        Err(err) if err.is_remote() => {
            // The server answered: the task is over, one way or another.
            cancel.armed = false;
            if task.status == TaskStatus::Failed {
                Err(Error::new(Kind::TaskFailed {
                    what: what.to_string(),
                    task_id: task_id.clone(),
                    message: task.status_message,
                    error: err.remote().cloned(),
                }))
            } else {
                Err(err)
            }
        }
        Err(err) => Err(err),
    }
}

/// The next status notice, or never (no notices for this call, or the registry dropped it).
async fn next_notice(notices: &mut Option<watch::Receiver<Option<Task>>>) -> Task {
    if let Some(receiver) = notices {
        while receiver.changed().await.is_ok() {
            if let Some(task) = receiver.borrow_and_update().clone() {
                return task;
            }
        }
        *notices = None;
    }
    std::future::pending().await
}

/// `tasks/get`.
async fn get(
    shared: &Shared,
    peer: &Peer,
    task_id: &str,
    timeout: Duration,
) -> Result<Task, Error> {
    let raw = modern::call(
        shared,
        peer,
        TASKS_GET,
        TASKS_GET,
        &TaskIdParams { task_id },
        CallOptions::timeout(timeout),
    )
    .await?;
    decode(TASKS_GET, &raw)
}

fn decode<T: serde::de::DeserializeOwned>(method: &str, raw: &RawResult) -> Result<T, Error> {
    raw.decode::<T>().map_err(|err| {
        Error::new(Kind::InvalidResponse(format!(
            "the result of {method} does not decode: {err}"
        )))
    })
}

impl Client {
    /// Fails with [`Error::is_unsupported`] over a modern connection (no tasks in that era's
    /// core).
    fn legacy_tasks(&self, method: &str) -> Result<(), Error> {
        if self.era() == Era::Modern {
            return Err(Error::new(Kind::Unsupported(format!(
                "{method}: the 2026-07-28 protocol has no tasks in its core (they are the io.modelcontextprotocol/tasks extension, which this client does not speak)"
            )))
            .with_server(&self.shared().name));
        }
        Ok(())
    }

    /// A task-request with the call timeout, its failure explained.
    async fn task_request<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        task_id: &str,
        timeout: Duration,
    ) -> Result<T, Error> {
        self.legacy_tasks(method)?;
        let shared = self.shared();
        let outcome = modern::call(
            shared,
            self.peer(),
            method,
            method,
            &TaskIdParams { task_id },
            CallOptions::timeout(timeout),
        )
        .await;
        match outcome {
            Ok(raw) => decode(method, &raw).map_err(|err| err.with_server(&shared.name)),
            Err(err) => Err(self.explain(err).await),
        }
    }

    /// A task's state (`tasks/get`).
    ///
    /// # Errors
    ///
    /// A timeout, a closed connection, the server's error (`-32602` for a task it does not
    /// know), or [`Error::is_unsupported`] over a modern connection.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request (the server is told).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        let timeout = self.spec().call_timeout;
        self.task_request(TASKS_GET, task_id, timeout).await
    }

    /// A task's result (`tasks/result`): the tool's result once the task is terminal. The
    /// server holds the answer until then, so this waits up to the server's absolute call cap
    /// ([`ServerSpec::max_call_duration`](crate::ServerSpec::max_call_duration)); requests the
    /// server makes meanwhile go to the handler.
    ///
    /// # Errors
    ///
    /// As for [`get_task`](Client::get_task), and the underlying call's own JSON-RPC error.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request (the server is told); the task goes on.
    pub async fn task_result(&self, task_id: &str) -> Result<CallToolResult, Error> {
        let timeout = self.spec().max_call_duration;
        self.task_request(TASKS_RESULT, task_id, timeout).await
    }

    /// Cancels a task (`tasks/cancel`): its state after, `Cancelled`.
    ///
    /// # Errors
    ///
    /// As for [`get_task`](Client::get_task); `-32602` for a task already terminal.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request; the task may or may not be cancelled.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, Error> {
        let timeout = self.spec().call_timeout;
        self.task_request(TASKS_CANCEL, task_id, timeout).await
    }

    /// Lists the server's tasks (`tasks/list`), following `nextCursor` within the same caps as
    /// [`list_tools`](Client::list_tools) (a cut-short list keeps its first tasks); not cached.
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Client::list_tools), or [`Error::is_unsupported`] over a modern
    /// connection.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the page being fetched (the server is told).
    pub async fn list_tasks(&self) -> Result<Vec<Task>, Error> {
        self.legacy_tasks(ListTasks::METHOD)?;
        let shared = self.shared();
        let deadline = Instant::now() + shared.spec.call_timeout;
        let caps = (shared.spec.max_list_items, shared.spec.max_list_bytes);
        match listing::list_all::<ListTasks>(shared, self.peer(), caps, deadline).await {
            Ok(listing) => Ok(listing.items),
            Err(err) => Err(self.explain(err).await),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_support_reads_every_value_without_failing() {
        let read = |value: Value| serde_json::from_value::<ToolExecution>(value).unwrap();
        assert_eq!(
            read(json!({"taskSupport": "required"})).task_support,
            TaskSupport::Required
        );
        assert_eq!(
            read(json!({"taskSupport": "optional"})).task_support,
            TaskSupport::Optional
        );
        assert_eq!(read(json!({})).task_support, TaskSupport::Forbidden);
        assert_eq!(
            read(json!({"taskSupport": "sometimes"})).task_support,
            TaskSupport::Unknown("sometimes".into())
        );
        assert_eq!(
            read(json!({"taskSupport": 3})).task_support,
            TaskSupport::Unknown("3".into())
        );
        assert_eq!(read(json!("odd")).task_support, TaskSupport::Forbidden);
    }

    #[test]
    fn tasks_capability_reads_presence() {
        let cap: TasksCapability =
            serde_json::from_value(json!({"list": {}, "requests": {"tools": {"call": {}}}}))
                .unwrap();
        assert!(cap.list && cap.tool_calls && !cap.cancel);
        let back = serde_json::to_value(cap).unwrap();
        assert_eq!(
            back,
            json!({"list": {}, "requests": {"tools": {"call": {}}}})
        );
    }

    #[test]
    fn poll_interval_is_clamped() {
        let task = |poll: Value| {
            serde_json::from_value::<Task>(
                json!({"taskId": "t", "status": "working", "pollInterval": poll}),
            )
            .unwrap()
        };
        assert_eq!(task(json!(0)).next_poll(), MIN_POLL_INTERVAL);
        assert_eq!(task(json!(1e12)).next_poll(), MAX_POLL_INTERVAL);
        assert_eq!(task(json!(2500)).next_poll(), Duration::from_millis(2500));
        assert_eq!(task(json!(-5)).next_poll(), MIN_POLL_INTERVAL);
        assert_eq!(task(Value::Null).next_poll(), DEFAULT_POLL_INTERVAL);
        assert_eq!(task(json!(1)).status, TaskStatus::Working, "statuses read");
        let odd: Task = serde_json::from_value(json!({"taskId": "t", "status": "paused"})).unwrap();
        assert_eq!(odd.status, TaskStatus::Unknown("paused".into()));
        assert!(!odd.status.is_terminal());
    }

    #[test]
    fn the_registry_is_bounded_and_frees_its_slots() {
        let registry = Registry::default();
        let mut slots: Vec<_> = (0..MAX_TRACKED_TASKS)
            .map(|_| registry.reserve().unwrap())
            .collect();
        assert!(registry.reserve().is_err_and(|err| err.is_task_limit()));
        let mut first = slots.pop().unwrap();
        assert!(first.follow("a").is_some());
        drop(first);
        assert_eq!(registry.taken(), MAX_TRACKED_TASKS - 1);
        assert!(lock(&registry.inner).watchers.is_empty());
        let mut again = registry.reserve().unwrap();
        let mut receiver = again.follow("b").unwrap();
        registry
            .notice(serde_json::from_value(json!({"taskId": "b", "status": "completed"})).unwrap());
        assert!(receiver.has_changed().unwrap());
        assert_eq!(
            receiver.borrow_and_update().as_ref().unwrap().status,
            TaskStatus::Completed
        );
    }
}
