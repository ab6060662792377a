//! MCP servers under one raw client: a `tools/call` of a no-op tool, per request and per
//! second, against sidewire-mcp-server (`src/bin/mcp_noop_server.rs`, a `Toolbox` with one
//! tool), the Python SDK 2.3.0 and the TypeScript SDK 2.4.0 (`benches/peers/`), each over stdio
//! and Streamable HTTP, in both eras (2025-11-25 after `initialize`, with an `Mcp-Session-Id`
//! over HTTP; 2026-07-28 stateless, the `_meta` envelope on every request), on the same
//! machine in the same run.
//!
//! The client is the same for every server, so the server is what differs: this bench's own
//! driver, with no MCP client library. Over stdio it writes pre-built NDJSON request lines to
//! the child's stdin and reads answer lines from its stdout; over HTTP it sends HTTP/1.1
//! keep-alive `POST`s through hyper's client connection (`client::conn::http1`) and reads the
//! answer whole, JSON or a one-event SSE stream, whichever the server sends. It measures one
//! request in flight (`in_flight_1`: the per-request cost) and many (`in_flight_32`: over stdio,
//! 32 requests with distinct ids on the one pipe pair, the next written as each answer comes
//! back; over HTTP, 32 keep-alive connections, one request in flight each, the way a client's
//! connection pool does it; HTTP/1.1 has no multiplexing on one connection). The HTTP depth was
//! 16 until issue 45 asked for 32; figures in BENCHMARKS.md dated before it are at 16.
//! Criterion's `thrpt` is requests per second.
//!
//! Each group has its floor, measured in the same run through the same driver: `floor` is a
//! child that writes every line back as it came (stdio), or a bare hyper HTTP/1.1 server that
//! sends every `POST` body back (HTTP). Neither does any JSON; a server's overhead is its time
//! less the floor's.
//!
//! The rows of a group: `floor`, `sidewire` (the Toolbox on non-blocking stdin/stdout pipes,
//! or `sidewire_mcp_server::http::serve`), `sidewire_tokio_stdio` (stdio only: the same
//! Toolbox on `tokio::io::stdin()`/`stdout()`, as `sidewire __mcp-server` serves), `py` and
//! `ts`, and over HTTP in the legacy era `py_json` and `ts_json` (the peers answering JSON
//! rather than an event stream: `--json`; in the modern era both SDKs answer JSON anyway).
//! Every server is a current-thread or single-threaded event loop.
//!
//! Peers are found as the peer tests find them: `SIDEWIRE_MCP_PEERS` names the directory
//! `.ci/mcp-peers/install.sh` fills (`py/bin/python` with `mcp` 2.3.0; `ts2/node_modules` with
//! `@modelcontextprotocol/server` 2.4.0 and `node` 2.1.2; `node` on `PATH`). Without it the
//! bench prints `SKIPPED:` for them and measures sidewire and the floors;
//! `SIDEWIRE_REQUIRE_PEERS=1` makes a missing peer fail instead.
//!
//! The bridges (a stdio server, this bench's Toolbox, exposed over Streamable HTTP): sidewire's
//! gateway (`bridge_sidewire`: `--gateway-http`, always) and, when `SIDEWIRE_BENCH_BRIDGES`
//! names a directory holding `node_modules/supergateway` (npm `supergateway` 4.0.0) and
//! `py/bin/mcp-proxy` (PyPI `mcp-proxy` 0.13.0), those two (`bridge_supergateway`,
//! `bridge_mcp_proxy`), in the legacy era (the one they serve with sessions).
//!
//! Aggregation (two stdio servers, each this bench's Toolbox, behind one Streamable HTTP
//! endpoint, the tool called by the name the aggregator gives the first one's `noop`):
//! sidewire's gateway in its default, prefixed mode (`aggregate_sidewire`: `--aggregate-http`,
//! `a__noop`, always) and, when that directory holds `fastmcp/bin/python` (a venv with PyPI
//! `fastmcp` 4.2.3), FastMCP (`aggregate_fastmcp`: `peers/fastmcp_aggregate.py`, the two mounted
//! under the namespaces `a` and `b`, `a_noop`), in the legacy era. FastMCP stands in for 1MCP,
//! which issue 45 names: 1MCP's npm package (`@1mcp/agent`) is not on the registry this
//! project's machines reach, and the next aggregator that installs, npm `mcp-hub` 4.2.1, serves
//! its aggregate only over the older HTTP+SSE transport (`GET /mcp`, `POST /messages`), not
//! Streamable HTTP.
//!
//! To install them, in that directory:
//!
//! ```sh
//! npm install supergateway@4.0.0
//! python3 -m venv py && py/bin/pip install mcp-proxy==0.13.0
//! python3 -m venv fastmcp && fastmcp/bin/pip install fastmcp==4.2.3
//! ```
//!
//! (two venvs: mcp-proxy 0.13.0 runs on `mcp` 1.x, fastmcp 4.2.3 on `mcp` 2.3.0). They are not
//! CI's peers: a missing one's rows are `SKIPPED:` whatever `SIDEWIRE_REQUIRE_PEERS` says.
//!
//! `SIDEWIRE_BENCH_SERVER_CPUS=LIST` starts every server (floors and peers included) under
//! `taskset -c LIST`; run the bench itself under `taskset -c` for the driver's side. Example:
//! `SIDEWIRE_BENCH_SERVER_CPUS=1 taskset -c 0 cargo bench -p sidewire-benches --bench mcp_server`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, measurement::WallTime};
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::runtime::Runtime;

