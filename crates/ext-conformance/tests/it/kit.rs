//! The kit against real sidecars: the SDK's examples (this binary, re-executed under their
//! names), the Python reference sidecar and the Python provider of ext-host's provider tests pass
//! everything applicable; each deliberately broken
//! fixture fails exactly the statements it breaks. Every run proves that no process it started
//! outlives it (each manifest carries a marker variable, and the process table is searched for
//! it afterwards).
//!
//! Each kit run is a test of its own ([`trials`]): an SDK example, a manifest of the reference
//! sidecar, a broken fixture, a flaw. A table of them in one test held the whole binary for a
//! minute; apart, they run side by side and a failure names its fixture.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use serde_json::{Value, json};
use sidewire_ext_conformance::{
    ProtocolProfile, Report, RunOptions, Sidecar, StatementVerdict, statements,
};

use crate::{Env, within};

/// The fixtures' directory.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A marker unique to one kit run, set in the sidecar's environment through its manifest.
fn marker() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

const MARKER_VAR: &str = "SIDEWIRE_CONFORMANCE_MARKER";

/// Writes `manifest` with the marker in its `runtime.env` to `dir`.
fn write_manifest(dir: &Path, mut manifest: Value, marker: &str) -> PathBuf {
    manifest["runtime"]["env"][MARKER_VAR] = json!(marker);
    let path = dir.join(sidewire_ext_protocol::MANIFEST_FILE);
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    path
}

/// Runs the kit and asserts that no process it started is left afterwards.
async fn check(target: Sidecar, marker: &str, options: RunOptions) -> Report {
    let report = within(Duration::from_secs(90), "a conformance run", async {
        sidewire_ext_conformance::run(&target, &options).await
    })
    .await
    .expect("the target resolves");
    // The process-table search polls and sleeps: off the runtime, or it would freeze the
    // other kit this task is driving.
    let marker = marker.to_owned();
    let survivors = tokio::task::spawn_blocking(move || {
        sidewire_process::testing::survivors_with_env(MARKER_VAR, &marker, Duration::from_secs(5))
    })
    .await
    .unwrap();
    assert!(
        survivors.is_empty(),
        "processes outlived the run: {survivors:?}"
    );
    report
}

/// A package of one of the SDK's examples: its manifest (plus the marker) and `bin/<name>`
/// pointing at this binary, which serves the sample under that name.
fn example_package(env: &Env, example: &str, marker: &str) -> PathBuf {
    example_package_in(env, example, marker, ProtocolProfile::V1)
}

/// [`example_package`] under the example's manifest for `profile`: `reasonix-plugin.json` for
/// v1; for v2 its Manifest v2 twin `reasonix-plugin.v2.json`, or the one manifest of an example
/// that exists only as a v2 plugin.
fn example_package_in(env: &Env, example: &str, marker: &str, profile: ProtocolProfile) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ext-sdk/examples")
        .join(example);
    let twin = dir.join("reasonix-plugin.v2.json");
    let source = if profile == ProtocolProfile::V2 && twin.exists() {
        twin
    } else {
        dir.join(sidewire_ext_protocol::MANIFEST_FILE)
    };
    let manifest: Value = serde_json::from_slice(&std::fs::read(&source).unwrap()).unwrap();
    assert_eq!(manifest["apiVersion"], profile.manifest_api_version());
    let root = env.path(&format!("pkg-{example}"));
    std::fs::create_dir_all(root.join("bin")).unwrap();
    write_manifest(&root, manifest, marker);
    std::os::unix::fs::symlink(
        std::env::current_exe().unwrap(),
        root.join("bin").join(example),
    )
    .unwrap();
    root
}

