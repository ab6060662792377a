//! Intercept benchmarks for `sidewire-ext-host`.
//!
//! In one run, with the same child-process plumbing: the raw pipe floor (a child that echoes
//! each line), the JSON floor (the same exchange as typed serde structs on both sides, the
//! least JSON work an intercept needs), the structural floor (`mux_floor`: that JSON exchanged
//! the way a peer multiplexing concurrent requests with deadlines does: a reader task and a
//! pending map on the host, each request's handler polled among those in flight in the
//! child), an
//! `input.receive` intercept through 1 and through 4 real no-op Rust sidecars (the SDK serving
//! an extension that answers `continue`), the host-only cost of a point with no subscriber,
//! and spawn + handshake latency (p50/p95 printed). The floor and the intercepts are timed in a task on the runtime, where the host's
//! callers run; the `_off_runtime` rows time the same loops on the thread that blocks on the
//! runtime (every wake-up then crosses threads, once per round trip for the floor and twice
//! for an intercept, whose connection runs as a task on the runtime's worker). Like the tests,
//! the binary re-executes itself as its own children, selected by `SIDEWIRE_BENCH_ROLE`.
//!
//! `hook_true` times one command hook (`sidewire-hooks`, a PreToolUse hook running `true`) as a
//! chain member per `tool.before`, beside `sh_true_floor`, forking `sh -c true` with piped stdio
//! and waiting for it, the least any process-per-call hook costs, and `sh_true_supervised_floor`,
//! the same started as a hook is (`sidewire-process`: its own group and a parent-death signal,
//! which needs fork and exec instead of `posix_spawn`), supervised, with no JSON and no chain.
//!
//! `replay_rust_sdk` and `replay_go` time the same intercept through one sidecar that is no SDK
//! at all: it answers with frames in one SDK's exact bytes, only the id replaced (sidewire's
//! Rust SDK, captured from its sidecar; the reference Go SDK, derived from its source:
//! `benches/fixtures/real/`, `benches/capture/README.md`), so that the host's side is timed
//! on each SDK's byte shape with the same, nearly free, sidecar behind it.
//!
//! Targets: host cost beyond the wire ≤ 3 µs per intercept (one sidecar's time less the pipe
//! floor); no subscriber ≤ 100 ns; one sidecar's p50 ≤ 1.3× the floor; 4 sidecars ≤ 4 × one
//! plus 5 µs. `pipe_floor_4` (a line through 4 echoing children in turn) is the floor of the
//! chain of 4, for judging that last bound when all processes share one vCPU.

use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use serde_json::json;
use sidewire_benches::sidecars::InterceptShape;
use sidewire_ext_host::{ExtensionHost, HostConfig, InstallOptions, PluginStore};
use sidewire_ext_protocol::{HookPayload, HookPoint, InputPayload};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ROLE: &str = "SIDEWIRE_BENCH_ROLE";
/// The role of a replay sidecar, followed by its shape's name.
const REPLAY: &str = "replay:";

/// The JSON floor: an intercept and its answer as typed serde structs, the least JSON work any
/// implementation of the exchange does (encode the request, parse it, encode the answer, parse
/// it), with none of the protocol's strict checks and no JSON-RPC framework.
mod json_floor {
    use serde::{Deserialize, Serialize};
    use sidewire_ext_protocol::HookPayload;

    /// The request as the host writes it, around the caller's payload.
    #[derive(Serialize)]
    pub(crate) struct Outgoing<'a> {
        pub(crate) jsonrpc: &'static str,
        pub(crate) id: u64,
        pub(crate) method: &'static str,
        pub(crate) params: OutgoingParams<'a>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct OutgoingParams<'a> {
        pub(crate) event: &'static str,
        pub(crate) seq: u64,
        pub(crate) payload: &'a HookPayload,
        pub(crate) timeout_millis: u64,
    }

