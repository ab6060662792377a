//! Tasks (MCP 2025-11-25) against a scripted in-process server: a task-required tool through
//! `call_tool` (status by notice and by polling), failed and cancelled tasks, cancelling by
//! drop, the idle timeout over a task, the bound on followed tasks, an unknown status,
//! `input_required` with an elicitation, and the explicit `tasks/*` requests.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use sidewire_jsonrpc::{ErrorObject, Peer, RequestContext, Router};
use sidewire_mcp::{
    Client, ClientHandler, ElicitParams, ElicitResult, MAX_TRACKED_TASKS, MIN_POLL_INTERVAL,
    NoHandler, ServerSpec, TaskStatus, TaskSupport, ToolCallOptions,
};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::support::*;

/// What the scripted server does and saw.
struct Script {
    /// Its `tasks` capability.
    capability: Value,
    /// The `pollInterval` of its tasks (milliseconds).
    poll_interval: Value,
    /// The tasks, by creation order: each one's state as sent.
    tasks: Mutex<Vec<Value>>,
    /// Statuses the next `tasks/get` calls move the task to, one per call.
    on_get: Mutex<VecDeque<&'static str>>,
    /// What `tasks/result` answers for a failed task: a tool result, or (`None`) an error.
    failed_result: Mutex<Option<Value>>,
    /// `tasks/result` asks the client for input (an elicitation) before it completes the task.
    elicit: Mutex<bool>,
    /// Bumped on every change of a task.
    changed: watch::Sender<u64>,
    /// Every request: (method, params).
    requests: Mutex<Vec<(String, Value)>>,
    /// Every notification: (method, params).
    notifications: Mutex<Vec<(String, Value)>>,
    next: AtomicUsize,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            capability: json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            poll_interval: json!(1000),
            tasks: Mutex::new(Vec::new()),
            on_get: Mutex::new(VecDeque::new()),
            failed_result: Mutex::new(None),
            elicit: Mutex::new(false),
            changed: watch::channel(0).0,
            requests: Mutex::new(Vec::new()),
            notifications: Mutex::new(Vec::new()),
            next: AtomicUsize::new(1),
        }
    }
}

impl Script {
    fn count(&self, method: &str) -> usize {
        lock(&self.requests)
            .iter()
            .filter(|(m, _)| m == method)
            .count()
    }

    fn params(&self, method: &str) -> Vec<Value> {
        lock(&self.requests)
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    fn task(&self, id: &str) -> Option<Value> {
        lock(&self.tasks)
            .iter()
            .find(|t| t["taskId"] == id)
            .cloned()
    }

    /// Sets a task's status (and message); the new state.
    fn set(&self, id: &str, status: &str, message: Option<&str>) -> Value {
        let mut tasks = lock(&self.tasks);
        let task = tasks
            .iter_mut()
            .find(|t| t["taskId"] == id)
            .expect("a task of this server");
        task["status"] = json!(status);
        if let Some(message) = message {
            task["statusMessage"] = json!(message);
        }
        let state = task.clone();
        drop(tasks);
        self.changed.send_modify(|n| *n += 1);
        state
    }
}

/// The scripted server, and its peer to send notices with.
struct Server {
    script: Arc<Script>,
    peer: Peer,
}

impl Server {
    /// Sets a task's status and tells the client with `notifications/tasks/status`.
    async fn announce(&self, id: &str, status: &str, message: Option<&str>) {
        let state = self.script.set(id, status, message);
        self.peer
            .notify_untyped("notifications/tasks/status", Some(&state))
            .await
            .expect("the connection is open");
    }

