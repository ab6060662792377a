//! The integration tests of `sidewire-ext-conformance`: the kit run against real sidecar
//! processes (`kit`). Run without libtest's harness: the SDK examples under test are this very
//! binary, re-executed under their names (`bin/starter` and so on, as their manifests say), and
//! a sidecar's stdout must carry frames only, so `main` first checks whether it was started as
//! one.

mod kit;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed};

pub(crate) use sidewire_test_support::within;

/// The overall deadline of one test: a guard against hangs, not a timing assertion. The
/// longest tests (one kit run of a broken fixture, waiting out its reply timeouts) take about
/// ten seconds on a quiet 2-core machine and several times that on a loaded one.
const TEST_DEADLINE: Duration = Duration::from_secs(300);

/// The SDK examples this binary serves, by the name it is launched under.
const EXAMPLES: [&str; 4] = ["starter", "allow_all", "status_card", "provider"];

/// The SDK examples that exist only as v2 plugins (their manifests declare `runtime.tools`).
const V2_EXAMPLES: [&str; 1] = ["tools"];

/// Each test gets its own runtime and an overall deadline.
fn run<F: Future<Output = ()>>(test: impl FnOnce() -> F) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime
        .block_on(async { tokio::time::timeout(TEST_DEADLINE, test()).await })
        .map_err(|_| Failed::from(format!("the test did not finish within {TEST_DEADLINE:?}")))
}

/// One test's world: a temporary directory for its packages and manifests.
pub(crate) struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Env {
        Env {
            tmp: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
}

/// Serves the SDK example `name` on stdin and stdout, as its sidecar.
fn serve_example(name: &str) -> ExitCode {
    use sidewire_ext_sdk::{Options, samples, serve_main};
    let extension = match name {
        "starter" => samples::starter(),
        "allow_all" => samples::allow_all(),
        "provider" => samples::scripted_model(),
        "tools" => samples::text_tools(),
        _ => samples::status_card(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(serve_main(extension, Options::new()))
}

fn main() -> ExitCode {
    let argv0 = std::env::args().next().unwrap_or_default();
    let base = argv0.rsplit('/').next().unwrap_or_default();
    if EXAMPLES.contains(&base) || V2_EXAMPLES.contains(&base) {
        return serve_example(base);
    }
    let mut args = Arguments::from_args();
    // The tests wait on processes and deadlines rather than compute.
    args.test_threads.get_or_insert(4);
    libtest_mimic::run(&args, kit::trials()).exit_code()
}