/// sidewire's no-op server and the floors (`benches/src/bin/mcp_noop_server.rs`).
const SERVER: &str = env!("CARGO_BIN_EXE_mcp_noop_server");
/// Requests in flight on one stdio pipe pair, for throughput.
const STDIO_DEPTH: usize = 32;
/// Keep-alive connections, one request in flight each, for throughput over HTTP.
const HTTP_DEPTH: usize = 32;
/// How long any one server may take to start, or to answer outside the timed loops.
const PATIENCE: Duration = Duration::from_secs(30);
/// A pooled connection idle longer than this is opened again before it is used: uvicorn and
/// Node close keep-alive connections idle for 5 s, and rows of other servers run in between.
const STALE: Duration = Duration::from_secs(1);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// 2025-11-25, after `initialize`.
    Legacy,
    /// 2026-07-28, stateless.
    Modern,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }

    fn version(self) -> &'static str {
        match self {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }

    /// The `tools/call` of `tool` with this `id`, as its era sends it, without a newline.
    fn call(self, tool: &str, id: u64, out: &mut Vec<u8>) {
        out.clear();
        let _ = match self {
            Era::Legacy => write!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
            ),
            Era::Modern => write!(
                out,
                concat!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},"#,
                    r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                    r#""io.modelcontextprotocol/clientInfo":{{"name":"bench","version":"0"}},"#,
                    r#""io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
                ),
                id = id,
                tool = tool
            ),
        };
    }
}

/// The legacy handshake's `initialize`.
const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#
);
/// And the notification that ends it.
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Whether a server's answer must be checked as an MCP answer (a floor's is its request back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Floor,
    Mcp,
}

