//! How the extension host's costs grow with its sidecars: 1, 4 and 16 no-op Rust sidecars (the
//! SDK answering `continue`): boot time (the host starts at most 4 at once), one
//! `input.receive` intercept through a chain of all N, and the idle memory per sidecar
//! connection, the host's (RSS and bytes live, the counting allocator) and each sidecar
//! process's own (`/proc/<pid>/status`) apart.
//!
//! Not a criterion bench: each figure is a one-shot cost against a count (see
//! `sidewire_benches::scale`). It prints a table and writes
//! `target/criterion/scale/scale_ext.json` for `benches/charts.py`. The runtime is a one-worker
//! multi-thread Tokio runtime, as in the intercept bench.

use std::time::{Duration, Instant};

use sidewire_benches::scale::{self, Report, human_bytes, median, quantile};
use sidewire_benches::sidecars;
use sidewire_ext_protocol::HookPoint;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static ALLOC: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

fn main() -> std::process::ExitCode {
    if sidecars::is_sidecar() {
        return sidecars::serve();
    }
    let smoke = scale::smoke();
    let (counts, boots, intercepts): (&[usize], usize, usize) = if smoke {
        (&[1, 4], 1, 10)
    } else {
        (&[1, 4, 16], 5, 2_000)
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    // One boot outside the figures: the runtime's threads and the first spawn are one-time costs.
    {
        let (config, _dir) = sidecars::store(1);
        let runtime = rt.block_on(sidecars::boot(config));
        rt.block_on(runtime.shutdown());
    }
    let mut report = Report::new("scale_ext");
    report.table(&[
        "sidecars",
        "boot (median)",
        "intercept through the chain, p50",
        "p99",
        "per sidecar (p50)",
        "host RSS Δ per sidecar",
        "host bytes live per sidecar",
        "sidecar RSS (each)",
    ]);
    for &n in counts {
        let mut boot_ms = Vec::new();
        let mut host_rss = Vec::new();
        let mut host_live = Vec::new();
        let mut child_rss = Vec::new();
        let mut latencies: Vec<Duration> = Vec::new();
        for run in 0..boots {
            let (config, dir) = sidecars::store(n);
            let (rss0, live0) = (scale::own_rss(), scale::live_bytes());
            let started = Instant::now();
            let runtime = rt.block_on(sidecars::boot(config));
            boot_ms.push(started.elapsed().as_secs_f64() * 1e3);
            let (rss1, live1) = (scale::own_rss(), scale::live_bytes());
            let running = runtime.sidecars();
            assert_eq!(running.len(), n, "every sidecar runs");
            assert!(running.iter().all(|s| s.ready), "every sidecar is ready");
            let pids: Vec<u32> = running.iter().map(|s| s.pid).collect();
            host_rss.push((rss1 as f64 - rss0 as f64) / n as f64);
            host_live.push((live1 - live0) as f64 / n as f64);
            child_rss.push(scale::rss_sum(&pids) as f64 / n as f64);
            // The chain is timed on the first boot only: the others are for the boot figures.
            if run == 0 {
                latencies = rt.block_on(async {
                    let mut latencies = Vec::with_capacity(intercepts);
                    for _ in 0..intercepts {
                        let started = Instant::now();
                        let outcome = runtime
                            .intercept(HookPoint::InputReceive, sidecars::payload())
                            .await
                            .expect("the intercept runs");
                        latencies.push(started.elapsed());
                        assert!(outcome.blocked.is_none(), "no sidecar blocks");
                    }
                    latencies
                });
            }
            rt.block_on(runtime.shutdown());
            drop(dir);
        }
        let boot = median(&mut boot_ms);
        let (rss, live, child) = (
            median(&mut host_rss),
            median(&mut host_live),
            median(&mut child_rss),
        );
        let p50 = quantile(&mut latencies, 0.5).as_secs_f64() * 1e6;
        let p99 = quantile(&mut latencies, 0.99).as_secs_f64() * 1e6;
        let x = n as f64;
        report
            .chart("ext_boot_time", "Extension host boot", "sidecars", "ms")
            .point("sidewire ExtensionHost::boot", x, boot);
        // p50 only: on a shared machine p99 is the scheduler's (it is in the table).
        report
            .chart(
                "ext_chain_intercept",
                "One intercept through a chain of N sidecars (p50)",
                "sidecars",
                "µs",
            )
            .point("sidewire ExtensionHost::intercept", x, p50);
        let memory = report.chart(
            "ext_memory_per_sidecar",
            "Extension host: idle memory per sidecar",
            "sidecars",
            "KiB per sidecar",
        );
        memory.point("host RSS Δ", x, rss / 1024.0);
        memory.point("host bytes live", x, live / 1024.0);
        memory.point("sidecar process RSS", x, child / 1024.0);
        report.row(vec![
            n.to_string(),
            format!("{boot:.1} ms"),
            format!("{p50:.1} µs"),
            format!("{p99:.1} µs"),
            format!("{:.1} µs", p50 / x),
            human_bytes(rss),
            human_bytes(live),
            human_bytes(child),
        ]);
    }
    report.finish();
    std::process::ExitCode::SUCCESS
}
