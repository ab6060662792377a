//! Lifecycle DTOs (§6.2): the handshake (`extension/initialize`, `extension/initialized`) and
//! `extension/shutdown`, plus the host's manifest checks of an `InitializeResult` (§6.3 checks
//! 4–8).
//!
//! These are plain data with strict decoding; the handshake sequence, the readiness barrier and
//! the SDK state machine are behaviour of the host and SDK crates, not of this module. The version
//! check that must run before decoding lives in `version`.

use serde::Serialize;

use crate::constants::{MAX_ACTION_ID_CHARS, PROTOCOL_ID, PROTOCOL_VERSION};
use crate::decode::{
    ACTION_ID, Bool, Dto, Enum, Exact, Fields, Int, List, NonBlank, Obj, Pattern, Seg, Set, Str,
    Uint, unique_by,
};
use crate::error::Error;
use crate::hooks::{HookPoint, Slot};
use crate::manifest::{Capability, RuntimeSpec};
use crate::provider::{ProviderDescriptor, is_plugin_provider_ref};

/// Whether `id` is a valid UI action id: `^[a-z0-9-]{1,64}$` (§6.2).
pub fn is_action_id(id: &str) -> bool {
    (1..=MAX_ACTION_ID_CHARS).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// `InitializeParams` (H→E): the host's first frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Always [`PROTOCOL_ID`].
    pub protocol_id: String,
    /// Always [`PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// Copies of the installed manifest's `runtime` lists.
    pub manifest: ManifestExpectation,
    /// The session this sidecar serves.
    pub session: SessionContext,
    /// What the host offers.
    pub capabilities: HostCapabilities,
}

impl InitializeParams {
    /// Params carrying this crate's protocol identity.
    pub fn new(
        manifest: ManifestExpectation,
        session: SessionContext,
        capabilities: HostCapabilities,
    ) -> Self {
        InitializeParams {
            protocol_id: PROTOCOL_ID.to_owned(),
            protocol_version: PROTOCOL_VERSION.to_owned(),
            manifest,
            session,
            capabilities,
        }
    }
}

impl Dto for InitializeParams {
    const NAME: &'static str = "InitializeParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(InitializeParams {
            protocol_id: f.req("protocolId", Exact(PROTOCOL_ID))?,
            protocol_version: f.req("protocolVersion", Exact(PROTOCOL_VERSION))?,
            manifest: f.req("manifest", Obj::new())?,
            session: f.req("session", Obj::new())?,
            capabilities: f.req("capabilities", Obj::new())?,
        })
    }
}

/// `ManifestExpectation`: the installed manifest's `runtime.intercepts`, `runtime.replaces` and
/// `runtime.capabilities`, so the SDK can derive its handshake (§7.2).
///
/// The spec types the lists as `[string]`; they are decoded as the enums they copy, so a name
/// outside v1 is rejected like any other invalid params.
///
/// `providers` and `uiActions` are not in the spec's table: the reference host's v1-era DTO
/// has them (lists of strings), so a sidecar built with this crate accepts them rather than
/// refusing that host (see "Where this crate differs from or extends the spec" in the crate
/// docs). They are informational: the handshake's `providers` and `uiActions` are still derived
/// from the registered handlers and the `ui` capability, and this crate's host never sends them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestExpectation {
    /// Hook points the manifest declares.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intercepts: Vec<HookPoint>,
    /// Slots the manifest claims.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<Slot>,
    /// Capabilities the manifest declares.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<Capability>,
    /// Provider names the reference host may list (v1-era member, not in the spec); kept as
    /// sent, without meaning here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<String>,
    /// UI action names the reference host may list (v1-era member, not in the spec); kept as
    /// sent, without meaning here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ui_actions: Vec<String>,
}

impl ManifestExpectation {
    /// The expectation for an installed runtime section. The manifest format has no provider or
    /// action lists, so `providers` and `uiActions` stay empty and are not sent.
    pub fn from_runtime(runtime: &RuntimeSpec) -> Self {
        ManifestExpectation {
            intercepts: runtime.intercepts.clone(),
            replaces: runtime.replaces.clone(),
            capabilities: runtime.capabilities.clone(),
            providers: Vec::new(),
            ui_actions: Vec::new(),
        }
    }
}

