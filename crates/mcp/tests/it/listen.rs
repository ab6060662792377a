//! The modern era's `subscriptions/listen` and listing ttls, against a scripted in-process
//! 2026-07-28 server over `tokio::io::duplex`: the listen is opened after a listing with the
//! announced lists, re-opened for a subscription and after a backoff when it ends, stopped by
//! `-32601`; a listing's `ttlMs` re-lists it when it runs out; a legacy server gets no listen.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_jsonrpc::{Config, ErrorObject, Peer, Profile, RequestContext, Router};
use sidewire_mcp::{Client, ClientHandler, EraChoice, ServerSpec};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use crate::support::{lock, within};

const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// One listen the server received.
#[derive(Debug, Clone)]
struct Listened {
    id: String,
    params: Value,
    at: Instant,
}

/// What the scripted server does and saw.
struct Script {
    /// The era the server speaks: `initialize` only (legacy) or `server/discover` only.
    legacy: bool,
    capabilities: Value,
    /// The `ttlMs` of tools/list (absent when `None`).
    tools_ttl: Mutex<Option<u64>>,
    /// Answer every listen with this error at once.
    listen_error: Mutex<Option<ErrorObject>>,
    listens: Mutex<Vec<Listened>>,
    /// The open listens, by id: sending ends one with that answer.
    open: Mutex<HashMap<String, oneshot::Sender<Result<Value, ErrorObject>>>>,
    /// The ids `notifications/cancelled` named.
    cancelled: Mutex<Vec<String>>,
    tools_listed: AtomicUsize,
    /// When each tools/list came.
    listed_at: Mutex<Vec<Instant>>,
    /// Notified on every listen and every tools/list.
    seen: Notify,
    /// Every request method, in order.
    methods: Mutex<Vec<String>>,
}

impl Script {
    fn modern() -> Self {
        Script {
            legacy: false,
            capabilities: json!({
                "tools": {"listChanged": true},
                "prompts": {},
                "resources": {"subscribe": true, "listChanged": true}
            }),
            tools_ttl: Mutex::new(None),
            listen_error: Mutex::new(None),
            listens: Mutex::new(Vec::new()),
            open: Mutex::new(HashMap::new()),
            cancelled: Mutex::new(Vec::new()),
            tools_listed: AtomicUsize::new(0),
            listed_at: Mutex::new(Vec::new()),
            seen: Notify::new(),
            methods: Mutex::new(Vec::new()),
        }
    }

    fn listens(&self) -> Vec<Listened> {
        lock(&self.listens).clone()
    }

    fn listed(&self) -> usize {
        self.tools_listed.load(Ordering::SeqCst)
    }

    /// Waits until `check` holds, looking again at each listen or tools/list.
    async fn until(&self, what: &str, check: impl Fn(&Script) -> bool) {
        within(what, async {
            loop {
                let seen = self.seen.notified();
                tokio::pin!(seen);
                seen.as_mut().enable();
                if check(self) {
                    return;
                }
                seen.await;
            }
        })
        .await;
    }

    /// Waits for the `n`th listen (1-based) and returns it.
    async fn listen(&self, n: usize) -> Listened {
        self.until(&format!("listen #{n}"), |s| lock(&s.listens).len() >= n)
            .await;
        self.listens()[n - 1].clone()
    }

    /// Ends the open listen `id` with `answer`.
    fn end(&self, id: &str, answer: Result<Value, ErrorObject>) {
        let sender = lock(&self.open).remove(id).expect("that listen is open");
        let _ = sender.send(answer);
    }
}

