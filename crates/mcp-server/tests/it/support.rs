//! A probe handler and raw peers for the tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_mcp_server::http::{HttpConfig, HttpServer};
use sidewire_mcp_server::{
    CallToolResult, Capabilities, Error, Handler, HandlerContext, Implementation, InputRequest,
    InputRequired, Limits, Reply, Resource, Server, Tool, ToolCallRequest,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::net::TcpStream;

/// Generous: the bound a test waits for an answer that comes at once.
pub(crate) const LIMIT: Duration = Duration::from_secs(20);

pub(crate) async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    sidewire_test_support::within(LIMIT, what, future).await
}

/// Tools: `echo` (progress, then its text), `ask` (samples the client), `again` (asks for
/// ever), `close` (closes its HTTP stream, then answers), `hang` (never answers), `whoami`
/// (its session, as `Debug` shows it), and
/// `t0`..`t4` (for paging). One resource, `r://a`.
#[derive(Default)]
pub(crate) struct Probe {
    pub(crate) hanging: Arc<AtomicUsize>,
    /// `hang` calls whose future was dropped (cancelled).
    pub(crate) dropped: Arc<AtomicUsize>,
    /// Progress notifications `flood` handed to its stream so far.
    pub(crate) flooded: Arc<AtomicUsize>,
    /// What `list_generation` says.
    pub(crate) generation: Arc<AtomicUsize>,
    /// Each `subscription_changed`, in order.
    pub(crate) subscriptions: Arc<std::sync::Mutex<Vec<(String, bool)>>>,
    /// Each `session_ended`, in order.
    pub(crate) ended: Arc<std::sync::Mutex<Vec<sidewire_mcp_server::SessionKey>>>,
}

/// How many progress notifications `flood` sends.
pub(crate) const FLOOD: usize = 1000;

/// Counts a drop.
struct OnDrop(Arc<AtomicUsize>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Handler for Probe {
    fn info(&self) -> Implementation {
        let mut info = Implementation::default();
        info.name = "probe".into();
        info.version = "1".into();
        info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
            .tools()
            .resources(true)
            .list_changed()
    }

    fn list_generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst) as u64
    }

    fn subscription_changed(&self, uri: &str, subscribed: bool) {
        self.subscriptions
            .lock()
            .unwrap()
            .push((uri.to_owned(), subscribed));
    }

    fn session_ended(&self, session: sidewire_mcp_server::SessionKey) {
        self.ended.lock().unwrap().push(session);
    }

    async fn list_tools(&self, _ctx: &HandlerContext) -> Result<Vec<Tool>, Error> {
        let mut tools: Vec<Tool> = ["echo", "ask", "again", "close", "hang", "whoami"]
            .into_iter()
            .map(|name| Tool::new(name, "probe", json!({"type": "object"})))
            .collect();
        tools
            .extend((0..5).map(|n| Tool::new(&format!("t{n}"), "page", json!({"type": "object"}))));
        Ok(tools)
    }

    async fn call_tool(
        &self,
        call: ToolCallRequest,
        ctx: HandlerContext,
    ) -> Result<Reply<CallToolResult>, Error> {
        match call.name.as_str() {
            "echo" => {
                ctx.progress(0.5, Some(1.0), Some("half")).await;
                let text = call
                    .arguments
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Ok(CallToolResult::text(text).into())
            }
            "ask" => match ctx.input_responses().get("q") {
                Some(answer) => Ok(CallToolResult::text(format!(
                    "model: {}",
                    answer["content"]["text"].as_str().unwrap_or_default()
                ))
                .into()),
                None => Ok(Reply::InputRequired(InputRequired::new().request(
                    "q",
                    InputRequest::Sample(json!({"messages": [{"role": "user",
                        "content": {"type": "text", "text": "hi"}}], "maxTokens": 5})),
                ))),
            },
            "again" => Ok(Reply::InputRequired(InputRequired::new().request(
                "e",
                InputRequest::Elicit(json!({"message": "again?", "requestedSchema":
                    {"type": "object", "properties": {"ok": {"type": "boolean"}}}})),
            ))),
            "flood" => {
                for n in 0..FLOOD {
                    ctx.progress(n as f64, None, None).await;
                    self.flooded.fetch_add(1, Ordering::SeqCst);
                }
                Ok(CallToolResult::text("flooded").into())
            }
            "many" => Ok(Reply::InputRequired(
                (0..3).fold(InputRequired::new(), |input, n| {
                    input.request(format!("r{n}"), InputRequest::ListRoots)
                }),
            )),
            "whoami" => Ok(CallToolResult::text(format!("{:?}", ctx.session())).into()),
            "close" => {
                ctx.close_stream().await;
                Ok(CallToolResult::text("after the close").into())
            }
            "hang" => {
                let _dropped = OnDrop(Arc::clone(&self.dropped));
                self.hanging.fetch_add(1, Ordering::SeqCst);
                std::future::pending::<()>().await;
                unreachable!()
            }
            page if page.starts_with('t') && page.len() == 2 => {
                Ok(CallToolResult::text(page).into())
            }
            other => Err(Error::invalid_params(format!("unknown tool: {other}"))),
        }
    }

    async fn list_resources(&self, _ctx: &HandlerContext) -> Result<Vec<Resource>, Error> {
        Ok(vec![Resource::new("r://a", "a")])
    }
}

