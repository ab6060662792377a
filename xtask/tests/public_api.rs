//! Each library crate's public API matches its committed `public-api.txt`, so a change to the
//! public surface shows as a diff in review. Needs the nightly toolchain (rustdoc's JSON output
//! is unstable); without it the check prints `SKIPPED:`, unless `SIDEWIRE_REQUIRE_NIGHTLY=1`
//! (set by `.ci/run`) makes that a failure.

use std::collections::BTreeSet;
use std::io::Write as _;

use xtask::public_api::{LIBRARY_CRATES, generate_all, nightly_available, snapshot_path};
use xtask::root;

#[test]
fn public_api_matches_the_committed_snapshots() {
    if !nightly_available() {
        assert!(
            std::env::var_os("SIDEWIRE_REQUIRE_NIGHTLY").is_none(),
            "SIDEWIRE_REQUIRE_NIGHTLY is set but `cargo +nightly` does not run"
        );
        // Past the harness's capture, so the skip shows in every run.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the public-API check needs the nightly toolchain (.ci/run requires it)"
        );
        return;
    }
    let root = root();
    let listings = generate_all(&root).unwrap_or_else(|e| panic!("{e}"));
    let mut report = String::new();
    for ((package, dir), (_, listing)) in LIBRARY_CRATES.iter().zip(listings) {
        let path = snapshot_path(&root, dir);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed == listing {
            continue;
        }
        let old: BTreeSet<&str> = committed.lines().collect();
        let new: BTreeSet<&str> = listing.lines().collect();
        report.push_str(&format!("\n{package} ({}):\n", path.display()));
        for line in old.difference(&new) {
            report.push_str(&format!("- {line}\n"));
        }
        for line in new.difference(&old) {
            report.push_str(&format!("+ {line}\n"));
        }
    }
    assert!(
        report.is_empty(),
        "the public API changed; review the lines below and, if intended, run \
         `cargo run -p xtask -- bless-public-api` and commit the listings:\n{report}"
    );
}