fn router(script: &Arc<Script>) -> Router {
    let discover = Arc::clone(script);
    let initialize = Arc::clone(script);
    let tools = Arc::clone(script);
    let listen = Arc::clone(script);
    let notes = Arc::clone(script);
    let other = Arc::clone(script);
    Router::new()
        .request_untyped::<Value, Value, _, _>("server/discover", move |_: Value, _| {
            let script = Arc::clone(&discover);
            async move {
                lock(&script.methods).push("server/discover".to_owned());
                if script.legacy {
                    return Err(ErrorObject::new(ErrorObject::METHOD_NOT_FOUND, "no"));
                }
                Ok(json!({
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": script.capabilities,
                    "serverInfo": {"name": "scripted", "version": "1"},
                    "resultType": "complete", "ttlMs": 0, "cacheScope": "private"
                }))
            }
        })
        .request_untyped::<Value, Value, _, _>("initialize", move |params: Value, _| {
            let script = Arc::clone(&initialize);
            async move {
                lock(&script.methods).push("initialize".to_owned());
                Ok(json!({
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": script.capabilities,
                    "serverInfo": {"name": "scripted", "version": "1"}
                }))
            }
        })
        .request_untyped::<Value, Value, _, _>("tools/list", move |_: Value, _| {
            let script = Arc::clone(&tools);
            async move {
                lock(&script.methods).push("tools/list".to_owned());
                let n = script.tools_listed.fetch_add(1, Ordering::SeqCst) + 1;
                lock(&script.listed_at).push(Instant::now());
                script.seen.notify_waiters();
                let mut result = json!({
                    "tools": [{"name": format!("tool{n}"), "inputSchema": {"type": "object"}}],
                    "resultType": "complete", "cacheScope": "private"
                });
                if let Some(ttl) = *lock(&script.tools_ttl) {
                    result["ttlMs"] = json!(ttl);
                }
                Ok(result)
            }
        })
        .request_untyped::<Value, Value, _, _>(
            "subscriptions/listen",
            move |params: Value, ctx: RequestContext| {
                let script = Arc::clone(&listen);
                async move {
                    let id = ctx.id().to_json().into_owned();
                    lock(&script.methods).push("subscriptions/listen".to_owned());
                    lock(&script.listens).push(Listened {
                        id: id.clone(),
                        params: params.clone(),
                        at: Instant::now(),
                    });
                    let error = lock(&script.listen_error).clone();
                    if let Some(error) = error {
                        script.seen.notify_waiters();
                        return Err(error);
                    }
                    let (tx, rx) = oneshot::channel();
                    lock(&script.open).insert(id.clone(), tx);
                    let id_value: Value = serde_json::from_str(&id).unwrap();
                    let meta = json!({"io.modelcontextprotocol/subscriptionId": id_value});
                    // The whole filter is honoured.
                    ctx.peer()
                        .notify_untyped(
                            ACKNOWLEDGED,
                            Some(&json!({"notifications": params["notifications"], "_meta": meta})),
                        )
                        .await
                        .unwrap();
                    script.seen.notify_waiters();
                    match rx.await {
                        Ok(answer) => answer.map(|mut result| {
                            result["_meta"] = meta;
                            result
                        }),
                        Err(_) => Err(ErrorObject::internal("dropped")),
                    }
                }
            },
        )
        .request_fallback::<Value, _, _>(move |method, _, _| {
            lock(&other.methods).push(method.to_owned());
            Ok(async { Ok(json!({"resultType": "complete"})) })
        })
        .notification_fallback(move |method, params| {
            if method != "notifications/cancelled" {
                return;
            }
            let params: Value =
                params.map_or(Value::Null, |raw| serde_json::from_str(raw.get()).unwrap());
            let id = params["requestId"].to_string();
            lock(&notes.cancelled).push(id.clone());
            if let Some(sender) = lock(&notes.open).remove(&id) {
                let _ = sender.send(Err(ErrorObject::internal("cancelled")));
            }
        })
}

/// The resource updates the handler saw.
#[derive(Clone, Default)]
struct Updates(Arc<Mutex<Vec<String>>>, Arc<Notify>);

impl ClientHandler for Updates {
    fn on_resource_updated(&self, _server: &str, uri: &str) {
        lock(&self.0).push(uri.to_owned());
        self.1.notify_one();
    }
}

/// The server end: its peer (to send notifications) and its script.
struct Server {
    peer: Peer,
    script: Arc<Script>,
}

