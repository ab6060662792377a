//! MCP tools/call round trips over stdio against one no-op server: sidewire-mcp's client
//! against rmcp's (`TokioChildProcess`), on the same harness, in the same run, with 1 and 32
//! calls in flight.
//!
//! The no-op server is this very binary, re-executed with `SIDEWIRE_BENCH_NOOP_SERVER=1`: a
//! few lines of `sidewire-jsonrpc` on stdin/stdout that answer `initialize`, `tools/list`,
//! `tools/call` (one text item, "ok") and `ping`, and `-32601` to anything else (which is what
//! rmcp's `server/discover` probe gets before it falls back to `initialize`). Both clients talk
//! to the same server binary through the same kind of pipes, so the difference is the client.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use serde_json::{Value, json};
use sidewire_benches::pipelined;
use sidewire_jsonrpc::{Config, Profile, Router};
use tokio::runtime::Runtime;

/// Set in the environment of the re-executed binary: run the no-op server instead.
const SERVER_ENV: &str = "SIDEWIRE_BENCH_NOOP_SERVER";

fn main() {
    if std::env::var_os(SERVER_ENV).is_some() {
        noop_server();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

/// The no-op MCP server on stdin/stdout, until stdin closes.
fn noop_server() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let config = Config::new(Profile::Lenient, 8 * 1024 * 1024);
        let (reader, writer) = sidewire_benches::stdio_pipes();
        let (stream, sink) = sidewire_jsonrpc::ndjson(reader, writer, &config);
        let router = Router::new()
            .request_untyped::<Value, Value, _, _>("initialize", |params: Value, _| async move {
                let version = params["protocolVersion"]
                    .as_str()
                    .unwrap_or("2025-06-18")
                    .to_owned();
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "noop", "version": "0"}
                }))
            })
            .request_untyped::<Value, Value, _, _>("tools/list", |_: Value, _| async {
                Ok(json!({"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]}))
            })
            .request_untyped::<Value, Value, _, _>("tools/call", |_: Value, _| async {
                Ok(json!({"content": [{"type": "text", "text": "ok"}]}))
            })
            .request_untyped::<Value, Value, _, _>("ping", |_: Value, _| async { Ok(json!({})) });
        let (_peer, driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
        let _ = driver.await;
    });
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

fn sidewire_client(rt: &Runtime) -> sidewire_mcp::Client {
    rt.block_on(async {
        let spec = sidewire_mcp::ServerSpec::stdio("noop", server_exe()).env(SERVER_ENV, "1");
        let (client, driver) = sidewire_mcp::Client::connect(&spec, sidewire_mcp::NoHandler)
            .await
            .expect("sidewire connects to the no-op server");
        tokio::spawn(driver);
        client
    })
}

type RmcpClient = rmcp::service::RunningService<rmcp::RoleClient, ()>;

fn rmcp_client(rt: &Runtime) -> RmcpClient {
    use rmcp::ServiceExt;
    rt.block_on(async {
        let mut command = tokio::process::Command::new(server_exe());
        command.env(SERVER_ENV, "1");
        let transport =
            rmcp::transport::TokioChildProcess::new(command).expect("rmcp starts the no-op server");
        ().serve(transport)
            .await
            .expect("rmcp connects to the no-op server")
    })
}

fn tools_call(c: &mut Criterion) {
    let rt = runtime();
    let sidewire = sidewire_client(&rt);
    let rmcp = rmcp_client(&rt);
    for depth in [1usize, 32] {
        let mut group = c.benchmark_group(format!("mcp_stdio_tools_call/in_flight_{depth}"));
        group.throughput(Throughput::Elements(1));
        // The calling loop runs in a spawned task, as callers do (see the jsonrpc bench).
        group.bench_function("sidewire", |b| {
            b.iter_custom(|iters| {
                let client = sidewire.clone();
                rt.block_on(rt.spawn(async move {
                    pipelined(iters, depth, || {
                        let client = client.clone();
                        async move {
                            let result = client
                                .call_tool(
                                    "noop",
                                    Value::Null,
                                    sidewire_mcp::ToolCallOptions::new(),
                                )
                                .await
                                .expect("sidewire tools/call");
                            assert!(!result.is_error);
                        }
                    })
                    .await
                }))
                .expect("the bench task")
            })
        });
        group.bench_function("rmcp", |b| {
            b.iter_custom(|iters| {
                let peer = rmcp.peer().clone();
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
            })
        });
        group.finish();
    }
    rt.block_on(sidewire.close());
    drop(rt.block_on(rmcp.cancel()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = tools_call
}