fn failures(report: &Report) -> String {
    report
        .results
        .iter()
        .filter(|r| r.verdict == StatementVerdict::Fail)
        .map(|r| format!("{}: {} {:?}", r.statement.id, r.detail, r.frames))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn the_sdk_example_passes_everything_applicable(example: &'static str) {
    let env = Env::new();
    {
        let marker = marker();
        let root = example_package(&env, example, &marker);
        let began = Instant::now();
        let report = check(Sidecar::Package(root), &marker, RunOptions::new()).await;
        // The bound for a well-behaved sidecar (a run takes a few seconds).
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "{example}: the run took {:?}",
            began.elapsed()
        );
        assert!(report.passed(), "{example}:\n{}", failures(&report));
        // Every statement has a verdict, and the ones that apply to every sidecar passed.
        assert_eq!(report.profile, ProtocolProfile::V1);
        assert_eq!(report.results.len(), applicable(&report));
        for id in [
            "1",
            "2",
            "6",
            "9",
            "13",
            "15",
            "22",
            "23",
            "32",
            "88",
            "S-frames",
            "S-handshake",
        ] {
            let result = report
                .results
                .iter()
                .find(|r| r.statement.id == id)
                .unwrap();
            assert_eq!(
                result.verdict,
                StatementVerdict::Pass,
                "{example} {id}: {}",
                result.detail
            );
        }
        if example == "status_card" {
            let ui = report
                .results
                .iter()
                .find(|r| r.statement.id == "S-ui")
                .unwrap();
            assert_eq!(ui.verdict, StatementVerdict::Pass, "{}", ui.detail);
        } else if example == "provider" {
            for id in ["89", "90", "S-provider"] {
                let result = report
                    .results
                    .iter()
                    .find(|r| r.statement.id == id)
                    .unwrap();
                assert_eq!(
                    result.verdict,
                    StatementVerdict::Pass,
                    "{example} {id}: {}",
                    result.detail
                );
            }
        } else {
            for id in ["S-intercept", "16", "49", "59", "60"] {
                let result = report
                    .results
                    .iter()
                    .find(|r| r.statement.id == id)
                    .unwrap();
                assert_eq!(
                    result.verdict,
                    StatementVerdict::Pass,
                    "{example} {id}: {}",
                    result.detail
                );
            }
        }
    }
}

/// How many statements apply to the report's profile.
fn applicable(report: &Report) -> usize {
    statements()
        .iter()
        .filter(|s| s.applies_to(report.profile))
        .count()
}

fn verdict<'r>(report: &'r Report, id: &str) -> &'r sidewire_ext_conformance::StatementResult {
    report
        .results
        .iter()
        .find(|r| r.statement.id == id)
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// The same examples under their Manifest v2 twins, so checked against v2 (the manifest picks
/// the profile, as in a host): everything applicable passes, the v2 delta's items included, and no
/// v1-only statement is run.
async fn the_sdk_example_passes_everything_applicable_on_v2(example: &'static str) {
    let env = Env::new();
    let marker = marker();
    let root = example_package_in(&env, example, &marker, ProtocolProfile::V2);
    let report = check(Sidecar::Package(root), &marker, RunOptions::new()).await;
    assert_eq!(report.profile, ProtocolProfile::V2);
    assert!(report.passed(), "{example} on v2:\n{}", failures(&report));
    assert_eq!(report.results.len(), applicable(&report));
    // v1's envelope and state-machine rules are v1's (the SDK's own code keeps them on v2;
    // the v1 runs check them).
    for v1_only in ["6", "15", "22", "88"] {
        assert!(report.results.iter().all(|r| r.statement.id != v1_only));
    }
    for id in [
        "1",
        "S-frames",
        "S-handshake",
        "D4",
        "D5",
        "D6",
        "D9",
        "D25",
    ] {
        let result = verdict(&report, id);
        assert_eq!(
            result.verdict,
            StatementVerdict::Pass,
            "{example} {id}: {}",
            result.detail
        );
    }
    let provider = verdict(&report, "D22");
    if example == "provider" {
        assert_eq!(
            provider.verdict,
            StatementVerdict::Pass,
            "{}",
            provider.detail
        );
    } else {
        assert_eq!(provider.verdict, StatementVerdict::NotApplicable);
    }
    // No tools in these examples: only the refusals were checked.
    assert_eq!(
        verdict(&report, "D15").verdict,
        StatementVerdict::NotApplicable
    );
}

