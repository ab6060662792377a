//! How the gateway's costs grow (`sidewire mcp serve`, issue 45's scaling table):
//!
//! - **Upstreams**: 1, 10 and 100 stdio servers (the built-in `sidewire __mcp-server`, 4 tools
//!   each) behind one `Gateway`, from a fresh gateway each time: the time to start them all
//!   (`Gateway::start`, at most 8 at once), the time of a full `tools/list` through the gateway
//!   (a legacy client on an in-memory pipe, every page), the median of 200 `tools/call`s of one
//!   tool, and the gateway's RSS and bytes live (the counting allocator) after the start, per
//!   upstream. Needs the release `sidewire` (`$SIDEWIRE_BIN`, else `target/release/sidewire`);
//!   without it this part prints `SKIPPED:`.
//! - **Idle legacy sessions**: 1,000 sessions opened over Streamable HTTP (`initialize`, then
//!   `notifications/initialized`) and left idle; the gateway's RSS and bytes live per session.
//!
//! Not a criterion bench: each figure is a one-shot cost against a count (see
//! `sidewire_benches::scale`). It prints a table and writes
//! `target/criterion/scale/scale_gateway.json`. The runtime is a one-worker multi-thread Tokio
//! runtime, as in `scale_mcp`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidewire_benches::scale::{self, Report, human_bytes, median, say};
use sidewire_ext_host::{ExtensionHost, HostConfig};
use sidewire_gateway::{Gateway, GatewayConfig, Mode, Policy};
use sidewire_mcp::ServerSpec;
use sidewire_mcp_server::Server;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

#[global_allocator]
static ALLOC: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

fn main() {
    let smoke = scale::smoke();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut report = Report::new("scale_gateway");
    match scale::sidewire_bin() {
        Some(bin) => {
            upstreams(&rt, &bin, smoke, &mut report);
            idle_sessions(&rt, &bin, smoke, &mut report);
        }
        None => say(
            "SKIPPED: the gateway scale needs the release sidewire (cargo build --release -p sidewire, or set SIDEWIRE_BIN)",
        ),
    }
    report.finish();
}

/// A gateway (allow-all, prefixed names) over `n` built-in servers, its extension host (no
/// extension) and the directory that host keeps its state in.
async fn gateway(bin: &Path, n: usize) -> (Gateway, ExtensionHost, tempfile::TempDir) {
    let state = tempfile::tempdir().expect("a temporary directory");
    let (extensions, _events) = ExtensionHost::boot(HostConfig::new(state.path(), "bench", "."))
        .await
        .expect("the extension host boots");
    let mut config = GatewayConfig::new().policy(Policy::new(Mode::Allow));
    for i in 0..n {
        config = config.server(
            ServerSpec::stdio(&format!("s{i}"), bin.display().to_string()).arg("__mcp-server"),
        );
    }
    let (gateway, driver) = Gateway::new(config, extensions.clone()).expect("a gateway");
    tokio::spawn(driver);
    (gateway, extensions, state)
}

/// A legacy client of `gateway` on an in-memory pipe, initialized.
struct Client {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Client {
    async fn new(gateway: &Gateway) -> Client {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(theirs);
        let server = Server::new(gateway.clone());
        tokio::spawn(async move { server.serve_stdio(read, write).await });
        let (read, write) = tokio::io::split(ours);
        let mut client = Client {
            write,
            lines: BufReader::new(read).lines(),
        };
        client
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-11-25",
                "capabilities": {}, "clientInfo": {"name": "scale", "version": "1"}}),
            )
            .await;
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.write
            .write_all(line.as_bytes())
            .await
            .expect("the gateway reads");
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(120), self.lines.next_line())
                .await
                .expect("an answer within 120 s")
                .expect("a line")
                .expect("the gateway is there");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// Every tool's name, page after page.
    async fn list_tools(&mut self) -> usize {
        let mut count = 0;
        let mut cursor = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let listed = self.request(1, "tools/list", params).await;
            count += listed["result"]["tools"].as_array().map_or(0, Vec::len);
            match listed["result"]["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return count,
            }
        }
    }
}

