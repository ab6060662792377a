//! Repository checks for sidewire, run inside `cargo test` so a local run and CI agree.
//!
//! It checks what a reviewer would otherwise have to remember: that crates depend only along
//! the edges the design allows (and never on clap, anyhow or a runtime constructor outside the
//! cli), that every Rust file opens with a `//!` saying what it is, that no `dbg!`, `todo!`,
//! `#[ignore]` or `#[should_panic]` slipped in, that `.ci/run` runs the README's test
//! command, the public-API check and `.ci/package.sh` (`cargo package`), and that every crate
//! meant for crates.io carries what publishing needs ([`UNPUBLISHED`] names the ones that are
//! not). The public-API check itself ([`public_api`]: each library crate's public API against
//! its committed `public-api.txt`) needs a nightly rustdoc build, so it is a command, `cargo run
//! -p xtask -- public-api`, and a step of `.ci/run`, not a test. It is not part of the product
//! and is never published.

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
    // Claude-style command hooks: each hook a supervised child, and the hook points its
    // events map to.
    ("sidewire-hooks", "sidewire-process"),
    ("sidewire-hooks", "sidewire-ext-protocol"),
    ("sidewire-agent", "sidewire-ext-host"),
    ("sidewire-agent", "sidewire-mcp"),
    ("sidewire-agent", "sidewire-mcp-config"),
    // Command hooks meet the extension host only here: the agent composes both.
    ("sidewire-agent", "sidewire-hooks"),
    // The config files users keep, read into `sidewire-mcp` specs (never the other way round),
    // through the one bounded read of a file a config controls (`sidewire_process::file`).
    ("sidewire-mcp-config", "sidewire-mcp"),
    ("sidewire-mcp-config", "sidewire-process"),
    // The server side of MCP: the client's wire types (`Tool`, `CallToolResult`, the version
    // constants), never its transports, and the NDJSON codec for stdio.
    ("sidewire-mcp-server", "sidewire-mcp"),
    ("sidewire-mcp-server", "sidewire-framing"),
    // The gateway: the server side downstream, the host upstream, and every tool call through
    // the agent's chained call on the extension host.
    ("sidewire-gateway", "sidewire-agent"),
    ("sidewire-gateway", "sidewire-ext-host"),
    ("sidewire-gateway", "sidewire-mcp"),
    ("sidewire-gateway", "sidewire-mcp-server"),
    ("sidewire", "sidewire-agent"),
    ("sidewire", "sidewire-gateway"),
    ("sidewire", "sidewire-ext-host"),
    ("sidewire", "sidewire-ext-conformance"),
    ("sidewire", "sidewire-mcp"),
    ("sidewire", "sidewire-mcp-config"),
    ("sidewire", "sidewire-mcp-server"),
    ("sidewire", "sidewire-ext-sdk"),
    ("sidewire", "sidewire-jsonrpc"),
    ("sidewire", "sidewire-hooks"),
];

/// Crates only the cli may depend on (normal dependencies).
pub const CLI_ONLY: &[&str] = &["clap", "anyhow", "tracing-subscriber"];

/// The workspace members that are never published (`publish = false`): test helpers, the
/// benchmarks and this crate. Every other member is a crate on crates.io.
pub const UNPUBLISHED: &[&str] = &["sidewire-test-support", "sidewire-benches", "xtask"];

/// The normal (non-dev, non-build) dependencies of each workspace package, by name.
pub fn normal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let metadata = metadata();
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

