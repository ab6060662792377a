//! The JSON Schema (draft 2020-12) of the whole protocol, generated from the Rust types.
//!
//! Every DTO's schema comes from the same description its strict decoder runs (see `decode`), so
//! required lists, `additionalProperties: false`, enums, nullability, integer bounds and string
//! patterns cannot drift from what the code accepts. Rules that JSON Schema cannot say exactly
//! (a `uint` written `1.0`, unique ids inside lists of objects, base64 page arithmetic) are
//! enforced by the decoder only. The registries (methods, hook points, reasons, limits) are
//! included under `x-` annotation keywords so that the committed file, and its hash
//! [`SCHEMA_SHA256`], change whenever anything of v1 changes.
//!
//! The committed copy lives at `crates/ext-protocol/schema/extension-protocol-v1.schema.json`; a
//! test fails when it is stale, and `SIDEWIRE_BLESS=1 cargo test -p sidewire-ext-protocol`
//! rewrites it and this constant. The schema hash never travels on the wire (§15).

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

use crate::constants::{
    CONTENT_CHUNK_BYTES, CONTENT_OBJECT_BYTES, CONTENT_REFS_PER_CONNECTION,
    EXTERNALIZE_FIELD_BYTES, FRAME_BYTES, MANIFEST_API_VERSION, MANIFEST_FILE,
    MAX_INTERCEPT_TIMEOUT_MILLIS, MAX_SAFE_INTEGER, PROTOCOL_ID, PROTOCOL_VERSION,
};
use crate::decode::{Dto, WireEnum, object_schema};
use crate::hooks::{Caller, DecisionKind, HookPoint, PayloadKind};
use crate::manifest::Manifest;
use crate::methods::{Direction, Method, MethodKind};
use crate::reason::Reason;
use crate::{content, intercept, lifecycle, provider, ui};

/// The SHA-256 (lowercase hex) of the committed schema file, as a version fingerprint of the
/// protocol types. A test keeps it equal to the file.
pub const SCHEMA_SHA256: &str = "4ee9d259e128abd7d23b07355e8e7fc6cc29404da4b7860a4b7f61ccb804d852";

/// The `$defs` being collected while generating.
#[derive(Debug, Default)]
pub(crate) struct Defs {
    defs: BTreeMap<String, Value>,
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/$defs/{name}")})
}

impl Defs {
    /// Registers `T` (once) and returns a `$ref` to it.
    pub(crate) fn dto<T: Dto>(&mut self) -> Value {
        if !self.defs.contains_key(T::NAME) {
            // Reserve the name first so that a DTO reachable from itself cannot recurse forever.
            self.defs.insert(T::NAME.to_owned(), Value::Null);
            let schema = object_schema::<T>(self);
            self.defs.insert(T::NAME.to_owned(), schema);
        }
        reference(T::NAME)
    }

    /// Registers the enum `E` (once) and returns a `$ref` to it.
    pub(crate) fn enumeration<E: WireEnum>(&mut self) -> Value {
        if !self.defs.contains_key(E::NAME) {
            let values: Vec<&str> = E::all().iter().map(|e| e.wire()).collect();
            self.defs.insert(
                E::NAME.to_owned(),
                json!({"title": E::NAME, "type": "string", "enum": values}),
            );
        }
        reference(E::NAME)
    }
}

fn direction(direction: Direction) -> &'static str {
    match direction {
        Direction::HostToExtension => "host_to_extension",
        Direction::ExtensionToHost => "extension_to_host",
    }
}

/// The params and result `$ref`s of a method, registering their DTOs.
fn method_refs(method: Method, defs: &mut Defs) -> (Value, Option<Value>) {
    use crate::methods as m;
    fn req<M: m::RequestMethod>(defs: &mut Defs) -> (Value, Option<Value>) {
        (defs.dto::<M::Params>(), Some(defs.dto::<M::Result>()))
    }
    fn note<M: m::NotificationMethod>(defs: &mut Defs) -> (Value, Option<Value>) {
        (defs.dto::<M::Params>(), None)
    }
    match method {
        Method::Initialize => req::<m::Initialize>(defs),
        Method::Initialized => note::<m::Initialized>(defs),
        Method::Shutdown => req::<m::Shutdown>(defs),
        Method::Intercept => req::<m::Intercept>(defs),
        Method::Event => note::<m::Event>(defs),
        Method::ResourcesChanged => note::<m::ResourcesChanged>(defs),
        Method::UiAction => req::<m::UiAction>(defs),
        Method::UiSubmit => req::<m::UiSubmit>(defs),
        Method::UiPublish => req::<m::UiPublish>(defs),
        Method::UiRequest => req::<m::UiRequest>(defs),
        Method::ContentRead => req::<m::ContentRead>(defs),
        Method::ProviderCatalog => req::<m::ProviderCatalog>(defs),
        Method::StreamOpen => req::<m::StreamOpen>(defs),
        Method::StreamCancel => req::<m::StreamCancel>(defs),
        Method::StreamChunk => note::<m::StreamChunk>(defs),
        Method::StreamEnd => note::<m::StreamEnd>(defs),
        // Not in `Method::ALL`, so never reached for the v1 schema.
        Method::ToolCall => req::<m::ToolCall>(defs),
    }
}

