//! The repository checks: layering, headers, banned patterns, CI running the README command,
//! what publishing needs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;
use xtask::public_api::LIBRARY_CRATES;
use xtask::{
    ALLOWED_EDGES, CLI_ONLY, UNPUBLISHED, metadata, normal_dependencies, readme_test_command, root,
    rust_files,
};

#[test]
fn crates_depend_only_along_the_allowed_edges() {
    let deps = normal_dependencies();
    let ours: BTreeSet<&str> = deps
        .keys()
        .map(String::as_str)
        .filter(|name| name.starts_with("sidewire"))
        .collect();
    let mut bad = Vec::new();
    for (package, dependencies) in &deps {
        if !ours.contains(package.as_str()) || package == "sidewire-benches" {
            continue;
        }
        for dep in dependencies {
            if ours.contains(dep.as_str())
                && !ALLOWED_EDGES.contains(&(package.as_str(), dep.as_str()))
            {
                bad.push(format!("{package} -> {dep}"));
            }
            if package != "sidewire" && CLI_ONLY.contains(&dep.as_str()) {
                bad.push(format!("{package} -> {dep} (only the cli may use it)"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "dependency edges DESIGN.md does not allow:\n{}",
        bad.join("\n")
    );
}

#[test]
fn ext_host_and_mcp_never_depend_on_each_other() {
    let deps = normal_dependencies();
    for (a, b) in [
        ("sidewire-ext-host", "sidewire-mcp"),
        ("sidewire-mcp", "sidewire-ext-host"),
    ] {
        if let Some(set) = deps.get(a) {
            assert!(!set.contains(b), "{a} must not depend on {b}");
        }
    }
}

#[test]
fn libraries_never_create_a_runtime() {
    let mut bad = Vec::new();
    for file in rust_files(&root().join("crates")) {
        let text = code_lines(&std::fs::read_to_string(&file).unwrap());
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        let in_lib_src = rel.contains("/src/") && !rel.starts_with("crates/cli/");
        if !in_lib_src {
            continue;
        }
        for banned in ["#[tokio::main]", "Runtime::new(", "runtime::Builder::new"] {
            if text.contains(banned) && !rel.ends_with("tests.rs") && !rel.contains("/tests/") {
                bad.push(format!("{rel}: {banned}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "only binaries create a runtime:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_agent_never_spawns_a_task() {
    // The turn loop returns futures; the caller decides where they run.
    let mut bad = Vec::new();
    for file in rust_files(&root().join("crates/agent/src")) {
        let text = code_lines(&std::fs::read_to_string(&file).unwrap());
        for banned in [
            "tokio::spawn",
            "task::spawn",
            "spawn_local",
            "spawn_blocking",
        ] {
            if text.contains(banned) {
                let rel = file.strip_prefix(root()).unwrap().display().to_string();
                bad.push(format!("{rel}: {banned}"));
            }
        }
    }
    assert!(bad.is_empty(), "sidewire-agent spawns:\n{}", bad.join("\n"));
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let mut bad = Vec::new();
    for dir in ["crates", "benches", "fuzz/fuzz_targets", "xtask"] {
        for file in rust_files(&root().join(dir)) {
            // Unit-test modules (`src/<mod>/tests.rs`) belong to the module they test.
            if file.file_name().is_some_and(|name| name == "tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            // A library's front page is its README, included as the first of its crate docs.
            if !text.trim_start().starts_with("//!") && !text.starts_with(README_AS_DOCS) {
                bad.push(file.strip_prefix(root()).unwrap().display().to_string());
            }
        }
    }
    assert!(
        bad.is_empty(),
        "files without a leading `//!` saying what they are:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_banned_patterns() {
    // Spelled in pieces so this file does not flag itself.
    let banned = [
        format!("{}!(", "dbg"),
        format!("{}!(", "todo"),
        format!("{}!(", "unimplemented"),
        format!("#[{}]", "ignore"),
        format!("#[{}", "should_panic"),
    ];
    let mut bad = Vec::new();
    for dir in ["crates", "benches", "fuzz/fuzz_targets", "xtask"] {
        for file in rust_files(&root().join(dir)) {
            let text = code_lines(&std::fs::read_to_string(&file).unwrap());
            for pattern in &banned {
                if text.contains(pattern.as_str()) {
                    bad.push(format!(
                        "{}: {pattern}",
                        file.strip_prefix(root()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "banned patterns:\n{}", bad.join("\n"));
}

#[test]
fn ci_runs_the_readme_test_command() {
    let command = readme_test_command().expect("README.md gives a `cargo test` command");
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run exists");
    assert!(
        ci.lines().any(|line| line.trim().starts_with(&command)),
        ".ci/run does not run the README's test command `{command}`"
    );
}

/// The line that makes a library's README its crate docs (the README's example a doctest).
const README_AS_DOCS: &str = "#![doc = include_str!(\"../README.md\")]";

/// Every crate meant for crates.io carries what `cargo publish` and its pages need, depends on
/// the other sidewire crates by version as well as by path (but by path only for a
/// dev-dependency that closes a cycle), and has a section in CHANGELOG.md;
/// the crates in [`UNPUBLISHED`] stay unpublished, and the registry never sees them. A new crate
/// copies an existing crate's `[package]` (ARCHITECTURE.md, "Publishing", says what each line
/// is for); this test names whatever it lacks.
#[test]
fn publishable_crates_carry_what_crates_io_needs() {
    let metadata = metadata();
    let packages = metadata["packages"].as_array().expect("packages");
    let publishable: BTreeMap<&str, bool> = packages
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["publish"].is_null()))
        .collect();
    let changelog = std::fs::read_to_string(root().join("CHANGELOG.md")).expect("CHANGELOG.md");
    let normal = normal_dependencies();
    let mut versions = BTreeSet::new();
    let mut bad = Vec::new();
    for package in packages {
        let name = package["name"].as_str().unwrap();
        let dir = Path::new(package["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap();
        if UNPUBLISHED.contains(&name) {
            if publishable[name] {
                bad.push(format!("{name}: must stay unpublished (`publish = false`)"));
            }
            continue;
        }
        if !publishable[name] {
            bad.push(format!(
                "{name}: `publish = false`, but it is not in xtask::UNPUBLISHED"
            ));
            continue;
        }
        versions.insert(package["version"].as_str().unwrap().to_owned());
        for field in [
            "description",
            "license",
            "repository",
            "rust_version",
            "readme",
        ] {
            if package[field].as_str().is_none_or(str::is_empty) {
                bad.push(format!("{name}: no `{field}`"));
            }
        }
        if package["homepage"].is_null() && package["documentation"].is_null() {
            bad.push(format!("{name}: neither `homepage` nor `documentation`"));
        }
        let count = |field: &str| package[field].as_array().map_or(0, Vec::len);
        if !(1..=5).contains(&count("keywords")) {
            bad.push(format!("{name}: 1 to 5 `keywords` (crates.io's limit)"));
        }
        if count("categories") == 0 {
            bad.push(format!("{name}: no `categories`"));
        }
        for file in ["LICENSE-MIT", "LICENSE-APACHE"] {
            if !dir.join(file).is_file() {
                bad.push(format!("{name}: no {file} in {}", dir.display()));
            }
        }
        let docs_rs = &package["metadata"]["docs"]["rs"];
        let rustdoc_args: Vec<&str> = docs_rs["rustdoc-args"]
            .as_array()
            .map(|args| args.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if docs_rs["all-features"] != true || rustdoc_args != ["--cfg", "docsrs"] {
            bad.push(format!(
                "{name}: `[package.metadata.docs.rs]` with `all-features = true` and \
                 `rustdoc-args = [\"--cfg\", \"docsrs\"]`"
            ));
        }
        let lib = package["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "lib"));
        if let Some(lib) = lib {
            let text = std::fs::read_to_string(lib["src_path"].as_str().unwrap()).unwrap();
            if !text.starts_with(README_AS_DOCS) {
                bad.push(format!(
                    "{name}: its lib.rs does not open with `{README_AS_DOCS}`"
                ));
            }
            if !text.contains("#![cfg_attr(docsrs, feature(doc_cfg))]") {
                bad.push(format!(
                    "{name}: no `#![cfg_attr(docsrs, feature(doc_cfg))]` (feature-gated items \
                     marked on docs.rs)"
                ));
            }
            let readme = std::fs::read_to_string(dir.join("README.md")).unwrap_or_default();
            // A doctest that runs: `rust` with no `no_run`, `ignore` or `compile_fail`.
            let runs = readme.lines().any(|line| {
                line.trim().strip_prefix("```rust").is_some_and(|rest| {
                    (rest.is_empty() || rest.starts_with(','))
                        && !rest
                            .split(',')
                            .any(|tag| ["no_run", "ignore", "compile_fail"].contains(&tag))
                })
            });
            if !runs {
                bad.push(format!(
                    "{name}: its README has no Rust example that runs as a doctest"
                ));
            }
            if !LIBRARY_CRATES.iter().any(|(package, _)| *package == name) {
                bad.push(format!(
                    "{name}: not in xtask's LIBRARY_CRATES (its public API is not snapshotted)"
                ));
            }
        }
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            let Some(&dep_published) = publishable.get(dep_name) else {
                continue;
            };
            // A crate's dev-dependency on itself turns its own features on for its tests
            // (`path = "."`); path-only, Cargo drops it when packaging, as it should.
            if dep_name == name && dep["kind"] == "dev" {
                continue;
            }
            let has_version = dep["req"] != "*";
            // A dev-dependency on a crate this one depends on anyway only turns features on for
            // the tests, like the self-dependency above: path-only, Cargo drops it when
            // packaging and the normal dependency, with its version, stays.
            let also_normal = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .any(|other| {
                    other["name"] == dep_name && other["kind"].is_null() && other["req"] != "*"
                });
            if dep["kind"] == "dev" && !has_version && also_normal {
                continue;
            }
            // A dev-dependency on a crate that depends on this one closes a cycle, which Cargo
            // allows for tests (sidewire-mcp's tests run sidewire-mcp-server). It must be
            // path-only, so Cargo drops it when packaging: with a `version`, neither crate
            // could be packaged or published before the other.
            if dep["kind"] == "dev" && depends_on(&normal, dep_name, name) {
                if has_version {
                    bad.push(format!(
                        "{name} -> {dep_name}: a dev-dependency that closes a cycle \
                         ({dep_name} depends on {name}), so path-only, without `version`"
                    ));
                }
                continue;
            }
            if dep_published && !has_version {
                bad.push(format!(
                    "{name} -> {dep_name}: no `version` beside the `path` (the registry \
                     needs it)"
                ));
            }
            // Cargo drops a path-only dev-dependency when packaging; any other would name a
            // crate the registry does not have.
            if !dep_published && (dep["kind"] != "dev" || has_version) {
                bad.push(format!(
                    "{name} -> {dep_name}: an unpublished crate, only as a path-only \
                     dev-dependency"
                ));
            }
        }
        let heading = format!("### {name}");
        if !changelog.lines().any(|line| {
            line.strip_prefix(&heading)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        }) {
            bad.push(format!("{name}: no `{heading}` section in CHANGELOG.md"));
        }
    }
    if versions.len() > 1 || versions.contains("0.0.0") {
        bad.push(format!(
            "the published crates share one released version (workspace.package), not {versions:?}"
        ));
    }
    assert!(
        bad.is_empty(),
        "what publishing needs is missing:\n{}",
        bad.join("\n")
    );
}

/// Whether `package` depends on `target` through normal dependencies, directly or not.
fn depends_on(normal: &BTreeMap<String, BTreeSet<String>>, package: &str, target: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![package];
    while let Some(next) = stack.pop() {
        for dep in normal.get(next).into_iter().flatten() {
            if dep == target {
                return true;
            }
            if seen.insert(dep.as_str()) {
                stack.push(dep);
            }
        }
    }
    false
}

/// Every publishable crate is packaged (and its package built) by CI, so a crate that could not
/// be published fails there rather than on release day: `.ci/package.sh` runs `cargo package
/// --workspace`, which packages every member, `publish = false` or not, so the unpublished ones
/// are excluded by name; and `.ci/run` runs its three steps (package, install, outside).
#[test]
fn ci_packages_the_publishable_crates() {
    let script = std::fs::read_to_string(root().join(".ci/package.sh")).expect(".ci/package.sh");
    let line = script
        .lines()
        .find(|line| {
            !line.trim().starts_with('#') && line.contains("cargo package --workspace --locked")
        })
        .expect(".ci/package.sh does not run `cargo package --workspace --locked`");
    for name in UNPUBLISHED {
        assert!(
            line.contains(&format!("--exclude {name}")),
            ".ci/package.sh's `cargo package` does not exclude the unpublished {name}: {line}"
        );
    }
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run exists");
    for step in ["package", "install", "outside"] {
        let command = format!("bash .ci/package.sh {step}");
        assert!(
            ci.lines()
                .any(|line| !line.trim().starts_with('#') && line.trim() == command),
            ".ci/run does not run `{command}`"
        );
    }
}

/// The public-API snapshots are not a test (they need nightly), so CI must run their check.
#[test]
fn ci_runs_the_public_api_check() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run exists");
    assert!(
        ci.lines().any(|line| !line.trim().starts_with('#')
            && line.contains("cargo run -p xtask --locked -- public-api")),
        ".ci/run does not run `cargo run -p xtask --locked -- public-api`"
    );
}

/// ARCHITECTURE.md's code map gives every module file one line, and names no file that is gone.
///
/// Under a `### `crates/<name>`` heading a path is the crate's (`src/x.rs`); under the others it
/// is the repository's. A path may name siblings as `dir/{a,b}.rs` or `dir/*.rs`.
#[test]
fn the_code_map_names_every_module_once() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("\n## Code map\n")
        .expect("ARCHITECTURE.md has a code map");
    let map = &text[start + 1..];
    let map = &map[..map[1..].find("\n## ").map_or(map.len(), |end| end + 1)];
    let mut bad = Vec::new();
    let mut named: Vec<String> = Vec::new();
    let mut base = String::new();
    for line in map.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            base = heading
                .strip_prefix('`')
                .and_then(|rest| rest.split('`').next())
                .filter(|dir| dir.starts_with("crates/"))
                .map(|dir| format!("{}/", dir.trim_end_matches('/')))
                .unwrap_or_default();
            continue;
        }
        if line.starts_with("  ") {
            bad.push(format!("a code map entry runs over one line: {line}"));
            continue;
        }
        let Some(path) = line
            .strip_prefix("- `")
            .and_then(|rest| rest.split_once("`"))
            .map(|(path, _)| path)
        else {
            continue;
        };
        for path in sibling_paths(&format!("{base}{path}")) {
            if !root().join(&path).is_file() {
                bad.push(format!("the code map names {path}, which does not exist"));
            }
            named.push(path);
        }
    }
    let mut modules = Vec::new();
    for dir in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        modules.extend(rust_files(&dir.path().join("src")));
    }
    for dir in ["benches/src", "xtask/src"] {
        modules.extend(rust_files(&root().join(dir)));
    }
    for file in modules {
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        if rel.ends_with("/tests.rs") || rel.contains("/tests/") {
            continue;
        }
        match named.iter().filter(|path| **path == rel).count() {
            1 => {}
            0 => bad.push(format!("the code map has no line for {rel}")),
            n => bad.push(format!("the code map names {rel} {n} times")),
        }
    }
    assert!(
        bad.is_empty(),
        "ARCHITECTURE.md's code map:\n{}",
        bad.join("\n")
    );
}

/// `dir/{a,b}.rs` as `dir/a.rs` and `dir/b.rs`; `dir/*.rs` as the `.rs` files in `dir`.
fn sibling_paths(path: &str) -> Vec<String> {
    if let Some((head, rest)) = path.split_once('{')
        && let Some((names, tail)) = rest.split_once('}')
    {
        return names
            .split(',')
            .map(|name| format!("{head}{name}{tail}"))
            .collect();
    }
    if let Some(dir) = path.strip_suffix("/*.rs") {
        let mut files: Vec<String> = std::fs::read_dir(root().join(dir))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.ends_with(".rs"))
                    .map(|name| format!("{dir}/{name}"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        if files.is_empty() {
            files.push(path.to_string());
        }
        return files;
    }
    vec![path.to_string()]
}

/// The text without comment lines (docs may name what the code must not contain).
fn code_lines(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn mcp_modules_form_the_allowed_layers() {
    let layers = xtask::MCP_MODULE_LAYERS;
    // The layers are a DAG: each uses only layers listed before it.
    for (index, (layer, _, below)) in layers.iter().enumerate() {
        for used in *below {
            assert!(
                layers[..index].iter().any(|(name, _, _)| name == used),
                "MCP_MODULE_LAYERS: `{layer}` may use `{used}`, which is not listed below it"
            );
        }
    }
    let layer_of = |module: &str| {
        layers
            .iter()
            .find(|(_, modules, _)| modules.contains(&module))
            .map(|(name, _, below)| (*name, *below))
    };
    let mut wrong = Vec::new();
    for (module, targets) in xtask::mcp_module_uses() {
        let Some((layer, below)) = layer_of(&module) else {
            wrong.push(format!("module `{module}` is in no layer"));
            continue;
        };
        for target in targets {
            match layer_of(&target) {
                Some((target_layer, _))
                    if target_layer == layer || below.contains(&target_layer) => {}
                Some((target_layer, _)) => wrong.push(format!(
                    "`{module}` ({layer}) uses `{target}` ({target_layer})"
                )),
                None => wrong.push(format!("`{module}` uses `{target}`, which is in no layer")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "module edges inside sidewire-mcp outside its layers (xtask::MCP_MODULE_LAYERS):\n{}",
        wrong.join("\n")
    );
}