/// Checks one answer: a floor's is anything; an MCP server's is the tool's `"ok"`, not an error.
fn check(kind: Kind, what: &str, answer: &[u8]) {
    if kind == Kind::Floor {
        return;
    }
    let ok = memchr::memmem::find(answer, br#""ok""#).is_some()
        && memchr::memmem::find(answer, br#""error""#).is_none();
    assert!(
        ok,
        "{what}: not the no-op tool's answer: {}",
        String::from_utf8_lossy(answer)
    );
}

// ---------------------------------------------------------------------------------------------
// Finding and starting the servers.

/// Where the peers are installed, when they are.
struct Peers {
    python: Option<PathBuf>,
    /// A directory holding the TS script beside a link to the installed `node_modules`.
    ts: Option<tempfile::TempDir>,
}

impl Peers {
    fn find() -> Peers {
        let required = std::env::var("SIDEWIRE_REQUIRE_PEERS").is_ok_and(|v| v == "1");
        let skip = |what: &str, why: &str| {
            assert!(!required, "SIDEWIRE_REQUIRE_PEERS=1 but {what}: {why}");
            say(&format!("SKIPPED: mcp_server's {what} rows ({why})"));
        };
        let Some(dir) = std::env::var_os("SIDEWIRE_MCP_PEERS").map(PathBuf::from) else {
            let why = "set SIDEWIRE_MCP_PEERS to the directory .ci/mcp-peers/install.sh fills";
            skip("Python SDK 2.3.0 peer", why);
            skip("TypeScript SDK 2.4.0 peer", why);
            return Peers {
                python: None,
                ts: None,
            };
        };
        let python = dir.join("py/bin/python");
        let python = if python.exists() {
            Some(python)
        } else {
            skip(
                "Python SDK 2.3.0 peer",
                &format!("no {}; run .ci/mcp-peers/install.sh", python.display()),
            );
            None
        };
        let modules = dir.join("ts2/node_modules");
        let node = std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success());
        let ts = if !modules.join("@modelcontextprotocol/server").exists() {
            skip(
                "TypeScript SDK 2.4.0 peer",
                &format!("no {}; run .ci/mcp-peers/install.sh", modules.display()),
            );
            None
        } else if !node {
            skip("TypeScript SDK 2.4.0 peer", "no node on PATH");
            None
        } else {
            // ESM resolves the script's imports from the script's own directory.
            let scratch = tempfile::tempdir().expect("a scratch directory");
            std::fs::copy(
                peer_script("ts_noop_server.mjs"),
                scratch.path().join("ts_noop_server.mjs"),
            )
            .expect("the TS peer script copied");
            std::os::unix::fs::symlink(&modules, scratch.path().join("node_modules"))
                .expect("node_modules linked");
            Some(scratch)
        };
        Peers { python, ts }
    }
}

fn peer_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("peers")
        .join(name)
}

/// Where the bridges and the aggregator the gateway is measured against are installed, when
/// they are (`SIDEWIRE_BENCH_BRIDGES`). Not CI's peers: a missing one is skipped whatever
/// `SIDEWIRE_REQUIRE_PEERS` says.
struct Bridges {
    /// supergateway's script, run by `node`.
    supergateway: Option<PathBuf>,
    /// mcp-proxy's command.
    mcp_proxy: Option<PathBuf>,
    /// The Python of the venv holding fastmcp, for `peers/fastmcp_aggregate.py`.
    fastmcp: Option<PathBuf>,
}

impl Bridges {
    fn find() -> Bridges {
        let Some(dir) = std::env::var_os("SIDEWIRE_BENCH_BRIDGES").map(PathBuf::from) else {
            say(concat!(
                "SKIPPED: mcp_server's supergateway, mcp-proxy and fastmcp rows ",
                "(set SIDEWIRE_BENCH_BRIDGES)"
            ));
            return Bridges {
                supergateway: None,
                mcp_proxy: None,
                fastmcp: None,
            };
        };
        let found = |what: &str, path: PathBuf| {
            if path.exists() {
                Some(path)
            } else {
                say(&format!(
                    "SKIPPED: mcp_server's {what} rows (no {})",
                    path.display()
                ));
                None
            }
        };
        let supergateway = found(
            "supergateway",
            dir.join("node_modules/supergateway/dist/index.js"),
        );
        let mcp_proxy = found("mcp-proxy", dir.join("py/bin/mcp-proxy"));
        let fastmcp = found("fastmcp", dir.join("fastmcp/bin/python"));
        Bridges {
            supergateway,
            mcp_proxy,
            fastmcp,
        }
    }
}

/// How to start one server: a program and its arguments, and the name of the no-op tool as
/// the server exposes it.
#[derive(Debug, Clone)]
struct Launch {
    name: String,
    kind: Kind,
    program: PathBuf,
    args: Vec<String>,
    tool: &'static str,
}

impl Launch {
    fn new(name: &str, kind: Kind, program: impl Into<PathBuf>, args: &[&str]) -> Launch {
        Launch {
            name: name.to_owned(),
            kind,
            program: program.into(),
            args: args.iter().map(|&arg| arg.to_owned()).collect(),
            tool: "noop",
        }
    }

    /// The tool called is `tool` (an aggregator's name for the upstream's `noop`).
    fn calling(mut self, tool: &'static str) -> Launch {
        self.tool = tool;
        self
    }

