//! The one Rust error type of this crate.
//!
//! It covers what ends [`serve`](crate::serve) (a fatal connection error, a failed handshake, an
//! inconsistent extension), what a host call can fail with, and what a callback reports. It is
//! not the wire error: a reason travels as [`Reason`] inside a `sidewire_jsonrpc::ErrorObject`,
//! and [`Error::reason`] bridges the two.

use std::fmt;

use sidewire_ext_protocol::{ProtocolProfile, Reason};
use sidewire_jsonrpc::CloseReason;

/// What can go wrong in a sidecar.
///
/// Callers branch with the `is_*` predicates and [`Error::reason`], never on the `Display`
/// text, which is for people (and for stderr) and may change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The connection failed fatally: an inbound frame over the cap, a line that is not a JSON
    /// object (blank lines and BOMs included), input that ended inside a frame, an I/O error or
    /// a write stall. Nothing more is read or answered.
    #[error("fatal {name}: {0}", name = close_reason_name(.0))]
    Connection(CloseReason),
    /// `extension/initialize` was answered with an error (a foreign protocol identity, invalid
    /// params, or a failing initialize hook); the spec makes that fatal (§6.5).
    #[error("extension/initialize failed ({reason}): {message}")]
    Handshake {
        /// The reason answered.
        reason: Reason,
        /// What was wrong.
        message: String,
    },
    /// A host call was attempted before the connection became ready (§6.5); nothing was
    /// written.
    #[error("{method} called before extension/initialized: the connection is not ready")]
    NotReady {
        /// The method that was not called.
        method: &'static str,
    },
    /// A feature of a later protocol version was used on a connection whose host picked an
    /// earlier one (spec delta §1.4 P5): `panel` and `view` publishes need v2. Nothing was
    /// written.
    #[error("{what} needs {needs}; the host speaks {profile}")]
    NotInProfile {
        /// What was attempted: `host/ui/publish kind "panel"`, ….
        what: &'static str,
        /// The profile it needs.
        needs: ProtocolProfile,
        /// The profile of this connection.
        profile: ProtocolProfile,
    },
    /// A host call failed: the host answered an error, the call timed out, its frame was too
    /// large, the answer was malformed, or the connection closed.
    #[error("{method} failed ({}): {message}", reason_name(*.reason))]
    Call {
        /// The method called.
        method: &'static str,
        /// The reason: the host's `data.reason`, or the local one (`intercept_timeout`,
        /// `frame_too_large`, `protocol_error`, `provider_interrupted`). `None` for a host
        /// error without a valid reason (§3).
        reason: Option<Reason>,
        /// The host's message or a local description.
        message: String,
    },
    /// A value the extension produced breaks the protocol's rules (a replacement, a decision
    /// that is illegal at its point, a UI payload); nothing was sent.
    #[error("invalid {what}: {detail}")]
    Invalid {
        /// What was checked: `replacement`, `decision`, `host/ui/publish params`, ….
        what: &'static str,
        /// Why it was refused.
        detail: String,
        /// The reason the refusal maps to.
        reason: Reason,
    },
    /// Content read through `host/content/read` does not match its descriptor (§9): a wrong
    /// length or SHA-256, a page whose echoes differ, or pages that do not advance.
    #[error("content {content_ref} is inconsistent: {detail}")]
    Content {
        /// The content ref read.
        content_ref: String,
        /// What did not match.
        detail: String,
    },
    /// The extension's registrations are inconsistent (an invalid or repeated action id, a
    /// point registered twice); [`serve`](crate::serve) fails before reading anything.
    #[error("invalid extension: {0}")]
    Config(String),
    /// A callback failed; see [`Error::callback`].
    #[error("{0}")]
    Callback(String),
    /// Setting up the standard streams failed.
    #[error("i/o error: {0}")]
    Io(std::io::Error),
}

/// Written out rather than derived with `#[from]`, which would also make the I/O error the
/// `source`: the message already says it, and a printed chain would show it twice.
impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Self {
        Error::Io(error)
    }
}

/// Names the reason of a fatal close for the stderr line, so it can be matched by people and
/// hosts (`frame_too_large`, `protocol_error`).
fn close_reason_name(reason: &CloseReason) -> &'static str {
    match close_reason(reason) {
        Some(reason) => reason.as_str(),
        None => "error",
    }
}

