//! The public-API listing of a library crate, rendered from rustdoc's JSON output.
//!
//! [`generate_all`] runs `cargo +nightly doc` with rustdoc's JSON output for every library crate
//! (all features, so a feature-gated item is listed too, into `public-api/` under the target directory, so the stable build's
//! fingerprints are not touched) and [`render`] turns the JSON into one sorted line per public item: modules,
//! re-exports of other crates, types with their public fields and variants, functions with
//! their signatures, trait impls (auto traits too, since `Send`/`Sync` are part of a type's
//! API; blanket impls are left out as noise). The committed `public-api.txt` of each library
//! crate is that listing, so a change to the public surface is a visible diff in review.
//! [`check`] compares the listings with the committed files (`cargo run -p xtask -- public-api`,
//! a step of its own in `.ci/run`); `cargo run -p xtask -- bless-public-api` rewrites them. It
//! is not a test: a plain `cargo test` builds nothing with nightly and writes nothing.
//!
//! It reads the JSON as untyped values, not through `rustdoc-types`: that crate is tied to one
//! format version and the installed nightly's format lags the crate's releases; the handful of
//! item shapes read here have been stable across format versions. It is not a semver checker.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The library crates whose public API is snapshotted, as (package, crate directory).
pub const LIBRARY_CRATES: &[(&str, &str)] = &[
    ("sidewire-framing", "crates/framing"),
    ("sidewire-process", "crates/process"),
    ("sidewire-jsonrpc", "crates/jsonrpc"),
    ("sidewire-ext-protocol", "crates/ext-protocol"),
    ("sidewire-ext-sdk", "crates/ext-sdk"),
    ("sidewire-ext-host", "crates/ext-host"),
    ("sidewire-ext-conformance", "crates/ext-conformance"),
    ("sidewire-mcp", "crates/mcp"),
    ("sidewire-mcp-config", "crates/mcp-config"),
    ("sidewire-mcp-server", "crates/mcp-server"),
    ("sidewire-hooks", "crates/hooks"),
    ("sidewire-agent", "crates/agent"),
    ("sidewire-gateway", "crates/gateway"),
];

/// Traits whose impls are left out: compiler-internal or unstable, never a promise to users.
const INTERNAL_TRAITS: &[&str] = &["Freeze", "UnsafeUnpin", "StructuralPartialEq"];

/// The snapshot file of a crate directory.
pub fn snapshot_path(root: &Path, crate_dir: &str) -> PathBuf {
    root.join(crate_dir).join("public-api.txt")
}

/// Whether `cargo +nightly` can run here.
pub fn nightly_available() -> bool {
    Command::new("cargo")
        .args(["+nightly", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs rustdoc's JSON backend on every crate of [`LIBRARY_CRATES`] (one cargo invocation, so
/// they build in parallel) and returns each package's rendered listing, in that order.
pub fn generate_all(root: &Path) -> Result<Vec<(&'static str, String)>, String> {
    if !nightly_available() {
        return Err(
            "the public-API listing needs the nightly toolchain (rustdoc's JSON output \
                    is unstable): `rustup toolchain install nightly`"
                .to_owned(),
        );
    }
    // The workspace's target directory (`CARGO_TARGET_DIR` when set), never the checkout.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("public-api");
    let mut command = Command::new("cargo");
    command.args([
        "+nightly",
        "doc",
        "-q",
        "--locked",
        "--no-deps",
        "--lib",
        "--all-features",
    ]);
    for (package, _) in LIBRARY_CRATES {
        command.args(["-p", package]);
    }
    let output = command
        .env("CARGO_TARGET_DIR", &target)
        .env("RUSTDOCFLAGS", "-Z unstable-options --output-format json")
        // Set by an outer cargo or rustup; they would pin the stable tools.
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo +nightly doc: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo +nightly doc (JSON) failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut out = Vec::new();
    for (package, _) in LIBRARY_CRATES {
        let file = target
            .join("doc")
            .join(format!("{}.json", package.replace('-', "_")));
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let json: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        out.push((*package, render(&json)));
    }
    Ok(out)
}

/// Compares each library crate's listing, generated now, with its committed `public-api.txt`.
///
/// # Errors
///
/// The listings could not be generated (no nightly, a build failure), or they differ from the
/// committed files: the message lists each changed line per crate, and how to accept them.
pub fn check(root: &Path) -> Result<(), String> {
    let listings = generate_all(root)?;
    let mut report = String::new();
    for ((package, dir), (_, listing)) in LIBRARY_CRATES.iter().zip(listings) {
        let path = snapshot_path(root, dir);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        report.push_str(&diff(package, &path, &committed, &listing));
    }
    if report.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the public API changed; review the lines below and, if intended, run \
         `cargo run -p xtask -- bless-public-api` and commit the listings:\n{report}"
    ))
}

/// The lines of `listing` that `committed` lacks (`+`) and the reverse (`-`), under a heading
/// naming the crate; empty when they are equal.
fn diff(package: &str, path: &Path, committed: &str, listing: &str) -> String {
    if committed == listing {
        return String::new();
    }
    let old: BTreeSet<&str> = committed.lines().collect();
    let new: BTreeSet<&str> = listing.lines().collect();
    let mut out = format!("\n{package} ({}):\n", path.display());
    for line in old.difference(&new) {
        out.push_str(&format!("- {line}\n"));
    }
    for line in new.difference(&old) {
        out.push_str(&format!("+ {line}\n"));
    }
    out
}

/// What a line says about the item it is listed under, in listing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Item,
    Field,
    Member,
    Impl,
}

