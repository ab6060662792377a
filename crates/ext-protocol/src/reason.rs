//! The error-reason table of §3 and its bridge to the JSON-RPC error object.
//!
//! A [`Reason`] knows its wire name, code and retryability exactly as the table lists them, plus a
//! short default message of our own. It converts to a [`sidewire_jsonrpc::ErrorObject`] carrying
//! `data: {"reason", "retryable"}` and back; an error whose `data` is missing or wrong has no
//! reason (§3). This is not the crate's Rust error type; that is [`Error`](crate::Error).
//!
//! The table depends on the connection's [`ProtocolProfile`] (spec delta §3.1): the V1 table is
//! v1's 15 reasons, exactly; the V2 table is their union with v2's 13 (five lifecycle reasons and
//! eight browser reasons, all -32000), 28 in all, so that peers of every v2 variant are
//! understood. A reason outside the connection's table is, when received, "an error without a
//! reason" ([`Reason::from_error_object_in`]).

use serde_json::{Map, Value};
use sidewire_jsonrpc::ErrorObject;

use crate::profile::ProtocolProfile;

/// An error reason of §3, or of the v2 table (spec delta §3.1).
///
/// The v1 table is frozen (§1) and v2's is the reference's union, so the enum is exhaustive:
/// callers may match every reason. Which reasons a connection may send or receive is its
/// profile's table, [`Reason::in_profile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// `protocol_error` (-32600): malformed envelope, bad line, non-canonical version, invalid
    /// result, frame before readiness, a request the SDK state does not serve, reused stream id,
    /// content mismatch.
    ProtocolError,
    /// `unknown_method` (-32601): not registered as a request for that direction, or an optional
    /// part without a handler.
    UnknownMethod,
    /// `invalid_params` (-32602): params fail strict decoding or semantic checks.
    InvalidParams,
    /// `internal` (-32603, retryable): a handler failed for an unmapped reason; oversized result.
    Internal,
    /// `frame_too_large`: a frame over [`FRAME_BYTES`](crate::FRAME_BYTES).
    FrameTooLarge,
    /// `content_ref_expired` (retryable): unknown, evicted or foreign content ref, or an offset
    /// past the end.
    ContentRefExpired,
    /// `unsupported_version`: protocol id mismatch or major ≠ 1.
    UnsupportedVersion,
    /// `capability_not_declared`: a claim beyond the manifest.
    CapabilityNotDeclared,
    /// `shutdown_timeout` (retryable): the shutdown hook overran, or the sidecar had to be killed.
    ShutdownTimeout,
    /// `stream_gap` (retryable, host-local): a provider stream is missing a chunk.
    StreamGap,
    /// `stream_cancelled` (host-local): the host cancelled the stream.
    StreamCancelled,
    /// `provider_failed` (retryable): a stream could not open or ended with an error.
    ProviderFailed,
    /// `provider_interrupted` (retryable): the connection crashed or shut down mid-call.
    ProviderInterrupted,
    /// `intercept_timeout` (retryable): a deadline of §2.5 or §7.9 expired.
    InterceptTimeout,
    /// `stale_generation` (host-local in v1; v2 hosts may send it): a user action targets a
    /// stale surface.
    StaleGeneration,
    /// `dependency_unsatisfied` (v2 only): a required dependency is missing or not
    /// version-compatible.
    DependencyUnsatisfied,
    /// `dependency_cycle` (v2 only): the dependency graph contains a required cycle.
    DependencyCycle,
    /// `schema_mismatch` (v2 only): a capability schema hash does not match the expected pin.
    SchemaMismatch,
    /// `activation_failed` (v2 only): component activation failed; the new generation was not
    /// published.
    ActivationFailed,
    /// `cleanup_failed` (v2 only, retryable): component cleanup failed while disposing scoped
    /// effects.
    CleanupFailed,
    /// `browser_unavailable` (v2 only, retryable): the browser host API is unavailable or the
    /// companion cannot start.
    BrowserUnavailable,
    /// `browser_tab_not_found` (v2 only): the tab does not exist or does not belong to this chat.
    BrowserTabNotFound,
    /// `browser_tab_busy` (v2 only, retryable): the tab, renderer, lease, or pending request
    /// limit is exhausted.
    BrowserTabBusy,
    /// `browser_stale_ref` (v2 only): the element ref is no longer valid after navigation.
    BrowserStaleRef,
    /// `browser_origin_mismatch` (v2 only): the tab origin does not match the expected origin.
    BrowserOriginMismatch,
    /// `browser_permission_denied` (v2 only): the browser action was denied by a
    /// sensitive-field, permission, or human-input gate.
    BrowserPermissionDenied,
    /// `browser_timeout` (v2 only, retryable): the browser wait or action timed out.
    BrowserTimeout,
    /// `browser_cancelled` (v2 only): the browser call was cancelled by runtime drain, sidecar
    /// disconnect, or the caller.
    BrowserCancelled,
}

