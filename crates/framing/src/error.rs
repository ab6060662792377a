//! The one error type of this crate.

use bytes::Bytes;

/// What can go wrong while framing bytes.
///
/// Variants say *what* happened; callers branch with the `is_*` predicates, never on the
/// `Display` text, which is for people and may change. A message includes its cause, and no
/// variant returns it again as the `source`, so a printed error chain names each cause once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A frame (or SSE event) reached the cap before its terminator.
    ///
    /// `limit` is the cap in bytes, counted the way the codec counts (for NDJSON, including the
    /// newline). `prefix` is a bounded copy (at most [`PREFIX_BYTES`](crate::PREFIX_BYTES)) of the
    /// start of the offending line, so a caller can look for a request `"id"` in it.
    #[error("frame exceeds the {limit}-byte frame limit")]
    TooLarge {
        /// The cap that was hit, in bytes.
        limit: usize,
        /// The first bytes of the oversized frame (at most 1 KiB).
        prefix: Bytes,
    },
    /// The stream ended inside a frame that had no terminator yet.
    #[error("stream ended inside an unterminated frame ({pending} bytes pending)")]
    Truncated {
        /// How many bytes of the unfinished frame were buffered.
        pending: usize,
    },
    /// An outgoing frame contains a raw newline, so it cannot be written as one NDJSON frame.
    #[error("outgoing frame contains a raw newline at byte {at}")]
    EmbeddedNewline {
        /// Offset of the first newline.
        at: usize,
    },
    /// Serializing an outgoing value failed for a reason other than size. This crate never
    /// serializes; the writers above it (`sidewire-jsonrpc`'s `write_json`) report it with the
    /// frame errors they share.
    #[error("cannot serialize outgoing frame: {0}")]
    Serialize(serde_json::Error),
    /// The underlying reader or writer failed.
    #[error("i/o error: {0}")]
    Io(std::io::Error),
}

/// The codecs' `Decoder`/`Encoder` error type must be `From<io::Error>`. Written out rather than
/// derived with `#[from]`, which would also make the I/O error the `source`: the message
/// already says it, and a printed chain would show it twice.
impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Self {
        Error::Io(error)
    }
}

impl Error {
    /// The frame or event was over the cap.
    pub fn is_too_large(&self) -> bool {
        matches!(self, Error::TooLarge { .. })
    }

    /// The stream ended in the middle of a frame.
    pub fn is_truncated(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }

    /// The underlying I/O failed.
    pub fn is_io(&self) -> bool {
        matches!(self, Error::Io(_))
    }

    /// An outgoing frame held a raw newline and was refused before a byte was written.
    pub fn is_embedded_newline(&self) -> bool {
        matches!(self, Error::EmbeddedNewline { .. })
    }

    /// An outgoing value could not be serialized.
    pub fn is_serialize(&self) -> bool {
        matches!(self, Error::Serialize(_))
    }
}

#[cfg(test)]
mod tests;
