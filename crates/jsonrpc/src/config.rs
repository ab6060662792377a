//! How a peer behaves: its profile, limits, deadlines and the protocol's hooks.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::{ErrorObject, Id};

/// Which rule set incoming messages are held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The extension protocol (spec §2.2–2.3): `"jsonrpc":"2.0"` required, `params` must be an
    /// object, request ids are strings or integer tokens, a repeated top-level member or a
    /// top-level array is fatal like a non-JSON line, no batches; absent params read as `{}`.
    Strict,
    /// Plain JSON-RPC 2.0 (MCP): `params` may be an object or an array, any number is a valid
    /// id; absent params read as `null`. Batches are not supported (MCP dropped them): an
    /// inbound top-level array is garbage exactly as under [`Profile::Strict`], skipped and
    /// counted or fatal per the [`GarbagePolicy`], and never answered.
    Lenient,
}

/// What a frame that is not a JSON object (a top-level array, that is a batch, included) does to
/// the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GarbagePolicy {
    /// Skip it, count it, and warn (at most once a second). When its bytes name one of our
    /// pending requests as their top-level integer `"id"` (and carry no top-level `"method"`),
    /// it was meant as that request's response: the request fails at once with
    /// [`Error::InvalidResponse`](crate::Error::InvalidResponse) and the reason.
    Skip,
    /// End the connection with [`CloseReason::Garbage`](crate::CloseReason::Garbage).
    Fatal,
}

/// An error this peer produces by itself (not a handler's), for [`Hooks::error_data`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalError {
    /// `-32600`: a malformed request, or one reusing a pending id.
    InvalidRequest,
    /// `-32601`: no handler for the method.
    MethodNotFound,
    /// `-32602`: the params did not decode into the handler's type.
    InvalidParams,
    /// `-32603`: the handler panicked, or its result does not serialize.
    Internal,
    /// `-32603`: the handler's result did not fit in a frame.
    ResponseTooLarge,
    /// `-32603`: the request queue was full (in count or bytes), so no handler ran.
    Overloaded,
    /// `-32603`: the peer is shutting down and takes no new requests.
    ShuttingDown,
}

/// What a cancelled or timed-out outgoing request was, for [`Hooks::on_cancel`].
#[derive(Debug, Clone, Copy)]
pub struct Cancelled<'a> {
    /// The request's id.
    pub id: &'a Id,
    /// The request's method.
    pub method: &'a str,
    /// The per-request timeout ran out (rather than the future being dropped).
    pub timed_out: bool,
    /// What ran out was the request's idle timeout ([`CallOptions::with_idle`]): no activity
    /// for that long.
    ///
    /// [`CallOptions::with_idle`]: crate::CallOptions::with_idle
    pub idle: bool,
}

/// A notification to send, produced by a hook.
#[derive(Debug, Clone)]
pub struct HookNotification {
    /// The method.
    pub method: String,
    /// The params.
    pub params: serde_json::Value,
}

/// The per-protocol parts of a peer: the `data` of errors it generates and what it sends when
/// an outgoing request is abandoned. Both default to nothing.
pub trait Hooks: Send + Sync + 'static {
    /// The `data` member for an error this peer generates itself. The extension protocol
    /// supplies `{"reason": ..., "retryable": ...}` (its spec §3); MCP supplies none.
    fn error_data(&self, kind: LocalError) -> Option<serde_json::Value> {
        let _ = kind;
        None
    }

    /// Called when an outgoing request is dropped or times out; a returned notification is
    /// sent (MCP: `notifications/cancelled`). Not called for requests whose response arrived.
    fn on_cancel(&self, cancelled: Cancelled<'_>) -> Option<HookNotification> {
        let _ = cancelled;
        None
    }
}

/// Hooks that add nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl Hooks for NoHooks {}

/// Limits, deadlines and policies of one peer. Every limit is finite.
#[derive(Clone)]
pub struct Config {
    pub(crate) profile: Profile,
    pub(crate) max_frame: usize,
    pub(crate) garbage: GarbagePolicy,
    pub(crate) max_concurrent_requests: usize,
    pub(crate) max_queued_requests: usize,
    pub(crate) max_queued_request_bytes: usize,
    pub(crate) outbound_queue: usize,
    pub(crate) background_queue: usize,
    pub(crate) request_timeout: Duration,
    pub(crate) write_stall: Duration,
    pub(crate) hooks: Arc<dyn Hooks>,
}

