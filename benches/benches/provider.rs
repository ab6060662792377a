//! Provider stream benchmarks for `sidewire-ext-host` (spec §14): chunks per second through
//! the host for a sidecar streaming small text chunks, against the raw pipe floor in the same
//! run.
//!
//! Both measure the same exchange with the same bytes: one line to a child (a `stream/open`
//! frame), and the child answers it and writes [`CHUNKS`] `stream/chunk` lines and one
//! `stream/end` at once. The floor reads the lines back unparsed; the host reads them through
//! `ExtensionHost::open_stream` into a `ProviderStream` (JSON-RPC framing, strict decoding, the
//! reorder state machine, the connection's queue accounting, waking the reader). The child is
//! the same hand-written sidecar in both (this binary re-executed, `SIDEWIRE_BENCH_ROLE`), so
//! the producer's cost is the same on both sides and cancels out.
//!
//! A stream is [`CHUNKS`] = 200 chunks: under the 256 chunks a connection may hold unread
//! (§2.4), which a sidecar writing a longer burst at once could exceed before the application
//! reads (that fails the connection, by the spec's rule); a real model streams at its own pace.
//!
//! Targets: the host's own cost per chunk (host time less the floor, per chunk) ≤ 2 µs, and
//! ≥ 200 K chunks/s on one stream (printed at the end).

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use futures_util::StreamExt;
use serde_json::{Value, json};
use sidewire_ext_host::{ExtensionHost, HostConfig, InstallOptions, PluginStore, StreamRequest};
use sidewire_ext_protocol::{ProviderMessage, ProviderRequest, ProviderRole};
use tokio::io::AsyncWriteExt;

const ROLE: &str = "SIDEWIRE_BENCH_ROLE";
const CHUNKS: u64 = 200;
const REF: &str = "plugin/bench/scripted/echo-1";

/// The stream a child writes for stream `sid`: the chunk lines and the end line.
fn stream_lines(sid: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for seq in 1..=CHUNKS {
        writeln!(
            out,
            r#"{{"jsonrpc":"2.0","method":"extension/provider/stream/chunk","params":{{"streamId":"{sid}","seq":{seq},"chunk":{{"type":"text","text":" word{}"}}}}}}"#,
            seq % 10
        )
        .unwrap();
    }
    writeln!(
        out,
        r#"{{"jsonrpc":"2.0","method":"extension/provider/stream/end","params":{{"streamId":"{sid}","lastSeq":{CHUNKS}}}}}"#
    )
    .unwrap();
    out
}

/// The children: `floor` answers every line with a stream (fixed stream id); `sidecar` speaks
/// the protocol by hand: the handshake (one provider), and each `stream/open` answered
/// `accepted` and followed by its stream, written at once.
fn child(role: &str) -> std::process::ExitCode {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let floor = stream_lines("s1");
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if role == "floor" {
            out.write_all(br#"{"jsonrpc":"2.0","id":2,"result":{"accepted":true}}"#)
                .unwrap();
            out.write_all(b"\n").unwrap();
            out.write_all(&floor).unwrap();
            out.flush().unwrap();
            continue;
        }
        let frame: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let id = frame["id"].clone();
        let reply = |out: &mut std::io::BufWriter<_>, result: Value| {
            let text = json!({"jsonrpc":"2.0","id":id,"result":result}).to_string();
            out.write_all(text.as_bytes()).unwrap();
            out.write_all(b"\n").unwrap();
        };
        match frame["method"].as_str().unwrap_or("") {
            "extension/initialize" => reply(
                &mut out,
                json!({"protocolVersion":"1","name":"bench","version":"1.0.0",
                    "stateSchemaVersion":0,"providers":[{"ref":REF}]}),
            ),
            "extension/provider/stream/open" => {
                reply(&mut out, json!({"accepted":true}));
                let sid = frame["params"]["streamId"].as_str().unwrap_or("");
                out.write_all(&stream_lines(sid)).unwrap();
            }
            "extension/shutdown" => reply(&mut out, json!({"accepted":true})),
            _ => continue,
        }
        out.flush().unwrap();
    }
    std::process::ExitCode::SUCCESS
}

async fn boot() -> (ExtensionHost, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let store = PluginStore::new(&state);
    let root = dir.path().join("bench");
    std::fs::create_dir_all(&root).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": "bench", "version": "1.0.0",
        "runtime": {
            "command": std::env::current_exe().unwrap().display().to_string(),
            "env": {ROLE: "sidecar"},
            "capabilities": ["providers"],
        },
    });
    std::fs::write(
        root.join(sidewire_ext_protocol::MANIFEST_FILE),
        manifest.to_string(),
    )
    .unwrap();
    store.install(&root, InstallOptions::link()).unwrap();
    let (runtime, _events) = ExtensionHost::boot(HostConfig::new(&state, "bench", dir.path()))
        .await
        .unwrap();
    (runtime, dir)
}

fn request() -> ProviderRequest {
    ProviderRequest {
        messages: vec![ProviderMessage {
            role: Some(ProviderRole::User),
            content: "stream me two hundred words".to_owned(),
            ..Default::default()
        }],
        max_tokens: 256,
        ..Default::default()
    }
}

