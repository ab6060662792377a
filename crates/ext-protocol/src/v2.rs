//! The lifecycle DTOs of Extension Protocol v2 (spec delta §2.2), the [`ProtocolProfile::V2`] member
//! sets: what the reference host sends in `extension/initialize` today. Decoded strictly, as
//! every DTO here; [`InitializeParams::common`] is the profile-agnostic view an extension's code
//! sees (the same as a v1 host's params), so nothing downstream of the handshake mixes the two.
//!
//! [`ProtocolProfile::V2`]: crate::ProtocolProfile::V2

use serde::Serialize;

use crate::constants::{PROTOCOL_ID_V2, PROTOCOL_VERSION_V2};
use crate::decode::{Bool, Dto, Enum, Exact, Fields, List, NonBlank, Obj, Str, Uint};
use crate::error::Error;
use crate::hooks::{HookPoint, Slot};
use crate::lifecycle::{self, UiHost};
use crate::manifest::Capability;

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
