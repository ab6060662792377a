//! The gateway between a raw legacy client (JSON lines over a pipe) and an upstream served in
//! this process over Streamable HTTP, in each of the upstream's eras: what the upstream asks
//! mid-call (sampling, elicitation) reaches the client and its answer goes back; its log lines
//! and progress reach the client before the result; a client without the capability is refused
//! with the upstream never answered by anyone else.

use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_host::{ExtensionHost, HostConfig};
use sidewire_gateway::{Gateway, GatewayConfig, Mode, Policy};
use sidewire_mcp::{EraChoice as Era, ServerSpec};
use sidewire_mcp_server::{
    CallToolResult, Capabilities, Error, Handler, HandlerContext, Implementation, InputRequest,
    InputRequired, ListKind, LogLevel, Notifier, Reply, Resource, Server, SessionKey, Tool,
    ToolCallRequest,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The upstream: `ask` asks the client for a sample, then an elicitation, and says what it got;
/// `chatty` logs and reports progress before it answers.
#[derive(Default)]
struct Upstream {
    /// Offer the tool `late` too.
    late: Arc<AtomicBool>,
    /// Each change of a legacy session's subscriptions, in order.
    subscribed: Arc<std::sync::Mutex<Vec<(String, bool)>>>,
    /// The session `sign-in` was answered in.
    signed: Arc<std::sync::Mutex<Option<SessionKey>>>,
}

impl Handler for Upstream {
    fn info(&self) -> Implementation {
        let mut info = Implementation::default();
        info.name = "upstream".into();
        info.version = "1".into();
        info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
            .tools()
            .resources(true)
            .logging()
            .list_changed()
    }

    async fn list_resources(&self, _ctx: &HandlerContext) -> Result<Vec<Resource>, Error> {
        Ok(vec![Resource::new("mem://a", "a")])
    }

    fn subscription_changed(&self, uri: &str, subscribed: bool) {
        (self.subscribed.lock().unwrap()).push((uri.to_owned(), subscribed));
    }

    async fn list_tools(&self, _ctx: &HandlerContext) -> Result<Vec<Tool>, Error> {
        let late = self.late.load(Ordering::SeqCst).then_some("late");
        Ok(
            ["ask", "chatty", "flood", "sign-in", "roots", "url-required"]
                .into_iter()
                .chain(late)
                .map(|name| Tool::new(name, "test", json!({"type": "object"})))
                .collect(),
        )
    }

    async fn call_tool(
        &self,
        call: ToolCallRequest,
        ctx: HandlerContext,
    ) -> Result<Reply<CallToolResult>, Error> {
        match call.name.as_str() {
            "ask" => {
                let answers = ctx.input_responses();
                let (Some(sample), Some(elicited)) = (answers.get("s"), answers.get("e")) else {
                    let sample = InputRequest::Sample(json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": "hi?"}}],
                        "maxTokens": 10,
                    }));
                    let elicit = InputRequest::Elicit(json!({
                        "message": "name?",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                    }));
                    return Ok(Reply::InputRequired(
                        InputRequired::new()
                            .request("s", sample)
                            .request("e", elicit),
                    ));
                };
                let text = format!(
                    "{} / {}",
                    sample["content"]["text"].as_str().unwrap_or("?"),
                    elicited["content"]["name"].as_str().unwrap_or("?")
                );
                Ok(Reply::from(CallToolResult::text(text)))
            }
            "sign-in" => match ctx.input_responses().get("u") {
                Some(answer) => {
                    *self.signed.lock().unwrap() = ctx.session();
                    Ok(Reply::from(CallToolResult::text(
                        answer["action"].as_str().unwrap_or("?"),
                    )))
                }
                None => Ok(Reply::InputRequired(InputRequired::new().request(
                    "u",
                    InputRequest::Elicit(json!({
                        "mode": "url",
                        "message": "sign in to go on",
                        "url": "https://auth.example.com/start?flow=1",
                        "elicitationId": "flow-1",
                    })),
                ))),
            },
            "url-required" => {
                *self.signed.lock().unwrap() = ctx.session();
                Err(Error::Rpc {
                    code: -32042,
                    message: "sign in first".into(),
                    data: Some(json!({"elicitations": [{
                        "mode": "url", "message": "sign in", "elicitationId": "flow-2",
                        "url": "https://auth.example.com/start?flow=2"}]})),
                })
            }
            "roots" => match ctx.input_responses().get("r") {
                Some(answer) => {
                    let uris: Vec<&str> = (answer["roots"].as_array().into_iter().flatten())
                        .filter_map(|root| root["uri"].as_str())
                        .collect();
                    Ok(Reply::from(CallToolResult::text(format!(
                        "roots: {}",
                        uris.join(" ")
                    ))))
                }
                None => Ok(Reply::InputRequired(
                    InputRequired::new().request("r", InputRequest::ListRoots),
                )),
            },
            "chatty" => {
                ctx.log(LogLevel::Info, Some("up"), json!("one")).await;
                ctx.progress(1.0, Some(2.0), None).await;
                ctx.log(LogLevel::Info, Some("up"), json!("two")).await;
                Ok(Reply::from(CallToolResult::text("done")))
            }
            "flood" => {
                for n in 0..FLOOD {
                    ctx.progress(n as f64, None, None).await;
                }
                Ok(Reply::from(CallToolResult::text("flooded")))
            }
            other => Err(Error::invalid_params(format!("unknown tool: {other}"))),
        }
    }
}

