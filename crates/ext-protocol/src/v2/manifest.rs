//! Manifest v2 (`reasonix.io/plugin/v2`, spec delta §4): a strict parser of its own, mapped onto
//! the v1 plugin model ([`Manifest`], [`RuntimeSpec`]) plus [`ManifestV2`], what v1 has no word
//! for. [`Manifest::parse`] picks this parser when `apiVersion` is exactly
//! [`MANIFEST_API_VERSION_V2`]; every other value goes to the v1 parser, unchanged.
//!
//! What is checked (delta §4.1–§4.2, §2.6, §2.8): unknown members at every level (errors name the
//! JSON path), the wider name pattern, `requires`/`provides` as [`CapabilityRef`] (key parts
//! non-empty and without whitespace; in `provides` a semver version and, for kinds `provider`,
//! `tool`, `ui` and `uiaction`, a schema hash, and no duplicate keys; in `requires` a semver
//! `version` and a [`VersionRange`] when set), `contributes` member names, and `runtime` with
//! v2's relaxations (intercepts and replaces need no capability, duplicates are dropped, args
//! must be non-blank, capability `tools`, `runtime.tools`) and its slot grammar ([`SlotForm`]).
//!
//! `contributes` and the legacy root members (`skills`, `commands`, `hooks`, `mcpServers`) are
//! validated and merged by [`contributes`](super::contributes) into [`Contributions`].

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use crate::constants::{MANIFEST_API_VERSION_V2, MAX_PRIORITY, MIN_PRIORITY};
use crate::decode::{
    Bool, Dto, Enum, Exact, Fields, Int, List, MapOf, NonBlank, Obj, Object, Seg, Str, Uint, blank,
    mismatch, rule,
};
use crate::error::Error;
use crate::hooks::{HookPoint, Slot};
use crate::manifest::{Capability, Manifest, RuntimeSpec};
use crate::v2::contributes::{self, ContributesDoc, Contributions, Legacy};
use crate::v2::deps::{VersionRange, is_capability_version};

/// The v2 name pattern (delta §3.3, PP), wider than v1's plugin id.
pub const NAME_PATTERN: &str = "^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$";

/// Whether `name` matches [`NAME_PATTERN`].
pub fn is_plugin_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let ok = |b: &u8| b.is_ascii_alphanumeric();
    (1..=64).contains(&bytes.len())
        && ok(&bytes[0])
        && bytes[1..]
            .iter()
            .all(|b| ok(b) || matches!(b, b'.' | b'_' | b'-'))
}

/// The `runtime.capabilities` a v2 manifest may declare: v1's four and `tools`.
pub const CAPABILITIES: [&str; 5] = ["interceptors", "strategies", "providers", "ui", "tools"];

/// Kinds whose provided capabilities need a `schemaHash` (delta §2.6).
const HASHED_KINDS: [&str; 4] = ["provider", "tool", "ui", "uiaction"];

/// What a v2 manifest says beyond the v1 plugin model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestV2 {
    /// `requires`, trimmed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<CapabilityRef>,
    /// `provides`, trimmed, keys unique.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<CapabilityRef>,
    /// `contributes` merged with the legacy root members `skills`, `commands`, `hooks` and
    /// `mcpServers`, validated (delta §4.1); [`Manifest::contributes`] holds the same as JSON.
    #[serde(skip_serializing_if = "Contributions::is_empty")]
    pub contributions: Contributions,
    /// `runtime.replaces` in v2's grammar (the eight names, `tool:…`, `provider:…`), without
    /// duplicates, in manifest order. [`RuntimeSpec::replaces`] holds only the eight names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// `runtime.capabilities` as written, without duplicates (may hold `tools`, which
    /// [`RuntimeSpec::capabilities`] cannot).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// `runtime.tools`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<RuntimeTool>,
}

impl ManifestV2 {
    /// Whether `runtime.capabilities` names `capability` (any of [`CAPABILITIES`]).
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }
}

/// `CapabilityRef`: one entry of a v2 manifest's `requires` or `provides`; every string trimmed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityRef {
    /// Its namespace.
    pub namespace: String,
    /// Its kind.
    pub kind: String,
    /// Its id.
    pub id: String,
    /// Its version.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The versions a requirement accepts.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version_range: String,
    /// Its schema hash.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub schema_hash: String,
    /// Whether a requirement is optional.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