/// Generates the protocol schema.
pub fn protocol_schema() -> Value {
    let mut defs = Defs::default();

    let mut methods = Map::new();
    for method in Method::ALL {
        let (params, result) = method_refs(*method, &mut defs);
        let mut entry = Map::new();
        entry.insert("direction".into(), direction(method.direction()).into());
        let kind = match method.kind() {
            MethodKind::Request => "request",
            MethodKind::Notification => "notification",
        };
        entry.insert("kind".into(), kind.into());
        entry.insert("params".into(), params);
        if let Some(result) = result {
            entry.insert("result".into(), result);
        }
        if let Some(deadline) = method.deadline() {
            entry.insert(
                "deadlineMillis".into(),
                (deadline.as_millis() as u64).into(),
            );
        }
        methods.insert(method.as_str().into(), Value::Object(entry));
    }

    let mut points = Map::new();
    for point in HookPoint::ALL {
        let legal = |caller: Caller| -> Vec<&str> {
            DecisionKind::ALL
                .iter()
                .filter(|d| point.allows(**d, caller))
                .map(|d| d.as_str())
                .collect()
        };
        points.insert(
            point.as_str().into(),
            json!({
                "payload": defs.dto_for_payload(point.payload_kind()),
                "defaultTimeoutMillis": point.timeout_millis(0),
                "slot": point.slot().map(|s| s.as_str()),
                "decisions": {"chain": legal(Caller::Chain), "slotOwner": legal(Caller::SlotOwner)},
            }),
        );
    }

    let mut reasons = Map::new();
    for reason in Reason::in_profile(crate::ProtocolProfile::V1) {
        reasons.insert(
            reason.as_str().into(),
            json!({"code": reason.code(), "retryable": reason.retryable()}),
        );
    }

    // DTOs reachable only as documents of their own.
    defs.dto::<Manifest>();
    defs.dto::<lifecycle::ManifestExpectation>();
    defs.dto::<intercept::InterceptResult>();
    defs.dto::<content::ExternalizedField>();
    defs.dto::<provider::ProviderChunk>();
    defs.dto::<ui::StatusPayload>();

    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:reasonix:extension-protocol:v1",
        "title": "Extension Protocol v1",
        "description": "Generated from the sidewire-ext-protocol crate; do not edit by hand.",
        "x-protocol": {
            "protocolId": PROTOCOL_ID,
            "protocolVersion": PROTOCOL_VERSION,
            "manifestFile": MANIFEST_FILE,
            "manifestApiVersion": MANIFEST_API_VERSION,
        },
        "x-limits": {
            "frameBytes": FRAME_BYTES,
            "externalizeFieldBytes": EXTERNALIZE_FIELD_BYTES,
            "contentChunkBytes": CONTENT_CHUNK_BYTES,
            "contentObjectBytes": CONTENT_OBJECT_BYTES,
            "contentRefsPerConnection": CONTENT_REFS_PER_CONNECTION,
            "maxInterceptTimeoutMillis": MAX_INTERCEPT_TIMEOUT_MILLIS,
            "maxSafeInteger": MAX_SAFE_INTEGER,
        },
        "x-methods": methods,
        "x-hookPoints": points,
        "x-reasons": reasons,
        "$defs": defs.defs,
    })
}

impl Defs {
    fn dto_for_payload(&mut self, kind: PayloadKind) -> Value {
        kind.schema_ref(self)
    }
}

/// The schema as committed: pretty-printed JSON with a final newline. Object members are sorted,
/// so the text is deterministic.
pub fn protocol_schema_json() -> String {
    let mut text =
        serde_json::to_string_pretty(&protocol_schema()).expect("a Value always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests;