/// One stream through the host, read to its end.
async fn host_stream(runtime: &ExtensionHost) {
    let mut stream = runtime
        .open_stream(StreamRequest::new(REF, request()))
        .await
        .unwrap();
    let mut chunks = 0;
    while let Some(chunk) = stream.next().await {
        std::hint::black_box(chunk.unwrap());
        chunks += 1;
    }
    assert_eq!(chunks, CHUNKS);
}

fn benches(c: &mut Criterion) -> (Duration, Duration) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("provider");
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(CHUNKS));
    let floor_mean;
    let host_mean;

    // The floor: the open line out, the answer, the chunks and the end back, unparsed.
    {
        let (pipes, mut child) = rt.block_on(async {
            let (child, stdin, lines) = sidewire_benches::spawn_self(ROLE, "floor");
            (
                std::sync::Arc::new(tokio::sync::Mutex::new((stdin, lines))),
                child,
            )
        });
        let line = format!(
            "{}\n",
            json!({"jsonrpc":"2.0","id":2,"method":"extension/provider/stream/open","params":{
                "streamId":"s1","providerRef":REF,"request":request(),"seqBase":0}})
        );
        group.bench_function("pipe_floor", |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let pipes = std::sync::Arc::clone(&pipes);
                let line = line.clone();
                async move {
                    let mut pipes = pipes.lock().await;
                    let (stdin, lines) = &mut *pipes;
                    let started = Instant::now();
                    for _ in 0..iters {
                        stdin.write_all(line.as_bytes()).await.unwrap();
                        stdin.flush().await.unwrap();
                        // The answer, the chunks and the end.
                        for _ in 0..CHUNKS + 2 {
                            std::hint::black_box(lines.next_line().await.unwrap().unwrap());
                        }
                    }
                    started.elapsed()
                }
            });
        });
        // A separate timed pass for the summary (criterion keeps its estimates to itself).
        floor_mean = rt.block_on(async {
            let mut pipes = pipes.lock().await;
            let (stdin, lines) = &mut *pipes;
            let started = Instant::now();
            for _ in 0..500 {
                stdin.write_all(line.as_bytes()).await.unwrap();
                stdin.flush().await.unwrap();
                for _ in 0..CHUNKS + 2 {
                    std::hint::black_box(lines.next_line().await.unwrap().unwrap());
                }
            }
            started.elapsed() / 500
        });
        rt.block_on(async {
            drop(pipes);
            let _ = child.wait().await;
        });
    }

    {
        let (runtime, dir) = rt.block_on(boot());
        // The reader as a task on the runtime's worker, beside the connection's driver, as an
        // application's task would read it.
        group.bench_function("host_one_stream", |b| {
            b.to_async(&rt).iter(|| {
                let runtime = runtime.clone();
                async move {
                    tokio::spawn(async move { host_stream(&runtime).await })
                        .await
                        .unwrap()
                }
            })
        });
        // The reader on the thread that blocks on the runtime (criterion's `to_async`), so
        // every wake crosses threads.
        group.bench_function("host_one_stream_reader_off_runtime", |b| {
            b.to_async(&rt).iter(|| host_stream(&runtime))
        });
        host_mean = rt.block_on(async {
            let runtime = runtime.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                for _ in 0..500 {
                    host_stream(&runtime).await;
                }
                started.elapsed() / 500
            })
            .await
            .unwrap()
        });
        rt.block_on(runtime.shutdown());
        drop(dir);
    }
    group.finish();

    // What part of the host's cost is the strict decoding of one chunk's params (§4), which
    // every chunk goes through on the connection's driver.
    let mut group = c.benchmark_group("provider");
    let params = r#"{"streamId":"s1","seq":17,"chunk":{"type":"text","text":" word7"}}"#;
    group.bench_function("decode_one_chunk", |b| {
        b.iter(|| {
            sidewire_ext_protocol::decode_params::<sidewire_ext_protocol::StreamChunkParams>(Some(
                std::hint::black_box(params),
            ))
            .unwrap()
        })
    });
    group.finish();
    (floor_mean, host_mean)
}

fn main() -> std::process::ExitCode {
    if let Ok(role) = std::env::var(ROLE) {
        return child(&role);
    }
    let mut criterion = Criterion::default().configure_from_args();
    let (floor, host) = benches(&mut criterion);
    criterion.final_summary();
    let per_chunk = |d: Duration| d.as_secs_f64() / CHUNKS as f64;
    let host_cost = (per_chunk(host) - per_chunk(floor)) * 1e6;
    #[allow(clippy::print_stdout)]
    {
        println!(
            "provider stream of {CHUNKS} chunks (500 streams each): floor {floor:?} \
             ({:.0} chunks/s), host {host:?} ({:.0} chunks/s); host cost {host_cost:.2} µs \
             per chunk",
            1.0 / per_chunk(floor),
            1.0 / per_chunk(host),
        );
    }
    std::process::ExitCode::SUCCESS
}
