//! Shared test scaffolding: an in-process, scriptable mock MCP server over `tokio::io::duplex`
//! built on the jsonrpc peer; the fake stdio server; process checks; and waits that always
//! have a deadline.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_jsonrpc::{Config, ErrorObject, Peer, Profile, RequestContext, Router};
use sidewire_mcp::{Client, ClientHandler, ServerSpec};

/// Every wait in these tests goes through this, so a hang fails with a message.
pub(crate) async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    within_for(what, Duration::from_secs(20), fut).await
}

pub(crate) async fn within_for<T>(what: &str, limit: Duration, fut: impl Future<Output = T>) -> T {
    sidewire_test_support::within(limit, what, fut).await
}

/// Polls `check` until it holds, failing after 10 s.
pub(crate) async fn eventually(what: &str, check: impl FnMut() -> bool) {
    sidewire_test_support::eventually(Duration::from_secs(10), what, check).await;
}

/// How pages of the mock's tools/list chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cursors {
    /// `c1`, `c2`, ... until the last page.
    Normal,
    /// Always `"same"`: a cursor that never advances.
    Repeat,
    /// A fresh cursor on every page, for ever.
    Endless,
}

/// What the mock does; change it through `Mock::state` while it runs.
pub(crate) struct MockState {
    /// The version the mock answers with; `None` echoes the client's offer.
    pub(crate) version: Mutex<Option<String>>,
    /// Tool names, page by page.
    pub(crate) tool_pages: Mutex<Vec<Vec<String>>>,
    /// When set, the tools/list items as sent, page by page, instead of `tool_pages`.
    pub(crate) tool_items: Mutex<Option<Vec<Vec<Value>>>>,
    pub(crate) cursors: Mutex<Cursors>,
    /// Never answer initialize.
    pub(crate) hang_initialize: Mutex<bool>,
    /// Before answering initialize, call `ping`, `roots/list` and an unknown method on the
    /// client; what came back is kept in `during_initialize`.
    pub(crate) call_during_initialize: Mutex<bool>,
    pub(crate) during_initialize: Mutex<Vec<Result<Value, ErrorObject>>>,
    /// Every request: (method, id as JSON text, params).
    pub(crate) requests: Mutex<Vec<(String, String, Value)>>,
    /// Every notification: (method, params).
    pub(crate) notifications: Mutex<Vec<(String, Value)>>,
    /// The `skills/list` entries (skills extension).
    pub(crate) skills: Mutex<Vec<Value>>,
    /// What `resources/read` serves for these URIs (instead of "contents").
    pub(crate) files: Mutex<HashMap<String, String>>,
    /// How many of each method were requested.
    counts: Mutex<HashMap<String, usize>>,
    pub(crate) in_flight: AtomicUsize,
}

impl MockState {
    pub(crate) fn count(&self, method: &str) -> usize {
        lock(&self.counts).get(method).copied().unwrap_or(0)
    }

    pub(crate) fn notified(&self, method: &str) -> Vec<Value> {
        lock(&self.notifications)
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// The wire ids of the requests for `method`.
    pub(crate) fn ids(&self, method: &str) -> Vec<String> {
        lock(&self.requests)
            .iter()
            .filter(|(m, _, _)| m == method)
            .map(|(_, id, _)| id.clone())
            .collect()
    }

    fn record(&self, method: &str, ctx: &RequestContext, params: &Value) {
        *lock(&self.counts).entry(method.to_owned()).or_default() += 1;
        lock(&self.requests).push((
            method.to_owned(),
            ctx.id().to_json().into_owned(),
            params.clone(),
        ));
    }
}

pub(crate) use sidewire_jsonrpc::lock;

impl Default for MockState {
    fn default() -> Self {
        MockState {
            version: Mutex::new(None),
            tool_pages: Mutex::new(vec![vec![
                "echo".into(),
                "sleep".into(),
                "progress".into(),
                "content".into(),
                "ask".into(),
            ]]),
            tool_items: Mutex::new(None),
            cursors: Mutex::new(Cursors::Normal),
            hang_initialize: Mutex::new(false),
            call_during_initialize: Mutex::new(false),
            during_initialize: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            notifications: Mutex::new(Vec::new()),
            skills: Mutex::new(Vec::new()),
            files: Mutex::new(HashMap::new()),
            counts: Mutex::new(HashMap::new()),
            in_flight: AtomicUsize::new(0),
        }
    }
}

/// The server end of a mock connection.
pub(crate) struct Mock {
    pub(crate) peer: Peer,
    pub(crate) state: Arc<MockState>,
}

impl Mock {
    /// Sends a notification to the client.
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) {
        self.peer
            .notify_untyped(method, params.as_ref())
            .await
            .expect("the mock's connection is open");
    }
}

