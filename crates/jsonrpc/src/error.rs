//! The one Rust error type of this crate, and the sticky reason a connection ended.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::ErrorObject;

/// Why a connection ended. Sticky: every pending request fails with it, and every later call
/// fails at once with the same reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The peer closed its output.
    Eof,
    /// The peer closed its input: a write found the pipe or socket closed (`EPIPE`,
    /// `ECONNRESET`), as when the peer process exited. Like [`Eof`](CloseReason::Eof), the
    /// peer's own doing rather than a failure on this side; whatever made it go (an exit
    /// status, a stderr tail) is for the owner of the process to tell. The driver still
    /// resolves with it as an `Err`, since the peer ended the exchange unasked.
    Hangup,
    /// An inbound frame was over the cap (fatal in the strict profile).
    FrameTooLarge {
        /// The cap in bytes, counting the newline.
        limit: usize,
    },
    /// A frame that was not a JSON-RPC object, under [`GarbagePolicy::Fatal`](crate::GarbagePolicy::Fatal).
    Garbage(Arc<str>),
    /// A write made no progress for the stall bound.
    WriteStall(Duration),
    /// Reading or writing failed.
    Io(Arc<str>),
    /// [`Peer::shutdown`](crate::Peer::shutdown) ran, or the driver was dropped.
    ShutDown,
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Eof => f.write_str("the peer closed the connection"),
            CloseReason::Hangup => f.write_str("the peer stopped reading (its input is closed)"),
            CloseReason::FrameTooLarge { limit } => {
                write!(f, "an inbound frame exceeded the {limit}-byte frame limit")
            }
            CloseReason::Garbage(detail) => write!(f, "the peer sent a malformed frame: {detail}"),
            CloseReason::WriteStall(bound) => {
                write!(f, "a write made no progress for {} ms", bound.as_millis())
            }
            CloseReason::Io(detail) => write!(f, "i/o error: {detail}"),
            CloseReason::ShutDown => f.write_str("the connection was shut down"),
        }
    }
}

/// What can go wrong with a call on a [`Peer`](crate::Peer).
///
/// Each message includes its cause and no variant but [`Local`](Error::Local) returns a
/// `source`, so a printed error chain names each cause once, and code that formats only
/// `{err}` loses nothing but a local failure's cause. That cause is the owner's own error,
/// returned as the `source` so the owner can downcast it back; the message names the method
/// only.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The connection is closed; the reason is sticky.
    #[error("connection closed: {0}")]
    Closed(CloseReason),
    /// No response arrived within the request's timeout, or (`idle`) within its idle timeout
    /// of its last activity.
    #[error("{method} got no response within {} ms{}", after.as_millis(), if *idle { " of its last activity" } else { "" })]
    Timeout {
        /// The method called.
        method: String,
        /// The timeout that ran out.
        after: Duration,
        /// It was the idle timeout ([`CallOptions::with_idle`](crate::CallOptions::with_idle)).
        idle: bool,
    },
    /// The peer answered with an error object.
    #[error("{method} failed: {error}")]
    Remote {
        /// The method called.
        method: String,
        /// What the peer sent.
        error: ErrorObject,
    },
    /// The outgoing frame would exceed the cap; nothing was written.
    #[error("outgoing {method} exceeds the {limit}-byte frame limit")]
    FrameTooLarge {
        /// The method.
        method: String,
        /// The cap in bytes, counting the newline.
        limit: usize,
    },
    /// The inbound response to this request was over the cap and was skipped (lenient profile).
    #[error("the response to {method} exceeded the {limit}-byte frame limit")]
    ResponseTooLarge {
        /// The method called.
        method: String,
        /// The cap in bytes, counting the newline.
        limit: usize,
    },
    /// The params could not be serialized.
    #[error("cannot serialize the params of {method}: {error}")]
    Serialize {
        /// The method.
        method: String,
        /// Why (said in the message, so not also returned as the `source`).
        error: serde_json::Error,
    },
    /// The response's result did not decode into the expected type.
    #[error("the result of {method} does not decode: {error}")]
    Decode {
        /// The method called.
        method: String,
        /// Why (said in the message, so not also returned as the `source`).
        error: serde_json::Error,
    },
    /// The response broke the JSON-RPC rules (strict profile: `protocol_error`).
    #[error("invalid response to {method}: {reason}")]
    InvalidResponse {
        /// The method called.
        method: String,
        /// What was wrong.
        reason: Cow<'static, str>,
    },
    /// The connection's owner failed the request locally with
    /// [`Peer::fail_request`](crate::Peer::fail_request) (for instance its transport could not
    /// deliver it); the cause is the `source`.
    #[error("{method} failed locally")]
    Local {
        /// The method called.
        method: String,
        /// The owner's error, as it passed it.
        #[source]
        cause: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// The connection is closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, Error::Closed(_))
    }

    /// The request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// The peer answered with an error object.
    pub fn is_remote(&self) -> bool {
        matches!(self, Error::Remote { .. })
    }

    /// A frame was over the cap: an outgoing one refused, or an inbound response skipped.
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            Error::FrameTooLarge { .. } | Error::ResponseTooLarge { .. }
        )
    }

    /// The peer's answer was malformed or did not decode.
    pub fn is_invalid_response(&self) -> bool {
        matches!(self, Error::InvalidResponse { .. } | Error::Decode { .. })
    }

    /// The connection's owner failed the request locally (see [`Error::Local`]).
    pub fn is_local(&self) -> bool {
        matches!(self, Error::Local { .. })
    }

    /// The reason the connection closed, when that is what this error is.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        match self {
            Error::Closed(reason) => Some(reason),
            _ => None,
        }
    }

    /// The peer's error object, when that is what this error is.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match self {
            Error::Remote { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