/// How many progress reports `flood` sends.
const FLOOD: usize = 2000;

/// What a test holds of the upstream.
struct Up {
    notifier: Notifier,
    late: Arc<AtomicBool>,
    subscribed: Arc<std::sync::Mutex<Vec<(String, bool)>>>,
    signed: Arc<std::sync::Mutex<Option<SessionKey>>>,
}

/// The upstream on a free loopback port, and its URL.
async fn upstream() -> (String, Up) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let upstream = Upstream::default();
    let late = Arc::clone(&upstream.late);
    let subscribed = Arc::clone(&upstream.subscribed);
    let signed = Arc::clone(&upstream.signed);
    let server = Server::new(upstream);
    let notifier = server.notifier();
    tokio::spawn(sidewire_mcp_server::http::serve(
        server,
        listener,
        sidewire_mcp_server::http::HttpConfig::default(),
    ));
    (
        url,
        Up {
            notifier,
            late,
            subscribed,
            signed,
        },
    )
}

struct Client {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        self.write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    /// The first message after `say` is done, doing it again every 200 ms until one comes
    /// (300 times at most): for what an upstream says before the gateway may be listening.
    async fn told_after(&mut self, say: impl Fn()) -> Value {
        for _ in 0..300 {
            say();
            let next = tokio::time::timeout(Duration::from_millis(200), self.lines.next_line());
            if let Ok(line) = next.await {
                let line = line.unwrap().expect("the gateway is still there");
                return serde_json::from_str(&line).unwrap();
            }
        }
        panic!("the client was told nothing within 60 s");
    }

    /// Calls `tool` as request `id`, answering each request of the gateway's with what
    /// `answer` gives for it (its method and message), until the call's own answer comes.
    async fn call_answering(
        &mut self,
        id: u64,
        tool: &str,
        mut answer: impl FnMut(&str, &Value) -> Value,
    ) -> Value {
        self.send(call(id, tool)).await;
        loop {
            let message = self.recv().await;
            match message["method"].as_str() {
                Some(method) if message.get("id").is_some() => {
                    let result = answer(method, &message);
                    self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                        .await;
                }
                _ if message["id"] == id => return message,
                _ => {}
            }
        }
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("a message within 60 s")
            .unwrap()
            .expect("the gateway is still there");
        serde_json::from_str(&line).unwrap()
    }
}

/// A gateway in front of the upstream in `era`, and a legacy client with `capabilities` (null:
/// a modern client, which sends no `initialize`).
async fn start(
    era: Era,
    capabilities: Value,
) -> (Client, Gateway, ExtensionHost, tempfile::TempDir) {
    start_with_pipe(era, capabilities, 1 << 16).await
}