impl Dto for ManifestExpectation {
    const NAME: &'static str = "ManifestExpectation";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ManifestExpectation {
            intercepts: f.or_default("intercepts", List(Enum::new()))?,
            replaces: f.or_default("replaces", List(Enum::new()))?,
            capabilities: f.or_default("capabilities", List(Enum::new()))?,
            // Free strings, as the reference types them: what they name is not defined by v1,
            // so no syntax is imposed beyond being a list of strings.
            providers: f.or_default("providers", List(Str))?,
            ui_actions: f.or_default("uiActions", List(Str))?,
        })
    }
}

/// `SessionContext`: the session and generation a sidecar was started for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// The session id (non-empty).
    pub session_id: String,
    /// The workspace root, an absolute path (not checked: the syntax is platform-specific).
    pub workspace_root: String,
    /// The generation that started this sidecar (≥ 1).
    pub generation: u64,
}

impl Dto for SessionContext {
    const NAME: &'static str = "SessionContext";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(SessionContext {
            session_id: f.req("sessionId", NonBlank)?,
            workspace_root: f.req("workspaceRoot", Str)?,
            generation: f.req("generation", Uint::POSITIVE)?,
        })
    }
}

/// The kind of frontend the host runs (`HostCapabilities.uiHost`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UiHost {
    /// A terminal UI.
    Tui,
    /// A desktop application.
    Desktop,
    /// An ACP client.
    Acp,
    /// No UI at all; `host/ui/*` is answered `unknown_method` (§10.5).
    Headless,
}

wire_enum!(UiHost, "UiHost", {
    Tui => "tui",
    Desktop => "desktop",
    Acp => "acp",
    Headless => "headless",
});

/// `HostCapabilities`: what the host offers.
///
/// `protocolVersion` is not in the spec's table: the reference host always sends it (its DTO
/// requires it), so it is accepted here, optional, and must equal the negotiated version
/// ([`PROTOCOL_VERSION`]); [`decode_initialize_params`](crate::decode_initialize_params) refuses
/// another value with the reason §1 gives (`protocol_error` when not canonical,
/// `unsupported_version` for another major). This crate's host sends it too, so that sidecars
/// built on the reference SDK, which require it, accept the handshake.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostCapabilities {
    /// Whether the host externalizes large payloads into content refs (v1 hosts send `true`).
    pub content_refs: bool,
    /// The host's frontend.
    pub ui_host: UiHost,
    /// The protocol version again, as the reference host sends it; always [`PROTOCOL_VERSION`]
    /// when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

impl HostCapabilities {
    /// What a v1 host offers: content refs, the given frontend, and `protocolVersion` set to
    /// [`PROTOCOL_VERSION`] (what the reference host sends and its SDK requires).
    pub fn new(ui_host: UiHost) -> Self {
        HostCapabilities {
            content_refs: true,
            ui_host,
            protocol_version: Some(PROTOCOL_VERSION.to_owned()),
        }
    }
}

impl Dto for HostCapabilities {
    const NAME: &'static str = "HostCapabilities";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(HostCapabilities {
            content_refs: f.req("contentRefs", Bool)?,
            ui_host: f.req("uiHost", Enum::new())?,
            protocol_version: f.opt("protocolVersion", Exact(PROTOCOL_VERSION))?,
        })
    }
}

/// `UIActionDecl`: a user action the extension offers (§10.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiActionDecl {
    /// The id, matching `^[a-z0-9-]{1,64}$`.
    pub action_id: String,
    /// A label for menus.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub label: String,
}

impl Dto for UiActionDecl {
    const NAME: &'static str = "UIActionDecl";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(UiActionDecl {
            action_id: f.req("actionId", Pattern(&ACTION_ID))?,
            label: f.or_default("label", Str)?,
        })
    }
}

/// `InitializedParams`: the empty params of `extension/initialized`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct InitializedParams {}

impl Dto for InitializedParams {
    const NAME: &'static str = "InitializedParams";