    /// The request as the sidecar reads it: borrowed, unknown members refused. Only `id` is
    /// used; the rest is read so that the parse is whole.
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub(crate) struct Request<'a> {
        pub(crate) jsonrpc: &'a str,
        pub(crate) id: u64,
        pub(crate) method: &'a str,
        #[serde(borrow)]
        pub(crate) params: Params<'a>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    pub(crate) struct Params<'a> {
        pub(crate) event: &'a str,
        pub(crate) seq: u64,
        #[serde(borrow)]
        pub(crate) payload: Payload<'a>,
        pub(crate) timeout_millis: u64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub(crate) struct Payload<'a> {
        #[serde(borrow)]
        pub(crate) text: std::borrow::Cow<'a, str>,
    }

    #[derive(Serialize, Deserialize)]
    pub(crate) struct Response<'a> {
        pub(crate) jsonrpc: &'a str,
        pub(crate) id: u64,
        #[serde(borrow)]
        pub(crate) result: Answer<'a>,
    }

    #[derive(Serialize, Deserialize)]
    pub(crate) struct Answer<'a> {
        pub(crate) decision: &'a str,
    }

    /// Writes the request line of intercept `id` into `dst` (cleared first).
    pub(crate) fn request_line(id: u64, payload: &HookPayload, dst: &mut Vec<u8>) {
        dst.clear();
        let request = Outgoing {
            jsonrpc: "2.0",
            id,
            method: "extension/intercept",
            params: OutgoingParams {
                event: "input.receive",
                seq: id,
                payload,
                timeout_millis: 5000,
            },
        };
        serde_json::to_writer(&mut *dst, &request).expect("a request serializes");
        dst.push(b'\n');
    }

    /// Writes the `continue` answer line to request `id` into `dst` (cleared first).
    pub(crate) fn answer_line(id: u64, dst: &mut Vec<u8>) {
        dst.clear();
        let response = Response {
            jsonrpc: "2.0",
            id,
            result: Answer {
                decision: "continue",
            },
        };
        serde_json::to_writer(&mut *dst, &response).expect("an answer serializes");
        dst.push(b'\n');
    }
}

/// The structural floor: the JSON floor's exchange, done the way a peer that multiplexes
/// concurrent requests with deadlines does it (the shape of sidewire's own, and of rmcp's and
/// the SDKs'), and nothing more. The host's reader is a task of its own (frames must be read
/// while no caller waits: notifications, requests, late answers) that finds the caller in a
/// pending map and hands it the answer through a oneshot; the caller awaits it under a
/// deadline. The child's one task reads requests and polls each one's handler among those in
/// flight (a callback is the author's async code and must not stop the reading), writing an
/// answer when its handler finishes. No strict decoding, no limits, no cancellation, no
/// audit.
mod mux_floor {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use sidewire_ext_protocol::HookPayload;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::sync::oneshot;

    use super::json_floor;

    /// The host's side: the writer, the pending map, the id counter.
    pub(crate) struct Host {
        stdin: tokio::sync::Mutex<tokio::process::ChildStdin>,
        pending: Mutex<HashMap<u64, oneshot::Sender<bool>>>,
        next: AtomicU64,
    }

    impl Host {
        /// Starts the reader task on `lines`.
        pub(crate) fn start(
            stdin: tokio::process::ChildStdin,
            mut lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
        ) -> std::sync::Arc<Host> {
            let host = std::sync::Arc::new(Host {
                stdin: tokio::sync::Mutex::new(stdin),
                pending: Mutex::new(HashMap::new()),
                next: AtomicU64::new(0),
            });
            let reader = std::sync::Arc::clone(&host);
            tokio::spawn(async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    let answer: json_floor::Response<'_> = serde_json::from_str(&line).unwrap();
                    let waiter = reader.pending.lock().unwrap().remove(&answer.id);
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(answer.result.decision == "continue");
                    }
                }
            });
            host
        }

        /// One intercept: registered, written, awaited under its deadline.
        pub(crate) async fn intercept(&self, payload: &HookPayload, frame: &mut Vec<u8>) {
            let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            let (tx, rx) = oneshot::channel();
            self.pending.lock().unwrap().insert(id, tx);
            json_floor::request_line(id, payload, frame);
            {
                let mut stdin = self.stdin.lock().await;
                stdin.write_all(frame).await.unwrap();
                stdin.flush().await.unwrap();
            }
            let answer = tokio::time::timeout(Duration::from_millis(5000), rx).await;
            assert!(matches!(answer, Ok(Ok(true))));
        }
    }

    /// The child: one task that reads requests, polls each request's handler among the
    /// others in flight, and writes each answer as its handler finishes.
    pub(crate) async fn child() -> std::process::ExitCode {
        use futures_util::StreamExt as _;
        use futures_util::stream::FuturesUnordered;

        let (reader, mut out) = sidewire_benches::stdio_pipes();
        let mut lines = BufReader::new(reader).lines();
        let mut handlers = FuturesUnordered::new();
        let mut answer = Vec::with_capacity(128);
        loop {
            tokio::select! {
                line = lines.next_line() => {
                    let Ok(Some(line)) = line else { break };
                    let Ok(request) = serde_json::from_str::<json_floor::Request<'_>>(&line)
                    else {
                        return std::process::ExitCode::FAILURE;
                    };
                    // The handler gets its payload owned, as a callback does.
                    let (id, text) = (request.id, request.params.payload.text.into_owned());
                    handlers.push(async move {
                        std::hint::black_box(text);
                        id
                    });
                }
                Some(id) = handlers.next() => {
                    json_floor::answer_line(id, &mut answer);
                    let _ = out.write_all(&answer).await;
                    let _ = out.flush().await;
                }
            }
        }
        std::process::ExitCode::SUCCESS
    }
}

