//! Content references (spec §9): payloads too large to inline are stored on the connection that
//! will read them and served back in pages by `host/content/read`.
//!
//! Each connection keeps at most 64 objects and [`CONTENT_STORE_BYTES`] (32 MiB) of them;
//! storing one more evicts the oldest until both hold (the newest object is always kept). Refs
//! die with the connection, never by time. Stored bytes are shared, not copied: one payload
//! sent to several members (or as an event to several sidecars) is one buffer. This module
//! measures, stores and pages; deciding when to externalize is the caller's
//! (`EXTERNALIZE_FIELD_BYTES`).

use std::collections::VecDeque;

use base64::Engine;
use bytes::Bytes;
use sha2::{Digest, Sha256};
use sidewire_ext_protocol::{
    CONTENT_CHUNK_BYTES, CONTENT_REF_PREFIX, CONTENT_REFS_PER_CONNECTION, ContentEncoding,
    ContentReadParams, ContentReadResult, ExternalizedField, PAYLOAD_POINTER, Reason,
};
use sidewire_jsonrpc::ErrorObject;

struct Stored {
    reference: String,
    bytes: Bytes,
    sha256: String,
}

/// The most bytes one connection's stored objects may hold together (counted per connection,
/// even where buffers are shared): four objects of the largest size. The spec's 64-object
/// bound alone would let one sidecar pin 512 MiB.
pub(crate) const CONTENT_STORE_BYTES: usize = 32 * 1024 * 1024;

/// One connection's stored objects, oldest first.
#[derive(Default)]
pub(crate) struct ContentStore {
    objects: VecDeque<Stored>,
    /// The bytes in `objects`.
    bytes: usize,
}

impl std::fmt::Debug for ContentStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContentStore")
            .field("objects", &self.objects.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl ContentStore {
    /// Stores a payload's bytes and returns its `/payload` descriptor.
    pub(crate) fn store(&mut self, bytes: Bytes, sha256: &str) -> ExternalizedField {
        while self.objects.len() >= CONTENT_REFS_PER_CONNECTION
            || (!self.objects.is_empty() && self.bytes + bytes.len() > CONTENT_STORE_BYTES)
        {
            if let Some(oldest) = self.objects.pop_front() {
                self.bytes -= oldest.bytes.len();
            }
        }
        self.bytes += bytes.len();
        let reference = new_ref();
        let field = ExternalizedField {
            json_pointer: PAYLOAD_POINTER.to_owned(),
            content_ref: reference.clone(),
            total_bytes: bytes.len() as u64,
            sha256: sha256.to_owned(),
        };
        self.objects.push_back(Stored {
            reference,
            bytes,
            sha256: sha256.to_owned(),
        });
        field
    }

    /// The bytes of a stored object, if `content_ref` names one (not evicted).
    pub(crate) fn get(&self, content_ref: &str) -> Option<Bytes> {
        self.objects
            .iter()
            .find(|s| s.reference == content_ref)
            .map(|s| s.bytes.clone())
    }

    /// How many objects and bytes are stored.
    #[cfg(test)]
    pub(crate) fn held(&self) -> (usize, usize) {
        (self.objects.len(), self.bytes)
    }

    /// Serves one page.
    pub(crate) fn read(
        &self,
        params: &ContentReadParams,
    ) -> Result<ContentReadResult, ErrorObject> {
        let expired = || {
            Reason::ContentRefExpired.error_object_with(
                "unknown, evicted or foreign content ref, or offset past the end",
            )
        };
        let stored = self
            .objects
            .iter()
            .find(|s| s.reference == params.content_ref)
            .ok_or_else(expired)?;
        let total = stored.bytes.len() as u64;
        if params.offset > total {
            return Err(expired());
        }
        // `offset` ≤ `total` ≤ 8 MiB, so it fits a usize.
        let start = params.offset as usize;
        let end = (start + CONTENT_CHUNK_BYTES).min(stored.bytes.len());
        let page = &stored.bytes[start..end];
        Ok(ContentReadResult {
            content_ref: stored.reference.clone(),
            offset: params.offset,
            data_base64: base64::engine::general_purpose::STANDARD.encode(page),
            next_offset: ((end as u64) < total).then_some(end as u64),
            total_bytes: total,
            sha256: stored.sha256.clone(),
            encoding: ContentEncoding::Utf8,
        })
    }
}

/// The lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// `content_` and 24 lowercase hex digits from 12 random bytes.
fn new_ref() -> String {
    let mut bytes = [0u8; 12];
    if getrandom::fill(&mut bytes).is_err() {
        // Refs need to be unique per connection, not secret: a counter mixed with the clock
        // does when the OS generator is unavailable.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes[..8].copy_from_slice(&nanos.to_le_bytes());
        bytes[8..].copy_from_slice(&(n as u32).to_le_bytes());
    }
    let mut out = String::with_capacity(CONTENT_REF_PREFIX.len() + 24);
    out.push_str(CONTENT_REF_PREFIX);
    for byte in bytes {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

#[cfg(test)]
mod tests;
