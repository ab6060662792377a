//! The lifecycle DTOs of Extension Protocol v2 (spec delta §2.2), the [`ProtocolProfile::V2`] member
//! sets: what the reference host sends in `extension/initialize` today. Decoded strictly, as
//! every DTO here; [`InitializeParams::common`] is the profile-agnostic view an extension's code
//! sees (the same as a v1 host's params), so nothing downstream of the handshake mixes the two.
//!
//! The v2 manifest (delta §4) is read by [`Manifest::parse`](crate::Manifest::parse) when its
//! `apiVersion` is `reasonix.io/plugin/v2`; what it declares beyond the v1 model is
//! [`ManifestV2`].
//!
//! [`ProtocolProfile::V2`]: crate::ProtocolProfile::V2

use serde::Serialize;

use crate::constants::{DEPENDENCY_SCHEMA_VERSION, PROTOCOL_ID_V2, PROTOCOL_VERSION_V2};
use crate::decode::{
    Bool, Dto, Enum, Exact, Fields, Int, List, NonBlank, Obj, Seg, Set, Str, Uint, rule, unique_by,
};
use crate::error::{Error, Target};
use crate::hooks::{HookPoint, Slot};
use crate::lifecycle::{self, UiActionDecl, UiHost};
use crate::manifest::{Capability, RuntimeSpec};
use crate::provider::{ProviderDescriptor, is_plugin_provider_ref};

pub mod browser;
mod contributes;
mod deps;
pub(crate) mod manifest;
pub mod ui;
mod wire;

pub use self::contributes::{Contributions, PathKind, is_glob};
pub use self::deps::{
    MAX_RANGE_CLAUSES, RangeError, VersionRange, is_capability_version, satisfies,
};
pub use self::manifest::{
    CAPABILITIES, CapabilityRef, ManifestV2, NAME_PATTERN, RuntimeTool, SlotForm, is_plugin_name,
    is_slot_v2,
};
pub use self::wire::{
    InterceptParams, InterceptResult, ProviderChunk, REPLACEMENT_POINTER, ResourcesChangedParams,
    ShutdownParams, StreamChunkParams, StreamOpenParams,
};

/// `InitializeParams` (H→E) of a v2 host.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Always `reasonix.extension.v2`.
    pub protocol_id: String,
    /// Always `"2"`.
    pub protocol_version: String,
    /// Copies of the installed manifest's lists.
    pub manifest: ManifestExpectation,
    /// The session this sidecar serves.
    pub session: SessionContext,
    /// What the host offers.
    pub capabilities: HostCapabilities,
    /// The dependency schema version (the reference host sends 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependency_schema_version: Option<u64>,
}

impl Dto for InitializeParams {
    const NAME: &'static str = "InitializeParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(InitializeParams {
            protocol_id: f.req("protocolId", Exact(PROTOCOL_ID_V2))?,
            protocol_version: f.req("protocolVersion", Exact(PROTOCOL_VERSION_V2))?,
            manifest: f.req("manifest", Obj::new())?,
            session: f.req("session", Obj::new())?,
            capabilities: f.req("capabilities", Obj::new())?,
            dependency_schema_version: f.opt("dependencySchemaVersion", Uint::ANY)?,
        })
    }
}

impl InitializeParams {
    /// What the reference host sends a plugin of this installed manifest (spec delta §2.2,
    /// §5.3): `dependencySchemaVersion` 1 at the top and in `capabilities`, the manifest's lists
    /// ([`ManifestExpectation::from_manifest`]: `tools` only when it declares `runtime.tools`),
    /// and nothing outside v2's schema. `session.epoch` is the caller's (the reference never
    /// sets it).
    pub fn from_manifest(
        runtime: &RuntimeSpec,
        declared: &ManifestV2,
        session: SessionContext,
        ui_host: UiHost,
    ) -> Self {
        InitializeParams {
            protocol_id: PROTOCOL_ID_V2.to_owned(),
            protocol_version: PROTOCOL_VERSION_V2.to_owned(),
            manifest: ManifestExpectation::from_manifest(runtime, declared),
            session,
            capabilities: HostCapabilities {
                content_refs: lifecycle::HostCapabilities::new(ui_host).content_refs,
                ui_host,
                protocol_version: PROTOCOL_VERSION_V2.to_owned(),
                dependency_schema_version: Some(DEPENDENCY_SCHEMA_VERSION),
            },
            dependency_schema_version: Some(DEPENDENCY_SCHEMA_VERSION),
        }
    }