/// Renders rustdoc JSON into the sorted listing, one item a line, ending in a newline.
pub fn render(json: &Value) -> String {
    let mut walker = Walker {
        index: &json["index"],
        lines: BTreeSet::new(),
        visited: BTreeSet::new(),
    };
    let root = id_key(&json["root"]);
    let name = walker.index[&root]["name"]
        .as_str()
        .unwrap_or("crate")
        .to_owned();
    walker.module(&root, &name);
    let mut out = String::new();
    for (_, _, line) in walker.lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn id_key(id: &Value) -> String {
    match id {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

struct Walker<'a> {
    index: &'a Value,
    /// (the public path of the item a line is about, what the line is, the line): sorted so
    /// that a type's fields, members and impls follow it.
    lines: BTreeSet<(String, Rank, String)>,
    /// (item id, path) pairs already listed, so a re-export cycle cannot loop.
    visited: BTreeSet<(String, String)>,
}

impl<'a> Walker<'a> {
    fn add(&mut self, key: &str, line: String) {
        self.lines.insert((key.to_owned(), Rank::Item, line));
    }

    fn add_to(&mut self, owner: &str, rank: Rank, line: String) {
        self.lines.insert((owner.to_owned(), rank, line));
    }

    fn item(&self, id: &str) -> Option<&'a Value> {
        self.index.get(id)
    }

    fn module(&mut self, id: &str, path: &str) {
        if !self
            .visited
            .insert((format!("members of {id}"), path.to_owned()))
        {
            return;
        }
        let Some(module) = self.item(id) else { return };
        let items: Vec<String> = module["inner"]["module"]["items"]
            .as_array()
            .map(|a| a.iter().map(id_key).collect())
            .unwrap_or_default();
        for child in items {
            self.public_item(&child, path);
        }
    }

    /// Lists a module member that is public at `parent`.
    fn public_item(&mut self, id: &str, parent: &str) {
        let Some(item) = self.item(id) else { return };
        if item["visibility"] != "public" {
            return;
        }
        if let Some(use_) = item["inner"].get("use") {
            let target = id_key(&use_["id"]);
            let source = use_["source"].as_str().unwrap_or_default();
            let name = use_["name"].as_str().unwrap_or_default();
            let glob = use_["is_glob"].as_bool().unwrap_or(false);
            match self.item(&target) {
                Some(local) if glob => {
                    if local["inner"].get("module").is_some() {
                        self.module(&target, parent);
                    }
                }
                Some(_) => self.named(&target, &format!("{parent}::{name}")),
                None if glob => {
                    self.add(parent, format!("pub use {parent}::{source}::*"));
                }
                None => {
                    let path = format!("{parent}::{name}");
                    let line = format!("pub use {path} = {}", strip(source));
                    self.add(&path, line);
                }
            }
            return;
        }
        let Some(name) = item["name"].as_str() else {
            return;
        };
        self.named(id, &format!("{parent}::{name}"));
    }

    /// Lists item `id` under the public path `path`.
    fn named(&mut self, id: &str, path: &str) {
        if !self.visited.insert((id.to_owned(), path.to_owned())) {
            return;
        }
        let Some(item) = self.item(id) else { return };
        let Some((kind, inner)) = item["inner"].as_object().and_then(|o| o.iter().next()) else {
            return;
        };
        let deprecated = if item["deprecation"].is_null() {
            ""
        } else {
            "#[deprecated] "
        };
        match kind.as_str() {
            "module" => {
                self.add(path, format!("{deprecated}pub mod {path}"));
                self.module(id, path);
            }
            "struct" => {
                let generics = generics(&inner["generics"]);
                let kind = &inner["kind"];
                let mut shape = String::new();
                if let Some(fields) = kind.get("tuple").and_then(Value::as_array) {
                    let fields: Vec<String> = fields
                        .iter()
                        .map(|f| {
                            self.item(&id_key(f))
                                .filter(|f| f["visibility"] == "public")
                                .map(|f| ty(&f["inner"]["struct_field"]))
                                .unwrap_or_else(|| "_".into())
                        })
                        .collect();
                    shape = format!("({})", fields.join(", "));
                } else if let Some(plain) = kind.get("plain") {
                    self.fields(&plain["fields"], path);
                    if plain["has_stripped_fields"] == true {
                        shape = " { .. }".into();
                    }
                }
                let non_exhaustive = attrs_say(item, "non_exhaustive");
                self.add(
                    path,
                    format!(
                        "{deprecated}{non_exhaustive}pub struct {path}{generics}{shape}{}",
                        where_clause(&inner["generics"])
                    ),
                );
                self.impls(&inner["impls"], path);
            }
            "union" => {
                self.add(path, format!("{deprecated}pub union {path}"));
                self.fields(&inner["fields"], path);
                self.impls(&inner["impls"], path);
            }
            "enum" => {
                let non_exhaustive = attrs_say(item, "non_exhaustive");
                self.add(
                    path,
                    format!(
                        "{deprecated}{non_exhaustive}pub enum {path}{}{}",
                        generics(&inner["generics"]),
                        where_clause(&inner["generics"])
                    ),
                );
                for variant in inner["variants"].as_array().into_iter().flatten() {
                    self.variant(&id_key(variant), path);
                }
                self.impls(&inner["impls"], path);
            }
            "trait" => {
                let generics_ = generics(&inner["generics"]);
                let bounds = bounds(&inner["bounds"]);
                let bounds = if bounds.is_empty() {
                    String::new()
                } else {
                    format!(": {bounds}")
                };
                self.add(
                    path,
                    format!("{deprecated}pub trait {path}{generics_}{bounds}"),
                );
                for member in inner["items"].as_array().into_iter().flatten() {
                    let member = id_key(member);
                    if let Some(m) = self.item(&member) {
                        let name = m["name"].as_str().unwrap_or_default();
                        let member_path = format!("{path}::{name}");
                        let line = member_line(m, &member_path);
                        self.add_to(path, Rank::Member, line);
                    }
                }
            }
            "function" => {
                self.add(path, format!("{deprecated}{}", function(inner, path)));
            }
            "constant" => {
                self.add(
                    path,
                    format!("{deprecated}pub const {path}: {}", ty(&inner["type"])),
                );
            }
            "static" => {
                self.add(
                    path,
                    format!("{deprecated}pub static {path}: {}", ty(&inner["type"])),
                );
            }
            "type_alias" => {
                self.add(
                    path,
                    format!(
                        "{deprecated}pub type {path}{} = {}",
                        generics(&inner["generics"]),
                        ty(&inner["type"])
                    ),
                );
            }
            "macro" | "proc_macro" => {
                self.add(path, format!("pub macro {}!", last(path)));
            }
            other => {
                self.add(path, format!("pub {other} {path}"));
            }
        }
    }

    fn fields(&mut self, fields: &Value, path: &str) {
        for field in fields.as_array().into_iter().flatten() {
            if let Some(f) = self.item(&id_key(field))
                && f["visibility"] == "public"
            {
                let name = f["name"].as_str().unwrap_or_default();
                self.add_to(
                    path,
                    Rank::Field,
                    format!("pub {path}.{name}: {}", ty(&f["inner"]["struct_field"])),
                );
            }
        }
    }

    fn variant(&mut self, id: &str, enum_path: &str) {
        let Some(v) = self.item(id) else { return };
        let name = v["name"].as_str().unwrap_or_default();
        let path = format!("{enum_path}::{name}");
        let kind = &v["inner"]["variant"]["kind"];
        let shape = if let Some(fields) = kind.get("tuple").and_then(Value::as_array) {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| {
                    self.item(&id_key(f))
                        .map(|f| ty(&f["inner"]["struct_field"]))
                        .unwrap_or_else(|| "_".into())
                })
                .collect();
            format!("({})", fields.join(", "))
        } else if let Some(s) = kind.get("struct") {
            let fields: Vec<String> = s["fields"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| self.item(&id_key(f)))
                .map(|f| {
                    format!(
                        "{}: {}",
                        f["name"].as_str().unwrap_or_default(),
                        ty(&f["inner"]["struct_field"])
                    )
                })
                .collect();
            let stripped = if s["has_stripped_fields"] == true {
                ", .."
            } else {
                ""
            };
            format!(" {{ {}{stripped} }}", fields.join(", "))
        } else {
            String::new()
        };
        let non_exhaustive = attrs_say(v, "non_exhaustive");
        self.add_to(
            enum_path,
            Rank::Field,
            format!("{non_exhaustive}pub {path}{shape}"),
        );
    }

    fn impls(&mut self, impls: &Value, path: &str) {
        for id in impls.as_array().into_iter().flatten() {
            let Some(item) = self.item(&id_key(id)) else {
                continue;
            };
            let imp = &item["inner"]["impl"];
            if !imp["blanket_impl"].is_null() {
                continue;
            }
            // Compiler-internal and unstable traits are not part of any stable API.
            if let Some(name) = imp["trait"]["path"].as_str()
                && INTERNAL_TRAITS.contains(&name)
            {
                continue;
            }
            let generics_ = generics(&imp["generics"]);
            let where_ = where_clause(&imp["generics"]);
            // The type under its public path (its written path may be private or relative).
            let for_ = match imp["for"].get("resolved_path") {
                Some(p) => format!("{path}{}", args(&p["args"])),
                None => ty(&imp["for"]),
            };
            if imp["trait"].is_null() {
                for member in imp["items"].as_array().into_iter().flatten() {
                    let Some(m) = self.item(&id_key(member)) else {
                        continue;
                    };
                    if m["visibility"] != "public" {
                        continue;
                    }
                    let name = m["name"].as_str().unwrap_or_default();
                    let member_path = format!("{path}::{name}");
                    let line = member_line(m, &member_path);
                    let suffix = if generics_.is_empty() && where_.is_empty() {
                        String::new()
                    } else {
                        format!(" (in impl{generics_} {for_}{where_})")
                    };
                    self.add_to(path, Rank::Member, format!("{line}{suffix}"));
                }
            } else {
                let negative = if imp["is_negative"] == true { "!" } else { "" };
                let trait_ = path_with_args(&imp["trait"]);
                let unsafe_ = if imp["is_unsafe"] == true {
                    "unsafe "
                } else {
                    ""
                };
                self.add_to(
                    path,
                    Rank::Impl,
                    format!("{unsafe_}impl{generics_} {negative}{trait_} for {for_}{where_}"),
                );
            }
        }
    }
}