impl CapabilityRef {
    /// `namespace/kind/id`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.namespace, self.kind, self.id)
    }
}

impl Dto for CapabilityRef {
    const NAME: &'static str = "CapabilityRef";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let trimmed = |s: String| s.trim().to_owned();
        let capability = CapabilityRef {
            namespace: trimmed(f.or_default("namespace", Str)?),
            kind: trimmed(f.or_default("kind", Str)?),
            id: trimmed(f.or_default("id", Str)?),
            version: trimmed(f.or_default("version", Str)?),
            version_range: trimmed(f.or_default("versionRange", Str)?),
            schema_hash: trimmed(f.or_default("schemaHash", Str)?),
            optional: f.or_default("optional", Bool)?,
        };
        f.check(|at| {
            for (name, part) in [
                ("namespace", &capability.namespace),
                ("kind", &capability.kind),
                ("id", &capability.id),
            ] {
                if part.is_empty() {
                    return Err(blank(&at.key(name)));
                }
                if part.chars().any(char::is_whitespace) {
                    return Err(rule(&at.key(name), "must not contain whitespace"));
                }
            }
            Ok(())
        })?;
        Ok(capability)
    }
}

/// `RuntimeTool`: one tool of `runtime.tools` (kept; sidewire does not serve extension tools
/// yet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeTool {
    /// Its name: non-blank, no whitespace, unique in the manifest.
    pub name: String,
    /// Its description (non-blank).
    pub description: String,
    /// A JSON Schema object with `"type": "object"`.
    pub input_schema: Map<String, Value>,
    /// Whether the tool only reads.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

impl Dto for RuntimeTool {
    const NAME: &'static str = "RuntimeTool";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let tool = RuntimeTool {
            name: f.req("name", NonBlank)?.trim().to_owned(),
            description: f.req("description", NonBlank)?.trim().to_owned(),
            input_schema: f.req("inputSchema", Object)?,
            read_only: f.or_default("readOnly", Bool)?,
        };
        f.check(|at| {
            if tool.name.chars().any(char::is_whitespace) {
                return Err(rule(&at.key("name"), "must not contain whitespace"));
            }
            if tool.input_schema.get("type") != Some(&Value::from("object")) {
                return Err(rule(
                    &at.key("inputSchema"),
                    "must be a JSON Schema with \"type\": \"object\"",
                ));
            }
            Ok(())
        })?;
        Ok(tool)
    }
}

/// The whole v2 document, as read.
#[derive(Debug, Serialize)]
struct Doc {
    api_version: String,
    name: String,
    version: String,
    description: String,
    homepage: String,
    repository: String,
    requires: Vec<CapabilityRef>,
    provides: Vec<CapabilityRef>,
    contributions: Contributions,
    runtime: Option<RuntimeDoc>,
}

