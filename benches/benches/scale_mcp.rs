//! How the MCP host's costs grow with the work: starting 1, 8, 32 and 64 stdio servers (the
//! built-in `sidewire __mcp-server`), and listing 100, 1,000 and 10,000 tools.
//!
//! Not a criterion bench: each figure is a one-shot cost against a count (see
//! `sidewire_benches::scale`). It prints a table and writes
//! `target/criterion/scale/scale_mcp.json` for `benches/charts.py`.
//!
//! - **Host start**: `McpHost::start_all` of N servers, timed to all ready (each started and its
//!   lists fetched), from a fresh host each run; the host's RSS and bytes live (the counting
//!   allocator) before and after, per server; the servers' own RSS (`/proc/<pid>/status`, the
//!   pids from `McpHost::status`). The host starts at most `MAX_PARALLEL_STARTS` (8) at once,
//!   so 64 servers should take about 8 times the 8-server time, not more. Needs the release
//!   `sidewire` (`$SIDEWIRE_BIN`, else `target/release/sidewire`); without it this part prints
//!   `SKIPPED:`.
//! - **tools/list**: one server offering N tools, started through an `McpHost` (which lists
//!   them and caches the list); the host's bytes live and RSS after the start less before, per
//!   tool, and the time of a re-list (`Client::list_tools`, 1,000 tools a page). Two fixtures:
//!   minimal tools (`{"name":"tool_0000001","inputSchema":{"type":"object"}}`, served by this
//!   binary re-executed with `SIDEWIRE_BENCH_TOOLS=N`) and the built-in server's realistic
//!   ~800-byte tools (`__mcp-server --many-tools N`, when the release binary is there).
//!   With the minimal fixture, also the time of one `tools/call` of the last tool listed
//!   (the client looks the tool up in its cache on every call: that must not grow with N).
//!
//! The runtime is a one-worker multi-thread Tokio runtime, as in the intercept bench.

use std::io::BufWriter;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidewire_benches::scale::{self, Report, human_bytes, median, say};
use sidewire_mcp::{McpHost, NoHandler, ServerSpec};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static ALLOC: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Set in the re-executed binary: serve this many minimal tools.
const TOOLS_ENV: &str = "SIDEWIRE_BENCH_TOOLS";
/// A fixture: the spec of its server offering N tools.
type SpecFor<'a> = Box<dyn Fn(usize) -> ServerSpec + 'a>;

/// Tools per page, both fixtures.
const PAGE: usize = 1_000;

fn main() {
    if let Some(count) = std::env::var(TOOLS_ENV).ok().and_then(|n| n.parse().ok()) {
        serve_minimal_tools(count);
        return;
    }
    let smoke = scale::smoke();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut report = Report::new("scale_mcp");
    let bin = scale::sidewire_bin();
    match &bin {
        Some(bin) => host_start(&rt, bin, smoke, &mut report),
        None => say(
            "SKIPPED: host start needs the release sidewire (cargo build --release -p sidewire, or set SIDEWIRE_BIN)",
        ),
    }
    tools_list(&rt, bin.as_deref(), smoke, &mut report);
    report.finish();
}

/// A fresh host with its driver spawned.
fn host(rt: &tokio::runtime::Runtime) -> (McpHost, tokio::task::JoinHandle<()>) {
    let _guard = rt.enter();
    let (host, driver) = McpHost::new(NoHandler);
    (host, rt.spawn(driver))
}

fn stop(rt: &tokio::runtime::Runtime, host: McpHost, driver: tokio::task::JoinHandle<()>) {
    rt.block_on(async {
        host.shutdown().await;
        drop(host);
        let _ = driver.await;
    });
}

/// What one start measured.
struct Start {
    took: Duration,
    host_rss: f64,
    host_live: f64,
    children_rss: f64,
}

/// Starts `specs` on a fresh host and measures it, then shuts it down.
fn start(rt: &tokio::runtime::Runtime, specs: Vec<ServerSpec>) -> (Start, Vec<u32>) {
    let count = specs.len();
    let (rss0, live0) = (scale::own_rss(), scale::live_bytes());
    let (host, driver) = host(rt);
    let started = Instant::now();
    rt.block_on(host.start_all(specs))
        .expect("every server starts");
    let took = started.elapsed();
    let (rss1, live1) = (scale::own_rss(), scale::live_bytes());
    let pids: Vec<u32> = host.status().iter().filter_map(|s| s.pid).collect();
    assert_eq!(pids.len(), count, "every server runs");
    let children_rss = scale::rss_sum(&pids) as f64;
    stop(rt, host, driver);
    (
        Start {
            took,
            host_rss: rss1 as f64 - rss0 as f64,
            host_live: (live1 - live0) as f64,
            children_rss,
        },
        pids,
    )
}