    async fn progress(&self, token: &Value, progress: f64) {
        let note = json!({"progressToken": token, "progress": progress});
        self.peer
            .notify_untyped("notifications/progress", Some(&note))
            .await
            .expect("the connection is open");
    }
}

fn tools() -> Value {
    json!({"tools": [
        {"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
        {"name": "maybe", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
        {"name": "plain", "inputSchema": {"type": "object"}},
        {"name": "never", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "forbidden"}},
        {"name": "odd", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "sometimes"}},
        {"name": "odder", "inputSchema": {"type": "object"}, "execution": 7}
    ]})
}

fn router(script: &Arc<Script>) -> Router {
    let record = |script: &Arc<Script>, method: &str, params: &Value| {
        lock(&script.requests).push((method.to_owned(), params.clone()));
    };
    let s = Arc::clone(script);
    let init = move |params: Value, _: RequestContext| {
        record(&s, "initialize", &params);
        let capability = s.capability.clone();
        async move {
            Ok::<_, ErrorObject>(json!({
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}, "tasks": capability},
                "serverInfo": {"name": "tasks", "version": "0"}
            }))
        }
    };
    let s = Arc::clone(script);
    let list = move |params: Value, _: RequestContext| {
        record(&s, "tools/list", &params);
        async { Ok::<_, ErrorObject>(tools()) }
    };
    let s = Arc::clone(script);
    let call = move |params: Value, _: RequestContext| {
        record(&s, "tools/call", &params);
        let s = Arc::clone(&s);
        async move {
            let name = params["name"].as_str().unwrap_or_default();
            if params.get("task").is_none() {
                if name == "slow" {
                    return Err(ErrorObject::new(-32601, "slow must run as a task"));
                }
                return Ok(
                    json!({"content": [{"type": "text", "text": format!("{name} ran plainly")}]}),
                );
            }
            let n = s.next.fetch_add(1, Ordering::SeqCst);
            let task = json!({
                "taskId": format!("t{n}"),
                "status": "working",
                "createdAt": "2025-11-25T10:30:00Z",
                "lastUpdatedAt": "2025-11-25T10:30:00Z",
                "ttl": 60000,
                "pollInterval": s.poll_interval,
            });
            lock(&s.tasks).push(task.clone());
            s.changed.send_modify(|n| *n += 1);
            Ok(json!({"task": task}))
        }
    };
    let s = Arc::clone(script);
    let get = move |params: Value, _: RequestContext| {
        record(&s, "tasks/get", &params);
        let id = params["taskId"].as_str().unwrap_or_default().to_owned();
        let next = lock(&s.on_get).pop_front();
        let state = match (next, s.task(&id)) {
            (_, None) => None,
            (Some(status), Some(_)) => Some(s.set(&id, status, None)),
            (None, Some(task)) => Some(task),
        };
        async move { state.ok_or_else(|| ErrorObject::invalid_params("no such task")) }
    };
    let s = Arc::clone(script);
    let result = move |params: Value, ctx: RequestContext| {
        record(&s, "tasks/result", &params);
        let s = Arc::clone(&s);
        async move {
            let id = params["taskId"].as_str().unwrap_or_default().to_owned();
            if s.task(&id).is_none() {
                return Err(ErrorObject::invalid_params("no such task"));
            }
            let mut answer = Value::Null;
            if *lock(&s.elicit) {
                let asked = json!({
                    "message": "which one?",
                    "requestedSchema": {"type": "object", "properties": {"pick": {"type": "string"}}},
                    "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}
                });
                let raw = ctx
                    .peer()
                    .call("elicitation/create", Some(&asked), Default::default())
                    .await
                    .map_err(|e| ErrorObject::internal(e.to_string()))?;
                answer = raw.decode::<Value>().unwrap();
                s.set(&id, "completed", None);
            }
            let mut changed = s.changed.subscribe();
            let status = loop {
                let status = s.task(&id).unwrap()["status"].as_str().unwrap().to_owned();
                if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
                    break status;
                }
                changed.changed().await.unwrap();
            };
            let related = json!({"io.modelcontextprotocol/related-task": {"taskId": id}});
            match status.as_str() {
                "completed" => Ok(json!({
                    "content": [{"type": "text", "text": "done"}],
                    "structuredContent": {"answer": answer},
                    "_meta": related
                })),
                "failed" => lock(&s.failed_result)
                    .clone()
                    .ok_or_else(|| ErrorObject::new(-32603, "the task broke")),
                _ => Err(ErrorObject::invalid_params("the task was cancelled")),
            }
        }
    };
    let s = Arc::clone(script);
    let cancel = move |params: Value, _: RequestContext| {
        record(&s, "tasks/cancel", &params);
        let id = params["taskId"].as_str().unwrap_or_default().to_owned();
        let state = match s.task(&id) {
            None => Err(ErrorObject::invalid_params("no such task")),
            Some(task)
                if ["completed", "failed", "cancelled"]
                    .contains(&task["status"].as_str().unwrap()) =>
            {
                Err(ErrorObject::invalid_params("the task is terminal"))
            }
            Some(_) => Ok(s.set(&id, "cancelled", Some("cancelled by request"))),
        };
        async move { state }
    };
    let s = Arc::clone(script);
    let list_tasks = move |params: Value, _: RequestContext| {
        record(&s, "tasks/list", &params);
        // Two tasks a page.
        let tasks = lock(&s.tasks).clone();
        let start: usize = params["cursor"].as_str().map_or(0, |c| c.parse().unwrap());
        let page: Vec<Value> = tasks.iter().skip(start).take(2).cloned().collect();
        let mut answer = json!({"tasks": page});
        if start + 2 < tasks.len() {
            answer["nextCursor"] = json!((start + 2).to_string());
        }
        async move { Ok::<_, ErrorObject>(answer) }
    };
    let s = Arc::clone(script);
    Router::new()
        .request_untyped::<Value, Value, _, _>("initialize", init)
        .request_untyped::<Value, Value, _, _>("tools/list", list)
        .request_untyped::<Value, Value, _, _>("tools/call", call)
        .request_untyped::<Value, Value, _, _>("tasks/get", get)
        .request_untyped::<Value, Value, _, _>("tasks/result", result)
        .request_untyped::<Value, Value, _, _>("tasks/cancel", cancel)
        .request_untyped::<Value, Value, _, _>("tasks/list", list_tasks)
        .request_untyped::<Value, Value, _, _>("ping", |_: Value, _: RequestContext| async {
            Ok::<_, ErrorObject>(json!({}))
        })
        .notification_fallback(move |method, params| {
            let params = params.map_or(Value::Null, |raw| {
                serde_json::from_str(raw.get()).unwrap_or(Value::Null)
            });
            lock(&s.notifications).push((method.to_owned(), params));
        })
}

