//! The 2025-11-25 client features against an in-process scripted server: structured output
//! and argument validation, URL elicitation (and `-32042`), sampling with tools, the server
//! cancelling a request it sent us, roots that change, the caller's `_meta` and progress on
//! any request, and icons.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_jsonrpc::{CallOptions, ErrorObject, Peer, RequestContext, Router};
use sidewire_mcp::{
    Client, ClientHandler, Content, CreateMessageParams, CreateMessageResult, ElicitAction,
    ElicitParams, ElicitResult, NoHandler, Root, ServerSpec, ToolCallOptions, UrlElicitation,
};

use crate::support::*;

/// What the scripted server saw.
#[derive(Default)]
struct Seen {
    initialize: Mutex<Value>,
    requests: Mutex<Vec<(String, Value)>>,
    notifications: Mutex<Vec<(String, Value)>>,
}

impl Seen {
    fn calls(&self, method: &str) -> Vec<Value> {
        lock(&self.requests)
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    fn notified(&self, method: &str) -> Vec<Value> {
        lock(&self.notifications)
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

const TEMPERATURE: &str = r#"{"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}"#;

fn tools() -> Value {
    let output: Value = serde_json::from_str(TEMPERATURE).unwrap();
    json!({"tools": [
        {"name": "weather_ok", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
         "outputSchema": output,
         "icons": [{"src": "https://example.com/w.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}]},
        {"name": "weather_bad", "inputSchema": {"type": "object"}, "outputSchema": output},
        {"name": "weather_none", "inputSchema": {"type": "object"}, "outputSchema": output},
        {"name": "plain", "inputSchema": {"type": "object"}}
    ]})
}

async fn ask(ctx: &RequestContext, method: &str, params: Value) -> Value {
    match ctx
        .peer()
        .call(method, Some(&params), CallOptions::default())
        .await
    {
        Ok(raw) => json!({"ok": raw.decode::<Value>().unwrap()}),
        Err(e) => json!({"error": e.remote().map_or(0, |e| e.code)}),
    }
}

async fn call_tool(params: Value, ctx: RequestContext) -> Result<Value, ErrorObject> {
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    match name.as_str() {
        "weather_ok" => Ok(json!({"content": [{"type": "text", "text": "21"}], "structuredContent": {"temperature": 21}})),
        "weather_bad" => Ok(json!({"content": [{"type": "text", "text": "hot"}], "structuredContent": {"temperature": "hot"}})),
        "weather_none" => Ok(json!({"content": [{"type": "text", "text": "21"}]})),
        "plain" => Ok(json!({"content": [{"type": "text", "text": "plain"}], "structuredContent": {"anything": true}})),
        "needs_url" => Err(ErrorObject::new(-32042, "sign in first").with_data(json!({"elicitations": [
            {"mode": "url", "elicitationId": "e-7", "url": "https://auth.example.com/connect?x=1", "message": "Connect your account"},
            {"mode": "url", "elicitationId": "bad", "url": "javascript:alert(1)", "message": "no"}
        ]}))),
        "ask_url" => {
            let url = params["arguments"]["url"].as_str().unwrap_or("https://auth.example.com/go").to_owned();
            let answer = ask(&ctx, "elicitation/create", json!({"mode": "url", "message": "Go", "url": url, "elicitationId": "e-1"})).await;
            Ok(json!({"content": [], "structuredContent": answer}))
        }
        "sample_tools" => {
            let answer = ask(&ctx, "sampling/createMessage", json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}],
                "maxTokens": 50,
                "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
                "toolChoice": {"mode": "auto"}
            })).await;
            Ok(json!({"content": [], "structuredContent": answer}))
        }
        _ => Err(ErrorObject::invalid_params(format!("unknown tool {name}"))),
    }
}

fn router(seen: &Arc<Seen>) -> Router {
    let init = Arc::clone(seen);
    let record = Arc::clone(seen);
    let notes = Arc::clone(seen);
    let recorded = move |method: &'static str| {
        let seen = Arc::clone(&record);
        move |params: Value, ctx: RequestContext| {
            lock(&seen.requests).push((method.to_owned(), params.clone()));
            async move {
                match method {
                    "tools/list" => Ok(tools()),
                    "tools/call" => call_tool(params, ctx).await,
                    "prompts/get" => {
                        if let Some(token) = params["_meta"].get("progressToken") {
                            let note = json!({"progressToken": token, "progress": 1, "total": 2});
                            let _ = ctx
                                .peer()
                                .notify_untyped("notifications/progress", Some(&note))
                                .await;
                        }
                        Ok(json!({"messages": []}))
                    }
                    _ => Ok(json!({})),
                }
            }
        }
    };
    Router::new()
        .request_untyped::<Value, Value, _, _>("initialize", move |params: Value, _| {
            *lock(&init.initialize) = params;
            async {
                Ok(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1", "description": "d", "websiteUrl": "https://example.com",
                                   "icons": [{"src": "data:image/png;base64,AA=="}]}
                }))
            }
        })
        .request_untyped::<Value, Value, _, _>("tools/list", recorded("tools/list"))
        .request_untyped::<Value, Value, _, _>("tools/call", recorded("tools/call"))
        .request_untyped::<Value, Value, _, _>("prompts/get", recorded("prompts/get"))
        .notification_fallback(move |method, params| {
            let params = params.map_or(Value::Null, |raw| serde_json::from_str(raw.get()).unwrap());
            lock(&notes.notifications).push((method.to_owned(), params));
        })
}