fn attrs_say(item: &Value, word: &str) -> String {
    let found = item["attrs"].as_array().into_iter().flatten().any(|a| {
        a.as_str().is_some_and(|s| s.contains(word))
            || a.as_object().is_some_and(|o| o.contains_key(word))
            || a.to_string().contains(word)
    });
    if found {
        format!("#[{word}] ")
    } else {
        String::new()
    }
}

/// A trait member or an inherent impl member.
fn member_line(m: &Value, path: &str) -> String {
    let Some((kind, inner)) = m["inner"].as_object().and_then(|o| o.iter().next()) else {
        return format!("pub {path}");
    };
    match kind.as_str() {
        "function" => function(inner, path),
        "assoc_const" | "constant" => format!("pub const {path}: {}", ty(&inner["type"])),
        "assoc_type" => {
            let b = bounds(&inner["bounds"]);
            let b = if b.is_empty() {
                String::new()
            } else {
                format!(": {b}")
            };
            let d = if inner["type"].is_null() {
                String::new()
            } else {
                format!(" = {}", ty(&inner["type"]))
            };
            format!("pub type {path}{b}{d}")
        }
        other => format!("pub {other} {path}"),
    }
}

fn function(f: &Value, path: &str) -> String {
    let header = &f["header"];
    let mut quals = String::new();
    for (flag, word) in [
        ("is_const", "const "),
        ("is_async", "async "),
        ("is_unsafe", "unsafe "),
    ] {
        if header[flag] == true {
            quals.push_str(word);
        }
    }
    let sig = &f["sig"];
    let inputs: Vec<String> = sig["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|pair| {
            let name = pair[0].as_str().unwrap_or("_");
            let t = &pair[1];
            if name == "self" {
                match ty(t).as_str() {
                    "Self" => "self".into(),
                    "&Self" => "&self".into(),
                    "&mut Self" => "&mut self".into(),
                    other => format!("self: {other}"),
                }
            } else {
                format!("{name}: {}", ty(t))
            }
        })
        .collect();
    let output = if sig["output"].is_null() {
        String::new()
    } else {
        format!(" -> {}", ty(&sig["output"]))
    };
    format!(
        "pub {quals}fn {path}{}({}){output}{}",
        generics(&f["generics"]),
        inputs.join(", "),
        where_clause(&f["generics"])
    )
}