    /// The params as an extension's code sees them whatever the profile: the v1 member set, with
    /// this connection's identity. What v1 has no word for is left out: the slots of v2's
    /// grammar beyond the eight named ones (`tool:…`, `provider:…`), the `tools` capability, and
    /// the dependency declarations (all still in `self`).
    pub fn common(&self) -> lifecycle::InitializeParams {
        let manifest = &self.manifest;
        lifecycle::InitializeParams {
            protocol_id: self.protocol_id.clone(),
            protocol_version: self.protocol_version.clone(),
            manifest: lifecycle::ManifestExpectation {
                intercepts: manifest.intercepts.clone(),
                replaces: (manifest.replaces.iter())
                    .filter_map(|slot| Slot::parse(slot))
                    .collect(),
                capabilities: (manifest.capabilities.iter())
                    .filter_map(|capability| Capability::parse(capability))
                    .collect(),
                providers: manifest.providers.clone(),
                ui_actions: manifest.ui_actions.clone(),
            },
            session: lifecycle::SessionContext {
                session_id: self.session.session_id.clone(),
                workspace_root: self.session.workspace_root.clone(),
                generation: self.session.generation,
            },
            capabilities: lifecycle::HostCapabilities {
                content_refs: self.capabilities.content_refs,
                ui_host: self.capabilities.ui_host,
                protocol_version: Some(self.capabilities.protocol_version.clone()),
            },
        }
    }
}

/// `ManifestExpectation` of a v2 host: the manifest's lists, its dependency declarations and
/// its tool names.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestExpectation {
    /// Hook points the manifest declares.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intercepts: Vec<HookPoint>,
    /// Slots the manifest claims, in v2's grammar (the eight names, `tool:…`, `provider:…`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// Capabilities the manifest declares (v2 adds `tools`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// `namespace/id` of each provider the manifest provides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<String>,
    /// The id of each UI action the manifest provides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ui_actions: Vec<String>,
    /// The manifest's `requires`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<RequirementWire>,
    /// The manifest's `provides`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<CapabilityWire>,
    /// The names of the manifest's `runtime.tools`, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

impl Dto for ManifestExpectation {
    const NAME: &'static str = "ManifestExpectation";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ManifestExpectation {
            intercepts: f.or_default("intercepts", List(Enum::new()))?,
            replaces: f.or_default("replaces", List(Str))?,
            capabilities: f.or_default("capabilities", List(Str))?,
            providers: f.or_default("providers", List(Str))?,
            ui_actions: f.or_default("uiActions", List(Str))?,
            requires: f.or_default("requires", List(Obj::new()))?,
            provides: f.or_default("provides", List(Obj::new()))?,
            tools: f.or_default("tools", List(Str))?,
        })
    }
}

/// `SessionContext` of a v2 host.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// The session id (non-empty).
    pub session_id: String,
    /// The workspace root.
    pub workspace_root: String,
    /// The generation that started this sidecar (v2 allows 0).
    pub generation: u64,
    /// The dependency-identity fingerprint of this generation, when the host sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
}

impl Dto for SessionContext {
    const NAME: &'static str = "SessionContext";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(SessionContext {
            session_id: f.req("sessionId", NonBlank)?,
            workspace_root: f.req("workspaceRoot", NonBlank)?,
            generation: f.req("generation", Uint::ANY)?,
            epoch: f.opt("epoch", Str)?,
        })
    }
}

/// `HostCapabilities` of a v2 host.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostCapabilities {
    /// Whether the host externalizes large payloads into content refs.
    pub content_refs: bool,
    /// The host's frontend.
    pub ui_host: UiHost,
    /// The protocol version again (required in v2); always `"2"`.
    pub protocol_version: String,
    /// The dependency schema version again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependency_schema_version: Option<u64>,
}

impl Dto for HostCapabilities {
    const NAME: &'static str = "HostCapabilities";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(HostCapabilities {
            content_refs: f.req("contentRefs", Bool)?,
            ui_host: f.req("uiHost", Enum::new())?,
            protocol_version: f.req("protocolVersion", Exact(PROTOCOL_VERSION_V2))?,
            dependency_schema_version: f.opt("dependencySchemaVersion", Uint::ANY)?,
        })
    }
}

/// `CapabilityWire`: one capability a plugin provides (spec delta §2.2, §2.6); opaque on the
/// wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityWire {
    /// Its namespace.
    pub namespace: String,
    /// Its kind (`provider`, `tool`, `ui`, `uiaction`, ...).
    pub kind: String,
    /// Its id.
    pub id: String,
    /// Its version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its schema hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_hash: Option<String>,
}

impl Dto for CapabilityWire {
    const NAME: &'static str = "CapabilityWire";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(CapabilityWire {
            namespace: f.req("namespace", NonBlank)?,
            kind: f.req("kind", NonBlank)?,
            id: f.req("id", NonBlank)?,
            version: f.opt("version", Str)?,
            schema_hash: f.opt("schemaHash", Str)?,
        })
    }
}