    /// The command, under `taskset -c $SIDEWIRE_BENCH_SERVER_CPUS` when that is set.
    fn command(&self, extra: &[String]) -> Command {
        let mut command = match std::env::var("SIDEWIRE_BENCH_SERVER_CPUS") {
            Ok(cpus) if !cpus.is_empty() => {
                let mut command = Command::new("taskset");
                command.arg("-c").arg(cpus).arg(&self.program);
                command
            }
            _ => Command::new(&self.program),
        };
        command
            .args(&self.args)
            .args(extra)
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        command
    }
}

/// The stdio servers, in row order.
fn stdio_servers(peers: &Peers) -> Vec<Launch> {
    let mut servers = vec![
        Launch::new("floor", Kind::Floor, SERVER, &["--echo"]),
        Launch::new("sidewire", Kind::Mcp, SERVER, &[]),
        Launch::new(
            "sidewire_tokio_stdio",
            Kind::Mcp,
            SERVER,
            &["--tokio-stdio"],
        ),
        // A process in the middle: the relay floor, and the gateway in bridge mode in front
        // of the same Toolbox as `sidewire` (the direct call).
        Launch::new("relay_floor", Kind::Floor, SERVER, &["--relay"]),
        Launch::new("gateway", Kind::Mcp, SERVER, &["--gateway"]),
        Launch::new(
            "gateway_one_sidecar",
            Kind::Mcp,
            SERVER,
            &["--gateway-sidecar"],
        ),
    ];
    if let Some(python) = &peers.python {
        let script = peer_script("py_noop_server.py");
        let script = script.to_str().expect("a UTF-8 path");
        servers.push(Launch::new("py", Kind::Mcp, python, &[script, "stdio"]));
    }
    if let Some(dir) = &peers.ts {
        let script = dir.path().join("ts_noop_server.mjs");
        let script = script.to_str().expect("a UTF-8 path");
        servers.push(Launch::new("ts", Kind::Mcp, "node", &[script, "stdio"]));
    }
    servers
}

/// The HTTP servers, in row order, and the eras each has a row in. Every peer takes its port
/// as the argument after `http`; sidewire's server and the floor print their address.
fn http_servers(peers: &Peers, bridges: &Bridges) -> Vec<(Launch, &'static [Era])> {
    const BOTH: &[Era] = &[Era::Legacy, Era::Modern];
    const LEGACY: &[Era] = &[Era::Legacy];
    let mut servers = vec![
        (
            Launch::new("floor", Kind::Floor, SERVER, &["--echo-http"]),
            BOTH,
        ),
        (
            Launch::new("sidewire", Kind::Mcp, SERVER, &["--http"]),
            BOTH,
        ),
        (
            Launch::new("bridge_sidewire", Kind::Mcp, SERVER, &["--gateway-http"]),
            BOTH,
        ),
    ];
    let upstream = Path::new(SERVER).to_str().expect("a UTF-8 path");
    if let Some(script) = &bridges.supergateway {
        let script = script.to_str().expect("a UTF-8 path");
        servers.push((
            Launch::new(
                "bridge_supergateway",
                Kind::Mcp,
                "node",
                &[
                    script,
                    "--stdio",
                    upstream,
                    "--outputTransport",
                    "streamableHttp",
                    "--stateful",
                    "--logLevel",
                    "none",
                    "--port",
                    "PORT",
                ],
            ),
            LEGACY,
        ));
    }
    if let Some(proxy) = &bridges.mcp_proxy {
        servers.push((
            Launch::new(
                "bridge_mcp_proxy",
                Kind::Mcp,
                proxy,
                &[
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "PORT",
                    "--log-level",
                    "WARNING",
                    upstream,
                ],
            ),
            LEGACY,
        ));
    }
    // Aggregation: two upstreams, each the same Toolbox, behind one endpoint; the tool called
    // is the first one's `noop` under the name each aggregator gives it.
    servers.push((
        Launch::new(
            "aggregate_sidewire",
            Kind::Mcp,
            SERVER,
            &["--aggregate-http"],
        )
        .calling("a__noop"),
        BOTH,
    ));
    if let Some(python) = &bridges.fastmcp {
        let script = peer_script("fastmcp_aggregate.py");
        let script = script.to_str().expect("a UTF-8 path");
        servers.push((
            Launch::new(
                "aggregate_fastmcp",
                Kind::Mcp,
                python,
                &[script, "PORT", upstream],
            )
            .calling("a_noop"),
            LEGACY,
        ));
    }
    if let Some(python) = &peers.python {
        let script = peer_script("py_noop_server.py");
        let script = script.to_str().expect("a UTF-8 path");
        // `--json` changes only the legacy leg (`json_response`); modern answers JSON anyway.
        servers.push((
            Launch::new("py", Kind::Mcp, python, &[script, "http"]),
            BOTH,
        ));
        servers.push((
            Launch::new(
                "py_json",
                Kind::Mcp,
                python,
                &[script, "http", "PORT", "--json"],
            ),
            LEGACY,
        ));
    }
    if let Some(dir) = &peers.ts {
        let script = dir.path().join("ts_noop_server.mjs");
        let script = script.to_str().expect("a UTF-8 path");
        // `--stateful`: the legacy era with sessions, as the Python peer and sidewire serve it.
        servers.push((
            Launch::new(
                "ts",
                Kind::Mcp,
                "node",
                &[script, "http", "PORT", "--stateful"],
            ),
            BOTH,
        ));
        servers.push((
            Launch::new(
                "ts_json",
                Kind::Mcp,
                "node",
                &[script, "http", "PORT", "--stateful", "--json"],
            ),
            BOTH,
        ));
    }
    servers
}