    fn describe(_: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(InitializedParams {})
    }
}

/// `ShutdownParams`: the budget of the extension's shutdown hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownParams {
    /// Milliseconds, ≥ 1.
    pub timeout_millis: u64,
}

impl Dto for ShutdownParams {
    const NAME: &'static str = "ShutdownParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ShutdownParams {
            timeout_millis: f.req("timeoutMillis", Uint::POSITIVE)?,
        })
    }
}

/// `ShutdownResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShutdownResult {
    /// Whether the extension accepted the shutdown.
    pub accepted: bool,
}

impl Dto for ShutdownResult {
    const NAME: &'static str = "ShutdownResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ShutdownResult {
            accepted: f.req("accepted", Bool)?,
        })
    }
}

/// `InitializeResult` (E→H): the extension's self-description.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Always [`PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// Informational name (non-empty); identity comes from the install record.
    pub name: String,
    /// Informational version (non-empty).
    pub version: String,
    /// Hook points to receive, no duplicates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<HookPoint>,
    /// Slots to activate, no duplicates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<Slot>,
    /// The initial provider catalog; refs unique.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<ProviderDescriptor>,
    /// User actions; ids unique.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ui_actions: Vec<UiActionDecl>,
    /// Recorded by the host; ≥ 0, no other v1 meaning.
    pub state_schema_version: i64,
}

impl InitializeResult {
    /// §6.3 checks 4–8 against the **installed** manifest's runtime section and the plugin id
    /// from the install record. Checks 1–3 are the version check and strict decoding.
    ///
    /// The first failure is returned as [`Error::Undeclared`], whose reason is
    /// `capability_not_declared`.
    pub fn check_against_manifest(
        &self,
        plugin_id: &str,
        runtime: &RuntimeSpec,
    ) -> Result<(), Error> {
        let root = Seg::Root(crate::Target::Result);
        let has = |c: Capability| runtime.capabilities.contains(&c);
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
            if !runtime.replaces.contains(slot) {
                return Err(undeclared(&at.index(i), "not in manifest runtime.replaces"));
            }
        }
        if !self.providers.is_empty() && !has(Capability::Providers) {
            return Err(undeclared(
                &root.key("providers"),
                "manifest capabilities lack \"providers\"",
            ));
        }
        let at = root.key("providers");
        for (i, provider) in self.providers.iter().enumerate() {
            if !is_plugin_provider_ref(&provider.reference, plugin_id) {
                return Err(undeclared(
                    &at.index(i).key("ref"),
                    format!("not of the form plugin/{plugin_id}/<rest>"),
                ));
            }
        }
        if !self.ui_actions.is_empty() && !has(Capability::Ui) {
            return Err(undeclared(
                &root.key("uiActions"),
                "manifest capabilities lack \"ui\"",
            ));
        }
        Ok(())
    }
}

fn undeclared(at: &Seg<'_>, detail: impl Into<String>) -> Error {
    Error::Undeclared {
        target: at.target(),
        path: at.render(),
        detail: detail.into(),
    }
}

impl Dto for InitializeResult {
    const NAME: &'static str = "InitializeResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let result = InitializeResult {
            protocol_version: f.req("protocolVersion", Exact(PROTOCOL_VERSION))?,
            name: f.req("name", NonBlank)?,
            version: f.req("version", NonBlank)?,
            subscriptions: f.or_default("subscriptions", Set(Enum::new()))?,
            replaces: f.or_default("replaces", Set(Enum::new()))?,
            providers: f.or_default("providers", List(Obj::new()))?,
            ui_actions: f.or_default("uiActions", List(Obj::new()))?,
            state_schema_version: f.req(
                "stateSchemaVersion",
                Int {
                    min: 0,
                    max: Int::SAFE,
                },
            )?,
        };
        f.check(|at| {
            unique_by(
                &result.providers,
                |p| &p.reference,
                &at.key("providers"),
                "ref",
            )?;
            unique_by(
                &result.ui_actions,
                |a| &a.action_id,
                &at.key("uiActions"),
                "actionId",
            )
        })?;
        Ok(result)
    }
}

#[cfg(test)]
mod tests;
