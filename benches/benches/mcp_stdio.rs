//! MCP tools/call round trips over stdio against one no-op server, in both protocol eras:
//! sidewire-mcp's client against rmcp's (`TokioChildProcess`), each in the legacy era
//! (`initialize`, 2025-11-25) and in the modern one (`server/discover`, 2026-07-28, the
//! `_meta` envelope on every request), on the same harness, in the same run, with 1 and 32
//! calls in flight.
//!
//! The no-op server is this very binary, re-executed with `SIDEWIRE_BENCH_NOOP_SERVER=1`: a
//! few lines of `sidewire-jsonrpc` on stdin/stdout that answer `initialize`, `server/discover`,
//! `tools/list`, `tools/call` (one text item, "ok") and `ping`, and `-32601` to anything else.
//! A request carrying the modern envelope gets the modern result fields (`resultType`, and
//! `ttlMs`/`cacheScope` on discovery and listings). Every client talks to the same server
//! binary through the same kind of pipes, so the difference is the client (and the era).
//!
//! `in_flight_1/floor_*` is the floor under both clients: a loop in a task that writes a
//! pre-encoded `tools/call` line (as each era's client sends it) to the same server and reads
//! its answer line back, with no JSON on the client side. What a client costs is its time
//! less the floor; the server's work and the two pipe wake-ups are in every row alike.
//!
//! `mcp_stdio_shape_<shape>/…` are the same rows on real bytes: the no-op server re-executed
//! with `SIDEWIRE_BENCH_SHAPE` set answers `tools/call` with the frame captured from a real
//! SDK's no-op server (`ts1`: TypeScript SDK 1.32.2, `ts2`: TypeScript SDK 2.4.0, `py`: Python
//! SDK 2.3.0, `rmcp`: rmcp 3.11.0), only its `id` replaced, so member order, spacing, `_meta`
//! and content shape are the SDK's (`benches/fixtures/real/`, captured as
//! `benches/capture/README.md` says). `own` replays this server's own answer through the
//! same replay server, the row the others compare with. Each shape has its own floor against
//! its own replay server, and modern-era rows where the SDK speaks that era (all but `ts1`).

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use serde_json::Value;
use sidewire_benches::noop_mcp::{SHAPE_ENV, Shape};
use sidewire_benches::pipelined;
use tokio::io::AsyncWriteExt as _;
use tokio::runtime::Runtime;

/// Set in the environment of the re-executed binary: run the no-op server instead.
const SERVER_ENV: &str = "SIDEWIRE_BENCH_NOOP_SERVER";