impl Server {
    async fn notify(&self, method: &str, params: Value) {
        self.peer
            .notify_untyped(method, Some(&params))
            .await
            .expect("the server's connection is open");
    }
}

async fn connect_with(script: Script, handler: impl ClientHandler) -> (Client, Server) {
    let era = if script.legacy {
        EraChoice::Legacy
    } else {
        EraChoice::Modern
    };
    let script = Arc::new(script);
    let (ours, theirs) = tokio::io::duplex(1024 * 1024);
    let config = Config::new(Profile::Lenient, 1024 * 1024);
    let (read, write) = tokio::io::split(theirs);
    let (stream, sink) = sidewire_jsonrpc::ndjson(read, write, &config);
    let (peer, driver) = sidewire_jsonrpc::connect(stream, sink, router(&script), config);
    tokio::spawn(driver);
    let (read, write) = tokio::io::split(ours);
    let spec = ServerSpec::stdio("scripted", "unused").era(era);
    let (client, driver) = Client::connect_streams(&spec, read, write, handler)
        .await
        .expect("the scripted server connects");
    tokio::spawn(driver);
    (client, Server { peer, script })
}

async fn connect(script: Script) -> (Client, Server) {
    connect_with(script, Updates::default()).await
}

fn filter(listen: &Listened) -> &Value {
    &listen.params["notifications"]
}

#[tokio::test]
async fn a_listing_opens_a_listen_for_the_announced_lists() {
    let (client, server) = connect(Script::modern()).await;
    assert_eq!(client.era(), sidewire_mcp::Era::Modern);
    // Nothing listed, nothing subscribed: no listen.
    client.ping().await.unwrap();
    assert!(server.script.listens().is_empty());

    client.list_tools().await.unwrap();
    let first = server.script.listen(1).await;
    assert_eq!(filter(&first), &json!({"toolsListChanged": true}));
    assert_eq!(
        first.params["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );

    // The prompts capability does not announce list changes: the listen stays as it is.
    client.list_prompts().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(server.script.listens().len(), 1);

    client.list_resources().await.unwrap();
    let second = server.script.listen(2).await;
    assert_eq!(
        filter(&second),
        &json!({"toolsListChanged": true, "resourcesListChanged": true})
    );
    // The first listen was closed (over stdio: cancelled).
    assert!(lock(&server.script.cancelled).contains(&first.id));
}

#[tokio::test]
async fn a_list_changed_on_the_listen_refreshes_the_cache() {
    let (client, server) = connect(Script::modern()).await;
    client.list_tools().await.unwrap();
    let listen = server.script.listen(1).await;
    assert_eq!(client.tools()[0].name, "tool1");
    let revision = client.list_revision();
    let id: Value = serde_json::from_str(&listen.id).unwrap();
    server
        .notify(
            "notifications/tools/list_changed",
            json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id}}),
        )
        .await;
    within("the refresh", client.list_changed_since(revision)).await;
    assert_eq!(client.tools()[0].name, "tool2");
}

#[tokio::test]
async fn subscribe_reopens_the_listen_and_updates_reach_the_handler() {
    let updates = Updates::default();
    let (client, server) = connect_with(Script::modern(), updates.clone()).await;
    client.list_tools().await.unwrap();
    let first = server.script.listen(1).await;

    within("subscribe", client.subscribe("mem://a"))
        .await
        .unwrap();
    // It returned after the acknowledgment of a listen naming the URI.
    let second = server.script.listens().last().cloned().unwrap();
    assert_eq!(
        filter(&second),
        &json!({"toolsListChanged": true, "resourceSubscriptions": ["mem://a"]})
    );
    assert!(lock(&server.script.cancelled).contains(&first.id));

    let updated = updates.1.notified();
    server
        .notify("notifications/resources/updated", json!({"uri": "mem://a"}))
        .await;
    within("the update", updated).await;
    assert_eq!(*lock(&updates.0), ["mem://a"]);

    within("a second subscribe", client.subscribe("mem://b"))
        .await
        .unwrap();
    let third = server.script.listens().last().cloned().unwrap();
    assert_eq!(
        filter(&third)["resourceSubscriptions"],
        json!(["mem://a", "mem://b"])
    );

    within("unsubscribe", client.unsubscribe("mem://a"))
        .await
        .unwrap();
    let fourth = server.script.listens().last().cloned().unwrap();
    assert_eq!(
        filter(&fourth),
        &json!({"toolsListChanged": true, "resourceSubscriptions": ["mem://b"]})
    );
    // No resources/subscribe in the modern era.
    assert!(
        !lock(&server.script.methods)
            .iter()
            .any(|m| m.starts_with("resources/"))
    );
}