/// [`start`], with a pipe of `pipe` bytes between the client and the gateway.
async fn start_with_pipe(
    era: Era,
    capabilities: Value,
    pipe: usize,
) -> (Client, Gateway, ExtensionHost, tempfile::TempDir) {
    let (client, gateway, extensions, state, _) = start_full(era, capabilities, pipe).await;
    (client, gateway, extensions, state)
}

/// [`start_with_pipe`], with the upstream's parts too, and the gateway's watcher running.
async fn start_full(
    era: Era,
    capabilities: Value,
    pipe: usize,
) -> (Client, Gateway, ExtensionHost, tempfile::TempDir, Up) {
    let (url, up) = upstream().await;
    let state = tempfile::tempdir().unwrap();
    let (extensions, _events) = ExtensionHost::boot(HostConfig::new(state.path(), "s-1", "."))
        .await
        .unwrap();
    let config = GatewayConfig::new()
        .server(ServerSpec::http("up", url).era(era))
        .policy(Policy::new(Mode::Allow));
    let (gateway, driver) = Gateway::new(config, extensions.clone()).unwrap();
    tokio::spawn(driver);
    assert!(gateway.start().await.unwrap().is_empty());
    let (client, server_end) = tokio::io::duplex(pipe);
    let (read, write) = tokio::io::split(server_end);
    let server = Server::new(gateway.clone());
    let watching = gateway.clone();
    let clients = server.notifier();
    tokio::spawn(async move { watching.watch(clients).await });
    tokio::spawn(async move { server.serve_stdio(read, write).await });
    let (read, write) = tokio::io::split(client);
    let mut client = Client {
        write,
        lines: BufReader::new(read).lines(),
    };
    // A modern client says nothing first: each request carries its own envelope.
    if !capabilities.is_null() {
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "raw", "version": "1"}}}),
            )
            .await;
        assert_eq!(client.recv().await["id"], 0);
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
    (client, gateway, extensions, state, up)
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}, "_meta": {"progressToken": "p"}}})
}

#[tokio::test]
async fn the_upstreams_requests_reach_the_client_in_both_upstream_eras() {
    for era in [Era::Legacy, Era::Modern] {
        let (mut client, gateway, extensions, _state) =
            start(era, json!({"sampling": {}, "elicitation": {}})).await;
        client.send(call(1, "up__ask")).await;
        let mut asked = Vec::new();
        let answer = loop {
            let message = client.recv().await;
            match message["method"].as_str() {
                Some("sampling/createMessage") => {
                    asked.push("sampling");
                    let result = json!({"role": "assistant", "model": "m",
                        "content": {"type": "text", "text": "sampled"}});
                    client
                        .send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                        .await;
                }
                Some("elicitation/create") => {
                    asked.push("elicitation");
                    let result = json!({"action": "accept", "content": {"name": "ada"}});
                    client
                        .send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                        .await;
                }
                _ if message["id"] == 1 => break message,
                _ => {}
            }
        };
        asked.sort_unstable();
        assert_eq!(asked, ["elicitation", "sampling"], "{era:?}");
        assert_eq!(
            answer["result"]["content"][0]["text"], "sampled / ada",
            "{era:?}: {answer}"
        );
        gateway.shutdown().await;
        extensions.shutdown().await;
    }
}

#[tokio::test]
async fn a_client_without_the_capability_is_never_asked() {
    let (mut client, gateway, extensions, _state) = start(Era::Legacy, json!({})).await;
    client.send(call(1, "up__ask")).await;
    let answer = loop {
        let message = client.recv().await;
        assert!(
            message
                .get("method")
                .is_none_or(|m| m != "sampling/createMessage")
        );
        if message["id"] == 1 {
            break message;
        }
    };
    // The upstream's call failed: as an error, not as a result someone else answered.
    let failed = answer.get("error").is_some() || answer["result"]["isError"] == true;
    assert!(failed, "{answer}");
    gateway.shutdown().await;
    extensions.shutdown().await;
}