fn main() {
    if std::env::var_os(SERVER_ENV).is_some() {
        let shape = std::env::var(SHAPE_ENV).ok();
        match shape.as_deref().map(Shape::from_name) {
            None => runtime().block_on(sidewire_benches::noop_mcp::serve()),
            Some(Some(shape)) => {
                runtime().block_on(sidewire_benches::noop_mcp::serve_replay(shape))
            }
            Some(None) => panic!("{SHAPE_ENV}: no such shape"),
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn server_exe() -> String {
    std::env::current_exe()
        .expect("the bench binary's path")
        .to_string_lossy()
        .into_owned()
}

/// sidewire's client in `era`, on the no-op server, or on its replay in `shape`.
fn sidewire_client(
    rt: &Runtime,
    era: sidewire_mcp::EraChoice,
    shape: Option<Shape>,
) -> sidewire_mcp::Client {
    rt.block_on(async {
        let mut spec = sidewire_mcp::ServerSpec::stdio("noop", server_exe())
            .env(SERVER_ENV, "1")
            .era(era);
        if let Some(shape) = shape {
            spec = spec.env(SHAPE_ENV, shape.name());
        }
        let (client, driver) = sidewire_mcp::Client::connect(&spec, sidewire_mcp::NoHandler)
            .await
            .expect("sidewire connects to the no-op server");
        tokio::spawn(driver);
        client
    })
}

type RmcpClient = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// rmcp's client in `era`: the `initialize` lifecycle for the legacy era, the `server/discover`
/// one (2026-07-28 only, no fallback) for the modern era; on the no-op server, or on its replay
/// in `shape`.
fn rmcp_client(rt: &Runtime, era: sidewire_mcp::Era, shape: Option<Shape>) -> RmcpClient {
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
    let lifecycle = match era {
        sidewire_mcp::Era::Modern => ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
        _ => ClientLifecycleMode::Initialize,
    };
    rt.block_on(async {
        let mut command = tokio::process::Command::new(server_exe());
        command.env(SERVER_ENV, "1");
        if let Some(shape) = shape {
            command.env(SHAPE_ENV, shape.name());
        }
        let transport =
            rmcp::transport::TokioChildProcess::new(command).expect("rmcp starts the no-op server");
        ().serve_with_lifecycle(transport, lifecycle)
            .await
            .expect("rmcp connects to the no-op server")
    })
}

fn tools_call(c: &mut Criterion) {
    use sidewire_mcp::{Era, EraChoice};
    let rt = runtime();
    let sidewire_legacy = sidewire_client(&rt, EraChoice::Legacy, None);
    let sidewire_modern = sidewire_client(&rt, EraChoice::Auto, None);
    assert_eq!(sidewire_legacy.era(), Era::Legacy);
    assert_eq!(sidewire_modern.era(), Era::Modern);
    let rmcp_legacy = rmcp_client(&rt, Era::Legacy, None);
    let rmcp_modern = rmcp_client(&rt, Era::Modern, None);
    let floor = Floor::start(&rt, None);
    for depth in [1usize, 32] {
        let mut group = c.benchmark_group(format!("mcp_stdio_tools_call/in_flight_{depth}"));
        group.throughput(Throughput::Elements(1));
        if depth == 1 {
            for (name, line) in [
                ("floor_legacy", FLOOR_LEGACY),
                ("floor_modern", FLOOR_MODERN),
            ] {
                group.bench_function(name, |b| floor.bench(b, &rt, line));
            }
        }
        for (name, client) in [
            ("sidewire_legacy", &sidewire_legacy),
            ("sidewire_modern", &sidewire_modern),
        ] {
            group.bench_function(name, |b| bench_sidewire(b, &rt, client, depth));
        }
        for (name, client) in [("rmcp_legacy", &rmcp_legacy), ("rmcp_modern", &rmcp_modern)] {
            group.bench_function(name, |b| bench_rmcp(b, &rt, client, depth));
        }
        group.finish();
    }
    for client in [sidewire_legacy, sidewire_modern] {
        rt.block_on(client.close());
    }
    for client in [rmcp_legacy, rmcp_modern] {
        drop(rt.block_on(client.cancel()));
    }
    rt.block_on(floor.stop());
}

/// The rows of [`tools_call`] once per byte shape, each against the no-op server replaying
/// that shape's captured `tools/call` answers, one shape at a time (its children end before
/// the next shape's start).
fn shapes(c: &mut Criterion) {
    use sidewire_mcp::{Era, EraChoice};
    let rt = runtime();
    for shape in Shape::ALL {
        let mut eras = vec![Era::Legacy];
        if shape.has_modern() {
            eras.push(Era::Modern);
        }
        let name = |client: &str, era: Era| format!("{client}_{}", era.as_str());
        let sidewire: Vec<_> = eras
            .iter()
            .map(|&era| {
                let choice = match era {
                    Era::Modern => EraChoice::Auto,
                    _ => EraChoice::Legacy,
                };
                let client = sidewire_client(&rt, choice, Some(shape));
                assert_eq!(client.era(), era, "sidewire's era on {}", shape.name());
                (name("sidewire", era), client)
            })
            .collect();
        let rmcp: Vec<_> = eras
            .iter()
            .map(|&era| (name("rmcp", era), rmcp_client(&rt, era, Some(shape))))
            .collect();
        let floor = Floor::start(&rt, Some(shape));
        for depth in [1usize, 32] {
            let mut group = c.benchmark_group(format!(
                "mcp_stdio_shape_{}/in_flight_{depth}",
                shape.name()
            ));
            group.throughput(Throughput::Elements(1));
            if depth == 1 {
                for &era in &eras {
                    let line = match era {
                        Era::Modern => FLOOR_MODERN,
                        _ => FLOOR_LEGACY,
                    };
                    group.bench_function(name("floor", era), |b| floor.bench(b, &rt, line));
                }
            }
            for (name, client) in &sidewire {
                group.bench_function(name, |b| bench_sidewire(b, &rt, client, depth));
            }
            for (name, client) in &rmcp {
                group.bench_function(name, |b| bench_rmcp(b, &rt, client, depth));
            }
            group.finish();
        }
        for (_, client) in sidewire {
            rt.block_on(client.close());
        }
        for (_, client) in rmcp {
            drop(rt.block_on(client.cancel()));
        }
        rt.block_on(floor.stop());
    }
}

/// The floor's `tools/call` in the legacy era: what sidewire's client writes (a progress token
/// in `_meta`), pre-encoded.
const FLOOR_LEGACY: &str = concat!(
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"noop","#,
    r#""_meta":{"progressToken":"sidewire-7"}}}"#,
    "\n"
);

/// The same in the modern era: the 2026-07-28 `_meta` envelope on the request.
const FLOOR_MODERN: &str = concat!(
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"noop","_meta":{"#,
    r#""progressToken":"sidewire-7","io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{},"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"sidewire","version":"0.1.0"}}}}"#,
    "\n"
);

/// The no-op server driven by hand: write a line, read a line.
struct Floor {
    child: tokio::process::Child,
    pipes: std::sync::Arc<tokio::sync::Mutex<FloorPipes>>,
}

type FloorPipes = (
    tokio::process::ChildStdin,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
);

impl Floor {
    /// The no-op server, or its replay in `shape`.
    fn start(rt: &Runtime, shape: Option<Shape>) -> Self {
        rt.block_on(async {
            let (child, stdin, lines) = match shape {
                None => sidewire_benches::spawn_self(SERVER_ENV, "1"),
                Some(shape) => sidewire_benches::spawn_self_with(&[
                    (SERVER_ENV, "1"),
                    (SHAPE_ENV, shape.name()),
                ]),
            };
            let pipes = std::sync::Arc::new(tokio::sync::Mutex::new((stdin, lines)));
            Floor { child, pipes }
        })
    }

    /// One `line` written and its answer read, `iters` times, in a task on the runtime.
    fn bench(&self, b: &mut criterion::Bencher<'_>, rt: &Runtime, line: &'static str) {
        b.iter_custom(|iters| {
            let pipes = std::sync::Arc::clone(&self.pipes);
            rt.block_on(rt.spawn(async move {
                // Locked once per sample, outside the timed loop.
                let mut pipes = pipes.lock().await;
                let (stdin, lines) = &mut *pipes;
                let started = std::time::Instant::now();
                for _ in 0..iters {
                    stdin
                        .write_all(line.as_bytes())
                        .await
                        .expect("the server reads");
                    let answer = lines.next_line().await.expect("the server answers");
                    assert!(answer.is_some_and(|answer| answer.contains(r#""ok""#)));
                }
                started.elapsed()
            }))
            .expect("the bench task")
        });
    }

    async fn stop(mut self) {
        drop(self.pipes);
        let _ = self.child.wait().await;
    }
}

/// `depth` sidewire tools/calls in flight. The calling loop runs in a spawned task, as callers
/// do (see the jsonrpc bench).
fn bench_sidewire(
    b: &mut criterion::Bencher<'_>,
    rt: &Runtime,
    client: &sidewire_mcp::Client,
    depth: usize,
) {
    b.iter_custom(|iters| {
        let client = client.clone();
        rt.block_on(rt.spawn(async move {
            pipelined(iters, depth, || {
                let client = client.clone();
                async move {
                    let result = client
                        .call_tool("noop", Value::Null, sidewire_mcp::ToolCallOptions::new())
                        .await
                        .expect("sidewire tools/call");
                    assert!(!result.is_error);
                }
            })
            .await
        }))
        .expect("the bench task")
    });
}

/// `depth` rmcp tools/calls in flight, the same way.
fn bench_rmcp(b: &mut criterion::Bencher<'_>, rt: &Runtime, client: &RmcpClient, depth: usize) {
    b.iter_custom(|iters| {
        let peer = client.peer().clone();
        rt.block_on(rt.spawn(async move {
            pipelined(iters, depth, || {
                let peer = peer.clone();
                async move {
                    let result = peer
                        .call_tool(rmcp::model::CallToolRequestParams::new("noop"))
                        .await
                        .expect("rmcp tools/call");
                    assert_ne!(result.is_error, Some(true));
                }
            })
            .await
        }))
        .expect("the bench task")
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = tools_call, shapes
}
