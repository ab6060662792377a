//! JSON-RPC round trips over an in-memory duplex: sidewire's peer against rmcp's, on the same
//! harness, in the same run. One request in flight, and 64 in flight.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use sidewire_benches::pipelined;
use sidewire_jsonrpc::{Config, Peer, Profile, Request, Router};
use tokio::runtime::Runtime;

#[derive(Serialize, Deserialize)]
struct Empty {}

struct Ping;
impl Request for Ping {
    const METHOD: &'static str = "ping";
    type Params = Empty;
    type Result = Empty;
}

fn runtime(multi: bool) -> Runtime {
    if multi {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }
}

/// A connected pair of sidewire peers; the server answers `ping` with `{}`.
fn sidewire_pair(rt: &Runtime) -> Peer {
    rt.block_on(async {
        let (a, b) = tokio::io::duplex(64 * 1024);
        let config = Config::new(Profile::Lenient, 8 * 1024 * 1024);
        let (ar, aw) = tokio::io::split(a);
        let (stream, sink) = sidewire_jsonrpc::ndjson(ar, aw, &config);
        let (client, driver) =
            sidewire_jsonrpc::connect(stream, sink, Router::new(), config.clone());
        tokio::spawn(driver);
        let (br, bw) = tokio::io::split(b);
        let (stream, sink) = sidewire_jsonrpc::ndjson(br, bw, &config);
        let router = Router::new().request::<Ping, _, _>(|_, _| async { Ok(Empty {}) });
        let (_server, driver) = sidewire_jsonrpc::connect(stream, sink, router, config);
        tokio::spawn(driver);
        client
    })
}

#[derive(Clone)]
struct EmptyServer;
impl rmcp::ServerHandler for EmptyServer {}

type RmcpClient = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A connected rmcp client and server (initialized); pings are answered by rmcp's handler.
fn rmcp_pair(rt: &Runtime) -> RmcpClient {
    use rmcp::ServiceExt;
    rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            let server = EmptyServer
                .serve(server_io)
                .await
                .expect("rmcp server starts");
            let _ = server.waiting().await;
        });
        ().serve(client_io).await.expect("rmcp client initializes")
    })
}

async fn rmcp_ping(client: &rmcp::Peer<rmcp::RoleClient>) {
    use rmcp::model::{ClientRequest, PingRequest};
    client
        .send_request(ClientRequest::PingRequest(PingRequest::default()))
        .await
        .expect("rmcp ping");
}

fn round_trips(c: &mut Criterion) {
    for (label, multi) in [("current_thread", false), ("multi_thread_2", true)] {
        let rt = runtime(multi);
        let sidewire = sidewire_pair(&rt);
        let rmcp = rmcp_pair(&rt);
        for depth in [1usize, 64] {
            let mut group =
                c.benchmark_group(format!("jsonrpc_round_trip/{label}/in_flight_{depth}"));
            group.throughput(Throughput::Elements(1));
            // The calling loop runs in a spawned task, as callers do: `block_on`'s own future
            // is polled outside the scheduler and parks the driver on every wake-up, which
            // would measure tokio rather than either peer.
            group.bench_function("sidewire", |b| {
                b.iter_custom(|iters| {
                    let peer = sidewire.clone();
                    rt.block_on(rt.spawn(async move {
                        pipelined(iters, depth, || {
                            let peer = peer.clone();
                            async move {
                                peer.request::<Ping>(&Empty {})
                                    .await
                                    .expect("sidewire ping");
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
                    rt.block_on(
                        rt.spawn(async move { pipelined(iters, depth, || rmcp_ping(&peer)).await }),
                    )
                    .expect("the bench task")
                })
            });
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = round_trips
}
criterion_main!(benches);
