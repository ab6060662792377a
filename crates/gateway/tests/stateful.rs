//! A server marked stateful gets one instance per client session: each session's calls,
//! prompts and reads reach an upstream connection of its own (the upstream here counts per
//! upstream session), the instance closes when the session ends or sits idle, and the cap on
//! instances evicts the longest unused one, or refuses when every one is serving a call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_host::{ExtensionHost, HostConfig};
use sidewire_gateway::{AuditSink, Gateway, GatewayConfig, Mode, Policy};
use sidewire_mcp::{EraChoice as Era, ServerSpec};
use sidewire_mcp_server::{
    CallToolResult, Capabilities, Content, Error, GetPromptResult, Handler, HandlerContext,
    Implementation, MessageRole, Prompt, PromptGet, PromptMessage, ReadResourceResult, Reply,
    Resource, ResourceContents, Server, SessionKey, Tool, ToolCallRequest,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Counts per upstream session: `count` says how many times this session called it; `hang`
/// never answers. One prompt and one resource say the count too.
#[derive(Default)]
struct Counter {
    counts: Arc<Mutex<HashMap<Option<SessionKey>, u64>>>,
    /// Upstream sessions that ended.
    ended: Arc<Mutex<Vec<SessionKey>>>,
    /// `hang` calls in flight.
    hanging: Arc<std::sync::atomic::AtomicUsize>,
}

impl Counter {
    fn bump(&self, ctx: &HandlerContext) -> u64 {
        let mut counts = self.counts.lock().unwrap();
        let count = counts.entry(ctx.session()).or_default();
        *count += 1;
        *count
    }
}

impl Handler for Counter {
    fn info(&self) -> Implementation {
        let mut info = Implementation::default();
        info.name = "counter".into();
        info.version = "1".into();
        info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default().tools().prompts().resources(false)
    }

    fn session_ended(&self, session: SessionKey) {
        self.ended.lock().unwrap().push(session);
    }

    async fn list_tools(&self, _ctx: &HandlerContext) -> Result<Vec<Tool>, Error> {
        Ok(["count", "hang"]
            .into_iter()
            .map(|name| Tool::new(name, "test", json!({"type": "object"})))
            .collect())
    }

    async fn call_tool(
        &self,
        call: ToolCallRequest,
        ctx: HandlerContext,
    ) -> Result<Reply<CallToolResult>, Error> {
        match call.name.as_str() {
            "count" => Ok(Reply::from(CallToolResult::text(
                self.bump(&ctx).to_string(),
            ))),
            "hang" => {
                (self.hanging).fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                std::future::pending().await
            }
            other => Err(Error::invalid_params(format!("unknown tool: {other}"))),
        }
    }

    async fn list_prompts(&self, _ctx: &HandlerContext) -> Result<Vec<Prompt>, Error> {
        Ok(vec![Prompt::new("tally")])
    }

    async fn get_prompt(
        &self,
        _get: PromptGet,
        ctx: HandlerContext,
    ) -> Result<Reply<GetPromptResult>, Error> {
        let text = Content::text(self.bump(&ctx).to_string());
        Ok(Reply::from(GetPromptResult::new(vec![PromptMessage::new(
            MessageRole::User,
            text,
        )])))
    }

    async fn list_resources(&self, _ctx: &HandlerContext) -> Result<Vec<Resource>, Error> {
        Ok(vec![Resource::new("count://now", "now")])
    }

    async fn read_resource(
        &self,
        uri: String,
        ctx: HandlerContext,
    ) -> Result<Reply<ReadResourceResult>, Error> {
        let text = self.bump(&ctx).to_string();
        let mut result = ReadResourceResult::default();
        result.contents.push(ResourceContents::text(&uri, &text));
        Ok(Reply::from(result))
    }
}

struct Client {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next: u64,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// The answer to the request with `id`.
    async fn answer(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
                .await
                .expect("a message within 60 s")
                .unwrap()
                .expect("the gateway is still there");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.answer(id).await
    }

    /// `count`'s text.
    async fn count(&mut self) -> String {
        let answer =
            (self.request("tools/call", json!({"name": "c__count", "arguments": {}}))).await;
        let text = answer["result"]["content"][0]["text"].as_str();
        text.unwrap_or_else(|| panic!("{answer}")).to_owned()
    }
}

struct Setup {
    gateway: Gateway,
    server: Server<Gateway>,
    extensions: ExtensionHost,
    /// The upstream sessions that ended.
    ended: Arc<Mutex<Vec<SessionKey>>>,
    hanging: Arc<std::sync::atomic::AtomicUsize>,
    audit: std::path::PathBuf,
    _state: tempfile::TempDir,
}

impl Setup {
    /// A gateway in front of the counter (legacy era over HTTP, so each instance is its own
    /// upstream session); `stateful` marks it so.
    async fn new(stateful: bool, max: usize, idle: Duration) -> Setup {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let counter = Counter::default();
        let ended = Arc::clone(&counter.ended);
        let hanging = Arc::clone(&counter.hanging);
        tokio::spawn(sidewire_mcp_server::http::serve(
            Server::new(counter),
            listener,
            sidewire_mcp_server::http::HttpConfig::default(),
        ));
        let state = tempfile::tempdir().unwrap();
        let (extensions, _events) = ExtensionHost::boot(HostConfig::new(state.path(), "s-1", "."))
            .await
            .unwrap();
        let mut config = GatewayConfig::new()
            .server(ServerSpec::http("c", url).era(Era::Legacy))
            .policy(Policy::new(Mode::Allow))
            .audit(AuditSink::File(state.path().join("audit.jsonl")), false)
            .instances(max, idle);
        if stateful {
            config = config.stateful("c");
        }
        let (gateway, driver) = Gateway::new(config, extensions.clone()).unwrap();
        tokio::spawn(driver);
        assert!(gateway.start().await.unwrap().is_empty());
        let server = Server::new(gateway.clone());
        let watching = gateway.clone();
        let clients = server.notifier();
        tokio::spawn(async move { watching.watch(clients).await });
        Setup {
            gateway,
            server,
            extensions,
            ended,
            hanging,
            audit: state.path().join("audit.jsonl"),
            _state: state,
        }
    }

    /// A new client session (a stdio connection, legacy era).
    async fn client(&self) -> Client {
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_end);
        let server = self.server.clone();
        tokio::spawn(async move { server.serve_stdio(read, write).await });
        let (read, write) = tokio::io::split(client);
        let mut client = Client {
            write,
            lines: BufReader::new(read).lines(),
            next: 0,
        };
        let init = client
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    /// Waits (bounded) until `done` holds.
    async fn until(&self, what: &str, done: impl Fn(&Setup) -> bool) {
        for _ in 0..2000 {
            if done(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("not within 20 s: {what}");
    }

    /// The audit records' outcomes, in order.
    fn outcomes(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.audit).unwrap_or_default();
        (text.lines())
            .map(|line| serde_json::from_str::<Value>(line).unwrap()["outcome"].to_string())
            .collect()
    }

    fn ended(&self) -> usize {
        self.ended.lock().unwrap().len()
    }

    async fn stop(self) {
        self.gateway.shutdown().await;
        self.extensions.shutdown().await;
    }
}

const IDLE: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn each_session_has_its_own_instance_of_a_stateful_server() {
    let setup = Setup::new(true, 8, IDLE).await;
    let (mut a, mut b) = (setup.client().await, setup.client().await);
    assert_eq!(a.count().await, "1");
    assert_eq!(a.count().await, "2");
    assert_eq!(b.count().await, "1", "b has an instance of its own");
    assert_eq!(a.count().await, "3");
    assert_eq!(setup.gateway.instances(), 2);

    // Prompts and reads go to the session's instance too.
    let prompt = a
        .request("prompts/get", json!({"name": "c__tally", "arguments": {}}))
        .await;
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"], "4",
        "{prompt}"
    );
    let listed = b.request("resources/list", json!({})).await;
    let uri = listed["result"]["resources"][0]["uri"].clone();
    let read = b.request("resources/read", json!({"uri": uri})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "2", "{read}");
    assert_eq!(
        read["result"]["contents"][0]["uri"], uri,
        "the gateway's URI"
    );

    // A session's end closes its instance: the upstream session ends, the other goes on.
    let before = setup.ended();
    drop(a);
    setup
        .until("a's instance closed", |s| {
            s.gateway.instances() == 1 && s.ended() > before
        })
        .await;
    assert_eq!(b.count().await, "3");
    setup.stop().await;
}

#[tokio::test]
async fn without_the_mark_every_session_shares_one_instance() {
    let setup = Setup::new(false, 8, IDLE).await;
    let (mut a, mut b) = (setup.client().await, setup.client().await);
    assert_eq!(a.count().await, "1");
    assert_eq!(b.count().await, "2", "one shared upstream session");
    assert_eq!(setup.gateway.instances(), 0);
    setup.stop().await;
}

#[tokio::test]
async fn an_idle_instance_is_closed_and_the_next_call_starts_another() {
    let setup = Setup::new(true, 8, Duration::from_millis(50)).await;
    let mut a = setup.client().await;
    assert_eq!(a.count().await, "1");
    let before = setup.ended();
    setup
        .until("the idle instance closed", |s| {
            s.gateway.instances() == 0 && s.ended() > before
        })
        .await;
    // A fresh instance: its count starts again.
    assert_eq!(a.count().await, "1");
    setup.stop().await;
}

#[tokio::test]
async fn the_cap_evicts_the_longest_unused_instance_and_refuses_when_all_are_busy() {
    let setup = Setup::new(true, 1, IDLE).await;
    let (mut a, mut b) = (setup.client().await, setup.client().await);
    assert_eq!(a.count().await, "1");
    let before = setup.ended();
    // b's first call takes the only place: a's idle instance is closed for it.
    assert_eq!(b.count().await, "1");
    setup
        .until("a's instance evicted", |s| s.ended() > before)
        .await;
    assert_eq!(setup.gateway.instances(), 1);

    // b holds the place with a call in flight: a is refused, with the reason.
    b.next += 1;
    let hanging = b.next;
    b.send(
        json!({"jsonrpc": "2.0", "id": hanging, "method": "tools/call",
                  "params": {"name": "c__hang", "arguments": {}}}),
    )
    .await;
    setup
        .until("b's call in flight upstream", |s| {
            s.hanging.load(std::sync::atomic::Ordering::SeqCst) == 1
        })
        .await;
    let refused = a
        .request("tools/call", json!({"name": "c__count", "arguments": {}}))
        .await;
    assert_eq!(
        refused["error"]["data"]["reason"], "instances_full",
        "{refused}"
    );
    b.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": hanging}}),
    )
    .await;
    setup.stop().await;
}

