//! The error-reason table of §3 and its bridge to the JSON-RPC error object.
//!
//! A [`Reason`] knows its wire name, code and retryability exactly as the table lists them, plus a
//! short default message of our own. It converts to a [`sidewire_jsonrpc::ErrorObject`] carrying
//! `data: {"reason", "retryable"}` and back; an error whose `data` is missing or wrong has no
//! reason (§3). This is not the crate's Rust error type; that is [`Error`](crate::Error).

use serde_json::{Map, Value};
use sidewire_jsonrpc::ErrorObject;

/// An error reason of §3.
///
/// The table is frozen with v1 (§1), so the enum is exhaustive: callers may match every reason.
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
    /// `stale_generation` (host-local): a user action targets a stale surface.
    StaleGeneration,
}

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
        )
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

    /// The reason a received error carries, or `None` when it has none (§3): `data` missing, not
    /// an object, `data.reason` not a listed reason, `data.retryable` not the table's boolean, or
    /// a `code` other than the reason's. Extra members of `data` are ignored.
    ///
    /// The spec does not say what a code mismatch means; treating it as "no reason" is the safe
    /// choice because such a call is then never retried automatically.
    pub fn from_error_object(error: &ErrorObject) -> Option<Reason> {
        let data = error.data.as_ref()?.as_object()?;
        let reason = Reason::parse(data.get("reason")?.as_str()?)?;
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