// ---------------------------------------------------------------------------------------------
// Stdio.

/// One server on a pipe pair, in one era.
struct StdioServer {
    name: String,
    kind: Kind,
    era: Era,
    tool: &'static str,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    request: Vec<u8>,
    answer: Vec<u8>,
    next_id: u64,
}

impl StdioServer {
    /// Starts `launch` and, for an MCP server in the legacy era, runs the handshake; then one
    /// untimed call checks that the tool answers.
    async fn start(launch: &Launch, era: Era) -> StdioServer {
        let mut child = launch
            .command(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("{}: start {:?}: {err}", launch.name, launch.program));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut server = StdioServer {
            name: format!("{} (stdio, {})", launch.name, era.name()),
            kind: launch.kind,
            era,
            tool: launch.tool,
            child,
            stdin,
            stdout,
            request: Vec::with_capacity(512),
            answer: Vec::with_capacity(1024),
            next_id: 1,
        };
        tokio::time::timeout(PATIENCE, server.prepare())
            .await
            .unwrap_or_else(|_| panic!("{}: no answer within {PATIENCE:?}", server.name));
        server
    }

    async fn prepare(&mut self) {
        if self.kind == Kind::Mcp && self.era == Era::Legacy {
            self.send_line(INITIALIZE.as_bytes()).await;
            let answer = self.read_response().await;
            let ok = memchr::memmem::find(answer, b"\"protocolVersion\"").is_some();
            assert!(
                ok,
                "{}: initialize: {}",
                self.name,
                String::from_utf8_lossy(&self.answer)
            );
            self.send_line(INITIALIZED.as_bytes()).await;
        }
        self.run(1, 1).await;
    }

    async fn send_line(&mut self, line: &[u8]) {
        let mut framed = line.to_vec();
        framed.push(b'\n');
        self.stdin
            .write_all(&framed)
            .await
            .unwrap_or_else(|err| panic!("{}: write: {err}", self.name));
    }

    /// Writes the next `tools/call` (one write: the line and its newline).
    async fn write_call(&mut self) {
        self.era.call(self.tool, self.next_id, &mut self.request);
        self.next_id += 1;
        self.request.push(b'\n');
        self.stdin
            .write_all(&self.request)
            .await
            .unwrap_or_else(|err| panic!("{}: write: {err}", self.name));
    }

    /// Reads lines until a response (a line with an id and a result or an error), skipping
    /// notifications; for a floor, the next line.
    async fn read_response(&mut self) -> &[u8] {
        loop {
            self.answer.clear();
            let read = self
                .stdout
                .read_until(b'\n', &mut self.answer)
                .await
                .unwrap_or_else(|err| panic!("{}: read: {err}", self.name));
            assert!(read > 0, "{}: the server closed its stdout", self.name);
            if self.kind == Kind::Floor
                || memchr::memmem::find(&self.answer, b"\"result\"").is_some()
                || memchr::memmem::find(&self.answer, b"\"error\"").is_some()
            {
                return &self.answer;
            }
        }
    }