async fn connect(spec: ServerSpec, handler: impl ClientHandler) -> (Client, Peer, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let (client, peer) = connect_piped(router(&seen), &spec, handler).await;
    (client.expect("connects"), peer, seen)
}

fn spec() -> ServerSpec {
    ServerSpec::stdio("scripted", "unused")
}

#[tokio::test]
async fn structured_content_is_checked_against_the_listed_output_schema() {
    let (client, _peer, _seen) = connect(spec(), NoHandler).await;
    let call = |name: &'static str| client.call_tool(name, json!({}), ToolCallOptions::new());
    // Before a listing there is no schema to check against.
    assert!(within("unlisted", call("weather_bad")).await.is_ok());
    within("list", client.list_tools()).await.unwrap();
    let ok = within("ok", call("weather_ok")).await.unwrap();
    assert_eq!(ok.structured_content, Some(json!({"temperature": 21})));
    let err = within("bad", call("weather_bad")).await.unwrap_err();
    assert!(err.is_output_schema_mismatch(), "{err}");
    assert_eq!(err.server(), Some("scripted"));
    let violation = &err.schema_violations()[0];
    assert_eq!(
        (violation.instance_path.as_str(), violation.keyword.as_str()),
        ("/temperature", "type")
    );
    assert_eq!(err.call_result().unwrap().joined_text(), "hot");
    let err = within("none", call("weather_none")).await.unwrap_err();
    assert!(err.is_output_schema_mismatch(), "{err}");
    // A tool without an output schema is not checked.
    assert!(within("plain", call("plain")).await.is_ok());
}