fn spec() -> ServerSpec {
    ServerSpec::stdio("tasks", "unused")
}

async fn start_with(script: Script, handler: impl ClientHandler) -> (Client, Server) {
    let script = Arc::new(script);
    let (client, peer) = connect_piped(router(&script), &spec(), handler).await;
    let client = client.expect("the scripted server connects");
    within("list tools", client.list_tools()).await.unwrap();
    (client, Server { script, peer })
}

async fn start(script: Script) -> (Client, Server) {
    start_with(script, NoHandler).await
}

/// Waits until the server has created `n` tasks.
async fn created(server: &Server, n: usize) {
    eventually("the tasks are created", || {
        lock(&server.script.tasks).len() >= n
    })
    .await;
}

#[tokio::test]
async fn the_listing_keeps_task_support_and_never_fails_on_it() {
    let (client, _server) = start(Script::default()).await;
    let support = |name: &str| {
        client
            .tools()
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is listed"))
            .task_support()
    };
    assert_eq!(support("slow"), TaskSupport::Required);
    assert_eq!(support("maybe"), TaskSupport::Optional);
    assert_eq!(support("plain"), TaskSupport::Forbidden);
    assert_eq!(support("never"), TaskSupport::Forbidden);
    assert_eq!(support("odd"), TaskSupport::Unknown("sometimes".into()));
    assert_eq!(support("odder"), TaskSupport::Forbidden);
    let caps = client.capabilities().tasks.expect("the tasks capability");
    assert!(caps.list && caps.cancel && caps.tool_calls);
}

