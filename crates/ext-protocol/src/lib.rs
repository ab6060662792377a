#![doc = include_str!("../README.md")]
//!
//! # Main items
//!
//! The DTOs (one type per message of the spec, e.g. [`InterceptParams`]), the decoders
//! ([`decode_params`], [`decode_result`]) and the registries ([`Method`], [`HookPoint`]); the
//! reason table with its [`sidewire_jsonrpc::ErrorObject`] bridge ([`Reason`]), the launch
//! contract ([`resolve_launch`], [`check_launch`]), every protocol constant (only here does
//! [`FRAME_BYTES`] live), and the JSON Schema ([`protocol_schema`], hashed as
//! [`SCHEMA_SHA256`]). `sidewire-framing`, `sidewire-jsonrpc` and the host and SDK
//! crates do the I/O.
//!
//! # Where the spec is silent, and what this crate chose
//!
//! Each choice errs on the side of keeping extension authors and users safe: reject what is
//! ambiguous, never guess.
//!
//! * Repeated member names are rejected inside `any` values (`replacement`, `values`, `default`,
//!   `parameters`) and inside the manifest's opaque `contributes` too, not only in typed DTOs:
//!   a repeated name has no single meaning anywhere.
//! * `-0`, `1.0` and `1e3` are not integers (serde_json reads them as floats); a whole number at
//!   or beyond 2^53 is reported as out of range, a fraction or exponent as a type error.
//! * Numbers are parsed exactly (serde_json's `float_roundtrip`): the host re-serializes what it
//!   validated (§7.8 step 5), and the default parser can be one ulp off, so the number passed
//!   on could differ from the one the sidecar sent.
//! * Optional strings, lists and maps are plain values that are omitted when empty, since §0
//!   defines absent and empty as the same; optional booleans and numbers are `Option`s, so that
//!   `false` and `0` can still be sent when meaningful.
//! * `ManifestExpectation` lists are decoded as hook points, slots and capabilities, not as free
//!   strings, since they are copies of a validated manifest.
//! * A payload is decoded as its point's DTO, and the §9 rule (payload `null` iff exactly one
//!   `/payload` descriptor) is a type-level rule of `InterceptParams` and `EventParams`; a
//!   `ProviderChunk` must carry its type's member and `error` only in an `error` chunk; a
//!   `ContentReadResult` page must be consistent on its own (base64, ≤ 262,144 bytes, `nextOffset`
//!   arithmetic, `totalBytes` ≤ 8 MiB).
//! * Path-like members (`workspaceRoot`, `paths`) are not checked for absoluteness: the syntax is
//!   platform-specific and the spec gives no failure reason for it.
//! * Duplicate `runtime.capabilities` entries are accepted (the spec calls the list a subset,
//!   not a list without duplicates); duplicate `intercepts` and `replaces` are rejected.
//! * [`Reason::from_error_object`] also requires `code` to match the reason's code; a mismatch is
//!   "no reason", so such an error is never retried automatically.
//! * A manifest failure maps to `invalid_params` when a reason is needed; manifests never travel
//!   on the wire.
//! * The launch contract ([`check_launch`]) also refuses an [`is_terminal_control`] character
//!   in `name`, `version`, `runtime.command` and `runtime.args` (they are what a consent screen
//!   shows), and a root that is not UTF-8; a manifest is read up to [`MAX_MANIFEST_BYTES`].
//!
//! # Where this crate differs from or extends the spec
//!
//! The spec is normative, but the reference implementation's host (with its Go SDK) is what
//! sidecars meet in practice, and it sends members the spec's tables do not list. §4 rule 4 and
//! §16.26 would have a sidecar refuse them, so a sidecar built on this crate could not start
//! under the reference host. These deltas, and only these, are accepted; every other member the
//! spec does not list is still rejected at every level.
//!
//! * **`HostCapabilities.protocolVersion`** (string, optional when received). The reference host
//!   always sends it and its SDK requires it, so this crate's host sends it too
//!   ([`HostCapabilities::new`]): every SDK that works with the reference host accepts it, and
//!   the reference SDK cannot work without it. When present it must equal the negotiated version
//!   (the top-level `protocolVersion`, which v1 fixes at [`PROTOCOL_VERSION`]).
//!   [`decode_initialize_params`] checks it right after the top-level identity and before strict
//!   decoding, with the reasons of §1: another major is `unsupported_version`; a value that is
//!   not a canonical decimal string, or not a string at all, is `protocol_error`. A mismatch is
//!   fatal for the SDK like any other version error (§6.5).
//! * **`ManifestExpectation.providers` and `ManifestExpectation.uiActions`** (lists of strings,
//!   optional). The reference host's v1-era DTO has them. They are decoded as lists of strings
//!   (anything else in them is `invalid_params`), kept in [`ManifestExpectation`], and given no
//!   meaning: the handshake's `providers` and `uiActions` are still derived from the extension's
//!   handlers and the manifest's `ui` capability (§7.2). The manifest format (§12.1) has no such
//!   lists, so this crate's host never sends them.
//!
//! The JSON Schema ([`protocol_schema`]) describes the DTOs as this crate decodes them, deltas
//! included, so [`SCHEMA_SHA256`] covers them.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod wire_enum;

mod constants;
mod content;
mod decode;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod hooks;
mod intercept;
mod launch;
mod lifecycle;
mod manifest;
pub mod methods;
mod model;
mod payloads;
mod peer;
mod profile;
mod provider;
mod reason;
mod schema;
mod tool;
mod ui;
pub mod v2;
mod version;