    /// `iters` calls, `depth` in flight: the first `depth` written at once, then one more as
    /// each answer comes back.
    async fn run(&mut self, iters: u64, depth: usize) -> Duration {
        let started = Instant::now();
        let mut written = 0;
        while written < iters && written < depth as u64 {
            self.write_call().await;
            written += 1;
        }
        for _ in 0..iters {
            let kind = self.kind;
            let answer = self.read_response().await;
            check(kind, "stdio", answer);
            if written < iters {
                self.write_call().await;
                written += 1;
            }
        }
        started.elapsed()
    }

    async fn stop(self) {
        let StdioServer {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        if tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .is_err()
        {
            kill_tree(&mut child).await;
        }
    }
}

fn stdio(c: &mut Criterion, rt: &Runtime, peers: &Peers) {
    let launches = stdio_servers(peers);
    for era in [Era::Legacy, Era::Modern] {
        let mut servers: Vec<StdioServer> = launches
            .iter()
            .map(|launch| rt.block_on(StdioServer::start(launch, era)))
            .collect();
        for depth in [1, STDIO_DEPTH] {
            let mut group =
                c.benchmark_group(format!("mcp_server_stdio_{}/in_flight_{depth}", era.name()));
            configure(&mut group);
            for server in &mut servers {
                let name = server.name.split(' ').next().unwrap_or_default().to_owned();
                group.bench_function(name, |b| {
                    b.iter_custom(|iters| rt.block_on(server.run(iters, depth)));
                });
            }
            group.finish();
        }
        for server in servers {
            rt.block_on(server.stop());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP.

/// One HTTP server: its process, its address, its legacy session, and a pool of keep-alive
/// connections.
struct HttpServer {
    name: String,
    kind: Kind,
    tool: &'static str,
    child: Child,
    address: SocketAddr,
    host: HeaderValue,
    session: Option<HeaderValue>,
    pool: Vec<SendRequest<Full<Bytes>>>,
    used: Instant,
    body: Vec<u8>,
}

impl HttpServer {
    async fn start(launch: &Launch) -> HttpServer {
        let (child, address) = tokio::time::timeout(PATIENCE, listen(launch))
            .await
            .unwrap_or_else(|_| panic!("{}: not listening within {PATIENCE:?}", launch.name));
        let mut server = HttpServer {
            name: format!("{} (http)", launch.name),
            kind: launch.kind,
            tool: launch.tool,
            child,
            address,
            host: HeaderValue::from_str(&address.to_string()).expect("a Host header"),
            session: None,
            pool: Vec::new(),
            used: Instant::now(),
            body: Vec::with_capacity(512),
        };
        tokio::time::timeout(PATIENCE, server.prepare())
            .await
            .unwrap_or_else(|_| panic!("{}: no answer within {PATIENCE:?}", server.name));
        server
    }

    /// Opens the pool, runs the legacy handshake (keeping the session id) and checks a call in
    /// each era.
    async fn prepare(&mut self) {
        self.refresh(true).await;
        if self.kind == Kind::Mcp {
            let (status, headers, body) = self.post(INITIALIZE.as_bytes(), Era::Legacy, 0).await;
            assert_eq!(
                status,
                StatusCode::OK,
                "{}: initialize: {}",
                self.name,
                String::from_utf8_lossy(&body)
            );
            self.session = headers.get("mcp-session-id").cloned();
            assert!(
                self.session.is_some(),
                "{}: initialize opened no session",
                self.name
            );
            let (status, _, body) = self.post(INITIALIZED.as_bytes(), Era::Legacy, 0).await;
            assert!(
                status.is_success(),
                "{}: notifications/initialized: {status} {}",
                self.name,
                String::from_utf8_lossy(&body)
            );
        }
    }

    /// Opens the pool again when it sat idle (or `now`), outside any timed loop.
    async fn refresh(&mut self, now: bool) {
        if !now && self.used.elapsed() < STALE && self.pool.iter().all(|c| !c.is_closed()) {
            return;
        }
        self.pool.clear();
        for _ in 0..HTTP_DEPTH {
            let socket = tokio::net::TcpStream::connect(self.address)
                .await
                .unwrap_or_else(|err| panic!("{}: connect: {err}", self.name));
            socket.set_nodelay(true).expect("TCP_NODELAY");
            let (sender, connection) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(socket))
                    .await
                    .expect("an HTTP/1.1 connection");
            tokio::spawn(connection);
            self.pool.push(sender);
        }
    }

    /// One `POST` of `body` on connection `conn` with `era`'s headers: status, headers, body.
    async fn post(
        &mut self,
        body: &[u8],
        era: Era,
        conn: usize,
    ) -> (StatusCode, http::HeaderMap, Bytes) {
        let request = request(
            &self.host,
            self.session.as_ref(),
            era,
            self.tool,
            Bytes::copy_from_slice(body),
        );
        let sender = &mut self.pool[conn];
        exchange(sender, request, &self.name).await
    }

    /// `iters` calls in `era`, `depth` connections with one call in flight each.
    async fn run(&mut self, iters: u64, depth: usize, era: Era) -> Duration {
        self.refresh(false).await;
        let next = std::cell::Cell::new(0u64);
        let (host, session, kind, tool, name) = (
            &self.host,
            self.session.as_ref(),
            self.kind,
            self.tool,
            &self.name,
        );
        let started = Instant::now();
        let workers = self.pool[..depth]
            .iter_mut()
            .enumerate()
            .map(|(n, sender)| {
                let next = &next;
                async move {
                    let mut line = Vec::with_capacity(512);
                    loop {
                        let i = next.get();
                        if i >= iters {
                            return;
                        }
                        next.set(i + 1);
                        // Ids distinct across the connections of one session.
                        era.call(tool, 1 + i * HTTP_DEPTH as u64 + n as u64, &mut line);
                        let body = Bytes::copy_from_slice(&line);
                        let request = request(host, session, era, tool, body);
                        let (status, _, body) = exchange(sender, request, name).await;
                        assert_eq!(
                            status,
                            StatusCode::OK,
                            "{name}: {}",
                            String::from_utf8_lossy(&body)
                        );
                        check(kind, name, &body);
                    }
                }
            });
        futures_util::future::join_all(workers).await;
        let elapsed = started.elapsed();
        self.used = Instant::now();
        elapsed
    }

    async fn check_era(&mut self, era: Era) {
        era.call(self.tool, 1, &mut self.body);
        let line = std::mem::take(&mut self.body);
        let (status, _, body) = self.post(&line, era, 0).await;
        self.body = line;
        assert_eq!(
            status,
            StatusCode::OK,
            "{} ({}): {}",
            self.name,
            era.name(),
            String::from_utf8_lossy(&body)
        );
        check(self.kind, &self.name, &body);
    }

    async fn stop(self) {
        let HttpServer {
            mut child, pool, ..
        } = self;
        drop(pool);
        kill_tree(&mut child).await;
    }
}

/// Kills `child` and every process under it: a bridge's or an aggregator's upstreams would
/// otherwise outlive it until each read the end of its stdin.
async fn kill_tree(child: &mut Child) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let Some(root) = child.id().and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    // Linux lists each task's children in `/proc/PID/task/TID/children`.
    let mut tree: Vec<i32> = Vec::new();
    let mut unvisited = vec![root];
    while let Some(parent) = unvisited.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for pid in children
                .split_whitespace()
                .filter_map(|pid| pid.parse().ok())
            {
                tree.push(pid);
                unvisited.push(pid);
            }
        }
    }
    // Children before their parents: none is orphaned (and reaped elsewhere) before its signal.
    for &pid in tree.iter().rev() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = child.kill().await;
}