fn host_start(rt: &tokio::runtime::Runtime, bin: &Path, smoke: bool, report: &mut Report) {
    let (counts, runs): (&[usize], usize) = if smoke {
        (&[1, 8], 1)
    } else {
        (&[1, 8, 32, 64], 5)
    };
    let specs = |n: usize| -> Vec<ServerSpec> {
        (0..n)
            .map(|i| {
                ServerSpec::stdio(&format!("s{i}"), bin.display().to_string()).arg("__mcp-server")
            })
            .collect()
    };
    // A first start outside the figures: the runtime's threads, the first process spawn and the
    // allocator's first arenas are one-time costs.
    let _ = start(rt, specs(1));
    report.table(&[
        "servers",
        "time to all ready (median)",
        "per server",
        "host RSS Δ",
        "host RSS Δ per server",
        "host bytes live per server",
        "server RSS (each)",
    ]);
    let mut eight = None;
    for &n in counts {
        let mut took = Vec::new();
        let mut host_rss = Vec::new();
        let mut host_live = Vec::new();
        let mut child = Vec::new();
        for _ in 0..runs {
            let (figures, _) = start(rt, specs(n));
            took.push(figures.took.as_secs_f64() * 1e3);
            host_rss.push(figures.host_rss);
            host_live.push(figures.host_live / n as f64);
            child.push(figures.children_rss / n as f64);
        }
        let ms = median(&mut took);
        let rss = median(&mut host_rss);
        let live = median(&mut host_live);
        let child = median(&mut child);
        if n == 8 {
            eight = Some(ms);
        }
        let waves = n.div_ceil(sidewire_mcp::MAX_PARALLEL_STARTS);
        let x = n as f64;
        report
            .chart(
                "mcp_host_start_time",
                "MCP host start: time to all ready",
                "servers",
                "ms",
            )
            .point("sidewire McpHost", x, ms);
        if let Some(eight) = eight {
            report.chart("mcp_host_start_time", "", "", "").point(
                "waves × the 8-server time",
                x,
                eight * waves as f64,
            );
        }
        let memory = report.chart(
            "mcp_host_start_memory",
            "MCP host start: memory per server",
            "servers",
            "KiB per server",
        );
        memory.point("host RSS Δ", x, rss / x / 1024.0);
        memory.point("host bytes live", x, live / 1024.0);
        memory.point("server process RSS", x, child / 1024.0);
        report.row(vec![
            n.to_string(),
            format!("{ms:.1} ms"),
            format!("{:.2} ms", ms / x),
            human_bytes(rss),
            human_bytes(rss / x),
            human_bytes(live),
            human_bytes(child),
        ]);
    }
}