#[tokio::test]
async fn log_lines_and_progress_arrive_before_the_result() {
    for era in [Era::Legacy, Era::Modern] {
        let (mut client, gateway, extensions, _state) = start(era, json!({})).await;
        client.send(call(1, "up__chatty")).await;
        let mut seen = Vec::new();
        loop {
            let message = client.recv().await;
            match message["method"].as_str() {
                Some("notifications/message") => {
                    seen.push(message["params"]["data"].as_str().unwrap_or("?").to_owned());
                }
                Some("notifications/progress") => seen.push("progress".to_owned()),
                _ if message["id"] == 1 => {
                    assert_eq!(message["result"]["content"][0]["text"], "done");
                    break;
                }
                _ => {}
            }
        }
        assert_eq!(seen, ["one", "progress", "two"], "{era:?}");
        gateway.shutdown().await;
        extensions.shutdown().await;
    }
}

#[tokio::test]
async fn a_flood_of_progress_is_cut_not_queued() {
    // A small pipe the client does not read from while the upstream floods: the gateway's
    // relay waits on the client, so its queue of FORWARD_QUEUE reports fills and the rest are
    // dropped rather than held.
    let (mut client, gateway, extensions, _state) =
        start_with_pipe(Era::Legacy, json!({}), 256).await;
    client.send(call(1, "up__flood")).await;
    let mut progress = 0;
    loop {
        let message = client.recv().await;
        if message["method"] == "notifications/progress" {
            progress += 1;
        } else if message["id"] == 1 {
            assert_eq!(message["result"]["content"][0]["text"], "flooded");
            break;
        }
    }
    assert!(progress < FLOOD, "every one of {FLOOD} reports was kept");
    gateway.shutdown().await;
    extensions.shutdown().await;
}

/// A modern (2026-07-28) request through the gateway's stdio, with `capabilities` declared.
fn modern_call(id: u64, tool: &str, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({"name": tool, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

#[tokio::test]
async fn a_modern_client_answers_a_modern_upstream_in_rounds_with_nothing_kept_between() {
    // No `initialize`: a modern client.
    let (mut client, gateway, extensions, _state) = start(Era::Modern, Value::Null).await;
    let capabilities = json!({"sampling": {}, "elicitation": {}});
    client
        .send(modern_call(1, "up__ask", capabilities.clone(), json!({})))
        .await;
    let first = client.recv().await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let requests = first["result"]["inputRequests"]
        .as_object()
        .expect("requests");
    assert_eq!(requests["s"]["method"], "sampling/createMessage");
    assert_eq!(requests["e"]["method"], "elicitation/create");
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a state")
        .to_owned();
    // The answers, and the gateway's state as it came: the upstream finishes.
    let answers = json!({
        "inputResponses": {
            "s": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "sampled"}},
            "e": {"action": "accept", "content": {"name": "ada"}},
        },
        "requestState": state,
    });
    client
        .send(modern_call(
            2,
            "up__ask",
            capabilities.clone(),
            answers.clone(),
        ))
        .await;
    let done = client.recv().await;
    assert_eq!(
        done["result"]["content"][0]["text"], "sampled / ada",
        "{done}"
    );
    // A state changed on the way is refused (the gateway's is sealed).
    let mut forged = answers;
    forged["requestState"] = json!(format!("{state}x"));
    client
        .send(modern_call(3, "up__ask", capabilities, forged))
        .await;
    assert_eq!(client.recv().await["error"]["code"], -32602);
    // A client that declared no sampling is not asked for it: the upstream sees its
    // capabilities, not the gateway's, and refuses.
    client
        .send(modern_call(4, "up__ask", json!({}), json!({})))
        .await;
    let refused = client.recv().await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    gateway.shutdown().await;
    extensions.shutdown().await;
}

#[tokio::test]
async fn an_upstream_list_change_reaches_the_client_once() {
    for era in [Era::Legacy, Era::Modern] {
        let (mut client, gateway, extensions, _state, up) =
            start_full(era, json!({}), 1 << 16).await;
        let (upstream, late) = (up.notifier, up.late);
        // A tool appears upstream. The upstream's connection may not be listening yet (a
        // modern one opens `subscriptions/listen` after its first listing, and a notice before
        // that is not replayed), so the upstream says so again until the client is told; 300
        // tries of 200 ms at most.
        late.store(true, Ordering::SeqCst);
        let told = client
            .told_after(|| upstream.list_changed(ListKind::Tools))
            .await;
        assert_eq!(
            told["method"], "notifications/tools/list_changed",
            "{era:?}: {told}"
        );
        client
            .send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}))
            .await;
        let listed = loop {
            let message = client.recv().await;
            if message["id"] == 7 {
                break message;
            }
            // The upstream said it again, but the gateway's view did not change again.
            assert_ne!(
                message["method"], "notifications/tools/list_changed",
                "{era:?}"
            );
        };
        let names: Vec<&str> = (listed["result"]["tools"].as_array().unwrap().iter())
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert!(names.contains(&"up__late"), "{era:?}: {names:?}");
        gateway.shutdown().await;
        extensions.shutdown().await;
    }
}

