//! The plugin manifest, `reasonix-plugin.json` (§12.1), decoded strictly with JSON-path errors.
//!
//! This is the file format only. Installation, consent and slot conflict checks across plugins
//! (§12.2, §7.7) belong to the host crate, and the launch contract (§12.3) to `launch`; the
//! manifest's own rules (id syntax, accepted `apiVersion`, lists without duplicates, lists that
//! require a capability) are checked here. `contributes` is kept opaque: it must be a JSON
//! object, its members are not decoded.

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use crate::constants::{
    MANIFEST_API_VERSION, MANIFEST_API_VERSION_V2, MAX_PLUGIN_ID_CHARS, MAX_PRIORITY, MIN_PRIORITY,
};
use crate::decode::{
    API_VERSION, Bool, Dto, Enum, Fields, Int, List, MapOf, NonBlank, Obj, Object, PLUGIN_ID,
    Pattern, Seg, Set, Str, Uint, decode_value, parse, rule,
};
use crate::error::{Error, Target};
use crate::hooks::{HookPoint, Slot};
use crate::profile::ProtocolProfile;
use crate::v2::ManifestV2;

/// Whether `name` is a valid plugin id: `^[a-z0-9][a-z0-9-]{0,63}$` (§12.1).
pub fn is_plugin_id(name: &str) -> bool {
    let bytes = name.as_bytes();
    let ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    (1..=MAX_PLUGIN_ID_CHARS).contains(&bytes.len())
        && ok(&bytes[0])
        && bytes[1..].iter().all(|b| ok(b) || *b == b'-')
}

/// Whether `api_version` is accepted (§1, §12.1): [`MANIFEST_API_VERSION`] itself, or it followed by
/// `.` and one or more ASCII digits.
pub fn is_accepted_manifest_api_version(api_version: &str) -> bool {
    match api_version.strip_prefix(MANIFEST_API_VERSION) {
        Some("") => true,
        Some(rest) => rest
            .strip_prefix('.')
            .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit())),
        None => false,
    }
}

/// A capability a manifest declares (`runtime.capabilities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// May intercept hook points (`runtime.intercepts`).
    Interceptors,
    /// May claim slots (`runtime.replaces`).
    Strategies,
    /// May serve models (§14).
    Providers,
    /// May publish UI and offer actions (§10).
    Ui,
}

wire_enum!(Capability, "Capability", {
    Interceptors => "interceptors",
    Strategies => "strategies",
    Providers => "providers",
    Ui => "ui",
});

/// The manifest file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// `reasonix.io/plugin/v1` or `reasonix.io/plugin/v1.<digits>`, or exactly
    /// `reasonix.io/plugin/v2`.
    pub api_version: String,
    /// The plugin id, `^[a-z0-9][a-z0-9-]{0,63}$` (v2: `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`).
    pub name: String,
    /// The plugin version (non-empty; v2: may be empty).
    pub version: String,
    /// A description.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// A homepage URL.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub homepage: String,
    /// A repository URL.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub repository: String,
    /// Declarative content outside this protocol; opaque, but always a JSON object.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub contributes: Map<String, Value>,
    /// Present for a code extension, which runs with **full trust**.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeSpec>,
    /// What a v2 manifest declares beyond the v1 model; `None` for a v1 manifest. Not
    /// serialized: the serialized form is the v1 view.
    #[serde(skip)]
    pub v2: Option<Box<ManifestV2>>,
}

impl Manifest {
    /// Decodes a manifest file's text strictly; errors name the JSON path (`runtime.env`).
    ///
    /// `apiVersion` picks the parser (spec delta §1.4 P2): exactly
    /// [`MANIFEST_API_VERSION_V2`](crate::MANIFEST_API_VERSION_V2) is read by the v2 parser
    /// ([`v2::ManifestV2`](crate::v2::ManifestV2), delta §4) and mapped onto this model;
    /// anything else by the v1 parser, which accepts only v1 values.
    pub fn parse(raw: &str) -> Result<Manifest, Error> {
        let root = Seg::Root(Target::Manifest);
        let value = parse(raw, &root)?;
        if value.get("apiVersion").and_then(Value::as_str) == Some(MANIFEST_API_VERSION_V2) {
            crate::v2::manifest::decode(value, &root)
        } else {
            decode_value(value, &root)
        }
    }

    /// The protocol this plugin speaks, decided by `apiVersion` (spec delta §1.4 P2).
    pub fn profile(&self) -> ProtocolProfile {
        if self.api_version == MANIFEST_API_VERSION_V2 {
            ProtocolProfile::V2
        } else {
            ProtocolProfile::V1
        }
    }
}

impl Dto for Manifest {
    const NAME: &'static str = "Manifest";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(Manifest {
            api_version: f.req("apiVersion", Pattern(&API_VERSION))?,
            name: f.req("name", Pattern(&PLUGIN_ID))?,
            version: f.req("version", NonBlank)?,
            description: f.or_default("description", Str)?,
            homepage: f.or_default("homepage", Str)?,
            repository: f.or_default("repository", Str)?,
            contributes: f.or_default("contributes", Object)?,
            runtime: f.opt("runtime", Obj::new())?,
            v2: None,
        })
    }
}

/// `RuntimeSpec`: how to launch the sidecar and what it may do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeSpec {
    /// The executable (non-empty); may contain `${REASONIX_PLUGIN_ROOT}`.
    pub command: String,
    /// Passed verbatim as argv\[1\], argv\[2\], ….
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment; keys non-empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Whether failures fail the operation (§7.10) and the build (§13.2); default `false`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Chain order, ascending, in −1000 … 1000; default 0.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub priority: i64,
    /// Hook points, no duplicates; non-empty requires capability `interceptors`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intercepts: Vec<HookPoint>,
    /// Slots, no duplicates; non-empty requires capability `strategies`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<Slot>,
    /// Capabilities.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<Capability>,
    /// 0 = per-point defaults; values above 60,000 act as 60,000 (see
    /// [`HookPoint::timeout`](crate::HookPoint::timeout)).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub timeout_millis: u64,
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl RuntimeSpec {
    /// Whether the manifest declares `capability`.
    pub fn has(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }
}

impl Dto for RuntimeSpec {
    const NAME: &'static str = "RuntimeSpec";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let runtime = RuntimeSpec {
            command: f.req("command", NonBlank)?,
            args: f.or_default("args", List(Str))?,
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
            intercepts: f.or_default("intercepts", Set(Enum::new()))?,
            replaces: f.or_default("replaces", Set(Enum::new()))?,
            capabilities: f.or_default("capabilities", List(Enum::new()))?,
            timeout_millis: f.or_default("timeoutMillis", Uint::ANY)?,
        };
        f.check(|at| {
            if !runtime.intercepts.is_empty() && !runtime.has(Capability::Interceptors) {
                return Err(rule(
                    &at.key("intercepts"),
                    "requires capability \"interceptors\"",
                ));
            }
            if !runtime.replaces.is_empty() && !runtime.has(Capability::Strategies) {
                return Err(rule(
                    &at.key("replaces"),
                    "requires capability \"strategies\"",
                ));
            }
            Ok(())
        })?;
        Ok(runtime)
    }
}

#[cfg(test)]
mod tests;
