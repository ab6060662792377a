//! The cost of draining a child's stderr: a stderr flood read through `sidewire-process`'s
//! supervision (raw ring tail, redaction only at snapshot time), with and without per-line
//! forwarding configured (no subscriber, the usual case), against a plain read-and-discard
//! drain of the same child's stderr, in the same run.
//!
//! A fourth case turns forwarding on for real (a subscriber that enables the stderr target and
//! counts events), which splits and redacts every line: that is the debug-logging cost, not the
//! default one.
//!
//! The child is this very binary, re-executed with `SIDEWIRE_BENCH_STDERR_FLOOD=<bytes>`: it
//! writes that many bytes of ~60-byte log lines (some carrying a `token=` pair) to stderr in
//! 1 MiB writes and exits. Both drains read 64 KiB at a time, so the difference is what the
//! tail costs.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use tokio::io::AsyncReadExt;
use tokio::runtime::Runtime;

/// Set in the environment of the re-executed binary: write this many bytes to stderr.
const FLOOD_ENV: &str = "SIDEWIRE_BENCH_STDERR_FLOOD";

/// Bytes per flood: 256 MiB (the per-GiB cost is 4× one iteration).
const FLOOD_BYTES: usize = 256 * 1024 * 1024;

fn main() {
    if let Some(bytes) = std::env::var_os(FLOOD_ENV) {
        flood(
            bytes
                .to_str()
                .and_then(|b| b.parse().ok())
                .expect("a byte count"),
        );
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

/// Writes `total` bytes of log lines to stderr.
fn flood(total: usize) {
    let mut block = Vec::with_capacity(1024 * 1024 + 128);
    let mut i = 0u64;
    while block.len() < 1024 * 1024 {
        i += 1;
        let line = if i.is_multiple_of(8) {
            format!("warn request {i} failed: token=abc{i} retrying soon\n")
        } else {
            format!("info handled request {i} in 3 ms from 127.0.0.1\n")
        };
        block.extend_from_slice(line.as_bytes());
    }
    let mut stderr = std::io::stderr().lock();
    let mut left = total;
    while left > 0 {
        let n = left.min(block.len());
        stderr.write_all(&block[..n]).expect("write stderr");
        left -= n;
    }
}

fn flood_child_path() -> std::path::PathBuf {
    std::env::current_exe().expect("the bench binary")
}

/// The floor: the same child, its stderr read and discarded 64 KiB at a time.
async fn plain_drain(bytes: usize) -> u64 {
    let mut child = tokio::process::Command::new(flood_child_path())
        .env(FLOOD_ENV, bytes.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = child.stderr.take().expect("stderr");
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n as u64,
        }
    }
    child.wait().await.expect("wait");
    total
}

/// Through sidewire-process: spawn, supervise (drain into the tail), take the tail.
async fn supervised(bytes: usize, forward: bool) -> usize {
    let mut command = sidewire_process::Command::new(flood_child_path());
    command.env(FLOOD_ENV, bytes.to_string());
    if forward {
        command.forward_stderr("bench");
    }
    let spawned = command.spawn().expect("spawn");
    drop(spawned.stdin);
    let exit = spawned.supervise.await;
    assert!(exit.success(), "{exit}");
    spawned.process.stderr_tail().len()
}

fn stderr_flood(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("stderr_flood_256mib");
    group.throughput(Throughput::Bytes(FLOOD_BYTES as u64));
    group.bench_function("plain_drain", |b| {
        b.iter(|| assert_eq!(block(&rt, plain_drain(FLOOD_BYTES)), FLOOD_BYTES as u64))
    });
    group.bench_function("sidewire_tail", |b| {
        b.iter(|| assert!(block(&rt, supervised(FLOOD_BYTES, false)) > 0))
    });
    group.bench_function("sidewire_tail_forwarding_off", |b| {
        b.iter(|| assert!(block(&rt, supervised(FLOOD_BYTES, true)) > 0))
    });
    group.bench_function("sidewire_tail_forwarding_on", |b| {
        let _guard = tracing::subscriber::set_default(CountLines::default());
        b.iter(|| assert!(block(&rt, supervised(FLOOD_BYTES, true)) > 0))
    });
    group.finish();
}

/// A subscriber that enables only the forwarded stderr lines and counts them.
#[derive(Default)]
struct CountLines(std::sync::atomic::AtomicU64);

impl tracing::Subscriber for CountLines {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == sidewire_process::STDERR_TARGET
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn block<F: Future>(rt: &Runtime, future: F) -> F::Output {
    rt.block_on(future)
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .warm_up_time(Duration::from_secs(1));
    targets = stderr_flood
}