/// The tools example (a v2 plugin only): its tools answer every call of item D15, the
/// read-only one called with every kind of JSON `arguments`.
async fn the_tools_example_passes_the_v2_checklist() {
    let env = Env::new();
    let marker = marker();
    let root = example_package_in(&env, "tools", &marker, ProtocolProfile::V2);
    let report = check(Sidecar::Package(root), &marker, RunOptions::new()).await;
    assert_eq!(report.profile, ProtocolProfile::V2);
    assert!(report.passed(), "tools on v2:\n{}", failures(&report));
    for id in ["D4", "D5", "D6", "D9", "D15", "D25", "S-handshake"] {
        let result = verdict(&report, id);
        assert_eq!(
            result.verdict,
            StatementVerdict::Pass,
            "{id}: {}",
            result.detail
        );
    }
}

/// A v1 manifest checked with `--protocol 2`: the v2 handshake, and the v2 items.
async fn a_v1_manifest_is_checked_against_v2_on_request() {
    let env = Env::new();
    let marker = marker();
    let root = example_package(&env, "starter", &marker);
    let options = RunOptions::new()
        .protocol(ProtocolProfile::V2)
        .only("delta");
    let report = check(Sidecar::Package(root), &marker, options).await;
    assert_eq!(report.profile, ProtocolProfile::V2);
    assert!(report.passed(), "{}", failures(&report));
    assert!(report.results.iter().all(|r| r.statement.is_delta_item()));
    assert_eq!(verdict(&report, "D4").verdict, StatementVerdict::Pass);
}

/// The Python fixture's interceptor manifest.
const INTERCEPTOR: &str = "reasonix-plugin.json";
/// The Python fixture's provider manifest.
const PROVIDER: &str = "providers.json";
/// The Python fixture's interceptor manifest with capability `ui`.
const UI: &str = "ui-plugin.json";

/// A fixture `script` run with `ARGS` against the fixture manifest `manifest` (plus a marker).
async fn python(
    env: &Env,
    manifest: &str,
    script: &str,
    args: &[&str],
    options: RunOptions,
) -> Report {
    let marker = marker();
    let dir = env.path(&format!("py-{}", marker));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join(manifest)).unwrap()).unwrap();
    let manifest = write_manifest(&dir, manifest, &marker);
    let target = Sidecar::Command {
        manifest,
        program: fixtures().join(script).display().to_string(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
    };
    check(target, &marker, options).await
}

async fn the_python_reference_sidecar_passes_everything_applicable_as_a_provider() {
    let env = Env::new();
    let report = python(&env, PROVIDER, "sidecar.py", &[], RunOptions::new()).await;
    assert!(report.passed(), "{}", failures(&report));
    for id in ["89", "90", "S-provider"] {
        let result = report
            .results
            .iter()
            .find(|r| r.statement.id == id)
            .unwrap();
        assert_eq!(
            result.verdict,
            StatementVerdict::Pass,
            "{id}: {}",
            result.detail
        );
    }
}

async fn the_python_reference_sidecar_passes_everything_applicable_as_an_interceptor() {
    let env = Env::new();
    let report = python(&env, INTERCEPTOR, "sidecar.py", &[], RunOptions::new()).await;
    assert!(report.passed(), "{}", failures(&report));
    for id in [
        "1",
        "2",
        "6",
        "7",
        "9",
        "10",
        "11",
        "12",
        "13",
        "16",
        "22",
        "23",
        "24",
        "49",
        "50",
        "59",
        "60",
        "88",
        "S-intercept",
        "S-content",
    ] {
        let result = report
            .results
            .iter()
            .find(|r| r.statement.id == id)
            .unwrap();
        assert_eq!(
            result.verdict,
            StatementVerdict::Pass,
            "{id}: {}",
            result.detail
        );
    }
}