fn last(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

fn strip(path: &str) -> &str {
    path.strip_prefix("::").unwrap_or(path)
}

fn generics(g: &Value) -> String {
    let params: Vec<String> = g["params"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let name = p["name"].as_str().unwrap_or_default();
            let kind = &p["kind"];
            if let Some(l) = kind.get("lifetime") {
                let outlives = outlives(&l["outlives"]);
                return Some(if outlives.is_empty() {
                    name.to_owned()
                } else {
                    format!("{name}: {outlives}")
                });
            }
            if let Some(t) = kind.get("type") {
                if t["is_synthetic"] == true {
                    return None;
                }
                let b = bounds(&t["bounds"]);
                let mut s = name.to_owned();
                if !b.is_empty() {
                    s = format!("{s}: {b}");
                }
                if !t["default"].is_null() {
                    s = format!("{s} = {}", ty(&t["default"]));
                }
                return Some(s);
            }
            if let Some(c) = kind.get("const") {
                return Some(format!("const {name}: {}", ty(&c["type"])));
            }
            Some(name.to_owned())
        })
        .collect();
    if params.is_empty() {
        String::new()
    } else {
        format!("<{}>", params.join(", "))
    }
}

/// `'a + 'b` from a list of lifetimes.
fn outlives(list: &Value) -> String {
    let names: Vec<&str> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    names.join(" + ")
}