#[tokio::test]
async fn a_required_tool_runs_as_a_task_followed_by_its_notices() {
    // A poll interval far longer than the test's limit: only the notices can finish it.
    let script = Script {
        poll_interval: json!(3_600_000),
        ..Script::default()
    };
    let (client, server) = start(script).await;
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let progress = Arc::new(Mutex::new(Vec::new()));
    let options = {
        let statuses = Arc::clone(&statuses);
        let progress = Arc::clone(&progress);
        ToolCallOptions::new()
            .on_task_status(move |task| {
                lock(&statuses).push((task.status.clone(), task.status_message.clone()));
            })
            .on_progress(move |p| lock(&progress).push(p.progress))
            .task_ttl(Duration::from_secs(60))
    };
    let call = client.call_tool("slow", json!({"q": 1}), options);
    let driver = async {
        created(&server, 1).await;
        let sent = server.script.params("tools/call").remove(0);
        assert_eq!(sent["task"], json!({"ttl": 60000}));
        server.progress(&sent["_meta"]["progressToken"], 1.0).await;
        server.announce("t1", "working", Some("halfway")).await;
        // Notices faster than the call reads them may merge (the latest wins): wait for it.
        eventually("the caller sees the new message", || {
            lock(&statuses).len() == 2
        })
        .await;
        server.announce("t1", "completed", None).await;
    };
    let (result, ()) = within("the task", async { tokio::join!(call, driver) }).await;
    let result = result.expect("the task's result");
    assert_eq!(result.joined_text(), "done");
    assert_eq!(
        lock(&statuses).clone(),
        vec![
            (TaskStatus::Working, None),
            (TaskStatus::Working, Some("halfway".into())),
            (TaskStatus::Completed, Some("halfway".into())),
        ]
    );
    assert_eq!(lock(&progress).clone(), vec![1.0]);
    assert_eq!(server.script.count("tasks/get"), 0, "no poll was due");
    assert_eq!(
        server.script.params("tasks/result"),
        vec![json!({"taskId": "t1"})]
    );
    assert_eq!(server.script.count("tasks/cancel"), 0);
}

#[tokio::test]
async fn a_task_is_polled_no_faster_than_the_clamp() {
    // The server asks for a poll every millisecond; the client polls every 100 ms at most.
    let script = Script {
        poll_interval: json!(1),
        ..Script::default()
    };
    *lock(&script.on_get) = VecDeque::from(["working", "paused", "completed"]);
    let (client, server) = start(script).await;
    let started = Instant::now();
    let result = within(
        "the polled task",
        client.call_tool("slow", json!({}), ToolCallOptions::new()),
    )
    .await
    .expect("the task's result");
    let elapsed = started.elapsed();
    assert_eq!(result.joined_text(), "done");
    // An unknown status ("paused") is followed like working.
    assert_eq!(server.script.count("tasks/get"), 3);
    assert!(
        elapsed >= MIN_POLL_INTERVAL * 3,
        "three polls took {elapsed:?}, under three clamped intervals"
    );
}