/// The mock's tool called `name`, as it lists it.
pub(crate) fn mock_tool(name: &str) -> Value {
    json!({"name": name, "description": format!("the {name} tool"), "inputSchema": {"type": "object"}})
}

/// A tools/list page for `page` under the mock's cursor rule.
fn tools_page(state: &MockState, params: &Value) -> Value {
    let cursor = params
        .get("cursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let pages: Vec<Vec<Value>> = match lock(&state.tool_items).clone() {
        Some(items) => items,
        None => (lock(&state.tool_pages).iter())
            .map(|names| names.iter().map(|name| mock_tool(name)).collect())
            .collect(),
    };
    let index = match &cursor {
        None => 0,
        Some(c) => c.trim_start_matches('c').parse::<usize>().unwrap_or(0),
    };
    let tools = pages
        .get(index.min(pages.len().saturating_sub(1)))
        .cloned()
        .unwrap_or_default();
    let next = match *lock(&state.cursors) {
        Cursors::Normal => (index + 1 < pages.len()).then(|| format!("c{}", index + 1)),
        Cursors::Repeat => Some("same".to_owned()),
        Cursors::Endless => Some(format!("c{}", index + 1)),
    };
    match next {
        Some(next) => json!({"tools": tools, "nextCursor": next}),
        None => json!({"tools": tools}),
    }
}

async fn call_tool(
    state: Arc<MockState>,
    params: Value,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
    let token = params["_meta"]["progressToken"].clone();
    state.in_flight.fetch_add(1, Ordering::SeqCst);
    struct Done(Arc<MockState>);
    impl Drop for Done {
        fn drop(&mut self) {
            self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let _done = Done(Arc::clone(&state));
    match name.as_str() {
        "echo" => Ok(json!({"content": [{"type": "text", "text": args["message"]}]})),
        "sleep" => {
            tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
            Ok(json!({"content": [{"type": "text", "text": "slept"}]}))
        }
        "progress" => {
            let count = args["count"].as_u64().unwrap_or(3);
            let every = Duration::from_millis(args["every_ms"].as_u64().unwrap_or(10));
            // `echo_token`: "string" sends our numeric token back as a string of digits,
            // "foreign" a token we never sent.
            let token = match args["echo_token"].as_str() {
                Some("string") => Value::String(token.to_string()),
                Some("foreign") => json!("not-ours"),
                _ => token,
            };
            for i in 1..=count {
                tokio::time::sleep(every).await;
                let note = json!({"progressToken": token, "progress": i, "total": count, "message": format!("step {i}")});
                let _ = ctx
                    .peer()
                    .notify_untyped("notifications/progress", Some(&note))
                    .await;
            }
            Ok(json!({"content": [{"type": "text", "text": "done"}]}))
        }
        "content" => Ok(json!({
            "content": [
                {"type": "text", "text": "t"},
                {"type": "image", "data": "aW1n", "mimeType": "image/png"},
                {"type": "audio", "data": "YXVk", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "mem://x", "name": "x"},
                {"type": "resource", "resource": {"uri": "mem://y", "text": "y"}}
            ],
            "structuredContent": {"ok": true},
            "isError": true
        })),
        "ask" => {
            let sampled = ask(
                &ctx,
                "sampling/createMessage",
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 5}),
            )
            .await;
            let elicited = ask(
                &ctx,
                "elicitation/create",
                json!({
                    "message": "name?",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "age": {"type": "integer", "default": 42},
                        "pet": {"type": "string", "enum": ["cat", "dog"], "default": "dog"}
                    }}
                }),
            )
            .await;
            Ok(
                json!({"content": [], "structuredContent": {"sampling": sampled, "elicitation": elicited}}),
            )
        }
        "ask_url" => {
            let elicited = ask(
                &ctx,
                "elicitation/create",
                json!({
                    "mode": "url",
                    "message": "sign in",
                    "url": "https://example.com/connect",
                    "elicitationId": "e-1"
                }),
            )
            .await;
            Ok(json!({"content": [], "structuredContent": {"elicitation": elicited}}))
        }
        "hang" => std::future::pending().await,
        _ => Err(ErrorObject::invalid_params(format!("unknown tool {name}"))),
    }
}

/// Sends the client a request from inside a tool call: `{"ok": result}` or `{"error": code}`.
async fn ask(ctx: &RequestContext, method: &str, params: Value) -> Value {
    let answer = ctx
        .peer()
        .call(method, Some(&params), Default::default())
        .await;
    match answer {
        Ok(raw) => json!({"ok": raw.decode::<Value>().unwrap()}),
        Err(e) => {
            let code = e.remote().map_or(ErrorObject::INTERNAL_ERROR, |e| e.code);
            json!({"error": code})
        }
    }
}