fn reason_name(reason: Option<Reason>) -> &'static str {
    reason.map_or("no reason", Reason::as_str)
}

/// The §3 reason of a fatal close, where the table has one.
fn close_reason(reason: &CloseReason) -> Option<Reason> {
    match reason {
        CloseReason::FrameTooLarge { .. } => Some(Reason::FrameTooLarge),
        // A line that is not a JSON object is `protocol_error` (§2.3). Input that ends inside
        // a frame is one too (§6.6), but the jsonrpc layer reports it as an I/O close that
        // keeps only the text of the framing error, and branching on text is not an option;
        // it stays without a reason (it is fatal either way).
        CloseReason::Garbage(_) => Some(Reason::ProtocolError),
        _ => None,
    }
}

impl Error {
    /// A callback failure with a message of the author's choice. The host sees it as an
    /// `internal` error carrying this text (§3: "a handler failed for an unmapped reason").
    pub fn callback(message: impl fmt::Display) -> Self {
        Error::Callback(message.to_string())
    }

    /// The §3 reason this error corresponds to, if any: what a host call failed with, what a
    /// fatal close or a failed handshake was, or what a local refusal maps to.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Error::Connection(reason) => close_reason(reason),
            Error::Handshake { reason, .. } | Error::Invalid { reason, .. } => Some(*reason),
            Error::Call { reason, .. } => *reason,
            Error::Content { .. } => Some(Reason::ProtocolError),
            Error::NotReady { .. }
            | Error::NotInProfile { .. }
            | Error::Config(_)
            | Error::Callback(_)
            | Error::Io(_) => None,
        }
    }

    /// Whether this error ended [`serve`](crate::serve) for good: a fatal connection error or
    /// a failed handshake. The process must exit non-zero.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::Connection(_) | Error::Handshake { .. })
    }

    /// A host call was attempted before the connection was ready.
    pub fn is_not_ready(&self) -> bool {
        matches!(self, Error::NotReady { .. })
    }

    /// A feature of a later protocol version was used on an earlier one's connection.
    pub fn is_not_in_profile(&self) -> bool {
        matches!(self, Error::NotInProfile { .. })
    }

    /// A deadline ran out (`intercept_timeout`).
    pub fn is_timeout(&self) -> bool {
        self.reason() == Some(Reason::InterceptTimeout)
    }

    /// A frame was over the cap: an inbound one (fatal) or an outbound one (refused, nothing
    /// written).
    pub fn is_frame_too_large(&self) -> bool {
        self.reason() == Some(Reason::FrameTooLarge)
    }

    /// The host answered a call with an error object.
    pub fn is_call(&self) -> bool {
        matches!(self, Error::Call { .. })
    }

    /// A value the extension produced was refused locally.
    pub fn is_invalid(&self) -> bool {
        matches!(self, Error::Invalid { .. })
    }

    /// Content read from the host did not match its descriptor.
    pub fn is_content(&self) -> bool {
        matches!(self, Error::Content { .. })
    }

    /// The extension's registrations are inconsistent.
    pub fn is_config(&self) -> bool {
        matches!(self, Error::Config(_))
    }

    /// Maps a failed jsonrpc call to this crate's error (§3: a closed connection is
    /// `provider_interrupted`, a local timeout `intercept_timeout`); the host's error is read
    /// with the reason table of the connection's `profile` (spec delta §3.1).
    pub(crate) fn from_call(
        method: &'static str,
        err: sidewire_jsonrpc::Error,
        profile: ProtocolProfile,
    ) -> Self {
        let reason = if let Some(error) = err.remote() {
            Reason::from_error_object_in(error, profile)
        } else if err.is_closed() {
            Some(Reason::ProviderInterrupted)
        } else if err.is_timeout() {
            Some(Reason::InterceptTimeout)
        } else if err.is_too_large() {
            Some(Reason::FrameTooLarge)
        } else if err.is_invalid_response() {
            Some(Reason::ProtocolError)
        } else {
            Some(Reason::Internal)
        };
        let message = match err.remote() {
            Some(error) => error.message.clone(),
            None => err.to_string(),
        };
        Error::Call {
            method,
            reason,
            message,
        }
    }
}

#[cfg(test)]
mod tests;