impl Dto for Doc {
    const NAME: &'static str = "ManifestV2";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let trimmed = |s: String| s.trim().to_owned();
        let api_version = f.req("apiVersion", Exact(MANIFEST_API_VERSION_V2))?;
        let name = trimmed(f.req("name", Str)?);
        let version = trimmed(f.or_default("version", Str)?);
        let description = trimmed(f.or_default("description", Str)?);
        let homepage = trimmed(f.or_default("homepage", Str)?);
        let repository = trimmed(f.or_default("repository", Str)?);
        let requires: Vec<CapabilityRef> = f.or_default("requires", List(Obj::new()))?;
        let provides: Vec<CapabilityRef> = f.or_default("provides", List(Obj::new()))?;
        let contributes: Option<ContributesDoc> = f.opt("contributes", Obj::new())?;
        let legacy = Legacy::read(f)?;
        let runtime = f.opt("runtime", Obj::new())?;
        let mut contributions = Contributions::default();
        f.check(|at| {
            contributions = contributes::merge(contributes, legacy, at)?;
            if !is_plugin_name(&name) {
                return Err(mismatch(&at.key("name"), &name, NAME_PATTERN));
            }
            let here = at.key("requires");
            for (i, requirement) in requires.iter().enumerate() {
                check_requirement(requirement, &here.index(i))?;
            }
            let at = at.key("provides");
            for (i, capability) in provides.iter().enumerate() {
                let here = at.index(i);
                if capability.version.is_empty() {
                    return Err(rule(
                        &here.key("version"),
                        "a provided capability needs a version",
                    ));
                }
                if !is_capability_version(&capability.version) {
                    return Err(rule(
                        &here.key("version"),
                        "must be a semver version (a leading v allowed)",
                    ));
                }
                if HASHED_KINDS.contains(&capability.kind.as_str())
                    && capability.schema_hash.is_empty()
                {
                    return Err(rule(
                        &here.key("schemaHash"),
                        format!("kind {:?} needs a schemaHash", capability.kind),
                    ));
                }
                if provides[..i].iter().any(|c| c.key() == capability.key()) {
                    return Err(rule(
                        &here,
                        format!("{} is declared twice", capability.key()),
                    ));
                }
            }
            Ok(())
        })?;
        Ok(Doc {
            api_version,
            name,
            version,
            description,
            homepage,
            repository,
            requires,
            provides,
            contributions,
            runtime,
        })
    }
}

/// The requirement rules of delta §2.6 beyond the key: `version` semver when set, and
/// `versionRange` in the reference's clause grammar when set.
fn check_requirement(requirement: &CapabilityRef, at: &Seg<'_>) -> Result<(), Error> {
    if !requirement.version.is_empty() && !is_capability_version(&requirement.version) {
        return Err(rule(
            &at.key("version"),
            "must be a semver version (a leading v allowed)",
        ));
    }
    if !requirement.version_range.is_empty() {
        VersionRange::parse(&requirement.version_range)
            .map_err(|err| rule(&at.key("versionRange"), err.to_string()))?;
    }
    Ok(())
}

/// `runtime` of a v2 manifest, as read.
#[derive(Debug, Serialize)]
struct RuntimeDoc {
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    required: bool,
    priority: i64,
    intercepts: Vec<HookPoint>,
    replaces: Vec<String>,
    capabilities: Vec<String>,
    timeout_millis: u64,
    tools: Vec<RuntimeTool>,
}

impl Dto for RuntimeDoc {
    const NAME: &'static str = "RuntimeSpecV2";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let mut runtime = RuntimeDoc {
            command: f.req("command", NonBlank)?.trim().to_owned(),
            args: f.or_default("args", List(NonBlank))?,
            env: f.or_default(
                "env",
                MapOf {
                    value: Str,
                    non_blank_keys: true,
                },
            )?,
            required: f.or_default("required", Bool)?,
            priority: f.or_default(
                "priority",
                Int {
                    min: MIN_PRIORITY,
                    max: MAX_PRIORITY,
                },
            )?,
            intercepts: f.or_default("intercepts", List(Enum::new()))?,
            replaces: f.or_default("replaces", List(Str))?,
            capabilities: f.or_default("capabilities", List(Str))?,
            timeout_millis: f.or_default("timeoutMillis", Uint::ANY)?,
            tools: f.or_default("tools", List(Obj::new()))?,
        };
        f.check(|at| check_runtime(&runtime, at))?;
        // Duplicates are tolerated by the reference parser; keep the first of each.
        dedupe(&mut runtime.intercepts);
        dedupe(&mut runtime.replaces);
        dedupe(&mut runtime.capabilities);
        Ok(runtime)
    }
}

