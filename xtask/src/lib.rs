//! Repository checks for sidewire, run inside `cargo test` so a local run and CI agree.
//!
//! It checks what a reviewer would otherwise have to remember: that crates depend only along
//! the edges the design allows (and never on clap, anyhow or a runtime constructor outside the
//! cli), that every Rust file opens with a `//!` saying what it is, that no `dbg!`, `todo!`,
//! `#[ignore]` or `#[should_panic]` slipped in, that `.ci/run` runs the README's test
//! command and the public-API check. That check itself ([`public_api`]: each library crate's
//! public API against its committed `public-api.txt`) needs a nightly rustdoc build, so it is a
//! command, `cargo run -p xtask -- public-api`, and a step of `.ci/run`, not a test. It is not
//! part of the product and is never published.

pub mod public_api;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// The edges DESIGN.md allows between sidewire's own library crates ("B depends on A"), as
/// (dependent, dependency) pairs of package names.
pub const ALLOWED_EDGES: &[(&str, &str)] = &[
    ("sidewire-jsonrpc", "sidewire-framing"),
    ("sidewire-mcp", "sidewire-framing"),
    ("sidewire-ext-sdk", "sidewire-framing"),
    ("sidewire-ext-host", "sidewire-framing"),
    ("sidewire-ext-host", "sidewire-process"),
    ("sidewire-mcp", "sidewire-process"),
    ("sidewire-ext-protocol", "sidewire-jsonrpc"),
    ("sidewire-ext-sdk", "sidewire-jsonrpc"),
    ("sidewire-ext-host", "sidewire-jsonrpc"),
    ("sidewire-mcp", "sidewire-jsonrpc"),
    ("sidewire-ext-sdk", "sidewire-ext-protocol"),
    ("sidewire-ext-host", "sidewire-ext-protocol"),
    ("sidewire-ext-conformance", "sidewire-process"),
    ("sidewire-ext-conformance", "sidewire-ext-protocol"),
    ("sidewire-agent", "sidewire-ext-host"),
    ("sidewire-agent", "sidewire-mcp"),
    ("sidewire-agent", "sidewire-mcp-config"),
    // The config files users keep, read into `sidewire-mcp` specs (never the other way round),
    // through the one bounded read of a file a config controls (`sidewire_process::file`).
    ("sidewire-mcp-config", "sidewire-mcp"),
    ("sidewire-mcp-config", "sidewire-process"),
    ("sidewire", "sidewire-agent"),
    ("sidewire", "sidewire-ext-host"),
    ("sidewire", "sidewire-ext-conformance"),
    ("sidewire", "sidewire-mcp"),
    ("sidewire", "sidewire-mcp-config"),
    ("sidewire", "sidewire-ext-sdk"),
    ("sidewire", "sidewire-jsonrpc"),
];

/// Crates only the cli may depend on (normal dependencies).
pub const CLI_ONLY: &[&str] = &["clap", "anyhow", "tracing-subscriber"];

/// The normal (non-dev, non-build) dependencies of each workspace package, by name.
pub fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let mut out = BTreeMap::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("name").to_owned();
        let deps = package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null())
            .map(|d| d["name"].as_str().expect("dependency name").to_owned())
            .collect();
        out.insert(name, deps);
    }
    out
}

/// Every `.rs` file under `dir`, recursively, skipping build output.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target"
                    && name != "node_modules"
                    && !name.to_string_lossy().starts_with('.')
                {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The test command the README gives: the first line of a fenced block that runs
/// `cargo test`.
pub fn readme_test_command() -> Option<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).ok()?;
    readme
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("cargo test"))
        .map(str::to_owned)
}