#[tokio::test]
async fn unsubscribing_the_last_closes_the_listen() {
    let (client, server) = connect(Script::modern()).await;
    within("subscribe", client.subscribe("mem://a"))
        .await
        .unwrap();
    let only = server.script.listen(1).await;
    assert_eq!(
        filter(&only),
        &json!({"resourceSubscriptions": ["mem://a"]})
    );
    within("unsubscribe", client.unsubscribe("mem://a"))
        .await
        .unwrap();
    server
        .script
        .until("the listen closed", |s| lock(&s.open).is_empty())
        .await;
    assert!(lock(&server.script.cancelled).contains(&only.id));
}

#[tokio::test]
async fn subscriptions_are_bounded() {
    let (client, server) = connect(Script::modern()).await;
    for n in 0..256 {
        client.subscribe(&format!("mem://{n}")).await.unwrap();
    }
    let err = client.subscribe("mem://256").await.unwrap_err();
    assert!(err.is_subscription_limit(), "{err:?}");
    // One already subscribed is no new subscription.
    client.subscribe("mem://7").await.unwrap();
    client.unsubscribe("mem://0").await.unwrap();
    let long = format!("mem://{}", "x".repeat(4096));
    let err = client.subscribe(&long).await.unwrap_err();
    assert!(err.is_subscription_limit(), "{err:?}");
    client.subscribe("mem://256").await.unwrap();
    let last = server.script.listens().last().cloned().unwrap();
    let uris = filter(&last)["resourceSubscriptions"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(uris, 256);
}

#[tokio::test]
async fn subscribe_needs_the_capability() {
    let mut script = Script::modern();
    script.capabilities = json!({"resources": {"listChanged": true}});
    let (client, server) = connect(script).await;
    let err = client.subscribe("mem://a").await.unwrap_err();
    assert!(err.is_unsupported(), "{err:?}");
    assert!(server.script.listens().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_ended_listen_opens_again_after_a_backoff() {
    let (client, server) = connect(Script::modern()).await;
    client.list_tools().await.unwrap();
    let first = server.script.listen(1).await;

    // A graceful end: opened again after 1 s, and the tools re-listed (there is no replay).
    server
        .script
        .end(&first.id, Ok(json!({"resultType": "complete"})));
    let second = server.script.listen(2).await;
    let waited = second.at - first.at;
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    server
        .script
        .until("the tools re-listed", |s| s.listed() >= 2)
        .await;

    // An error: the wait doubles.
    server
        .script
        .end(&second.id, Err(ErrorObject::internal("going away")));
    let third = server.script.listen(3).await;
    let waited = third.at - second.at;
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert_eq!(filter(&third), &json!({"toolsListChanged": true}));

    // A subscription does not wait out the backoff.
    server
        .script
        .end(&third.id, Ok(json!({"resultType": "complete"})));
    server
        .script
        .until("the third listen ended", |s| lock(&s.open).is_empty())
        .await;
    let before = Instant::now();
    within("subscribe", client.subscribe("mem://a"))
        .await
        .unwrap();
    let fourth = server.script.listen(4).await;
    assert!(fourth.at - before < Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_listen_that_lived_a_while_resets_the_backoff() {
    let (client, server) = connect(Script::modern()).await;
    client.list_tools().await.unwrap();
    let mut last = server.script.listen(1).await;
    // Three quick ends: 1 s, 2 s, 4 s.
    for n in 2..=4 {
        server.script.end(&last.id, Ok(json!({})));
        last = server.script.listen(n).await;
    }
    // It lives two minutes, then ends: the next opens after 1 s again.
    tokio::time::sleep(Duration::from_secs(120)).await;
    server.script.end(&last.id, Ok(json!({})));
    let ended = Instant::now();
    let next = server.script.listen(5).await;
    let waited = next.at - ended;
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_without_listen_is_asked_once() {
    let script = Script::modern();
    *lock(&script.listen_error) = Some(ErrorObject::new(
        ErrorObject::METHOD_NOT_FOUND,
        "Method not found",
    ));
    let (client, server) = connect(script).await;
    client.list_tools().await.unwrap();
    server.script.listen(1).await;
    // Time passes, lists are fetched: the listen is not tried again.
    tokio::time::sleep(Duration::from_secs(600)).await;
    client.list_resources().await.unwrap();
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(server.script.listens().len(), 1);
    let err = client.subscribe("mem://a").await.unwrap_err();
    assert!(err.is_unsupported(), "{err:?}");
    assert_eq!(server.script.listens().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_subscribe_the_listen_refuses_fails_with_its_error() {
    let script = Script::modern();
    *lock(&script.listen_error) = Some(ErrorObject::new(
        ErrorObject::METHOD_NOT_FOUND,
        "Method not found",
    ));
    let (client, _server) = connect(script).await;
    let err = client.subscribe("mem://a").await.unwrap_err();
    assert!(err.is_remote(), "{err:?}");
    assert_eq!(err.remote().unwrap().code, ErrorObject::METHOD_NOT_FOUND);
}

#[tokio::test(start_paused = true)]
async fn a_listing_ttl_relists_it_when_it_runs_out() {
    let script = Script::modern();
    *lock(&script.tools_ttl) = Some(5_000);
    let (client, server) = connect(script).await;
    let started = Instant::now();
    client.list_tools().await.unwrap();
    let revision = client.list_revision();
    within("the ttl refresh", client.list_changed_since(revision)).await;
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert_eq!(server.script.listed(), 2);
    assert_eq!(client.tools()[0].name, "tool2");
}

#[tokio::test(start_paused = true)]
async fn a_tiny_ttl_relists_at_most_once_a_second() {
    let script = Script::modern();
    *lock(&script.tools_ttl) = Some(1);
    let (client, server) = connect(script).await;
    client.list_tools().await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let at = lock(&server.script.listed_at).clone();
    assert!(at.len() >= 2, "{} listings in 10 s", at.len());
    for pair in at.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_secs(1), "re-listed after {gap:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_zero_or_absent_ttl_does_not_relist() {
    for ttl in [Some(0), None] {
        let script = Script::modern();
        *lock(&script.tools_ttl) = ttl;
        let (client, server) = connect(script).await;
        client.list_tools().await.unwrap();
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(server.script.listed(), 1, "ttl {ttl:?}");
    }
}

#[tokio::test]
async fn the_legacy_era_sends_no_listen() {
    let mut script = Script::modern();
    script.legacy = true;
    *lock(&script.tools_ttl) = Some(1);
    let (client, server) = connect(script).await;
    assert_eq!(client.era(), sidewire_mcp::Era::Legacy);
    client.list_tools().await.unwrap();
    client.subscribe("mem://a").await.unwrap();
    client.list_resources().await.unwrap();
    let methods = lock(&server.script.methods).clone();
    assert!(
        methods.contains(&"resources/subscribe".to_owned()),
        "{methods:?}"
    );
    assert!(
        !methods.contains(&"subscriptions/listen".to_owned()),
        "{methods:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_legacy_era_ignores_a_ttl() {
    let mut script = Script::modern();
    script.legacy = true;
    *lock(&script.tools_ttl) = Some(1_000);
    let (client, server) = connect(script).await;
    client.list_tools().await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(server.script.listed(), 1);
    assert!(server.script.listens().is_empty());
}