impl Config {
    /// A configuration with the given profile and frame cap (bytes, counting the newline, the
    /// same number the framing codec is given) and these defaults: garbage fatal in
    /// [`Profile::Strict`] and skipped in [`Profile::Lenient`], 32 concurrent
    /// inbound requests with 1,024 (and at most 16 MiB of request frames) more queued, an
    /// outbound queue of 256 frames, a background lane of 16 frames, a 60 s request timeout, a
    /// 10 s write-stall bound, no hooks.
    pub fn new(profile: Profile, max_frame: usize) -> Self {
        Config {
            profile,
            max_frame,
            garbage: match profile {
                Profile::Strict => GarbagePolicy::Fatal,
                Profile::Lenient => GarbagePolicy::Skip,
            },
            max_concurrent_requests: 32,
            max_queued_requests: 1024,
            max_queued_request_bytes: 16 * 1024 * 1024,
            outbound_queue: 256,
            background_queue: 16,
            request_timeout: Duration::from_secs(60),
            write_stall: Duration::from_secs(10),
            hooks: Arc::new(NoHooks),
        }
    }

    /// What a non-JSON frame does.
    pub fn garbage(mut self, policy: GarbagePolicy) -> Self {
        self.garbage = policy;
        self
    }

    /// How many inbound requests run at once (at least 1).
    pub fn max_concurrent_requests(mut self, limit: usize) -> Self {
        self.max_concurrent_requests = limit.max(1);
        self
    }

    /// How many inbound requests may wait for a slot; one more is answered `-32603`.
    pub fn max_queued_requests(mut self, limit: usize) -> Self {
        self.max_queued_requests = limit;
        self
    }

    /// How many bytes of request frames may wait for a slot, all queued requests together; a
    /// request that would go over is answered `-32603` like one over the count. The queued
    /// requests' handlers already decoded their params, so this bounds what they pin.
    pub fn max_queued_request_bytes(mut self, bytes: usize) -> Self {
        self.max_queued_request_bytes = bytes;
        self
    }

    /// How many notifications may wait in the background lane
    /// ([`Peer::notify_background`](crate::Peer::notify_background)) before senders wait (at
    /// least 1).
    pub fn background_queue(mut self, frames: usize) -> Self {
        self.background_queue = frames.max(1);
        self
    }

    /// How many outgoing frames may wait for the writer before callers wait (at least 1).
    pub fn outbound_queue(mut self, frames: usize) -> Self {
        self.outbound_queue = frames.max(1);
        self
    }

    /// The default timeout of outgoing requests (each call may override it).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long a write may make no progress before the connection fails.
    pub fn write_stall(mut self, bound: Duration) -> Self {
        self.write_stall = bound;
        self
    }

    /// The protocol's hooks.
    pub fn hooks(mut self, hooks: impl Hooks) -> Self {
        self.hooks = Arc::new(hooks);
        self
    }

    /// The profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The frame cap, counting the newline.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// The largest frame body this peer writes: the cap less the newline.
    pub(crate) fn max_body(&self) -> usize {
        self.max_frame.saturating_sub(1)
    }

    pub(crate) fn local_error(&self, kind: LocalError) -> ErrorObject {
        let (code, message) = match kind {
            LocalError::InvalidRequest => (ErrorObject::INVALID_REQUEST, "invalid request"),
            LocalError::MethodNotFound => (ErrorObject::METHOD_NOT_FOUND, "method not found"),
            LocalError::InvalidParams => (ErrorObject::INVALID_PARAMS, "invalid params"),
            LocalError::Internal => (ErrorObject::INTERNAL_ERROR, "internal error"),
            LocalError::ResponseTooLarge => (
                ErrorObject::INTERNAL_ERROR,
                "response exceeds frame size limit",
            ),
            LocalError::Overloaded => (ErrorObject::INTERNAL_ERROR, "too many requests queued"),
            LocalError::ShuttingDown => (ErrorObject::INTERNAL_ERROR, "shutting down"),
        };
        self.error_with(kind, ErrorObject::new(code, message))
    }

    pub(crate) fn error_with(&self, kind: LocalError, mut error: ErrorObject) -> ErrorObject {
        error.data = self.hooks.error_data(kind);
        error
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("profile", &self.profile)
            .field("max_frame", &self.max_frame)
            .field("garbage", &self.garbage)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("max_queued_requests", &self.max_queued_requests)
            .field("max_queued_request_bytes", &self.max_queued_request_bytes)
            .field("outbound_queue", &self.outbound_queue)
            .field("background_queue", &self.background_queue)
            .field("request_timeout", &self.request_timeout)
            .field("write_stall", &self.write_stall)
            .finish_non_exhaustive()
    }
}
