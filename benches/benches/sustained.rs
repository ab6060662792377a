//! Sustained load on the extension host: 10,000 `input.receive` intercepts through a chain of
//! 4 no-op Rust sidecars, from 1 and from 8 concurrent turns (each a task holding one
//! `ExtensionHost::turn` and taking intercepts from a shared count until all are done): p50/p99
//! latency, throughput, and a leak check, the host's bytes live (the counting allocator) and
//! RSS after each thousand, the first thousand's against the last's.
//!
//! Not a criterion bench (see `sidewire_benches::scale`): it prints a table and writes
//! `target/criterion/scale/sustained.json` for `benches/charts.py`. Every buffer the bench
//! itself fills is allocated before the run, so the bytes-live figures are the host's. The
//! runtime is a one-worker multi-thread Tokio runtime, as in the intercept bench.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sidewire_benches::scale::{self, Report, human_bytes, quantile};
use sidewire_benches::sidecars;
use sidewire_ext_protocol::HookPoint;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static ALLOC: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const SIDECARS: usize = 4;

/// One memory sample: after `done` intercepts, the host's bytes live and RSS.
#[derive(Clone, Copy)]
struct Sample {
    done: usize,
    live: i64,
    rss: u64,
}

/// What one run measured.
struct Run {
    elapsed: Duration,
    /// (the intercept's completion rank, its latency), every intercept.
    latencies: Vec<(usize, Duration)>,
    samples: Vec<Sample>,
}

fn run(
    rt: &tokio::runtime::Runtime,
    runtime: &sidewire_ext_host::ExtensionHost,
    total: usize,
    turns: usize,
) -> Run {
    let step = (total / 10).max(1);
    let done = Arc::new(AtomicUsize::new(0));
    let issued = Arc::new(AtomicUsize::new(0));
    let samples = Arc::new(std::sync::Mutex::new(Vec::with_capacity(total / step + 2)));
    let started = Instant::now();
    let workers: Vec<_> = (0..turns)
        .map(|_| {
            let (runtime, done, issued, samples) = (
                runtime.clone(),
                Arc::clone(&done),
                Arc::clone(&issued),
                Arc::clone(&samples),
            );
            rt.spawn(async move {
                let mut latencies = Vec::with_capacity(total);
                let turn = runtime.turn().await;
                while issued.fetch_add(1, Ordering::Relaxed) < total {
                    let at = Instant::now();
                    let outcome = turn
                        .intercept(HookPoint::InputReceive, sidecars::payload())
                        .await
                        .expect("the intercept runs");
                    let took = at.elapsed();
                    assert!(outcome.blocked.is_none(), "no sidecar blocks");
                    drop(outcome);
                    let rank = done.fetch_add(1, Ordering::Relaxed) + 1;
                    latencies.push((rank, took));
                    if rank % step == 0 {
                        let sample = Sample {
                            done: rank,
                            live: scale::live_bytes(),
                            rss: scale::own_rss(),
                        };
                        samples.lock().expect("the samples").push(sample);
                    }
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(total);
    for worker in workers {
        latencies.extend(rt.block_on(worker).expect("the worker"));
    }
    let elapsed = started.elapsed();
    let mut samples = samples.lock().expect("the samples").clone();
    samples.sort_by_key(|s| s.done);
    Run {
        elapsed,
        latencies,
        samples,
    }
}

fn main() -> std::process::ExitCode {
    if sidecars::is_sidecar() {
        return sidecars::serve();
    }
    let smoke = scale::smoke();
    let total = if smoke { 200 } else { 10_000 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let (config, dir) = sidecars::store(SIDECARS);
    let runtime = rt.block_on(sidecars::boot(config));
    assert_eq!(runtime.sidecars().len(), SIDECARS, "every sidecar runs");
    // A short warm-up outside the figures (the sidecars' and the host's first buffers).
    let _ = run(&rt, &runtime, total / 10, 1);
    let mut report = Report::new("sustained");
    report.table(&[
        "concurrent turns",
        "intercepts",
        "p50",
        "p99",
        "throughput",
        "bytes live, first → last thousand",
        "RSS, first → last thousand",
    ]);
    for turns in [1usize, 8] {
        let Run {
            elapsed,
            latencies,
            samples,
        } = run(&rt, &runtime, total, turns);
        let mut all: Vec<Duration> = latencies.iter().map(|&(_, d)| d).collect();
        let p50 = quantile(&mut all, 0.5).as_secs_f64() * 1e6;
        let p99 = quantile(&mut all, 0.99).as_secs_f64() * 1e6;
        let per_second = total as f64 / elapsed.as_secs_f64();
        let series = format!(
            "{turns} concurrent turn{}",
            if turns == 1 { "" } else { "s" }
        );
        // p50 per tenth of the run: flat when nothing accumulates.
        let step = (total / 10).max(1);
        for tenth in 0..10 {
            let mut part: Vec<Duration> = (latencies.iter())
                .filter(|&&(rank, _)| (rank - 1) / step == tenth)
                .map(|&(_, d)| d)
                .collect();
            if part.is_empty() {
                continue;
            }
            let x = ((tenth + 1) * step) as f64;
            report
                .chart(
                    "sustained_latency",
                    "Sustained load through 4 sidecars: p50 per thousand intercepts",
                    "intercepts done",
                    "µs",
                )
                .point(&series, x, quantile(&mut part, 0.5).as_secs_f64() * 1e6);
        }
        for sample in &samples {
            report
                .chart(
                    "sustained_memory",
                    "Sustained load: host bytes live after each thousand intercepts",
                    "intercepts done",
                    "KiB",
                )
                .point(&series, sample.done as f64, sample.live as f64 / 1024.0);
        }
        let (first, last) = (samples.first().copied(), samples.last().copied());
        let (live, rss) = match (first, last) {
            (Some(first), Some(last)) => (
                format!(
                    "{} → {} ({:+} B)",
                    human_bytes(first.live as f64),
                    human_bytes(last.live as f64),
                    last.live - first.live
                ),
                format!(
                    "{} → {}",
                    human_bytes(first.rss as f64),
                    human_bytes(last.rss as f64)
                ),
            ),
            _ => (String::from("-"), String::from("-")),
        };
        report.row(vec![
            turns.to_string(),
            total.to_string(),
            format!("{p50:.1} µs"),
            format!("{p99:.1} µs"),
            format!("{per_second:.0} /s"),
            live,
            rss,
        ]);
    }
    rt.block_on(runtime.shutdown());
    drop(dir);
    report.finish();
    std::process::ExitCode::SUCCESS
}