fn payload() -> HookPayload {
    HookPayload::Input(InputPayload {
        text: "fix teh tests in the parser module please".to_owned(),
    })
}

/// The children: an echoing pipe, the floors' children, a no-op SDK sidecar, or a replay
/// sidecar.
fn child(role: &str) -> std::process::ExitCode {
    if let Some(shape) = role.strip_prefix(REPLAY) {
        let shape = InterceptShape::from_name(shape).expect("a replay shape");
        return sidewire_benches::sidecars::serve_replay(shape);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match role {
        "echo" => runtime.block_on(async {
            // Non-blocking pipes, as the SDK uses (see `stdio_pipes`).
            let (reader, mut out) = sidewire_benches::stdio_pipes();
            let mut lines = BufReader::new(reader).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = out.write_all(line.as_bytes()).await;
                let _ = out.write_all(b"\n").await;
                let _ = out.flush().await;
            }
            std::process::ExitCode::SUCCESS
        }),
        "json" => runtime.block_on(async {
            // The JSON floor's sidecar: each line parsed into typed, borrowed structs and the
            // answer serialized, with serde alone (no strict checks, no framework).
            let (reader, mut out) = sidewire_benches::stdio_pipes();
            let mut lines = BufReader::new(reader).lines();
            let mut answer = Vec::with_capacity(128);
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(request) = serde_json::from_str::<json_floor::Request<'_>>(&line) else {
                    return std::process::ExitCode::FAILURE;
                };
                std::hint::black_box(&request);
                json_floor::answer_line(request.id, &mut answer);
                let _ = out.write_all(&answer).await;
                let _ = out.flush().await;
            }
            std::process::ExitCode::SUCCESS
        }),
        "mux" => runtime.block_on(mux_floor::child()),
        _ => {
            use sidewire_ext_sdk::{Decision, Extension, Options, point, serve_main};
            let extension = Extension::new("noop", "1.0.0").on_intercept(
                point::INPUT_RECEIVE,
                |_ctx, _input: InputPayload| async move { Ok(Decision::Continue) },
            );
            runtime.block_on(serve_main(extension, Options::new()))
        }
    }
}

/// Installs plugin `name`, whose sidecar is this binary in `role`.
fn install(store: &PluginStore, dir: &std::path::Path, name: &str, role: &str) {
    let root = dir.join(name);
    std::fs::create_dir_all(&root).unwrap();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v1", "name": name, "version": "1.0.0",
        "runtime": {
            "command": std::env::current_exe().unwrap().display().to_string(),
            "env": {ROLE: role},
            "intercepts": ["input.receive"], "capabilities": ["interceptors"],
        },
    });
    std::fs::write(
        root.join(sidewire_ext_protocol::MANIFEST_FILE),
        manifest.to_string(),
    )
    .unwrap();
    store.install(&root, InstallOptions::link()).unwrap();
}