/// The mock's router.
fn mock_router(state: &Arc<MockState>) -> Router {
    let recorded =
        |state: &Arc<MockState>, method: &'static str, answer: fn(&MockState, &Value) -> Value| {
            let state = Arc::clone(state);
            move |params: Value, ctx: RequestContext| {
                state.record(method, &ctx, &params);
                let result = answer(&state, &params);
                async move { Ok::<_, ErrorObject>(result) }
            }
        };
    let init_state = Arc::clone(state);
    let call_state = Arc::clone(state);
    let note_state = Arc::clone(state);
    Router::new()
        .request_untyped::<Value, Value, _, _>("initialize", move |params: Value, ctx: RequestContext| {
            let state = Arc::clone(&init_state);
            state.record("initialize", &ctx, &params);
            async move {
                if *lock(&state.hang_initialize) {
                    std::future::pending::<()>().await;
                }
                if *lock(&state.call_during_initialize) {
                    for method in ["ping", "roots/list", "bogus/method"] {
                        let answer = ctx
                            .peer()
                            .call(method, Some(&json!({})), Default::default())
                            .await
                            .map(|raw| raw.decode::<Value>().unwrap())
                            .map_err(|e| e.remote().cloned().unwrap_or_else(|| ErrorObject::internal(e.to_string())));
                        lock(&state.during_initialize).push(answer);
                    }
                }
                let version = lock(&state.version)
                    .clone()
                    .unwrap_or_else(|| params["protocolVersion"].as_str().unwrap_or_default().to_owned());
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {
                        "tools": {"listChanged": true},
                        "prompts": {"listChanged": true},
                        "resources": {"subscribe": true, "listChanged": true},
                        "logging": {},
                        "completions": {}
                    },
                    "serverInfo": {"name": "mock", "version": "0.1"},
                    "instructions": "be nice"
                }))
            }
        })
        .request_untyped::<Value, Value, _, _>("tools/list", recorded(state, "tools/list", tools_page))
        .request_untyped::<Value, Value, _, _>("tools/call", move |params: Value, ctx: RequestContext| {
            call_state.record("tools/call", &ctx, &params);
            call_tool(Arc::clone(&call_state), params, ctx)
        })
        // Each later listing of prompts, resources or templates adds one item (`<name>2`, ...),
        // so a refresh is visible.
        .request_untyped::<Value, Value, _, _>("prompts/list", recorded(state, "prompts/list", |state, _| {
            let mut prompts = vec![json!({"name": "greet", "arguments": [{"name": "who", "required": true}]})];
            prompts.extend((2..=state.count("prompts/list")).map(|n| json!({"name": format!("greet{n}")})));
            json!({ "prompts": prompts })
        }))
        .request_untyped::<Value, Value, _, _>("prompts/get", recorded(state, "prompts/get", |_, p| {
            json!({"description": "a greeting", "messages": [{"role": "user", "content": {"type": "text", "text": format!("hello {}", p["arguments"]["who"].as_str().unwrap_or("?"))}}]})
        }))
        .request_untyped::<Value, Value, _, _>("resources/list", recorded(state, "resources/list", |state, _| {
            let mut resources = vec![json!({"uri": "mem://a", "name": "a", "mimeType": "text/plain"})];
            resources.extend((2..=state.count("resources/list")).map(|n| json!({"uri": format!("mem://a{n}"), "name": "a"})));
            json!({ "resources": resources })
        }))
        .request_untyped::<Value, Value, _, _>("resources/templates/list", recorded(state, "resources/templates/list", |state, _| {
            let mut templates = vec![json!({"uriTemplate": "mem://{x}", "name": "any"})];
            templates.extend((2..=state.count("resources/templates/list")).map(|n| json!({"uriTemplate": format!("mem{n}://{{x}}"), "name": "any"})));
            json!({ "resourceTemplates": templates })
        }))
        .request_untyped::<Value, Value, _, _>("resources/read", recorded(state, "resources/read", |state, p| {
            let text = p["uri"].as_str().and_then(|uri| lock(&state.files).get(uri).cloned());
            json!({"contents": [{"uri": p["uri"], "text": text.as_deref().unwrap_or("contents")}]})
        }))
        .request_untyped::<Value, Value, _, _>("skills/list", recorded(state, "skills/list", |state, _| {
            json!({"skills": lock(&state.skills).clone()})
        }))
        .request_untyped::<Value, Value, _, _>("resources/subscribe", recorded(state, "resources/subscribe", |_, _| json!({})))
        .request_untyped::<Value, Value, _, _>("resources/unsubscribe", recorded(state, "resources/unsubscribe", |_, _| json!({})))
        .request_untyped::<Value, Value, _, _>("logging/setLevel", recorded(state, "logging/setLevel", |_, _| json!({})))
        .request_untyped::<Value, Value, _, _>("completion/complete", recorded(state, "completion/complete", |_, p| {
            json!({"completion": {"values": [format!("{}1", p["argument"]["value"].as_str().unwrap_or(""))], "total": 1, "hasMore": false}})
        }))
        .request_untyped::<Value, Value, _, _>("ping", recorded(state, "ping", |_, _| json!({})))
        .notification_fallback(move |method, params| {
            let params = params.map_or(Value::Null, |raw| serde_json::from_str(raw.get()).unwrap_or(Value::Null));
            lock(&note_state.notifications).push((method.to_owned(), params));
        })
}