/// The Python provider of ext-host's provider tests (its `tests/fixtures/python_provider`), the
/// issue's proof that a provider can be written in any language, must speak v1 as correctly as
/// the reference: nothing fails, and both stream statements apply. Its chunks are paced (the
/// fixture's `PROVIDER_CHUNK_DELAY_MS`) so that the cancel the kit writes with its open lands
/// mid-stream, which is what makes item 90 applicable.
async fn the_python_provider_fixture_passes_everything_applicable() {
    let env = Env::new();
    let marker = marker();
    let dir = env.path("py-provider");
    std::fs::create_dir_all(&dir).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../ext-host/tests/fixtures/python_provider");
    let mut manifest: Value = serde_json::from_slice(
        &std::fs::read(fixture.join(sidewire_ext_protocol::MANIFEST_FILE)).unwrap(),
    )
    .unwrap();
    manifest["runtime"]["env"]["PROVIDER_CHUNK_DELAY_MS"] = json!("50");
    let manifest = write_manifest(&dir, manifest, &marker);
    let target = Sidecar::Command {
        manifest,
        program: fixture.join("provider.py").display().to_string(),
        args: Vec::new(),
    };
    let report = check(target, &marker, RunOptions::new()).await;
    assert!(report.passed(), "{}", failures(&report));
    for id in [
        "1",
        "2",
        "6",
        "7",
        "8",
        "9",
        "10",
        "12",
        "13",
        "14",
        "15",
        "20",
        "22",
        "23",
        "24",
        "32",
        "49",
        "88",
        "89",
        "90",
        "S-frames",
        "S-handshake",
        "S-events",
        "S-provider",
    ] {
        let result = report
            .results
            .iter()
            .find(|r| r.statement.id == id)
            .unwrap();
        assert_eq!(
            result.verdict,
            StatementVerdict::Pass,
            "{id}: {}",
            result.detail
        );
    }
}

/// A deliberately broken sidecar: (name, manifest, program, args, the statements it breaks).
type Broken = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

/// Each broken fixture, run in full: it fails exactly the statements it breaks.
#[rustfmt::skip]
const BROKEN: &[Broken] = &[
    ("answer-unknown-notifications", INTERCEPTOR, "sidecar.py", &["--flaw", "answer-unknown-notifications"], &["12"]),
    ("ascii-ids", INTERCEPTOR, "sidecar.py", &["--flaw", "ascii-ids"], &["10"]),
    ("skip-blank-lines", INTERCEPTOR, "sidecar.py", &["--flaw", "skip-blank-lines"], &["6"]),
    ("unknown-method-invalid-request", INTERCEPTOR, "sidecar.py", &["--flaw", "unknown-method-invalid-request"], &["13"]),
    ("ignore-timeout", INTERCEPTOR, "sidecar.py", &["--flaw", "ignore-timeout"], &["49"]),
    ("no-exit-on-eof", INTERCEPTOR, "sidecar.py", &["--flaw", "no-exit-on-eof"], &["88"]),
    ("protocol-error-for-versions", INTERCEPTOR, "sidecar.py", &["--flaw", "protocol-error-for-versions"], &["22", "23", "24"]),
    ("huge-line-on-resources", INTERCEPTOR, "sidecar.py", &["--flaw", "huge-line-on-resources"], &["S-frames", "S-events"]),
    ("banner", INTERCEPTOR, "banner.sh", &[], &["S-frames"]),
    ("seq-from-zero", PROVIDER, "sidecar.py", &["--flaw", "seq-from-zero"], &["89"]),
    ("chunk-after-cancel", PROVIDER, "sidecar.py", &["--flaw", "chunk-after-cancel"], &["90"]),
    ("unknown-ref-accepted", PROVIDER, "sidecar.py", &["--flaw", "unknown-ref-accepted"], &["S-provider"]),
];