/// The host booted with `sidecars` plugins whose sidecars run in `role`.
async fn boot(sidecars: usize, role: &str) -> (ExtensionHost, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let store = PluginStore::new(&state);
    for i in 0..sidecars {
        install(&store, dir.path(), &format!("noop{i}"), role);
    }
    let (runtime, _events) = ExtensionHost::boot(HostConfig::new(&state, "bench", dir.path()))
        .await
        .unwrap();
    (runtime, dir)
}

/// A `tool.before` payload of a small shell call, as a model would ask for one.
fn tool_before() -> HookPayload {
    HookPayload::ToolBefore(sidewire_ext_protocol::ToolBeforePayload {
        name: "mcp__shell__run".to_owned(),
        arguments: r#"{"command":"cargo test -p parser"}"#.to_owned(),
        call_id: "call-1".to_owned(),
    })
}

/// The host booted with no sidecar and one user PreToolUse hook running `command`.
async fn boot_with_hook(command: &str) -> (ExtensionHost, tempfile::TempDir) {
    use sidewire_hooks::{Armed, HookDialect, HookFiles, HookRunner, RunContext, Scope, Source};
    let dir = tempfile::tempdir().unwrap();
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*",
        "hooks": [{"type": "command", "command": command}]}]}});
    let mut files = HookFiles::default();
    let source = Source {
        path: dir.path().join(".claude/settings.json"),
        scope: Scope::User,
        dialect: HookDialect::ClaudeCode,
    };
    files.add(&settings.to_string(), source).unwrap();
    let armed = (files.hooks.into_iter())
        .map(|hook| Armed {
            hook,
            required: false,
        })
        .collect();
    let runner = HookRunner::new(armed, RunContext::new(dir.path()), "bench");
    let member = std::sync::Arc::new(sidewire_agent::HooksMember::new(runner));
    let config = HostConfig::new(dir.path().join("state"), "bench", dir.path()).member(member);
    let (runtime, _events) = ExtensionHost::boot(config).await.unwrap();
    (runtime, dir)
}