fn where_clause(g: &Value) -> String {
    let preds: Vec<String> = g["where_predicates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            if let Some(b) = p.get("bound_predicate") {
                Some(format!("{}: {}", ty(&b["type"]), bounds(&b["bounds"])))
            } else if let Some(l) = p.get("lifetime_predicate") {
                Some(format!(
                    "{}: {}",
                    l["lifetime"].as_str().unwrap_or("'_"),
                    outlives(&l["outlives"])
                ))
            } else {
                p.get("eq_predicate")
                    .map(|e| format!("{} = {}", ty(&e["lhs"]), term(&e["rhs"])))
            }
        })
        .collect();
    if preds.is_empty() {
        String::new()
    } else {
        format!(" where {}", preds.join(", "))
    }
}

fn bounds(b: &Value) -> String {
    let parts: Vec<String> = b
        .as_array()
        .into_iter()
        .flatten()
        .map(|bound| {
            if let Some(t) = bound.get("trait_bound") {
                let modifier = match t["modifier"].as_str() {
                    Some("maybe") => "?",
                    Some("maybe_const") => "~const ",
                    _ => "",
                };
                format!("{modifier}{}", path_with_args(&t["trait"]))
            } else if let Some(l) = bound.get("outlives") {
                l.as_str().unwrap_or("'_").to_owned()
            } else if bound.get("use").is_some() {
                "use<..>".to_owned()
            } else {
                "?".to_owned()
            }
        })
        .collect();
    parts.join(" + ")
}