#[tokio::test]
async fn a_subscription_reaches_the_upstream_and_its_updates_reach_the_client() {
    for era in [Era::Legacy, Era::Modern] {
        let (mut client, gateway, extensions, _state, up) =
            start_full(era, json!({}), 1 << 16).await;
        let subscribe = |id: u64, method: &str| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"uri": "up+mem://a"}});
        client.send(subscribe(1, "resources/subscribe")).await;
        let answer = client.recv().await;
        assert_eq!(answer["result"], json!({}), "{era:?}: {answer}");
        // The upstream is subscribed by the gateway's watcher, in its own time: it says the
        // resource changed until the client is told; 300 tries of 200 ms at most.
        let told = client
            .told_after(|| up.notifier.resource_updated("mem://a"))
            .await;
        assert_eq!(
            told,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                   "params": {"uri": "up+mem://a"}}),
            "{era:?}"
        );
        client.send(subscribe(2, "resources/unsubscribe")).await;
        loop {
            let message = client.recv().await;
            if message["id"] == 2 {
                assert_eq!(message["result"], json!({}), "{era:?}: {message}");
                break;
            }
        }
        if era == Era::Legacy {
            // The upstream's own record: subscribed once, and unsubscribed once the one client
            // holding it let go (waited for: the watcher does it in its own time).
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while up.subscribed.lock().unwrap().len() < 2 {
                assert!(std::time::Instant::now() < deadline, "never unsubscribed");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert_eq!(
                *up.subscribed.lock().unwrap(),
                [("mem://a".to_owned(), true), ("mem://a".to_owned(), false)]
            );
        }
        gateway.shutdown().await;
        extensions.shutdown().await;
    }
}

#[tokio::test]
async fn a_url_elicitation_reaches_only_a_client_that_takes_url_mode() {
    for era in [Era::Legacy, Era::Modern] {
        let (mut client, gateway, extensions, _state) =
            start(era, json!({"elicitation": {"form": {}, "url": {}}})).await;
        client.send(call(1, "up__sign-in")).await;
        let answer = loop {
            let message = client.recv().await;
            if message["method"] == "elicitation/create" {
                let params = &message["params"];
                assert_eq!(params["mode"], "url", "{era:?}: {message}");
                assert_eq!(params["url"], "https://auth.example.com/start?flow=1");
                assert_eq!(params["elicitationId"], "flow-1");
                client
                    .send(json!({"jsonrpc": "2.0", "id": message["id"],
                                 "result": {"action": "accept"}}))
                    .await;
            } else if message["id"] == 1 {
                break message;
            }
        };
        assert_eq!(
            answer["result"]["content"][0]["text"], "accept",
            "{era:?}: {answer}"
        );
        gateway.shutdown().await;
        extensions.shutdown().await;

        // A client that takes form mode only is never sent the URL; the call fails.
        let (mut client, gateway, extensions, _state) =
            start(era, json!({"elicitation": {}})).await;
        client.send(call(1, "up__sign-in")).await;
        let answer = loop {
            let message = client.recv().await;
            assert_ne!(
                message["method"], "elicitation/create",
                "{era:?}: {message}"
            );
            if message["id"] == 1 {
                break message;
            }
        };
        assert!(
            answer.get("error").is_some() || answer["result"]["isError"] == true,
            "{era:?}: {answer}"
        );
        gateway.shutdown().await;
        extensions.shutdown().await;
    }
}