/// `iters` `input.receive` intercepts through `runtime`, one after another, timed; the payloads
/// are the caller's, built before the clock starts.
fn intercepts(
    runtime: &ExtensionHost,
    iters: u64,
) -> impl std::future::Future<Output = Duration> + Send + 'static {
    let runtime = runtime.clone();
    let payloads: Vec<HookPayload> = (0..iters).map(|_| payload()).collect();
    async move {
        let started = Instant::now();
        for payload in payloads {
            let outcome = runtime
                .intercept(HookPoint::InputReceive, payload)
                .await
                .unwrap();
            drop(std::hint::black_box(outcome));
        }
        started.elapsed()
    }
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("intercept");
    group.measurement_time(Duration::from_secs(5));

    // The floor: one line out and one back through a child's pipes, the same size as an
    // intercept frame and its answer. `pipe_floor_4` sends it through 4 children in turn, the
    // floor of a chain of 4: five processes taking turns on the CPU cost more per hop than two
    // (each hop finds less of its process in the caches), which no host work can remove.
    for children in [1, 4] {
        let (pipes, mut spawned) = rt.block_on(async {
            let mut pipes = Vec::new();
            let mut spawned = Vec::new();
            for _ in 0..children {
                let (child, stdin, lines) = sidewire_benches::spawn_self(ROLE, "echo");
                pipes.push((stdin, lines));
                spawned.push(child);
            }
            (std::sync::Arc::new(tokio::sync::Mutex::new(pipes)), spawned)
        });
        let line = format!(
            "{}\n",
            json!({"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{
                "event":"input.receive","seq":1,"payload":{"text":"fix teh tests in the parser module please"},
                "timeoutMillis":5000}})
        );
        // Timed in a task on the runtime, as the host's callers run (an agent's turn is a
        // task); `_off_runtime` times the same loop on the thread blocking on the runtime,
        // where every wake-up crosses threads.
        let floor = |iters: u64| {
            let pipes = std::sync::Arc::clone(&pipes);
            let line = line.clone();
            async move {
                // Locked once per sample, outside the timed loop.
                let mut pipes = pipes.lock().await;
                let started = Instant::now();
                for _ in 0..iters {
                    for (stdin, lines) in pipes.iter_mut() {
                        stdin.write_all(line.as_bytes()).await.unwrap();
                        stdin.flush().await.unwrap();
                        std::hint::black_box(lines.next_line().await.unwrap().unwrap());
                    }
                }
                started.elapsed()
            }
        };
        let name = match children {
            1 => "pipe_floor".to_owned(),
            n => format!("pipe_floor_{n}"),
        };
        group.bench_function(&name, |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(floor(iters))).unwrap())
        });
        if children == 1 {
            group.bench_function("pipe_floor_off_runtime", |b| {
                b.iter_custom(|iters| rt.block_on(floor(iters)))
            });
        }
        rt.block_on(async {
            drop(pipes);
            for child in &mut spawned {
                let _ = child.wait().await;
            }
        });
    }

    // The JSON floor: the same pipes, with the least JSON work an intercept needs on both
    // sides (see `json_floor`); between the pipe floor and one sidecar, it shows how much of
    // the gap is the JSON any implementation parses and writes.
    {
        let (pipe, mut spawned) = rt.block_on(async {
            let (child, stdin, lines) = sidewire_benches::spawn_self(ROLE, "json");
            (
                std::sync::Arc::new(tokio::sync::Mutex::new((stdin, lines, 0u64))),
                child,
            )
        });
        let round_trips = |iters: u64| {
            let pipe = std::sync::Arc::clone(&pipe);
            // The payloads are the caller's, built outside the timed loop, as below.
            let payloads: Vec<HookPayload> = (0..iters).map(|_| payload()).collect();
            async move {
                let mut pipe = pipe.lock().await;
                let (stdin, lines, id) = &mut *pipe;
                let mut frame = Vec::with_capacity(256);
                let started = Instant::now();
                for payload in &payloads {
                    *id += 1;
                    json_floor::request_line(*id, payload, &mut frame);
                    stdin.write_all(&frame).await.unwrap();
                    stdin.flush().await.unwrap();
                    let line = lines.next_line().await.unwrap().unwrap();
                    let answer: json_floor::Response<'_> = serde_json::from_str(&line).unwrap();
                    assert!(answer.id == *id && answer.result.decision == "continue");
                }
                started.elapsed()
            }
        };
        group.bench_function("json_floor", |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(round_trips(iters))).unwrap())
        });
        rt.block_on(async {
            drop(pipe);
            let _ = spawned.wait().await;
        });
    }

    // The structural floor (see `mux_floor`): the JSON floor plus what multiplexing with
    // deadlines takes on both sides, between the JSON floor and one sidecar.
    {
        let (host, mut spawned) = rt.block_on(async {
            let (child, stdin, lines) = sidewire_benches::spawn_self(ROLE, "mux");
            (mux_floor::Host::start(stdin, lines), child)
        });
        let round_trips = |iters: u64| {
            let host = std::sync::Arc::clone(&host);
            let payloads: Vec<HookPayload> = (0..iters).map(|_| payload()).collect();
            async move {
                let mut frame = Vec::with_capacity(256);
                let started = Instant::now();
                for payload in &payloads {
                    host.intercept(payload, &mut frame).await;
                }
                started.elapsed()
            }
        };
        group.bench_function("mux_floor", |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(round_trips(iters))).unwrap())
        });
        rt.block_on(async {
            drop(host);
            let _ = spawned.start_kill();
            let _ = spawned.wait().await;
        });
    }

    for sidecars in [1, 4] {
        let (runtime, dir) = rt.block_on(boot(sidecars, "noop"));
        group.bench_function(format!("sidecars_{sidecars}"), |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(intercepts(&runtime, iters))).unwrap())
        });
        if sidecars == 1 {
            group.bench_function("sidecars_1_off_runtime", |b| {
                b.iter_custom(|iters| rt.block_on(intercepts(&runtime, iters)))
            });
        }
        if sidecars == 1 {
            // Host-only: a point nobody subscribes to (the payload is built outside the
            // measurement; it is the caller's).
            group.bench_function("no_subscriber", |b| {
                b.to_async(&rt).iter_batched(
                    payload,
                    |payload| {
                        let runtime = &runtime;
                        async move {
                            runtime
                                .intercept(HookPoint::ToolBefore, payload)
                                .await
                                .unwrap()
                        }
                    },
                    BatchSize::SmallInput,
                )
            });
        }
        rt.block_on(runtime.shutdown());
        drop(dir);
    }

    // Command hooks (`sidewire-hooks` through `sidewire-agent`'s `HooksMember`): one
    // PreToolUse hook `true` per `tool.before`, against the floor of forking `sh -c true`
    // (pipes on its stdin and stdout, as a hook has) and waiting for it, in the same run, beside
    // `sidecars_1` above: what a persistent sidecar saves over a process per call.
    {
        let shell_floor = |iters: u64| async move {
            let started = Instant::now();
            for _ in 0..iters {
                let status = tokio::process::Command::new("/bin/sh")
                    .args(["-c", "true"])
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .status()
                    .await
                    .unwrap();
                assert!(status.success());
            }
            started.elapsed()
        };
        group.bench_function("sh_true_floor", |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(shell_floor(iters))).unwrap())
        });
        // The same through `sidewire-process`, as a hook is started: its own process group and
        // a parent-death signal, set between fork and exec (so no `posix_spawn`), supervised.
        let supervised_floor = |iters: u64| async move {
            let started = Instant::now();
            for _ in 0..iters {
                let mut command = sidewire_process::Command::new("/bin/sh");
                command.args(["-c", "true"]);
                let sidewire_process::Spawned {
                    process,
                    stdin,
                    stdout,
                    supervise,
                } = command.spawn().unwrap();
                drop((stdin, stdout));
                let monitor = process.monitor();
                let (exit, _) = tokio::join!(monitor.exited(), supervise);
                assert_eq!(exit.code(), Some(0));
            }
            started.elapsed()
        };
        group.bench_function("sh_true_supervised_floor", |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(supervised_floor(iters))).unwrap())
        });
        let (runtime, dir) = rt.block_on(boot_with_hook("true"));
        let calls = |iters: u64| {
            let runtime = runtime.clone();
            let payloads: Vec<HookPayload> = (0..iters).map(|_| tool_before()).collect();
            async move {
                let started = Instant::now();
                for payload in payloads {
                    let outcome = runtime
                        .intercept(HookPoint::ToolBefore, payload)
                        .await
                        .unwrap();
                    assert!(outcome.trace[0].notes.len() == 1, "the hook ran");
                    drop(std::hint::black_box(outcome));
                }
                started.elapsed()
            }
        };
        group.bench_function("hook_true", |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(calls(iters))).unwrap())
        });
        rt.block_on(runtime.shutdown());
        drop(dir);
    }

    // One sidecar per byte shape, replaying that SDK's answers (see the module docs).
    for shape in InterceptShape::ALL {
        let (runtime, dir) = rt.block_on(boot(1, &format!("{REPLAY}{}", shape.name())));
        group.bench_function(format!("replay_{}", shape.name()), |b| {
            b.iter_custom(|iters| rt.block_on(rt.spawn(intercepts(&runtime, iters))).unwrap())
        });
        rt.block_on(runtime.shutdown());
        drop(dir);
    }
    group.finish();

    // Spawn + handshake: a whole boot of one sidecar, p50/p95 over 30 runs.
    let mut samples: Vec<Duration> = (0..30)
        .map(|_| {
            rt.block_on(async {
                let dir = tempfile::tempdir().unwrap();
                let state = dir.path().join("state");
                install(&PluginStore::new(&state), dir.path(), "noop", "noop");
                let started = Instant::now();
                let (runtime, _events) =
                    ExtensionHost::boot(HostConfig::new(&state, "bench", dir.path()))
                        .await
                        .unwrap();
                let took = started.elapsed();
                runtime.shutdown().await;
                took
            })
        })
        .collect();
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    #[allow(clippy::print_stdout)]
    {
        println!(
            "spawn+handshake (boot of one sidecar): p50 {:?}, p95 {:?}",
            at(0.5),
            at(0.95)
        );
    }
}

fn main() -> std::process::ExitCode {
    if let Ok(role) = std::env::var(ROLE) {
        return child(&role);
    }
    let mut criterion = Criterion::default().configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
    std::process::ExitCode::SUCCESS
}
