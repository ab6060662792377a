//! `benches/charts.py` on a tiny fixture (`tests/fixtures/criterion`: one criterion group of
//! two functions, one scale report), so the script that draws BENCHMARKS.md's charts does not
//! rot. Needs `python3` (CI has it); without one the test prints `SKIPPED:`.

use std::path::Path;
use std::process::Command;

#[test]
fn charts_script_draws_the_fixture() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().expect("a temporary directory");
    let run = Command::new("python3")
        .arg(here.join("charts.py"))
        .arg("--criterion")
        .arg(here.join("tests/fixtures/criterion"))
        .arg("--out")
        .arg(out.path())
        .output();
    let run = match run {
        Ok(run) => run,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"SKIPPED: charts_script_draws_the_fixture needs python3\n",
            );
            return;
        }
        Err(err) => panic!("python3 runs: {err}"),
    };
    assert!(
        run.status.success(),
        "charts.py failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let read = |name: &str| {
        std::fs::read_to_string(out.path().join(name)).unwrap_or_else(|err| panic!("{name}: {err}"))
    };
    // The criterion group: a bar per function, sidewire's and the peer's, with their medians.
    let bars = read("demo_round_trip.svg");
    assert!(bars.starts_with("<svg "), "an SVG document");
    assert!(bars.trim_end().ends_with("</svg>"), "a whole SVG document");
    for text in ["sidewire", "rmcp", "1.6 µs", "8.63 µs"] {
        assert!(bars.contains(text), "the bar chart shows {text}");
    }
    // The scale chart: each series as a line with its legend.
    let lines = read("demo_start_time.svg");
    assert!(lines.trim_end().ends_with("</svg>"), "a whole SVG document");
    assert_eq!(lines.matches("<polyline").count(), 2, "one line per series");
    for text in [
        "Demo: time to all ready",
        "sidewire McpHost",
        "servers (log scale)",
    ] {
        assert!(lines.contains(text), "the line chart shows {text}");
    }
    assert_eq!(
        std::fs::read_dir(out.path()).expect("the output").count(),
        2,
        "one chart per group and per scale chart"
    );
}