/// Starts an HTTP server and returns it with its address: the one it prints, or for a peer
/// (`PORT` in its arguments, or none) a free port given to it, once it accepts connections.
async fn listen(launch: &Launch) -> (Child, SocketAddr) {
    let prints = launch.program == Path::new(SERVER);
    if prints {
        let mut child = launch
            .command(&[])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("{}: start: {err}", launch.name));
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).await.expect("its address line");
        let address = line
            .trim()
            .strip_prefix("listening on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .and_then(|address| address.parse().ok())
            .unwrap_or_else(|| panic!("{}: not an address line: {line:?}", launch.name));
        // Keep reading (and dropping) its stdout so the pipe never fills.
        tokio::spawn(async move {
            let mut sink = tokio::io::sink();
            let _ = tokio::io::copy(&mut stdout, &mut sink).await;
        });
        return (child, address);
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut launch = launch.clone();
    match launch.args.iter_mut().find(|arg| *arg == "PORT") {
        Some(arg) => *arg = port.to_string(),
        None => launch.args.push(port.to_string()),
    }
    let child = launch
        .command(&[])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|err| panic!("{}: start: {err}", launch.name));
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    while tokio::net::TcpStream::connect(address).await.is_err() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, address)
}

/// A `POST /mcp` of `body` (a call of `tool`) with the headers `era`'s client sends.
fn request(
    host: &HeaderValue,
    session: Option<&HeaderValue>,
    era: Era,
    tool: &'static str,
    body: Bytes,
) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(body));
    *request.method_mut() = Method::POST;
    *request.uri_mut() = http::Uri::from_static("/mcp");
    let headers = request.headers_mut();
    headers.insert(header::HOST, host.clone());
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    match era {
        Era::Legacy => {
            if let Some(session) = session {
                headers.insert("mcp-session-id", session.clone());
                headers.insert(
                    "mcp-protocol-version",
                    HeaderValue::from_static(Era::Legacy.version()),
                );
            }
        }
        Era::Modern => {
            headers.insert(
                "mcp-protocol-version",
                HeaderValue::from_static(Era::Modern.version()),
            );
            headers.insert("mcp-method", HeaderValue::from_static("tools/call"));
            headers.insert("mcp-name", HeaderValue::from_static(tool));
        }
    }
    request
}