/// A raw NDJSON client of a server on an in-memory pipe.
pub(crate) struct Raw {
    pub(crate) reader: BufReader<ReadHalf<DuplexStream>>,
    pub(crate) writer: WriteHalf<DuplexStream>,
}

impl Raw {
    pub(crate) fn start(limits: Limits) -> (Raw, Server<Probe>) {
        Raw::start_with_pipe(limits, 1 << 20)
    }

    /// With a pipe that holds `pipe` bytes each way.
    pub(crate) fn start_with_pipe(limits: Limits, pipe: usize) -> (Raw, Server<Probe>) {
        let (client, server_end) = tokio::io::duplex(pipe);
        let server = Server::with_limits(Probe::default(), limits);
        let serving = server.clone();
        tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_end);
            let _ = serving.serve_stdio(read, write).await;
        });
        let (read, write) = tokio::io::split(client);
        (
            Raw {
                reader: BufReader::new(read),
                writer: write,
            },
            server,
        )
    }

    pub(crate) async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    pub(crate) async fn recv(&mut self) -> Value {
        let mut line = String::new();
        within("a line from the server", self.reader.read_line(&mut line))
            .await
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("{err}: {line:?}"))
    }

    /// The next message with this id (skipping notifications and others).
    pub(crate) async fn answer(&mut self, id: Value) -> Value {
        loop {
            let message = self.recv().await;
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    pub(crate) async fn initialize(&mut self) {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .await;
        self.answer(json!(0)).await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
}

pub(crate) fn call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

pub(crate) fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}})
}

/// An HTTP server of the probe on a free loopback port: its URL and the server.
pub(crate) async fn http(limits: Limits, config: HttpConfig) -> (String, HttpServer<Probe>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = HttpServer::new(Server::with_limits(Probe::default(), limits), config);
    let serving = server.clone();
    tokio::spawn(async move { serving.serve(listener).await });
    (url, server)
}

/// One raw HTTP/1.1 exchange (`Connection: close`): the status, the headers (lower-case names)
/// and the body.
pub(crate) struct HttpReply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl HttpReply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON body, or the last `data:` line of an event stream that is JSON.
    pub(crate) fn json(&self) -> Value {
        if let Ok(value) = serde_json::from_str(&self.body) {
            return value;
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .next_back()
            .unwrap_or(Value::Null)
    }
}

/// Sends a request and reads until `done` holds for what was read, or the connection ends.
pub(crate) async fn exchange_until(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    done: impl Fn(&str) -> bool,
) -> HttpReply {
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut stream = TcpStream::connect(&authority).await.unwrap();
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("host: {authority}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut text = String::new();
    let mut reader = BufReader::new(stream);
    within("an HTTP answer", async {
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                break;
            }
            text.push_str(&line);
            if done(&text) {
                break;
            }
        }
    })
    .await;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    // Chunked bodies keep their size lines; the tests read JSON or `data:` lines out of them.
    let body = body
        .lines()
        .filter(|line| !line.chars().all(|c| c.is_ascii_hexdigit()) || line.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    HttpReply {
        status,
        headers,
        body,
    }
}

pub(crate) async fn exchange(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> HttpReply {
    exchange_until(url, method, headers, body, |_| false).await
}

pub(crate) const JSON: (&str, &str) = ("content-type", "application/json");
pub(crate) const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");

/// Initializes a legacy HTTP session; its id.
pub(crate) async fn session(url: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}}, "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = exchange(url, "POST", &[JSON, ACCEPT], &body.to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}