/// How many reasons the v1 table has; they come first in [`Reason::ALL`].
const V1_REASONS: usize = 15;

wire_enum!(Reason, "Reason", {
    ProtocolError => "protocol_error",
    UnknownMethod => "unknown_method",
    InvalidParams => "invalid_params",
    Internal => "internal",
    FrameTooLarge => "frame_too_large",
    ContentRefExpired => "content_ref_expired",
    UnsupportedVersion => "unsupported_version",
    CapabilityNotDeclared => "capability_not_declared",
    ShutdownTimeout => "shutdown_timeout",
    StreamGap => "stream_gap",
    StreamCancelled => "stream_cancelled",
    ProviderFailed => "provider_failed",
    ProviderInterrupted => "provider_interrupted",
    InterceptTimeout => "intercept_timeout",
    StaleGeneration => "stale_generation",
    DependencyUnsatisfied => "dependency_unsatisfied",
    DependencyCycle => "dependency_cycle",
    SchemaMismatch => "schema_mismatch",
    ActivationFailed => "activation_failed",
    CleanupFailed => "cleanup_failed",
    BrowserUnavailable => "browser_unavailable",
    BrowserTabNotFound => "browser_tab_not_found",
    BrowserTabBusy => "browser_tab_busy",
    BrowserStaleRef => "browser_stale_ref",
    BrowserOriginMismatch => "browser_origin_mismatch",
    BrowserPermissionDenied => "browser_permission_denied",
    BrowserTimeout => "browser_timeout",
    BrowserCancelled => "browser_cancelled",
});

impl Reason {
    /// The JSON-RPC error code of the table.
    pub fn code(self) -> i64 {
        match self {
            Reason::ProtocolError => ErrorObject::INVALID_REQUEST,
            Reason::UnknownMethod => ErrorObject::METHOD_NOT_FOUND,
            Reason::InvalidParams => ErrorObject::INVALID_PARAMS,
            Reason::Internal => ErrorObject::INTERNAL_ERROR,
            _ => -32000,
        }
    }