#[cfg(test)]
mod testkit;

pub use crate::constants::{
    CALL_TIMEOUT, CONTENT_CHUNK_BYTES, CONTENT_OBJECT_BYTES, CONTENT_REF_HEX_DIGITS,
    CONTENT_REF_PREFIX, CONTENT_REFS_PER_CONNECTION, DEFAULT_INTERCEPT_TIMEOUT,
    DEPENDENCY_SCHEMA_VERSION, ENV_PLUGIN_NAME, ENV_PLUGIN_ROOT, ENV_PLUGIN_VERSION,
    EVENT_QUEUE_FRAMES, EXTERNALIZE_FIELD_BYTES, FRAME_BYTES, GENERATION_BOOT_BUDGET,
    HANDSHAKE_TIMEOUT, HELD_UI_CALLS_PER_CONNECTION, MANIFEST_API_VERSION, MANIFEST_API_VERSION_V2,
    MANIFEST_FILE, MAX_ACTION_ID_CHARS, MAX_CONCURRENT_BOOTS, MAX_INTERCEPT_TIMEOUT_MILLIS,
    MAX_MANIFEST_BYTES, MAX_PLUGIN_ID_CHARS, MAX_PRIORITY, MAX_SAFE_INTEGER,
    MIN_CONCURRENT_CALLBACKS, MIN_PRIORITY, NOTIFICATION_QUEUE_FRAMES, PLUGIN_PROVIDER_REF_PREFIX,
    PLUGIN_ROOT_PLACEHOLDER, PROTOCOL_ID, PROTOCOL_ID_V2, PROTOCOL_MAJOR, PROTOCOL_MAJOR_V2,
    PROTOCOL_VERSION, PROTOCOL_VERSION_V2, READINESS_RULE, REFUSED_COMMAND_NAMES,
    RESPONSE_TOO_LARGE_MESSAGE, SDK_STDERR_PREFIX, SHORT_INTERCEPT_TIMEOUT, SHUTDOWN_ANSWER_GRACE,
    SHUTDOWN_EXIT_WAIT, SHUTDOWN_REAP_WAIT, SHUTDOWN_TIMEOUT_MILLIS, STDERR_TAIL_BYTES,
    STREAM_CANCEL_TIMEOUT, STREAM_GAP_TIMEOUT, STREAM_REORDER_WINDOW, WRITE_STALL_TIMEOUT,
};
pub use crate::content::{
    ContentEncoding, ContentReadParams, ContentReadResult, ExternalizedField, is_content_ref,
};
pub use crate::decode::{Dto, decode, decode_params, decode_result};
pub use crate::error::{Error, Target};
pub use crate::hooks::{
    Caller, DecisionKind, HookPayload, HookPoint, PayloadKind, SessionPhase, Slot, Verdict,
};
pub use crate::intercept::{
    EventParams, InterceptParams, InterceptResult, PAYLOAD_POINTER, ResourcesChangedParams,
};
pub use crate::launch::{
    LaunchRefused, LaunchSpec, Refusal, check_launch, is_terminal_control, resolve_launch,
};
pub use crate::lifecycle::{
    HostCapabilities, InitializeParams, InitializeResult, InitializedParams, ManifestExpectation,
    SessionContext, ShutdownParams, ShutdownResult, UiActionDecl, UiHost, is_action_id,
};
pub use crate::manifest::{
    Capability, Manifest, RuntimeSpec, is_accepted_manifest_api_version, is_plugin_id,
};
pub use crate::methods::{Direction, Method, MethodKind, NotificationMethod, RequestMethod};
pub use crate::model::{
    ProviderMessage, ProviderRequest, ProviderRole, ProviderToolCall, ProviderToolSchema,
    ProviderUsage, ResponseFormat,
};
pub use crate::payloads::{
    AgentStartPayload, CompactionCompletePayload, CompactionPreparePayload, ContextPayload,
    FrontendEventPayload, InputPayload, PermissionPayload, ProviderRequestPayload,
    ProviderResponsePayload, SessionPayload, SystemPromptPayload, ToolAfterPayload,
    ToolBeforePayload,
};
pub use crate::peer::{ExtensionHooks, jsonrpc_config, reason_of};
pub use crate::profile::ProtocolProfile;
pub use crate::provider::{
    ChunkType, ProviderCatalogParams, ProviderCatalogResult, ProviderChunk, ProviderDescriptor,
    ProviderError, ProviderErrorCode, StreamCancelParams, StreamCancelResult, StreamChunkParams,
    StreamEndParams, StreamOpenParams, StreamOpenResult, is_plugin_provider_ref,
};
pub use crate::reason::Reason;
pub use crate::schema::{SCHEMA_SHA256, protocol_schema, protocol_schema_json};
pub use crate::tool::{TOOL_CALL_TIMEOUT, ToolCallParams, ToolCallResult};
pub use crate::ui::{
    CardAction, CardField, CardPayload, FieldKind, NotificationPayload, Severity, StatusPayload,
    SurfaceKind, SurfacePayload, UiActionParams, UiActionResult, UiFormField, UiFormPayload,
    UiPublishParams, UiPublishResult, UiRequestParams, UiRequestResult, UiSubmitParams,
    UiSubmitResult,
};
pub use crate::version::{
    Initialize, check_protocol_id, check_protocol_version, check_version, decode_initialize_params,
    decode_initialize_params_in, decode_initialize_result, decode_initialize_result_in,
};