fn check_runtime(runtime: &RuntimeDoc, at: &Seg<'_>) -> Result<(), Error> {
    let here = at.key("replaces");
    for (i, slot) in runtime.replaces.iter().enumerate() {
        if !is_slot_v2(slot) {
            return Err(rule(
                &here.index(i),
                format!(
                    "unknown slot {slot:?} (want a named slot, tool:<name>, \
                     provider:<name>/<model> or provider:plugin/<pluginId>/<name>/<model>)"
                ),
            ));
        }
    }
    let here = at.key("capabilities");
    for (i, capability) in runtime.capabilities.iter().enumerate() {
        if !CAPABILITIES.contains(&capability.as_str()) {
            return Err(rule(
                &here.index(i),
                format!(
                    "unknown capability {capability:?} (want one of: {})",
                    CAPABILITIES.join(", ")
                ),
            ));
        }
    }
    let here = at.key("tools");
    if !runtime.tools.is_empty() && !runtime.capabilities.iter().any(|c| c == "tools") {
        return Err(rule(
            &here,
            "runtime.tools needs \"tools\" in runtime.capabilities",
        ));
    }
    for (i, tool) in runtime.tools.iter().enumerate() {
        if runtime.tools[..i].iter().any(|t| t.name == tool.name) {
            return Err(rule(
                &here.index(i).key("name"),
                format!("{:?} is declared twice", tool.name),
            ));
        }
    }
    Ok(())
}

/// A slot in v2's grammar (delta §2.8): one of the eight names, `tool:<name>` (a non-empty name
/// without whitespace), or `provider:<name>/<model>` or `provider:plugin/<pluginId>/<name>/<model>`
/// (every part non-empty and without whitespace).
pub fn is_slot_v2(slot: &str) -> bool {
    Slot::parse(slot).is_some() || SlotForm::parse(slot).is_some()
}

/// The two slot forms only v2 has (delta §2.8). Each has at most one owner across the installed
/// plugins; sidewire calls nobody for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum SlotForm {
    /// `tool:<name>`.
    Tool,
    /// `provider:<ref>`.
    Provider,
}

impl SlotForm {
    /// The form of `slot` when it is a valid `tool:…` or `provider:…` slot.
    pub fn parse(slot: &str) -> Option<SlotForm> {
        let part = |s: &str| !s.is_empty() && !s.chars().any(char::is_whitespace);
        if let Some(name) = slot.strip_prefix("tool:") {
            return part(name).then_some(SlotForm::Tool);
        }
        let rest = slot.strip_prefix("provider:")?;
        let parts: Vec<&str> = rest.split('/').collect();
        let ok = match parts.as_slice() {
            ["plugin", rest @ ..] => rest.len() == 3 && rest.iter().all(|p| part(p)),
            [name, model] => part(name) && part(model),
            _ => false,
        };
        ok.then_some(SlotForm::Provider)
    }
}

fn dedupe<T: PartialEq>(items: &mut Vec<T>) {
    let mut kept: Vec<T> = Vec::with_capacity(items.len());
    for item in items.drain(..) {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    *items = kept;
}

/// Decodes a v2 manifest (already parsed) and maps it onto the plugin model.
pub(crate) fn decode(value: Value, at: &Seg<'_>) -> Result<Manifest, Error> {
    let doc: Doc = crate::decode::decode_value(value, at)?;
    let runtime = doc.runtime.as_ref().map(|runtime| RuntimeSpec {
        command: runtime.command.clone(),
        args: runtime.args.clone(),
        env: runtime.env.clone(),
        required: runtime.required,
        priority: runtime.priority,
        intercepts: runtime.intercepts.clone(),
        // Only the eight named slots exist in the v1 model; `tool:…` and `provider:…` stay in
        // `ManifestV2::replaces` and are not claimed or routed yet.
        replaces: runtime
            .replaces
            .iter()
            .filter_map(|s| Slot::parse(s))
            .collect(),
        capabilities: (runtime.capabilities.iter())
            .filter_map(|c| Capability::parse(c))
            .collect(),
        timeout_millis: runtime.timeout_millis,
    });
    let (replaces, capabilities, tools) = match doc.runtime {
        Some(runtime) => (runtime.replaces, runtime.capabilities, runtime.tools),
        None => Default::default(),
    };
    Ok(Manifest {
        api_version: doc.api_version,
        name: doc.name,
        version: doc.version,
        description: doc.description,
        homepage: doc.homepage,
        repository: doc.repository,
        contributes: match serde_json::to_value(&doc.contributions) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        },
        runtime,
        v2: Some(Box::new(ManifestV2 {
            requires: doc.requires,
            provides: doc.provides,
            contributions: doc.contributions,
            replaces,
            capabilities,
            tools,
        })),
    })
}

#[cfg(test)]
mod tests;