fn term(t: &Value) -> String {
    if let Some(ty_) = t.get("type") {
        ty(ty_)
    } else if let Some(c) = t.get("constant") {
        c["expr"].as_str().unwrap_or("_").to_owned()
    } else {
        "_".into()
    }
}

fn path_with_args(p: &Value) -> String {
    let path = p["path"].as_str().unwrap_or("?");
    // Paths written inside a macro expansion (derives) start with `$crate::`.
    let path = path.strip_prefix("$crate::").unwrap_or(path);
    format!("{}{}", strip(path), args(&p["args"]))
}

fn args(a: &Value) -> String {
    if let Some(ab) = a.get("angle_bracketed") {
        let mut parts: Vec<String> = ab["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|arg| {
                if let Some(t) = arg.get("type") {
                    ty(t)
                } else if let Some(l) = arg.get("lifetime") {
                    l.as_str().unwrap_or("'_").to_owned()
                } else if let Some(c) = arg.get("const") {
                    c["expr"].as_str().unwrap_or("_").to_owned()
                } else {
                    "_".to_owned()
                }
            })
            .collect();
        for c in ab["constraints"].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or_default();
            let binding = &c["binding"];
            if let Some(eq) = binding.get("equality") {
                parts.push(format!("{name} = {}", term(eq)));
            } else if let Some(b) = binding.get("constraint") {
                parts.push(format!("{name}: {}", bounds(b)));
            }
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("<{}>", parts.join(", "))
        }
    } else if let Some(p) = a.get("parenthesized") {
        let inputs: Vec<String> = p["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(ty)
            .collect();
        let output = if p["output"].is_null() {
            String::new()
        } else {
            format!(" -> {}", ty(&p["output"]))
        };
        format!("({}){output}", inputs.join(", "))
    } else {
        String::new()
    }
}

/// Renders a rustdoc `Type`.
fn ty(t: &Value) -> String {
    if let Some(s) = t.as_str() {
        return s.to_owned();
    }
    let Some((kind, v)) = t.as_object().and_then(|o| o.iter().next()) else {
        return "_".into();
    };
    match kind.as_str() {
        "resolved_path" => path_with_args(v),
        "generic" | "primitive" => v.as_str().unwrap_or("_").to_owned(),
        "borrowed_ref" => {
            let lifetime = v["lifetime"]
                .as_str()
                .map(|l| format!("{l} "))
                .unwrap_or_default();
            let mutable = if v["is_mutable"] == true { "mut " } else { "" };
            format!("&{lifetime}{mutable}{}", ty(&v["type"]))
        }
        "raw_pointer" => {
            let m = if v["is_mutable"] == true {
                "mut"
            } else {
                "const"
            };
            format!("*{m} {}", ty(&v["type"]))
        }
        "slice" => format!("[{}]", ty(v)),
        "array" => format!("[{}; {}]", ty(&v["type"]), v["len"].as_str().unwrap_or("_")),
        "tuple" => {
            let parts: Vec<String> = v.as_array().into_iter().flatten().map(ty).collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
        "impl_trait" => format!("impl {}", bounds(v)),
        "dyn_trait" => {
            let mut parts: Vec<String> = v["traits"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| path_with_args(&t["trait"]))
                .collect();
            if let Some(l) = v["lifetime"].as_str() {
                parts.push(l.to_owned());
            }
            format!("dyn {}", parts.join(" + "))
        }
        "qualified_path" => {
            let self_ = ty(&v["self_type"]);
            let name = v["name"].as_str().unwrap_or_default();
            if v["trait"].is_null() {
                format!("{self_}::{name}")
            } else {
                format!("<{self_} as {}>::{name}", path_with_args(&v["trait"]))
            }
        }
        "function_pointer" => {
            let sig = &v["sig"];
            let inputs: Vec<String> = sig["inputs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| ty(&p[1]))
                .collect();
            let output = if sig["output"].is_null() {
                String::new()
            } else {
                format!(" -> {}", ty(&sig["output"]))
            };
            format!("fn({}){output}", inputs.join(", "))
        }
        "infer" => "_".into(),
        other => format!("<{other}>"),
    }
}

#[cfg(test)]
mod tests;