/// Sends `request` and reads its answer whole (JSON, or an event stream to its end).
async fn exchange(
    sender: &mut SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
    name: &str,
) -> (StatusCode, http::HeaderMap, Bytes) {
    sender
        .ready()
        .await
        .unwrap_or_else(|err| panic!("{name}: connection: {err}"));
    let response = sender
        .send_request(request)
        .await
        .unwrap_or_else(|err| panic!("{name}: request: {err}"));
    let (parts, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .unwrap_or_else(|err| panic!("{name}: body: {err}"))
        .to_bytes();
    (parts.status, parts.headers, body)
}

fn http(c: &mut Criterion, rt: &Runtime, peers: &Peers, bridges: &Bridges) {
    let launches = http_servers(peers, bridges);
    let mut servers: Vec<(HttpServer, &[Era])> = launches
        .iter()
        .map(|(launch, eras)| {
            let mut server = rt.block_on(HttpServer::start(launch));
            for &era in *eras {
                rt.block_on(server.check_era(era));
            }
            (server, *eras)
        })
        .collect();
    for era in [Era::Legacy, Era::Modern] {
        for depth in [1, HTTP_DEPTH] {
            let mut group =
                c.benchmark_group(format!("mcp_server_http_{}/in_flight_{depth}", era.name()));
            configure(&mut group);
            for (server, eras) in &mut servers {
                if !eras.contains(&era) {
                    continue;
                }
                let name = server.name.split(' ').next().unwrap_or_default().to_owned();
                group.bench_function(name, |b| {
                    b.iter_custom(|iters| rt.block_on(server.run(iters, depth, era)));
                });
            }
            group.finish();
        }
    }
    for (server, _) in servers {
        rt.block_on(server.stop());
    }
}

// ---------------------------------------------------------------------------------------------

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.throughput(Throughput::Elements(1));
    // The peers over HTTP take milliseconds a request: fewer samples keep a row near its
    // measurement time.
    group.sample_size(30);
}

fn mcp_server(c: &mut Criterion) {
    let rt = runtime();
    let peers = Peers::find();
    let bridges = Bridges::find();
    stdio(c, &rt, &peers);
    http(c, &rt, &peers, &bridges);
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = mcp_server
}