/// `RequirementWire`: one capability a plugin requires; opaque on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementWire {
    /// Its namespace.
    pub namespace: String,
    /// Its kind.
    pub kind: String,
    /// Its id.
    pub id: String,
    /// The version it was written for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The versions it accepts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_range: Option<String>,
    /// Its schema hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_hash: Option<String>,
    /// Whether the plugin runs without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

impl Dto for RequirementWire {
    const NAME: &'static str = "RequirementWire";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(RequirementWire {
            namespace: f.req("namespace", NonBlank)?,
            kind: f.req("kind", NonBlank)?,
            id: f.req("id", NonBlank)?,
            version: f.opt("version", Str)?,
            version_range: f.opt("versionRange", Str)?,
            schema_hash: f.opt("schemaHash", Str)?,
            optional: f.opt("optional", Bool)?,
        })
    }
}

/// `InitializeResult` (E→H) in the v2 profile (spec delta §2.2): v1's members plus
/// `componentId`, `requires`, `provides` and `tools`. Decoded strictly; v1's extra checks stay
/// (no duplicate subscriptions, replaces or provider refs). Duplicate `uiActions` ids are not a
/// decoding error in v2 (see [`InitializeResult::drop_duplicate_actions`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Always `"2"`.
    pub protocol_version: String,
    /// Informational name (non-empty).
    pub name: String,
    /// Informational version (non-empty).
    pub version: String,
    /// The sidecar's own component id; informational, neither validated nor used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component_id: Option<String>,
    /// Hook points to receive, no duplicates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<HookPoint>,
    /// Slots to activate in v2's grammar, no duplicates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// The initial provider catalog; refs unique.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<ProviderDescriptor>,
    /// User actions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ui_actions: Vec<UiActionDecl>,
    /// What the sidecar requires; accepted, not validated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<RequirementWire>,
    /// What the sidecar provides; within the manifest's `provides`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<CapabilityWire>,
    /// Tools the sidecar serves; within the manifest's `runtime.tools`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Recorded by the host; ≥ 0.
    pub state_schema_version: i64,
}

impl Dto for InitializeResult {
    const NAME: &'static str = "InitializeResultV2";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let result = InitializeResult {
            protocol_version: f.req("protocolVersion", Exact(PROTOCOL_VERSION_V2))?,
            name: f.req("name", NonBlank)?,
            version: f.req("version", NonBlank)?,
            component_id: f.opt("componentId", Str)?,
            subscriptions: f.or_default("subscriptions", Set(Enum::new()))?,
            replaces: f.or_default("replaces", Set(Str))?,
            providers: f.or_default("providers", List(Obj::new()))?,
            ui_actions: f.or_default("uiActions", List(Obj::new()))?,
            requires: f.or_default("requires", List(Obj::new()))?,
            provides: f.or_default("provides", List(Obj::new()))?,
            tools: f.or_default("tools", List(Str))?,
            state_schema_version: f.req(
                "stateSchemaVersion",
                Int {
                    min: 0,
                    max: Int::SAFE,
                },
            )?,
        };
        f.check(|at| {
            for (i, slot) in result.replaces.iter().enumerate() {
                if !manifest::is_slot_v2(slot) {
                    return Err(rule(
                        &at.key("replaces").index(i),
                        format!("unknown slot {slot:?}"),
                    ));
                }
            }
            unique_by(
                &result.providers,
                |p| &p.reference,
                &at.key("providers"),
                "ref",
            )
        })?;
        Ok(result)
    }
}

