//! Peak memory of `sidewire mcp tools` and `mcp servers` on a stdio server offering many
//! tools (the binary's own `__mcp-server --many-tools N` fixture, ~800-byte tools over pages).
//!
//! Not a criterion bench: memory is not a timing. Each run is one `sidewire` process started
//! from a fresh copy of this bench binary, whose `getrusage(RUSAGE_CHILDREN)` `ru_maxrss` is
//! the peak RSS of that `sidewire` and the server it reaped. The binary measured is
//! `$SIDEWIRE_BIN`, else `target/release/sidewire` (build it first:
//! `cargo build --release -p sidewire`); without it the bench prints `SKIPPED:`.
//!
//! `cargo bench -p sidewire-benches --bench listing_rss` prints, per case, each run's figure
//! and the largest. With `--test` (the smoke run of `.ci/run`) it runs the first case once.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Set in the measuring copy: the arguments of the one run, separated by U+001F.
const MEASURE: &str = "SIDEWIRE_BENCH_MEASURE";
const RUNS: usize = 5;
/// (command, tools, tools per page): the page size keeps a page under the 8 MiB frame cap.
const CASES: [(&str, usize, usize); 4] = [
    ("tools", 10_000, 1_000),
    ("servers", 10_000, 1_000),
    ("tools", 1_000_000, 9_000),
    ("servers", 1_000_000, 9_000),
];

fn main() {
    if let Ok(args) = std::env::var(MEASURE) {
        measure(&args);
        return;
    }
    let exe = std::env::var_os("SIDEWIRE_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/sidewire"),
        PathBuf::from,
    );
    if !exe.exists() {
        report(&format!(
            "SKIPPED: listing_rss needs {} (cargo build --release -p sidewire)",
            exe.display()
        ));
        return;
    }
    let me = std::env::current_exe().expect("the bench knows its own path");
    let smoke = sidewire_benches::scale::smoke();
    let (cases, runs) = if smoke {
        (&CASES[..1], 1)
    } else {
        (&CASES[..], RUNS)
    };
    for &(command, tools, page) in cases {
        let exe = exe.display().to_string();
        let args = [
            exe.as_str(),
            "mcp",
            command,
            "--stdio",
            "--",
            exe.as_str(),
            "__mcp-server",
            "--many-tools",
            &tools.to_string(),
            "--page-size",
            &page.to_string(),
        ]
        .join("\u{1f}");
        let mut figures = Vec::new();
        for _ in 0..runs {
            let out = Command::new(&me)
                .env(MEASURE, &args)
                .stderr(Stdio::inherit())
                .output()
                .expect("the measuring copy runs");
            let text = String::from_utf8_lossy(&out.stdout);
            figures.push(text.trim().parse::<u64>().unwrap_or(0));
        }
        let peak = figures.iter().max().copied().unwrap_or(0);
        report(&format!(
            "mcp {command} on {tools} tools ({page} a page): peak RSS {:.1} MiB (max of {runs} runs; each KiB: {figures:?})",
            peak as f64 / 1024.0
        ));
    }
}

/// One run: `sidewire` with its output to /dev/null, then the peak RSS in KiB on stdout.
fn measure(args: &str) {
    let mut args = args.split('\u{1f}');
    let exe = args.next().expect("the binary comes first");
    let home = tempfile::tempdir().expect("a temporary home");
    let status = Command::new(exe)
        .args(args)
        .env("SIDEWIRE_HOME", home.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("sidewire runs");
    let kib = if status.success() {
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
            .map_or(0, |usage| usage.max_rss())
    } else {
        0
    };
    report(&kib.to_string());
}

fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}