#[tokio::test]
async fn a_stateful_mark_on_a_server_not_configured_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let (extensions, _events) = ExtensionHost::boot(HostConfig::new(state.path(), "s-1", "."))
        .await
        .unwrap();
    let config = GatewayConfig::new()
        .server(ServerSpec::stdio("c", "true"))
        .stateful("nope");
    let err = Gateway::new(config, extensions.clone()).unwrap_err();
    assert!(err.is_config(), "{err}");
    extensions.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_call_gets_its_audit_record() {
    for stateful in [false, true] {
        let setup = Setup::new(stateful, 8, IDLE).await;
        let mut a = setup.client().await;
        a.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "c__hang", "arguments": {}}}))
            .await;
        setup
            .until("the call in flight upstream", |s| {
                s.hanging.load(std::sync::atomic::Ordering::SeqCst) == 1
            })
            .await;
        a.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 7}}),
        )
        .await;
        setup
            .until("the cancelled call's record", |s| !s.outcomes().is_empty())
            .await;
        assert_eq!(setup.outcomes(), [r#""cancelled""#], "stateful {stateful}");
        let text = std::fs::read_to_string(&setup.audit).unwrap();
        let record: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(record["tool"], "c__hang", "{record}");
        assert_eq!(record["server"], "c", "{record}");
        assert!(
            record["chain"].is_null(),
            "not known once dropped: {record}"
        );
        assert_eq!(a.count().await, "1");
        assert_eq!(setup.outcomes(), [r#""cancelled""#, r#""ok""#]);
        setup.stop().await;
    }
}