impl InitializeResult {
    /// Drops every `uiActions` entry whose id an earlier entry has (the first declaration wins,
    /// as in the reference host's registry; v1 fails the handshake instead) and returns the
    /// dropped ids, for the caller to warn about.
    pub fn drop_duplicate_actions(&mut self) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut dropped = Vec::new();
        self.ui_actions.retain(|action| {
            let first = seen.insert(action.action_id.clone());
            if !first {
                dropped.push(action.action_id.clone());
            }
            first
        });
        dropped
    }

    /// Spec delta §2.2.1 checks 3–8 against the **installed** manifest: the plugin id from the
    /// install record, its runtime section and its v2 declarations. The first failure is
    /// [`Error::Undeclared`] (`capability_not_declared`).
    pub fn check_against_manifest(
        &self,
        plugin_id: &str,
        runtime: &RuntimeSpec,
        declared: &ManifestV2,
    ) -> Result<(), Error> {
        let root = Seg::Root(Target::Result);
        let at = root.key("subscriptions");
        for (i, point) in self.subscriptions.iter().enumerate() {
            if !runtime.intercepts.contains(point) {
                return Err(undeclared(
                    &at.index(i),
                    "not in manifest runtime.intercepts",
                ));
            }
        }
        let at = root.key("replaces");
        for (i, slot) in self.replaces.iter().enumerate() {
            if !declared.replaces.contains(slot) {
                return Err(undeclared(&at.index(i), "not in manifest runtime.replaces"));
            }
        }
        let at = root.key("providers");
        if !self.providers.is_empty() && !declared.has("providers") {
            return Err(undeclared(&at, "manifest capabilities lack \"providers\""));
        }
        for (i, provider) in self.providers.iter().enumerate() {
            if !is_plugin_provider_ref(&provider.reference, plugin_id) {
                return Err(undeclared(
                    &at.index(i).key("ref"),
                    format!("not of the form plugin/{plugin_id}/<rest>"),
                ));
            }
        }
        if !self.ui_actions.is_empty() && !declared.has("ui") {
            return Err(undeclared(
                &root.key("uiActions"),
                "manifest capabilities lack \"ui\"",
            ));
        }
        let at = root.key("tools");
        if !self.tools.is_empty() && !declared.has("tools") {
            return Err(undeclared(&at, "manifest capabilities lack \"tools\""));
        }
        for (i, tool) in self.tools.iter().enumerate() {
            if !declared.tools.iter().any(|t| &t.name == tool) {
                return Err(undeclared(&at.index(i), "not in manifest runtime.tools"));
            }
        }
        if !declared.provides.is_empty() {
            let at = root.key("provides");
            for (i, provided) in self.provides.iter().enumerate() {
                let within = declared.provides.iter().any(|c| {
                    c.namespace == provided.namespace.trim()
                        && c.kind == provided.kind.trim()
                        && c.id == provided.id.trim()
                });
                if !within {
                    return Err(undeclared(&at.index(i), "not in manifest provides"));
                }
            }
        }
        Ok(())
    }

    /// The result as the rest of a connection sees it, whatever the profile: v1's member set.
    /// Slots outside the eight named ones (`tool:…`, `provider:…`) are left out: they are not
    /// routed yet.
    pub fn common(&self) -> lifecycle::InitializeResult {
        lifecycle::InitializeResult {
            protocol_version: self.protocol_version.clone(),
            name: self.name.clone(),
            version: self.version.clone(),
            subscriptions: self.subscriptions.clone(),
            replaces: self
                .replaces
                .iter()
                .filter_map(|s| Slot::parse(s))
                .collect(),
            providers: self.providers.clone(),
            ui_actions: self.ui_actions.clone(),
            state_schema_version: self.state_schema_version,
        }
    }
}

fn undeclared(at: &Seg<'_>, detail: impl Into<String>) -> Error {
    Error::Undeclared {
        target: at.target(),
        path: at.render(),
        detail: detail.into(),
    }
}

impl ManifestExpectation {
    /// What a v2 host sends for an installed manifest (spec delta §2.2, as the reference host
    /// fills it): the runtime lists as written, `providers` and `uiActions` derived from
    /// `provides`, `requires` and `provides` trimmed, and `tools` only when the manifest
    /// declares `runtime.tools`.
    pub fn from_manifest(runtime: &RuntimeSpec, declared: &ManifestV2) -> Self {
        let kind_is = |c: &CapabilityRef, kind: &str| c.kind.trim().eq_ignore_ascii_case(kind);
        ManifestExpectation {
            intercepts: runtime.intercepts.clone(),
            replaces: declared.replaces.clone(),
            capabilities: declared.capabilities.clone(),
            providers: (declared.provides.iter())
                .filter(|c| kind_is(c, "provider"))
                .map(|c| {
                    format!(
                        "{}/{}",
                        c.namespace.trim_end_matches('/'),
                        c.id.trim_start_matches('/')
                    )
                })
                .collect(),
            ui_actions: (declared.provides.iter())
                .filter(|c| kind_is(c, "uiaction"))
                .map(|c| c.id.clone())
                .collect(),
            requires: (declared.requires.iter())
                .map(|c| RequirementWire {
                    namespace: c.namespace.clone(),
                    kind: c.kind.clone(),
                    id: c.id.clone(),
                    version: non_empty(&c.version),
                    version_range: non_empty(&c.version_range),
                    schema_hash: non_empty(&c.schema_hash),
                    optional: c.optional.then_some(true),
                })
                .collect(),
            provides: (declared.provides.iter())
                .map(|c| CapabilityWire {
                    namespace: c.namespace.clone(),
                    kind: c.kind.clone(),
                    id: c.id.clone(),
                    version: non_empty(&c.version),
                    schema_hash: non_empty(&c.schema_hash),
                })
                .collect(),
            tools: declared.tools.iter().map(|t| t.name.clone()).collect(),
        }
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests;