fn tools_list(rt: &tokio::runtime::Runtime, bin: Option<&Path>, smoke: bool, report: &mut Report) {
    let (counts, runs, relists): (&[usize], usize, usize) = if smoke {
        (&[100], 1, 1)
    } else {
        (&[100, 1_000, 10_000], 3, 10)
    };
    let me = std::env::current_exe().expect("the bench binary's path");
    let mut fixtures: Vec<(&str, SpecFor<'_>)> = vec![(
        "minimal",
        Box::new(|n: usize| {
            ServerSpec::stdio("tools", me.display().to_string()).env(TOOLS_ENV, n.to_string())
        }),
    )];
    if let Some(bin) = bin {
        fixtures.push((
            "realistic (~800 B)",
            Box::new(move |n: usize| {
                ServerSpec::stdio("tools", bin.display().to_string()).args([
                    "__mcp-server".to_owned(),
                    "--many-tools".to_owned(),
                    n.to_string(),
                    "--page-size".to_owned(),
                    PAGE.to_string(),
                ])
            }),
        ));
    }
    report.table(&[
        "tools (fixture)",
        "re-list (median)",
        "per tool",
        "host bytes live per tool (less the 0-tool connection)",
        "host RSS Δ per tool (the same)",
        "tools/call of the last tool (median)",
    ]);
    for (fixture, spec) in &fixtures {
        // The same server offering no tools: the connection's own cost, taken off each figure
        // so what is left is the tools'.
        let (mut base_live, mut base_rss) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let (live, rss) = listing(rt, spec(0), 0, 0, &mut Vec::new(), 0, &mut Vec::new());
            base_live.push(live);
            base_rss.push(rss);
        }
        let (base_live, base_rss) = (median(&mut base_live), median(&mut base_rss));
        for &n in counts {
            let mut live = Vec::new();
            let mut rss = Vec::new();
            let mut relist = Vec::new();
            let mut calls = Vec::new();
            // The realistic fixture's server is the CLI's; only the minimal one answers calls.
            let timed_calls = if *fixture == "minimal" {
                relists * 20
            } else {
                0
            };
            for _ in 0..runs {
                let (bytes, resident) = listing(
                    rt,
                    spec(n),
                    n,
                    relists,
                    &mut relist,
                    timed_calls,
                    &mut calls,
                );
                live.push((bytes - base_live) / n as f64);
                rss.push((resident - base_rss) / n as f64);
            }
            let (live, rss, ms) = (median(&mut live), median(&mut rss), median(&mut relist));
            let call = (!calls.is_empty()).then(|| median(&mut calls));
            let x = n as f64;
            let name = format!("sidewire, {fixture} tools");
            report
                .chart(
                    "mcp_tools_list_time",
                    "tools/list: time of a re-list",
                    "tools",
                    "ms",
                )
                .point(&name, x, ms);
            report
                .chart(
                    "mcp_tools_list_memory",
                    "tools/list: host bytes live per cached tool",
                    "tools",
                    "bytes per tool",
                )
                .point(&name, x, live);
            report.row(vec![
                format!("{n} ({fixture})"),
                format!("{ms:.2} ms"),
                format!("{:.2} µs", ms * 1e3 / x),
                human_bytes(live),
                human_bytes(rss),
                call.map_or_else(|| "-".to_owned(), |us| format!("{us:.1} µs")),
            ]);
            if let Some(us) = call {
                report
                    .chart(
                        "mcp_tools_call_time",
                        "tools/call with N tools cached",
                        "tools",
                        "µs",
                    )
                    .point(&name, x, us);
            }
        }
    }
    // The target line of the memory chart: 1 KB per cached minimal tool.
    if let Some(chart) = report
        .charts
        .iter_mut()
        .find(|c| c.id == "mcp_tools_list_memory")
    {
        for &n in counts {
            chart.point("target: 1 KB per minimal tool", n as f64, 1000.0);
        }
    }
}

/// Starts `spec` (a server offering `n` tools) on a fresh host, which lists and caches them;
/// returns the host's bytes live and RSS after the start less before, pushes the time of
/// `relists` re-lists (ms) onto `times` and that of `calls` calls of the last tool (µs) onto
/// `call_times`.
fn listing(
    rt: &tokio::runtime::Runtime,
    spec: ServerSpec,
    n: usize,
    relists: usize,
    times: &mut Vec<f64>,
    calls: usize,
    call_times: &mut Vec<f64>,
) -> (f64, f64) {
    let (rss0, live0) = (scale::own_rss(), scale::live_bytes());
    let (host, driver) = host(rt);
    rt.block_on(host.start_all([spec]))
        .expect("the server starts");
    let (rss1, live1) = (scale::own_rss(), scale::live_bytes());
    let client = host.client("tools").expect("it runs");
    assert_eq!(client.tools().len(), n, "every tool is cached");
    for _ in 0..relists {
        let started = Instant::now();
        let tools = rt.block_on(client.list_tools()).expect("tools/list");
        times.push(started.elapsed().as_secs_f64() * 1e3);
        assert_eq!(tools.len(), n);
    }
    if calls > 0 {
        let last = format!("tool_{:07}", n - 1);
        for _ in 0..calls {
            let started = Instant::now();
            let result = rt
                .block_on(client.call_tool(
                    &last,
                    Value::Null,
                    sidewire_mcp::ToolCallOptions::new(),
                ))
                .expect("tools/call");
            call_times.push(started.elapsed().as_secs_f64() * 1e6);
            assert!(!result.is_error);
        }
    }
    drop(client);
    stop(rt, host, driver);
    ((live1 - live0) as f64, rss1 as f64 - rss0 as f64)
}

/// One minimal tool.
fn minimal_tool(i: usize) -> Value {
    json!({"name": format!("tool_{i:07}"), "inputSchema": {"type": "object"}})
}

/// A stdio MCP server offering `count` minimal tools, `PAGE` a page, until stdin ends.
fn serve_minimal_tools(count: usize) {
    let stdin = std::io::stdin().lock();
    let stdout = BufWriter::new(std::io::stdout().lock());
    // A closed stdout ends the server as a closed stdin does.
    let _ = sidewire_mcp_server::serve_paged_tools(
        stdin,
        stdout,
        "minimal-tools",
        count,
        PAGE,
        minimal_tool,
    );
}
