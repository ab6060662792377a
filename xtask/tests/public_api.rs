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

/// A program importing two library crates never needs an alias: no name is exported at the root
/// of two crates, except each crate's own `Error` (always written qualified). Read from the
/// committed listings, so it needs no nightly.
#[test]
fn no_two_library_crates_export_the_same_root_name() {
    let root = root();
    let mut owners: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for (package, dir) in LIBRARY_CRATES {
        let listing = std::fs::read_to_string(snapshot_path(&root, dir)).expect("the listing");
        let prefix = format!("{}::", package.replace('-', "_"));
        let names: BTreeSet<String> = listing
            .lines()
            .filter_map(|line| root_name(line, &prefix))
            .collect();
        for name in names {
            owners.entry(name).or_default().push(package);
        }
    }
    let clashes: Vec<String> = owners
        .into_iter()
        .filter(|(name, crates)| crates.len() > 1 && name != "Error")
        .map(|(name, crates)| format!("{name}: {}", crates.join(", ")))
        .collect();
    assert!(
        clashes.is_empty(),
        "names exported by more than one crate: {clashes:#?}"
    );
}

/// The name an item line declares directly at the crate root (`pub struct sidewire_x::Name`).
fn root_name(line: &str, prefix: &str) -> Option<String> {
    let line = line
        .trim_start_matches("#[deprecated] ")
        .trim_start_matches("#[non_exhaustive] ");
    let rest = [
        "pub struct ",
        "pub enum ",
        "pub trait ",
        "pub type ",
        "pub const ",
        "pub static ",
        "pub fn ",
        "pub async fn ",
        "pub const fn ",
        "pub union ",
        "pub mod ",
    ]
    .iter()
    .find_map(|kw| line.strip_prefix(kw))?;
    let path = rest.strip_prefix(prefix)?;
    let name: String = path
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    // Only a root item: nothing but generics or the signature may follow its name.
    let after = &path[name.len()..];
    (!after.starts_with("::") && !after.starts_with('.')).then_some(name)
}
