//! What the scale benches (`scale_mcp`, `scale_ext`, `sustained`) share: their smoke mode,
//! the memory figures (bytes live by the counting allocator, RSS from `/proc`), percentiles,
//! and the JSON report the chart script (`benches/charts.py`) reads beside criterion's
//! estimates.
//!
//! The scale benches are `harness = false` programs, not criterion benches: each figure is a
//! one-shot cost against a count (start 64 servers, list 10,000 tools), measured a few times
//! and reported as a median. Each prints a table and writes
//! `<target>/criterion/scale/<bench>.json`; with `--test` (what `cargo bench -- --test` passes,
//! the smoke run of `.ci/run`) each runs its smallest cases once and writes nothing.
//!
//! Bytes live: a bench binary installs `stats_alloc`'s counting allocator as its global
//! allocator (`#[global_allocator] static ALLOC: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;`),
//! and [`live_bytes`] is what it has handed out and not had back: exact, and the same on a
//! loaded machine. RSS is the kernel's `VmRSS`, which also counts the allocator's retained pages
//! and the runtime's stacks: coarser, but what an operator sees.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// Whether the bench was started for the smoke run (`cargo bench -- --test`): run the smallest
/// cases once, print the table, write no report.
pub fn smoke() -> bool {
    std::env::args().skip(1).any(|arg| arg == "--test")
}

/// Bytes the counting allocator has handed out and not had back (0 when the binary did not
/// install it as its global allocator).
pub fn live_bytes() -> i64 {
    let stats = stats_alloc::INSTRUMENTED_SYSTEM.stats();
    stats.bytes_allocated as i64 - stats.bytes_deallocated as i64
}

/// The resident set of process `pid` in bytes (`VmRSS` of `/proc/<pid>/status`); `None` when
/// the process is gone or `/proc` cannot tell.
pub fn rss_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// This process's resident set in bytes (0 when `/proc` cannot tell).
pub fn own_rss() -> u64 {
    rss_of(std::process::id()).unwrap_or(0)
}

/// The summed RSS of `pids` in bytes.
pub fn rss_sum(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|&pid| rss_of(pid)).sum()
}

/// The `q` quantile (0.0..=1.0) of `samples` by nearest rank; sorts them. Zero when empty.
pub fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.sort_unstable();
    let at = ((samples.len() - 1) as f64 * q).round() as usize;
    samples[at.min(samples.len() - 1)]
}

/// The median of `values`; zero when empty.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// One chart of a scale report: some series of (N, cost) points on shared axes.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    /// The file stem of its SVG (`docs/bench/<id>.svg`).
    pub id: String,
    /// The chart's title.
    pub title: String,
    /// What N counts.
    pub x_label: String,
    /// The cost's unit.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

/// One line of a [`Chart`].
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Its legend.
    pub name: String,
    /// `(N, cost)`, in the order measured.
    pub points: Vec<(f64, f64)>,
}

impl Chart {
    /// An empty chart.
    pub fn new(id: &str, title: &str, x_label: &str, y_label: &str) -> Self {
        Chart {
            id: id.to_owned(),
            title: title.to_owned(),
            x_label: x_label.to_owned(),
            y_label: y_label.to_owned(),
            series: Vec::new(),
        }
    }

    /// Adds the point `(x, y)` to the series `name` (created on first use).
    pub fn point(&mut self, name: &str, x: f64, y: f64) {
        match self.series.iter_mut().find(|s| s.name == name) {
            Some(series) => series.points.push((x, y)),
            None => self.series.push(Series {
                name: name.to_owned(),
                points: vec![(x, y)],
            }),
        }
    }
}

/// A scale bench's report: its charts and the rows of its printed table.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The bench's name (the report's file stem).
    pub bench: String,
    /// Seconds since the Unix epoch when it was written.
    pub unix_time: u64,
    /// The charts.
    pub charts: Vec<Chart>,
    /// The tables as printed: each a header row, then one row per case.
    pub tables: Vec<Vec<Vec<String>>>,
}

impl Report {
    /// A report with no charts and no tables.
    pub fn new(bench: &str) -> Self {
        Report {
            bench: bench.to_owned(),
            unix_time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            charts: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// The chart `id`, added (with these labels) on first use.
    pub fn chart(&mut self, id: &str, title: &str, x_label: &str, y_label: &str) -> &mut Chart {
        if let Some(at) = self.charts.iter().position(|c| c.id == id) {
            return &mut self.charts[at];
        }
        self.charts.push(Chart::new(id, title, x_label, y_label));
        self.charts.last_mut().expect("just pushed")
    }

    /// Starts a new table with this header row.
    pub fn table(&mut self, header: &[&str]) {
        self.tables
            .push(vec![header.iter().map(|&cell| cell.to_owned()).collect()]);
    }

    /// Adds a row to the last table.
    ///
    /// # Panics
    ///
    /// When no table was started.
    pub fn row(&mut self, cells: Vec<String>) {
        self.tables
            .last_mut()
            .expect("a table was started")
            .push(cells);
    }

    /// Prints the table (Markdown, as BENCHMARKS.md quotes it), then, outside the smoke run,
    /// writes the report to `<target>/criterion/scale/<bench>.json` and says where.
    pub fn finish(&self) {
        let mut out = String::new();
        for table in &self.tables {
            for (i, row) in table.iter().enumerate() {
                out.push_str(&format!("| {} |\n", row.join(" | ")));
                if i == 0 {
                    out.push_str(&format!("|{}\n", " --- |".repeat(row.len())));
                }
            }
            out.push('\n');
        }
        if !smoke() {
            let path = report_dir().join(format!("{}.json", self.bench));
            let written = std::fs::create_dir_all(report_dir())
                .map_err(|e| e.to_string())
                .and_then(|()| serde_json::to_vec_pretty(self).map_err(|e| e.to_string()))
                .and_then(|json| std::fs::write(&path, json).map_err(|e| e.to_string()));
            match written {
                Ok(()) => out.push_str(&format!("report: {}\n", path.display())),
                Err(err) => {
                    out.push_str(&format!("report not written ({}): {err}\n", path.display()))
                }
            }
        }
        say(&out);
    }
}

/// `<target>/criterion/scale`, where `<target>` is the directory holding this bench binary
/// (`<target>/release/deps/<bench>-<hash>`), so it is right with `CARGO_TARGET_DIR` too.
pub fn report_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let target = exe
        .ancestors()
        .nth(3)
        .map_or_else(|| PathBuf::from("target"), PathBuf::from);
    target.join("criterion").join("scale")
}

/// Writes `text` to stdout (benches report on stdout, like criterion).
pub fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// `bytes` as KiB or MiB with one decimal, for the tables.
pub fn human_bytes(bytes: f64) -> String {
    if bytes.abs() >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
    } else if bytes.abs() >= 1024.0 {
        format!("{:.1} KiB", bytes / 1024.0)
    } else {
        format!("{bytes:.0} B")
    }
}

/// The release `sidewire` binary the benches that run the built-in server use:
/// `$SIDEWIRE_BIN`, else `<target>/release/sidewire` when it exists.
pub fn sidewire_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("SIDEWIRE_BIN") {
        return Some(PathBuf::from(bin));
    }
    let bin = report_dir()
        .ancestors()
        .nth(2)?
        .join("release")
        .join("sidewire");
    bin.is_file().then_some(bin)
}
