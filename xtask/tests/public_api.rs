//! What the committed public-API listings say, read without nightly. Whether they match the code
//! is checked by `cargo run -p xtask -- public-api`, a step of `.ci/run` of its own (it needs a
//! nightly rustdoc build, which a plain `cargo test` must not run).

use std::collections::BTreeSet;

use xtask::public_api::{LIBRARY_CRATES, snapshot_path};
use xtask::root;

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