fn upstreams(rt: &tokio::runtime::Runtime, bin: &Path, smoke: bool, report: &mut Report) {
    let (counts, calls): (&[usize], usize) = if smoke {
        (&[1, 4], 10)
    } else {
        (&[1, 10, 100], 200)
    };
    report.table(&[
        "upstreams",
        "start, all ready",
        "per upstream",
        "tools/list (all pages)",
        "per tool",
        "one tools/call (median)",
        "gateway RSS Δ per upstream",
        "gateway bytes live per upstream",
    ]);
    // A first round outside the figures: the runtime's threads and the first spawns.
    rt.block_on(async {
        let (gateway, extensions, _state) = gateway(bin, 1).await;
        let _ = gateway.start().await;
        gateway.shutdown().await;
        extensions.shutdown().await;
    });
    for &n in counts {
        rt.block_on(async {
            let (rss0, live0) = (scale::own_rss(), scale::live_bytes());
            let (gateway, extensions, _state) = gateway(bin, n).await;
            let started = Instant::now();
            let failed = gateway.start().await.expect("the start");
            let start = started.elapsed();
            assert!(failed.is_empty(), "every upstream starts: {failed:?}");
            let (rss1, live1) = (scale::own_rss(), scale::live_bytes());
            let mut client = Client::new(&gateway).await;
            let listed = Instant::now();
            let tools = client.list_tools().await;
            let list = listed.elapsed();
            assert_eq!(tools, 4 * n, "every upstream's four tools are listed");
            let mut samples = Vec::with_capacity(calls);
            for i in 0..calls {
                let began = Instant::now();
                let answer = client
                    .request(
                        10 + i as u64,
                        "tools/call",
                        json!({"name": format!("s{}__echo", n - 1), "arguments": {"text": "x"}}),
                    )
                    .await;
                samples.push(began.elapsed().as_secs_f64() * 1e6);
                assert_eq!(answer["result"]["content"][0]["text"], "x", "{answer}");
            }
            let call = median(&mut samples);
            let per = |value: f64| value / n as f64;
            report.row(vec![
                n.to_string(),
                format!("{:.0} ms", start.as_secs_f64() * 1e3),
                format!("{:.1} ms", per(start.as_secs_f64() * 1e3)),
                format!("{:.2} ms", list.as_secs_f64() * 1e3),
                format!("{:.1} µs", list.as_secs_f64() * 1e6 / tools as f64),
                format!("{call:.0} µs"),
                human_bytes(per(rss1 as f64 - rss0 as f64)),
                human_bytes(per((live1 - live0) as f64)),
            ]);
            report
                .chart(
                    "gateway_upstreams_start",
                    "Gateway start",
                    "upstreams",
                    "ms",
                )
                .point("start", n as f64, start.as_secs_f64() * 1e3);
            report
                .chart(
                    "gateway_upstreams_list",
                    "tools/list through the gateway",
                    "upstreams",
                    "ms",
                )
                .point("list", n as f64, list.as_secs_f64() * 1e3);
            report
                .chart(
                    "gateway_upstreams_call",
                    "One tools/call",
                    "upstreams",
                    "µs",
                )
                .point("call", n as f64, call);
            gateway.shutdown().await;
            extensions.shutdown().await;
        });
    }
}

/// One HTTP/1.1 POST on a fresh connection; the response's head.
async fn post(addr: &str, session: Option<&str>, body: &Value) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the gateway listens");
    let body = body.to_string();
    let session = session.map_or(String::new(), |id| {
        format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
    });
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("a write");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.expect("a reply");
    reply
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_owned()
}

fn idle_sessions(rt: &tokio::runtime::Runtime, bin: &Path, smoke: bool, report: &mut Report) {
    let sessions = if smoke { 20 } else { 1_000 };
    rt.block_on(async {
        let (gateway, extensions, _state) = gateway(bin, 1).await;
        assert!(gateway.start().await.expect("the start").is_empty());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let addr = listener.local_addr().expect("an address").to_string();
        let server = sidewire_mcp_server::http::HttpServer::new(
            Server::new(gateway.clone()),
            sidewire_mcp_server::http::HttpConfig::default(),
        );
        tokio::spawn(async move { server.serve(listener).await });
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "idle", "version": "1"}}});
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        // One session first, outside the figures (the listener's and the first session's
        // one-time costs).
        let head = post(&addr, None, &initialize).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let (rss0, live0) = (scale::own_rss(), scale::live_bytes());
        let opened = Instant::now();
        for _ in 0..sessions {
            let head = post(&addr, None, &initialize).await;
            let id = (head.lines())
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("mcp-session-id")
                        .then(|| value.trim().to_owned())
                })
                .expect("a session id");
            let head = post(&addr, Some(&id), &initialized).await;
            assert!(head.starts_with("HTTP/1.1 202"), "{head}");
        }
        let took = opened.elapsed();
        let (rss1, live1) = (scale::own_rss(), scale::live_bytes());
        report.table(&[
            "idle legacy sessions",
            "time to open them",
            "gateway RSS Δ",
            "per session",
            "bytes live per session",
        ]);
        report.row(vec![
            sessions.to_string(),
            format!("{:.0} ms", took.as_secs_f64() * 1e3),
            human_bytes(rss1 as f64 - rss0 as f64),
            human_bytes((rss1 as f64 - rss0 as f64) / sessions as f64),
            human_bytes((live1 - live0) as f64 / sessions as f64),
        ]);
        gateway.shutdown().await;
        extensions.shutdown().await;
    });
}