/// A broken sidecar is often found by an answer that never comes: 2 s is plenty for one answer
/// (they take milliseconds) and keeps these runs short.
fn broken_options() -> RunOptions {
    RunOptions::new().reply_timeout(Duration::from_secs(2))
}

async fn the_broken_fixture_fails_exactly_what_it_breaks(case: &'static Broken) {
    let (_, manifest, program, args, expected) = *case;
    let env = Env::new();
    let report = python(&env, manifest, program, args, broken_options()).await;
    assert_eq!(
        report.failed_ids(),
        expected.to_vec(),
        "{program} {args:?}:\n{}",
        failures(&report)
    );
}

/// One flaw of the Python fixture: (manifest, args of `sidecar.py`, sections, the statements it
/// breaks).
type Flaw = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// One flaw of the Python fixture (at least) for every checked statement that [`BROKEN`] does not
/// break, each failing exactly that statement (or a stated few).
///
/// A full run for each would take as long again as [`BROKEN`], so each runs only the section its
/// statements live in (`RunOptions::only`; the top-level one where that adds no slow group):
/// "exactly" means exactly within that section. (When they were added, a full run of each failed
/// the same set, but for S-handshake's: a refused handshake fails every statement that needs
/// one.) Item 19 is slow (it runs with `--slow` only); its flaw fails it in a second.
#[rustfmt::skip]
const FLAWS: &[Flaw] = &[
    (INTERCEPTOR, &["--flaw", "frame-limit-one-short"], &["2.1"], &["1"]),
    (INTERCEPTOR, &["--flaw", "oversize-exits-zero"], &["2.1"], &["2"]),
    (INTERCEPTOR, &["--flaw", "duplicate-params-accepted"], &["4"], &["7"]),
    (INTERCEPTOR, &["--flaw", "jsonrpc-unchecked"], &["2.3"], &["8"]),
    (INTERCEPTOR, &["--flaw", "float-ids-accepted"], &["2.2"], &["9"]),
    (INTERCEPTOR, &["--flaw", "reused-id-accepted"], &["2.3"], &["11"]),
    (INTERCEPTOR, &["--flaw", "ui-params-checked-first"], &["10"], &["14"]),
    (INTERCEPTOR, &["--flaw", "unknown-method-retryable"], &["3"], &["15"]),
    (INTERCEPTOR, &["--flaw", "eight-callbacks-at-once"], &["2.4"], &["16"]),
    (INTERCEPTOR, &["--flaw", "content-read-deadline-1s"], &["2.5"], &["19"]),
    (INTERCEPTOR, &["--flaw", "unknown-members-accepted"], &["4"], &["20"]),
    // A handshake the kit refuses fails every statement that needs one: 6.3 alone.
    (INTERCEPTOR, &["--flaw", "providers-without-capability"], &["6.3"], &["S-handshake"]),
    (INTERCEPTOR, &["--flaw", "notify-before-initialize"], &["6.4"], &["S-barrier"]),
    (INTERCEPTOR, &["--flaw", "intercepts-in-every-state"], &["6.5"], &["32"]),
    (INTERCEPTOR, &["--flaw", "allow-everywhere"], &["7"], &["S-intercept"]),
    (INTERCEPTOR, &["--flaw", "subscribe-beyond-manifest"], &["7"], &["50"]),
    (INTERCEPTOR, &["--flaw", "unlogged-narrowing"], &["7"], &["50"]),
    (INTERCEPTOR, &["--flaw", "answer-events"], &["8"], &["S-events"]),
    (INTERCEPTOR, &["--flaw", "read-first-page-twice"], &["9"], &["S-content"]),
    (INTERCEPTOR, &["--flaw", "content-unverified"], &["9"], &["59"]),
    (INTERCEPTOR, &["--flaw", "many-descriptors-accepted"], &["9"], &["60"]),
    (INTERCEPTOR, &["--flaw", "prompt-without-ui"], &["10"], &["S-ui"]),
    // A prompt that does not decode fails its shape (69) and the UI gate's valid params.
    (UI, &["--flaw", "prompt-kind-slider"], &["10"], &["S-ui", "69"]),
];