#[tokio::test]
async fn a_modern_clients_listen_reaches_the_upstream_and_its_updates_come_back() {
    for era in [Era::Legacy, Era::Modern] {
        // No `initialize`: a modern client.
        let (mut client, gateway, extensions, _state, up) =
            start_full(era, Value::Null, 1 << 16).await;
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}},
                "notifications": {"resourceSubscriptions": ["up+mem://a"]}}}),
            )
            .await;
        let ack = client.recv().await;
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{era:?}: {ack}"
        );
        // The upstream is subscribed by the gateway's watcher in its own time: it says the
        // resource changed until the client is told; 300 tries of 200 ms at most.
        let told = client
            .told_after(|| up.notifier.resource_updated("mem://a"))
            .await;
        assert_eq!(
            (&told["method"], &told["params"]["uri"]),
            (
                &json!("notifications/resources/updated"),
                &json!("up+mem://a")
            ),
            "{era:?}: {told}"
        );
        gateway.shutdown().await;
        extensions.shutdown().await;
    }
}

#[tokio::test]
async fn an_upstreams_roots_list_is_answered_by_the_client_whose_call_it_is() {
    for era in [Era::Legacy, Era::Modern] {
        let (mut client, gateway, extensions, _state) = start(era, json!({"roots": {}})).await;
        let mut asked = Vec::new();
        let answer = client
            .call_answering(1, "up__roots", |method, _| {
                asked.push(method.to_owned());
                json!({"roots": [{"uri": "file:///work", "name": "work"}]})
            })
            .await;
        assert_eq!(asked, ["roots/list"], "{era:?}: {answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"], "roots: file:///work",
            "{era:?}: {answer}"
        );
        gateway.shutdown().await;
        extensions.shutdown().await;

        // A client that declared no roots is not asked: the gateway's own roots (none).
        let (mut client, gateway, extensions, _state) = start(era, json!({})).await;
        let answer = client
            .call_answering(2, "up__roots", |method, _| {
                panic!("{era:?}: never asked, but asked {method}")
            })
            .await;
        assert_eq!(
            answer["result"]["content"][0]["text"], "roots: ",
            "{era:?}: {answer}"
        );
        gateway.shutdown().await;
        extensions.shutdown().await;
    }
}

#[tokio::test]
async fn a_url_elicitations_completion_reaches_the_session_that_was_asked() {
    let (mut client, gateway, extensions, _state, up) =
        start_full(Era::Legacy, json!({"elicitation": {"url": {}}}), 1 << 16).await;
    let answer = client
        .call_answering(1, "up__sign-in", |method, _| {
            assert_eq!(method, "elicitation/create");
            json!({"action": "accept"})
        })
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "accept", "{answer}");
    // The upstream's out-of-band step is done: it tells its session (the gateway's), and the
    // gateway tells the session it asked.
    let key = up
        .signed
        .lock()
        .unwrap()
        .expect("a legacy upstream session");
    let told = client
        .told_after(|| up.notifier.elicitation_complete(key, "flow-1"))
        .await;
    assert_eq!(
        told["method"], "notifications/elicitation/complete",
        "{told}"
    );
    assert_eq!(told["params"]["elicitationId"], "flow-1", "{told}");

    // A `-32042` passes through as it is, and its elicitation's completion comes too.
    client.send(call(2, "up__url-required")).await;
    let answer = client.recv().await;
    assert_eq!(answer["error"]["code"], -32042, "{answer}");
    let key = up
        .signed
        .lock()
        .unwrap()
        .expect("a legacy upstream session");
    let told = client
        .told_after(|| up.notifier.elicitation_complete(key, "flow-2"))
        .await;
    assert_eq!(told["params"]["elicitationId"], "flow-2", "{told}");
    gateway.shutdown().await;
    extensions.shutdown().await;
}