/// Starts a mock server and connects a client to it; both drivers are spawned.
pub(crate) async fn mock_with(
    state: MockState,
    spec: ServerSpec,
    handler: impl ClientHandler,
) -> (Result<Client, sidewire_mcp::Error>, Mock) {
    let state = Arc::new(state);
    let (client, peer) = connect_piped(mock_router(&state), &spec, handler).await;
    (client, Mock { peer, state })
}

/// Connects a client over an in-process pipe to a server that `router` answers; both drivers
/// are spawned. The server's peer comes back with the client.
pub(crate) async fn connect_piped(
    router: Router,
    spec: &ServerSpec,
    handler: impl ClientHandler,
) -> (Result<Client, sidewire_mcp::Error>, Peer) {
    connect_piped_framed(router, spec, handler, 1024 * 1024).await
}

/// [`connect_piped`] with a server whose frames may be up to `max_frame` bytes.
pub(crate) async fn connect_piped_framed(
    router: Router,
    spec: &ServerSpec,
    handler: impl ClientHandler,
    max_frame: usize,
) -> (Result<Client, sidewire_mcp::Error>, Peer) {
    let (ours, theirs) = tokio::io::duplex(1024 * 1024);
    let config = Config::new(Profile::Lenient, max_frame);
    let (read, write) = tokio::io::split(theirs);
    let (stream, sink) = sidewire_jsonrpc::ndjson(read, write, &config);
    let (peer, driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
    tokio::spawn(driver);
    let (read, write) = tokio::io::split(ours);
    let client = Client::connect_streams(spec, read, write, handler)
        .await
        .map(|(client, driver)| {
            tokio::spawn(driver);
            client
        });
    (client, peer)
}

/// The default mock, connected.
pub(crate) async fn mock(spec: ServerSpec, handler: impl ClientHandler) -> (Client, Mock) {
    let (client, mock) = mock_with(MockState::default(), spec, handler).await;
    (client.expect("the mock connects"), mock)
}

/// The fake stdio server script.
pub(crate) fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_server.py")
}

/// A spec running the fake server with python3 (unbuffered).
pub(crate) fn fake_spec(name: &str) -> ServerSpec {
    ServerSpec::stdio(name, "python3")
        .arg("-u")
        .arg(fake_server().to_string_lossy())
        .startup_timeout(Duration::from_secs(20))
}

/// A fresh temporary directory for one test, removed when it is dropped.
pub(crate) fn temp_dir(tag: &str) -> TestDir {
    TestDir(
        tempfile::Builder::new()
            .prefix(&format!("sidewire-mcp-{tag}-"))
            .tempdir()
            .unwrap(),
    )
}

/// A test's temporary directory (see [`temp_dir`]), usable as its path.
pub(crate) struct TestDir(tempfile::TempDir);

impl std::ops::Deref for TestDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

pub(crate) use sidewire_process::testing::is_alive as running;
use sidewire_process::testing::{exists, parent_of};

/// Waits until `pid` is gone entirely: for our own child this proves it was reaped (no zombie
/// of ours).
pub(crate) async fn wait_reaped(pid: u32) {
    eventually(&format!("process {pid} to be reaped"), || !exists(pid)).await;
}

/// Waits until `pid` no longer runs, and checks it is not a zombie of ours. A grandchild is
/// reparented when its parent dies; whether its zombie entry lingers then depends on the
/// reaper it lands on (PID 1 in a container may never reap), which is not ours to fix.
pub(crate) async fn wait_dead_not_ours(pid: u32) {
    eventually(&format!("process {pid} to die"), || !running(pid)).await;
    if let Some(ppid) = parent_of(pid) {
        assert_ne!(
            ppid,
            std::process::id(),
            "process {pid} is a zombie child of the test"
        );
    }
}