    /// Whether the table marks the reason retryable; `data.retryable` must equal it.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Reason::Internal
                | Reason::ContentRefExpired
                | Reason::ShutdownTimeout
                | Reason::StreamGap
                | Reason::ProviderFailed
                | Reason::ProviderInterrupted
                | Reason::InterceptTimeout
                | Reason::CleanupFailed
                | Reason::BrowserUnavailable
                | Reason::BrowserTabBusy
                | Reason::BrowserTimeout
        )
    }

    /// The reason table of `profile`, in the order of its spec table: v1's 15 for
    /// [`ProtocolProfile::V1`]; those and v2's 13 for [`ProtocolProfile::V2`].
    pub fn in_profile(profile: ProtocolProfile) -> &'static [Reason] {
        match profile {
            ProtocolProfile::V1 => &Reason::ALL[..V1_REASONS],
            ProtocolProfile::V2 => Reason::ALL,
        }
    }

    /// Whether this reason is in `profile`'s table.
    pub fn is_in(self, profile: ProtocolProfile) -> bool {
        Reason::in_profile(profile).contains(&self)
    }

    /// The reason of `profile`'s table with this exact wire spelling, if any.
    pub fn parse_in(wire: &str, profile: ProtocolProfile) -> Option<Reason> {
        Reason::parse(wire).filter(|reason| reason.is_in(profile))
    }

    /// A short default message of our own (receivers never branch on messages, §3).
    pub fn message(self) -> &'static str {
        match self {
            Reason::ProtocolError => "protocol error",
            Reason::UnknownMethod => "unknown method",
            Reason::InvalidParams => "invalid params",
            Reason::Internal => "internal error",
            Reason::FrameTooLarge => "frame too large",
            Reason::ContentRefExpired => "content ref expired",
            Reason::UnsupportedVersion => "unsupported protocol version",
            Reason::CapabilityNotDeclared => "capability not declared",
            Reason::ShutdownTimeout => "shutdown timed out",
            Reason::StreamGap => "provider stream has a gap",
            Reason::StreamCancelled => "provider stream cancelled",
            Reason::ProviderFailed => "provider failed",
            Reason::ProviderInterrupted => "provider interrupted",
            Reason::InterceptTimeout => "intercept timed out",
            Reason::StaleGeneration => "stale generation",
            Reason::DependencyUnsatisfied => "dependency unsatisfied",
            Reason::DependencyCycle => "dependency cycle",
            Reason::SchemaMismatch => "schema mismatch",
            Reason::ActivationFailed => "activation failed",
            Reason::CleanupFailed => "cleanup failed",
            Reason::BrowserUnavailable => "browser unavailable",
            Reason::BrowserTabNotFound => "browser tab not found",
            Reason::BrowserTabBusy => "browser tab busy",
            Reason::BrowserStaleRef => "browser element ref is stale",
            Reason::BrowserOriginMismatch => "browser origin mismatch",
            Reason::BrowserPermissionDenied => "browser permission denied",
            Reason::BrowserTimeout => "browser timed out",
            Reason::BrowserCancelled => "browser call cancelled",
        }
    }

    /// The `data` member of an error carrying this reason: `{"reason":…, "retryable":…}`.
    pub fn data(self) -> Value {
        let mut data = Map::new();
        data.insert("reason".into(), Value::from(self.as_str()));
        data.insert("retryable".into(), Value::from(self.retryable()));
        Value::Object(data)
    }

    /// The wire error for this reason with its default [`message`](Reason::message).
    pub fn error_object(self) -> ErrorObject {
        self.error_object_with(self.message())
    }

    /// The wire error for this reason with a message of the caller's choice.
    pub fn error_object_with(self, message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(self.code(), message).with_data(self.data())
    }

    /// The reason a received error carries on a v1 connection:
    /// [`from_error_object_in`](Reason::from_error_object_in) with [`ProtocolProfile::V1`].
    pub fn from_error_object(error: &ErrorObject) -> Option<Reason> {
        Reason::from_error_object_in(error, ProtocolProfile::V1)
    }

    /// The reason a received error carries on a connection of `profile`, or `None` when it has
    /// none (§3, spec delta §3.1): `data` missing, not an object, `data.reason` not in the
    /// profile's table ([`Reason::in_profile`]; a v2-only reason on a v1 connection has none),
    /// `data.retryable` not the table's boolean, or a `code` other than the reason's. Extra
    /// members of `data` are ignored.
    ///
    /// The spec does not say what a code mismatch means; treating it as "no reason" is the safe
    /// choice because such a call is then never retried automatically.
    pub fn from_error_object_in(error: &ErrorObject, profile: ProtocolProfile) -> Option<Reason> {
        let data = error.data.as_ref()?.as_object()?;
        let reason = Reason::parse_in(data.get("reason")?.as_str()?, profile)?;
        let retryable = data.get("retryable")?.as_bool()?;
        (retryable == reason.retryable() && error.code == reason.code()).then_some(reason)
    }

    /// The error sent instead of a result that would not fit a frame (§2.4): code -32603, message
    /// [`RESPONSE_TOO_LARGE_MESSAGE`](crate::RESPONSE_TOO_LARGE_MESSAGE), reason `internal`.
    pub fn response_too_large() -> ErrorObject {
        Reason::Internal.error_object_with(crate::constants::RESPONSE_TOO_LARGE_MESSAGE)
    }
}

#[cfg(test)]
mod tests;