/// `cargo metadata --no-deps` of the workspace: its members, their manifests' fields and their
/// dependencies as declared.
pub fn metadata() -> serde_json::Value {
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
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
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

/// The module layers inside `sidewire-mcp`, lowest first: each layer's name, its top-level
/// modules of `crates/mcp/src`, and the layers below it that its code may use (`crate::…`
/// paths, tests excluded; a name the crate root re-exports counts as the module that defines
/// it). A layer may use only layers listed before it, so the layers form a DAG by
/// construction; `mcp_modules_form_the_allowed_layers` checks the code against it.
///
/// One layer holds more than one module: `core`, the protocol core, whose error type carries
/// protocol results (a call's result, schema violations, the era's error codes), whose spec
/// names the era it asks for, and whose transport seam (what a transport yields, how it
/// closes) the protocol runs on. It names no transport: `stdio` and `http` are above it,
/// `http` defines the authorizer trait (`http::Authorize`) it sees authorization through,
/// `auth` implements it, and only `connect` (`Client::connect`) knows every transport.
pub const MCP_MODULE_LAYERS: &[(&str, &[&str], &[&str])] = &[
    ("text", &["text"], &[]),
    ("names", &["names"], &["text"]),
    // What a spec carries to authorize: the `Authorizer`, settings, token stores.
    ("credentials", &["credentials"], &["text"]),
    // A URL's secrets, as a spec keeps them and the HTTP transport and OAuth show URLs.
    ("redact", &["redact"], &["text"]),
    (
        "core",
        &["error", "spec", "transport", "protocol"],
        &["text", "names", "credentials", "redact"],
    ),
    // Cuts the results the protocol types define.
    ("cap", &["cap"], &["text", "core"]),
    ("stdio", &["stdio"], &["text", "core"]),
    ("http", &["http"], &["text", "core", "redact"]),
    (
        "auth",
        &["auth"],
        &["text", "credentials", "core", "redact", "http"],
    ),
    ("connect", &["connect"], &["core", "stdio", "http", "auth"]),
    (
        "host",
        &["host"],
        &[
            "text",
            "names",
            "credentials",
            "core",
            "cap",
            "auth",
            "connect",
        ],
    ),
    ("fuzz", &["fuzz"], &["text", "core", "cap", "http", "auth"]),
];

/// The top-level modules of `sidewire-mcp` each module uses, from its source: `crate::NAME`
/// and `crate::{A, B}` paths in code (comments, `tests.rs` files and everything after a
/// top-level `#[cfg(test)]` left out), a root re-export resolved to its module.
pub fn mcp_module_uses() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("crates/mcp/src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let reexports = root_reexports(&code_only(&lib));
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in rust_files(&src) {
        let relative = path.strip_prefix(&src).expect("under src");
        let mut parts = relative
            .iter()
            .map(|part| part.to_string_lossy().into_owned());
        let first = parts.next().expect("a file");
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib"
            || relative.file_name().is_some_and(|name| name == "tests.rs")
            || relative.iter().any(|part| part == "tests")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let code = code_only(match text.find("\n#[cfg(test)]") {
            Some(at) => &text[..at],
            None => &text,
        });
        let entry = uses.entry(module.clone()).or_default();
        for name in crate_paths(&code) {
            let target = reexports.get(&name).cloned().unwrap_or(name);
            if target != module {
                entry.insert(target);
            }
        }
    }
    uses
}

/// `text` without its comments (`//` to the end of a line; string contents are kept, which
/// is fine for finding paths).
fn code_only(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segment of every `crate::…` path in `code` (`$crate::` included), each name of a
/// `crate::{…}` group too.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group);
            for item in split_top_level(&group[..end]) {
                out.push(ident(item.trim()));
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|name| !name.is_empty() && name != "self");
    out
}

/// The index of the `}` closing a group whose `{` was just before `text`.
fn matching_brace(text: &str) -> usize {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return at,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// `text` split at the commas outside braces.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// The identifier `text` starts with.
fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// What the crate root re-exports, by name: the module each comes from (`pub use
/// crate::MODULE::…::{A, B}` and `pub use crate::MODULE::…::A`).
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(at) = statement.find("pub use crate::") else {
            continue;
        };
        let path = &statement[at + "pub use crate::".len()..];
        let module = ident(path);
        let names = match path.find('{') {
            Some(open) => split_top_level(&path[open + 1..path.rfind('}').unwrap_or(path.len())])
                .into_iter()
                .map(|item| item.trim().to_owned())
                .collect(),
            None => vec![path.rsplit("::").next().unwrap_or("").trim().to_owned()],
        };
        for name in names {
            // `A as B` is known by B.
            let name = name
                .rsplit(" as ")
                .next()
                .unwrap_or(&name)
                .trim()
                .to_owned();
            if !name.is_empty() {
                out.insert(name, module.clone());
            }
        }
    }
    out
}