async fn the_flaw_fails_exactly_its_statements_in_their_sections(case: &'static Flaw) {
    let (manifest, args, sections, expected) = *case;
    let env = Env::new();
    let options = sections
        .iter()
        .fold(broken_options(), |o, section| o.only(*section))
        .slow(expected.contains(&"19"));
    let report = python(&env, manifest, "sidecar.py", args, options).await;
    assert_eq!(
        report.failed_ids(),
        expected.to_vec(),
        "{args:?} (sections {sections:?}):\n{}",
        failures(&report)
    );
}

async fn a_run_stops_at_its_budget() {
    let env = Env::new();
    let began = Instant::now();
    let options = RunOptions::new().run_budget(Duration::from_millis(300));
    let report = python(&env, INTERCEPTOR, "sidecar.py", &[], options).await;
    // Every wait inside is bounded by the budget; what did not finish in it failed.
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    assert!(!report.passed());
    assert_eq!(report.results.len(), applicable(&report));
}

/// Every kit run above as a test of its own, the longest first (a broken fixture's full run, then
/// the reference sidecar's), so that the binary's thread pool starts them early.
pub(crate) fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for case in BROKEN {
        trials.push(Trial::test(
            format!(
                "kit::the_broken_fixture_fails_exactly_what_it_breaks::{}",
                case.0
            ),
            move || crate::run(|| the_broken_fixture_fails_exactly_what_it_breaks(case)),
        ));
    }
    trials.push(Trial::test(
        "kit::the_python_reference_sidecar_passes_everything_applicable_as_a_provider",
        || crate::run(the_python_reference_sidecar_passes_everything_applicable_as_a_provider),
    ));
    trials.push(Trial::test(
        "kit::the_python_reference_sidecar_passes_everything_applicable_as_an_interceptor",
        || crate::run(the_python_reference_sidecar_passes_everything_applicable_as_an_interceptor),
    ));
    trials.push(Trial::test(
        "kit::the_python_provider_fixture_passes_everything_applicable",
        || crate::run(the_python_provider_fixture_passes_everything_applicable),
    ));
    // The SDK's examples, each run by one test.
    for example in crate::EXAMPLES {
        trials.push(Trial::test(
            format!("kit::the_sdk_example_passes_everything_applicable::{example}"),
            move || crate::run(|| the_sdk_example_passes_everything_applicable(example)),
        ));
    }
    for example in crate::EXAMPLES {
        trials.push(Trial::test(
            format!("kit::the_sdk_example_passes_everything_applicable_on_v2::{example}"),
            move || crate::run(|| the_sdk_example_passes_everything_applicable_on_v2(example)),
        ));
    }
    trials.push(Trial::test(
        "kit::the_tools_example_passes_the_v2_checklist",
        || crate::run(the_tools_example_passes_the_v2_checklist),
    ));
    trials.push(Trial::test(
        "kit::a_v1_manifest_is_checked_against_v2_on_request",
        || crate::run(a_v1_manifest_is_checked_against_v2_on_request),
    ));
    for case in FLAWS {
        // The flaw's name is its `--flaw` argument.
        trials.push(Trial::test(
            format!(
                "kit::the_flaw_fails_exactly_its_statements_in_their_sections::{}",
                case.1[1]
            ),
            move || crate::run(|| the_flaw_fails_exactly_its_statements_in_their_sections(case)),
        ));
    }
    trials.push(Trial::test("kit::a_run_stops_at_its_budget", || {
        crate::run(a_run_stops_at_its_budget)
    }));
    trials
}