#[tokio::test]
async fn arguments_are_checked_before_sending_only_when_asked() {
    let (client, _peer, seen) = connect(spec(), NoHandler).await;
    within("list", client.list_tools()).await.unwrap();
    let checked = ToolCallOptions::new().validate_arguments(true);
    let err = within(
        "bad args",
        client.call_tool("weather_ok", json!({"city": 7}), checked.clone()),
    )
    .await
    .unwrap_err();
    assert!(err.is_invalid_arguments(), "{err}");
    assert_eq!(err.schema_violations()[0].instance_path, "/city");
    assert!(seen.calls("tools/call").is_empty(), "nothing was sent");
    within(
        "good args",
        client.call_tool("weather_ok", json!({"city": "Oslo"}), checked),
    )
    .await
    .unwrap();
    // Unchecked, the same bad arguments go to the server.
    within(
        "unchecked",
        client.call_tool("weather_ok", json!({"city": 7}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(seen.calls("tools/call").len(), 2);
}

/// A handler offering URL elicitation and sampling with tools, recording what it saw.
#[derive(Default)]
struct Url {
    asked: Mutex<Vec<UrlElicitation>>,
    completed: Mutex<Vec<String>>,
    sampled: Mutex<Vec<CreateMessageParams>>,
    tools: bool,
}

/// The handler face of a shared [`Url`].
struct UrlH(Arc<Url>);

impl ClientHandler for UrlH {
    fn supports_sampling(&self) -> bool {
        true
    }
    fn supports_sampling_tools(&self) -> bool {
        self.0.tools
    }
    fn supports_url_elicitation(&self) -> bool {
        true
    }
    async fn elicit_url(
        &self,
        _server: &str,
        request: UrlElicitation,
    ) -> Result<ElicitAction, ErrorObject> {
        lock(&self.0.asked).push(request);
        Ok(ElicitAction::Accept)
    }
    fn on_elicitation_complete(&self, _server: &str, elicitation_id: &str) {
        lock(&self.0.completed).push(elicitation_id.to_owned());
    }
    async fn create_message(
        &self,
        _server: &str,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        lock(&self.0.sampled).push(params);
        Ok(CreateMessageResult::tool_use(
            "m",
            vec![Content::ToolUse {
                id: "u1".into(),
                name: "get_weather".into(),
                input: json!({"city": "Oslo"}),
                meta: None,
            }],
        ))
    }
}

#[tokio::test]
async fn url_elicitation_is_advertised_checked_and_answered_by_the_handler() {
    let handler = Arc::new(Url::default());
    let (client, peer, seen) = connect(spec(), UrlH(Arc::clone(&handler))).await;
    assert_eq!(
        lock(&seen.initialize)["capabilities"]["elicitation"],
        json!({"url": {}})
    );
    let result = within(
        "ask_url",
        client.call_tool("ask_url", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"ok": {"action": "accept"}}))
    );
    let asked = lock(&handler.asked).clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].host(), "auth.example.com");
    assert_eq!(asked[0].elicitation_id, "e-1");
    // A URL that is not absolute http(s) never reaches the handler.
    let bad = json!({"url": "javascript:alert(1)"});
    let result = within(
        "bad url",
        client.call_tool("ask_url", bad, ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(result.structured_content, Some(json!({"error": -32602})));
    assert_eq!(lock(&handler.asked).len(), 1);
    // The server says the out-of-band step is done.
    peer.notify_untyped(
        "notifications/elicitation/complete",
        Some(&json!({"elicitationId": "e-1"})),
    )
    .await
    .unwrap();
    eventually("completion heard", || {
        lock(&handler.completed).as_slice() == ["e-1"]
    })
    .await;
}

#[tokio::test]
async fn a_url_elicitation_required_error_is_typed_and_can_be_offered() {
    let handler = Arc::new(Url::default());
    let (client, _peer, _seen) = connect(spec(), UrlH(Arc::clone(&handler))).await;
    let err = within(
        "needs_url",
        client.call_tool("needs_url", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap_err();
    assert!(err.is_url_elicitation_required(), "{err}");
    assert!(err.is_remote());
    let listed = err.url_elicitations();
    assert_eq!(listed.len(), 1, "the javascript: one is left out");
    assert_eq!(listed[0].host(), "auth.example.com");
    let outcomes = within("offer", client.offer_url_elicitations(&err))
        .await
        .unwrap();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].0.elicitation_id, "e-7");
    assert_eq!(outcomes[0].1, ElicitAction::Accept);
    // A client whose handler does not offer URL mode says so.
    let (plain, _peer, seen) = connect(spec(), NoHandler).await;
    assert!(
        lock(&seen.initialize)["capabilities"]
            .get("elicitation")
            .is_none()
    );
    assert!(
        within("offer", plain.offer_url_elicitations(&err))
            .await
            .unwrap_err()
            .is_unsupported()
    );
}

#[tokio::test]
async fn sampling_with_tools_is_advertised_and_tool_use_answers_go_back() {
    let handler = Arc::new(Url {
        tools: true,
        ..Url::default()
    });
    let (client, _peer, seen) = connect(spec(), UrlH(Arc::clone(&handler))).await;
    assert_eq!(
        lock(&seen.initialize)["capabilities"]["sampling"],
        json!({"tools": {}})
    );
    let result = within(
        "sample",
        client.call_tool("sample_tools", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    let answer = result.structured_content.unwrap();
    assert_eq!(answer["ok"]["stopReason"], "toolUse");
    assert_eq!(
        answer["ok"]["content"][0],
        json!({"type": "tool_use", "id": "u1", "name": "get_weather", "input": {"city": "Oslo"}})
    );
    let sampled = lock(&handler.sampled).clone();
    assert_eq!(sampled[0].tools[0].name, "get_weather");
    assert_eq!(sampled[0].tool_choice, Some(json!({"mode": "auto"})));
    // Without sampling.tools, a request with tools is refused before the handler.
    let handler = Arc::new(Url::default());
    let (client, _peer, seen) = connect(spec(), UrlH(Arc::clone(&handler))).await;
    assert_eq!(
        lock(&seen.initialize)["capabilities"]["sampling"],
        json!({})
    );
    let result = within(
        "sample",
        client.call_tool("sample_tools", json!({}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(result.structured_content, Some(json!({"error": -32602})));
    assert!(lock(&handler.sampled).is_empty());
}

/// A handler whose elicitation never ends, and which notes when its future is dropped.
#[derive(Default)]
struct Stuck {
    started: AtomicUsize,
    dropped: AtomicBool,
}

struct DropFlag(Arc<Stuck>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

/// The handler face of a shared [`Stuck`].
struct StuckH(Arc<Stuck>);

impl ClientHandler for StuckH {
    fn supports_elicitation(&self) -> bool {
        true
    }
    async fn elicit(
        &self,
        _server: &str,
        _params: ElicitParams,
    ) -> Result<ElicitResult, ErrorObject> {
        let _flag = DropFlag(Arc::clone(&self.0));
        self.0.started.fetch_add(1, Ordering::SeqCst);
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_server_cancel_drops_our_handler_and_sends_no_answer() {
    let handler = Arc::new(Stuck::default());
    let (_client, peer, _seen) = connect(spec(), StuckH(Arc::clone(&handler))).await;
    // The server's first request to the client has id 1 (its peer numbers from 1).
    let asking = {
        let peer = peer.clone();
        async move {
            peer.call(
                "elicitation/create",
                Some(&json!({"message": "name?"})),
                CallOptions::timeout(Duration::from_secs(2)),
            )
            .await
        }
    };
    let asking = tokio::spawn(asking);
    eventually("the handler started", || {
        handler.started.load(Ordering::SeqCst) == 1
    })
    .await;
    assert!(!handler.dropped.load(Ordering::SeqCst));
    peer.notify_untyped(
        "notifications/cancelled",
        Some(&json!({"requestId": 1, "reason": "changed my mind"})),
    )
    .await
    .unwrap();
    eventually("the handler was dropped", || {
        handler.dropped.load(Ordering::SeqCst)
    })
    .await;
    // No answer came: the server's own call runs into its timeout.
    let outcome = within("the server's call", asking).await.unwrap();
    assert!(
        matches!(outcome, Err(sidewire_jsonrpc::Error::Timeout { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn changed_roots_are_announced_and_served() {
    let spec = spec().root(Root::dir("/work/one"));
    let (client, peer, seen) = connect(spec, NoHandler).await;
    assert_eq!(
        lock(&seen.initialize)["capabilities"]["roots"],
        json!({"listChanged": true})
    );
    within("same roots", client.set_roots(vec![Root::dir("/work/one")]))
        .await
        .unwrap();
    within("new roots", client.set_roots(vec![Root::dir("/work/two")]))
        .await
        .unwrap();
    eventually("list_changed", || {
        seen.notified("notifications/roots/list_changed").len() == 1
    })
    .await;
    let roots = within(
        "roots/list",
        peer.call("roots/list", None::<&Value>, CallOptions::default()),
    )
    .await
    .unwrap()
    .decode::<Value>()
    .unwrap();
    assert_eq!(roots["roots"][0]["uri"], "file:///work/two");
    assert_eq!(client.roots(), vec![Root::dir("/work/two")]);
    // A connection that advertised no roots cannot start now.
    let (rootless, _peer, _seen) =
        connect(ServerSpec::stdio("scripted", "unused"), NoHandler).await;
    let err = within("rootless", rootless.set_roots(vec![Root::dir("/x")]))
        .await
        .unwrap_err();
    assert!(err.is_unsupported(), "{err}");
    assert!(rootless.roots().is_empty());
}

#[tokio::test]
async fn callers_meta_and_progress_ride_on_other_requests() {
    let (client, _peer, seen) = connect(spec(), NoHandler).await;
    let reports = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reports);
    let options = ToolCallOptions::new()
        .meta("com.example/trace", json!("t-1"))
        .on_progress(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
        });
    within(
        "prompt",
        client.get_prompt_with("p", BTreeMap::new(), options),
    )
    .await
    .unwrap();
    let meta = seen.calls("prompts/get")[0]["_meta"].clone();
    assert_eq!(meta["com.example/trace"], "t-1");
    assert!(meta["progressToken"].is_u64(), "{meta}");
    assert_eq!(reports.load(Ordering::SeqCst), 1);
    // Without a callback, no token; a tools/call keeps its own token beside the caller's members.
    within(
        "prompt",
        client.get_prompt_with("p", BTreeMap::new(), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    assert!(seen.calls("prompts/get")[1].get("_meta").is_none());
    let options = ToolCallOptions::new().meta("com.example/trace", json!("t-2"));
    within("call", client.call_tool("plain", json!({}), options))
        .await
        .unwrap();
    let meta = seen.calls("tools/call")[0]["_meta"].clone();
    assert_eq!(meta["com.example/trace"], "t-2");
    assert!(meta["progressToken"].is_u64());
    // Reserved keys are refused, and nothing is sent.
    for key in [
        "progressToken",
        "io.modelcontextprotocol/protocolVersion",
        "dev.mcp/x",
    ] {
        let options = ToolCallOptions::new().meta(key, json!(1));
        let err = within(
            "reserved",
            client.call_tool("plain", json!({}), options.clone()),
        )
        .await
        .unwrap_err();
        assert!(err.is_reserved_meta(), "{key}: {err}");
        let err = within(
            "reserved",
            client.get_prompt_with("p", BTreeMap::new(), options),
        )
        .await
        .unwrap_err();
        assert!(err.is_reserved_meta(), "{key}: {err}");
    }
    assert_eq!(seen.calls("tools/call").len(), 1);
    assert_eq!(seen.calls("prompts/get").len(), 2);
}

#[tokio::test]
async fn icons_are_kept_on_tools_and_the_server() {
    let (client, _peer, _seen) = connect(spec(), NoHandler).await;
    let tools = within("list", client.list_tools()).await.unwrap();
    let icon = &tools[0].icons[0];
    assert_eq!(icon.src, "https://example.com/w.png");
    assert_eq!(icon.mime_type.as_deref(), Some("image/png"));
    assert_eq!(icon.sizes, vec!["48x48".to_owned()]);
    assert_eq!(icon.theme.as_deref(), Some("dark"));
    assert!(tools[1].icons.is_empty());
    let info = client.server_info();
    assert_eq!(info.icons[0].src, "data:image/png;base64,AA==");
    assert_eq!(info.website_url.as_deref(), Some("https://example.com"));
    assert_eq!(info.description.as_deref(), Some("d"));
}