#[tokio::test]
async fn an_optional_tool_runs_as_a_task_only_when_asked() {
    let (client, server) = start(Script::default()).await;
    let plain = within(
        "maybe, plainly",
        client.call_tool("maybe", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(plain.joined_text(), "maybe ran plainly");
    for name in ["plain", "never", "odd", "odder"] {
        let result = within(
            name,
            client.call_tool(name, json!({}), ToolCallOptions::new()),
        )
        .await
        .unwrap();
        assert_eq!(result.joined_text(), format!("{name} ran plainly"));
    }
    assert!(lock(&server.script.tasks).is_empty());
    let call = client.call_tool("maybe", json!({}), ToolCallOptions::new().as_task(true));
    let finish = async {
        created(&server, 1).await;
        server.announce("t1", "completed", None).await;
    };
    let (result, ()) = within("maybe, as a task", async { tokio::join!(call, finish) }).await;
    assert_eq!(result.unwrap().joined_text(), "done");
}

#[tokio::test]
async fn without_the_capability_a_required_tool_is_called_plainly() {
    let script = Script {
        capability: json!({"list": {}}),
        ..Script::default()
    };
    let (client, server) = start(script).await;
    let err = within(
        "slow",
        client.call_tool("slow", json!({}), ToolCallOptions::new()),
    )
    .await
    .expect_err("the server refuses a plain call");
    assert_eq!(err.remote().map(|e| e.code), Some(-32601));
    assert!(server.script.params("tools/call")[0].get("task").is_none());
}

#[tokio::test]
async fn a_failed_task_returns_its_tool_result_or_is_task_failed() {
    let (client, server) = start(Script::default()).await;
    *lock(&server.script.failed_result) =
        Some(json!({"content": [{"type": "text", "text": "no luck"}], "isError": true}));
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    let fail = async {
        created(&server, 1).await;
        server.announce("t1", "failed", Some("gave up")).await;
    };
    let (result, ()) = within("failed with a result", async { tokio::join!(call, fail) }).await;
    let result = result.expect("a failed tool is a result");
    assert!(result.is_error);
    assert_eq!(result.joined_text(), "no luck");

    *lock(&server.script.failed_result) = None;
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    let fail = async {
        created(&server, 2).await;
        server.announce("t2", "failed", Some("gave up")).await;
    };
    let (result, ()) = within("failed without a result", async {
        tokio::join!(call, fail)
    })
    .await;
    let err = result.expect_err("no result to show");
    assert!(err.is_task_failed(), "{err}");
    assert_eq!(err.task_id(), Some("t2"));
    assert_eq!(err.remote().map(|e| e.code), Some(-32603));
    assert_eq!(server.script.count("tasks/cancel"), 0);
}

#[tokio::test]
async fn a_task_cancelled_by_the_server_is_task_cancelled() {
    let (client, server) = start(Script::default()).await;
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    let cancel = async {
        created(&server, 1).await;
        server.announce("t1", "cancelled", Some("operator")).await;
    };
    let (result, ()) = within("cancelled", async { tokio::join!(call, cancel) }).await;
    let err = result.expect_err("cancelled");
    assert!(err.is_task_cancelled(), "{err}");
    assert_eq!(err.task_id(), Some("t1"));
    assert_eq!(server.script.count("tasks/result"), 0);
    assert_eq!(server.script.count("tasks/cancel"), 0);
}

#[tokio::test]
async fn dropping_the_call_sends_tasks_cancel() {
    let (client, server) = start(Script::default()).await;
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    tokio::select! {
        _ = call => panic!("the task never ends by itself"),
        () = created(&server, 1) => {}
    }
    // The call's future is dropped here.
    eventually("tasks/cancel reaches the server", || {
        server.script.count("tasks/cancel") == 1
    })
    .await;
    assert_eq!(
        server.script.params("tasks/cancel"),
        vec![json!({"taskId": "t1"})]
    );
    assert_eq!(server.script.task("t1").unwrap()["status"], "cancelled");
    // Its answer is dropped, and the cancel is not itself cancelled.
    eventually("the answer arrives late", || {
        client.stats().late_responses >= 1
    })
    .await;
    let cancelled = lock(&server.script.notifications)
        .iter()
        .filter(|(m, _)| m == "notifications/cancelled")
        .count();
    assert_eq!(cancelled, 0, "the task was created: only tasks/cancel goes");
    // The connection still works, and the slot was freed.
    within("ping", client.ping()).await.unwrap();
}

#[tokio::test]
async fn without_tasks_cancel_dropping_sends_nothing() {
    let script = Script {
        capability: json!({"requests": {"tools": {"call": {}}}}),
        ..Script::default()
    };
    let (client, server) = start(script).await;
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    tokio::select! {
        _ = call => panic!("the task never ends by itself"),
        () = created(&server, 1) => {}
    }
    within("ping", client.ping()).await.unwrap();
    assert_eq!(server.script.count("tasks/cancel"), 0);
}

#[tokio::test]
async fn the_idle_timeout_covers_the_task_and_cancels_it() {
    let (client, server) = start(Script::default()).await;
    let idle = Duration::from_millis(300);
    let err = within(
        "the idle task",
        client.call_tool("slow", json!({}), ToolCallOptions::new().timeout(idle)),
    )
    .await
    .expect_err("nothing happens: the idle timeout runs out");
    assert!(err.is_timeout(), "{err}");
    eventually("tasks/cancel reaches the server", || {
        server.script.count("tasks/cancel") == 1
    })
    .await;

    // The absolute cap bounds a task that keeps changing.
    let cap = Duration::from_millis(400);
    let call = client.call_tool(
        "slow",
        json!({}),
        ToolCallOptions::new()
            .timeout(Duration::from_secs(60))
            .max_duration(cap),
    );
    let busy = async {
        created(&server, 2).await;
        for n in 0.. {
            server
                .announce("t2", "working", Some(&format!("step {n}")))
                .await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let err = within("the busy task", async {
        tokio::select! {
            result = call => result,
            () = busy => unreachable!(),
        }
    })
    .await
    .expect_err("the cap runs out");
    assert!(err.is_timeout(), "{err}");
    eventually("tasks/cancel reaches the server", || {
        server.script.count("tasks/cancel") == 2
    })
    .await;
}

#[tokio::test]
async fn a_connection_follows_a_bounded_number_of_tasks() {
    let (client, server) = start(Script::default()).await;
    let mut calls = Vec::new();
    for _ in 0..MAX_TRACKED_TASKS {
        let client = client.clone();
        calls.push(tokio::spawn(async move {
            client
                .call_tool("slow", json!({}), ToolCallOptions::new())
                .await
        }));
    }
    created(&server, MAX_TRACKED_TASKS).await;
    let err = within(
        "one too many",
        client.call_tool("slow", json!({}), ToolCallOptions::new()),
    )
    .await
    .expect_err("past the bound");
    assert!(err.is_task_limit(), "{err}");
    assert_eq!(server.script.count("tools/call"), MAX_TRACKED_TASKS);
    // An ordinary call still goes.
    within(
        "plain",
        client.call_tool("plain", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    // A finished task frees its slot.
    server.announce("t1", "completed", None).await;
    eventually("the call that followed t1 ends", || {
        calls.iter().any(tokio::task::JoinHandle::is_finished)
    })
    .await;
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    let finish = async {
        created(&server, MAX_TRACKED_TASKS + 1).await;
        let id = format!("t{}", MAX_TRACKED_TASKS + 1);
        server.announce(&id, "completed", None).await;
    };
    let (result, ()) = within("a freed slot", async { tokio::join!(call, finish) }).await;
    result.expect("a slot was free");
    for call in calls {
        call.abort();
    }
}

/// Answers an elicitation with `{"pick": "b"}`.
struct Picker;

impl ClientHandler for Picker {
    fn supports_elicitation(&self) -> bool {
        true
    }

    async fn elicit(&self, _: &str, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        assert_eq!(params.message, "which one?");
        let mut content = Map::new();
        content.insert("pick".into(), json!("b"));
        Ok(ElicitResult::accept(content))
    }
}

#[tokio::test]
async fn input_required_goes_to_tasks_result_and_the_handler() {
    let (client, server) = start_with(Script::default(), Picker).await;
    *lock(&server.script.elicit) = true;
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    let ask = async {
        created(&server, 1).await;
        server
            .announce("t1", "input_required", Some("need a pick"))
            .await;
    };
    let (result, ()) = within("input required", async { tokio::join!(call, ask) }).await;
    let result = result.expect("the task's result");
    assert_eq!(
        result.structured_content.unwrap()["answer"],
        json!({"action": "accept", "content": {"pick": "b"}})
    );
}

#[tokio::test]
async fn tasks_can_be_listed_got_and_cancelled_by_hand() {
    let (client, server) = start(Script::default()).await;
    let mut calls = Vec::new();
    for n in 1..=3 {
        let client = client.clone();
        calls.push(tokio::spawn(async move {
            client
                .call_tool("slow", json!({}), ToolCallOptions::new())
                .await
        }));
        // One at a time, so call n follows task tn.
        created(&server, n).await;
    }
    let tasks = within("tasks/list", client.list_tasks()).await.unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["t1", "t2", "t3"], "two pages followed");
    assert_eq!(server.script.count("tasks/list"), 2);
    let task = within("tasks/get", client.get_task("t2")).await.unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.poll_interval, Some(1000));
    assert_eq!(task.ttl, Some(60000));
    let cancelled = within("tasks/cancel", client.cancel_task("t2"))
        .await
        .unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    let err = within("tasks/cancel again", client.cancel_task("t2"))
        .await
        .expect_err("a terminal task cannot be cancelled");
    assert_eq!(err.remote().map(|e| e.code), Some(-32602));
    let err = within("tasks/get unknown", client.get_task("nope"))
        .await
        .expect_err("no such task");
    assert!(err.is_remote());
    // The call that followed t2 learns it by polling (no notice was sent).
    let second = calls.remove(1);
    let err = within("the cancelled call", second)
        .await
        .unwrap()
        .expect_err("cancelled by hand");
    assert!(err.is_task_cancelled(), "{err}");
    server.script.set("t1", "completed", None);
    let result = within("tasks/result", client.task_result("t1"))
        .await
        .unwrap();
    assert_eq!(result.joined_text(), "done");
    for call in calls {
        call.abort();
    }
}

#[tokio::test]
async fn a_connection_that_never_listed_its_tools_lists_them_before_a_task_call() {
    let script = Arc::new(Script::default());
    let (client, peer) = connect_piped(router(&script), &spec(), NoHandler).await;
    let client = client.expect("the scripted server connects");
    let server = Server { script, peer };
    let call = client.call_tool("slow", json!({}), ToolCallOptions::new());
    let finish = async {
        created(&server, 1).await;
        server.announce("t1", "completed", None).await;
    };
    let (result, ()) = within("slow", async { tokio::join!(call, finish) }).await;
    assert_eq!(result.expect("ran as a task").joined_text(), "done");
    assert_eq!(server.script.count("tools/list"), 1);
}

#[tokio::test]
async fn the_modern_era_has_no_tasks() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = sidewire_mcp_server::Toolbox::new("modern", "1").tool(
        "echo",
        "echo",
        json!({"type": "object"}),
        |_, _| async { sidewire_mcp::CallToolResult::text("plain") },
    );
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(server.serve(server_read, server_write));
    let (read, write) = tokio::io::split(client_io);
    let (client, driver) = within(
        "connect",
        Client::connect_streams(&spec(), read, write, NoHandler),
    )
    .await
    .expect("the handshake succeeds");
    tokio::spawn(driver);
    assert_eq!(client.era(), sidewire_mcp::Era::Modern);
    let result = within(
        "echo",
        client.call_tool("echo", json!({}), ToolCallOptions::new().as_task(true)),
    )
    .await
    .unwrap();
    assert_eq!(result.joined_text(), "plain");
    let err = within("tasks/get", client.get_task("t1"))
        .await
        .unwrap_err();
    assert!(err.is_unsupported(), "{err}");
    let err = within("tasks/list", client.list_tasks()).await.unwrap_err();
    assert!(err.is_unsupported(), "{err}");
    let err = within("tasks/cancel", client.cancel_task("t1"))
        .await
        .unwrap_err();
    assert!(err.is_unsupported(), "{err}");
    let err = within("tasks/result", client.task_result("t1"))
        .await
        .unwrap_err();
    assert!(err.is_unsupported(), "{err}");
}

/// server-everything's `simulate-research-query` (taskSupport `required`; four stages of 1 s,
/// `pollInterval` 1000 ms), over stdio.
mod everything {
    use super::*;
    use crate::peers::{EVERYTHING, Handler, Yes, connect, peers};

    const TOOL: &str = "simulate-research-query";

    async fn everything(what: &str) -> Option<(Client, Arc<Yes>)> {
        let dir = peers(what, EVERYTHING)?;
        let spec = ServerSpec::stdio("everything", "node")
            .arg(dir.join(EVERYTHING).to_string_lossy())
            .arg("stdio");
        let yes = Arc::new(Yes::default());
        let client = connect(&spec, Handler(Arc::clone(&yes))).await;
        within("list tools", client.list_tools()).await.unwrap();
        Some((client, yes))
    }

    /// Records each status the call sees.
    fn watched() -> (ToolCallOptions, Arc<Mutex<Vec<sidewire_mcp::Task>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let options =
            ToolCallOptions::new().on_task_status(move |task| lock(&sink).push(task.clone()));
        (options, seen)
    }

    #[tokio::test]
    async fn server_everything_research_query_runs_as_a_task() {
        let Some((client, _yes)) =
            everything("server_everything_research_query_runs_as_a_task").await
        else {
            return;
        };
        let caps = client
            .capabilities()
            .tasks
            .expect("server-everything announces tasks");
        assert!(caps.tool_calls && caps.list && caps.cancel);
        let tool = client.tools().iter().find(|t| t.name == TOOL).cloned();
        let tool = tool.unwrap_or_else(|| panic!("{TOOL} is listed"));
        assert_eq!(tool.task_support(), TaskSupport::Required);

        let (options, seen) = watched();
        let result = within(
            TOOL,
            client.call_tool(TOOL, json!({"topic": "rust"}), options),
        )
        .await
        .unwrap_or_else(|err| panic!("{TOOL} failed: {err}"));
        assert!(!result.is_error, "{result:?}");
        assert!(
            result.joined_text().contains("Research Report: rust"),
            "{result:?}"
        );
        let seen = lock(&seen).clone();
        assert_eq!(seen.first().map(|t| &t.status), Some(&TaskStatus::Working));
        assert!(
            seen.iter().any(|t| t
                .status_message
                .as_deref()
                .is_some_and(|m| m.contains("..."))),
            "stage messages were followed: {seen:?}"
        );
        let id = seen[0].task_id.clone();
        let task = within("tasks/get", client.get_task(&id)).await.unwrap();
        assert_eq!(task.status, TaskStatus::Completed);
        let tasks = within("tasks/list", client.list_tasks()).await.unwrap();
        assert!(tasks.iter().any(|t| t.task_id == id), "{tasks:?}");
    }

    #[tokio::test]
    async fn server_everything_research_query_asks_for_input() {
        let Some((client, yes)) =
            everything("server_everything_research_query_asks_for_input").await
        else {
            return;
        };
        let (options, seen) = watched();
        let result = within(
            TOOL,
            client.call_tool(TOOL, json!({"topic": "python", "ambiguous": true}), options),
        )
        .await
        .unwrap_or_else(|err| panic!("{TOOL} failed: {err}"));
        assert!(result.joined_text().contains("Clarification"), "{result:?}");
        let asked = lock(&yes.elicitations).clone();
        assert_eq!(
            asked.len(),
            1,
            "the elicitation reached the handler: {asked:?}"
        );
        assert!(asked[0].message.contains("python"));
        let _ = seen;
    }

    #[tokio::test]
    async fn server_everything_task_is_cancelled_when_the_call_is_dropped() {
        let Some((client, _yes)) =
            everything("server_everything_task_is_cancelled_when_the_call_is_dropped").await
        else {
            return;
        };
        let (options, seen) = watched();
        let call = client.call_tool(TOOL, json!({"topic": "dropped"}), options);
        tokio::select! {
            _ = call => panic!("the task takes four seconds"),
            () = eventually("the task exists", || !lock(&seen).is_empty()) => {}
        }
        let id = lock(&seen)[0].task_id.clone();
        let mut status = TaskStatus::Working;
        for _ in 0..100 {
            status = within("tasks/get", client.get_task(&id))
                .await
                .unwrap()
                .status;
            if status != TaskStatus::Working {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(status, TaskStatus::Cancelled);
    }
}
