//! Reassembling externalized content (§9): the reader's obligations, as a plain state machine
//! that takes the pages `host/content/read` returned and yields the verified bytes.
//!
//! This is sans-IO: [`Reassembly`] never calls the host, so every check is tested without a
//! runtime. The host handle drives it (`HostHandle::read_content`). Strict decoding of each page
//! (base64 syntax, page size, `nextOffset` arithmetic, object size) already happened in
//! ext-protocol; what is checked here needs the request and the descriptor.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

use sidewire_ext_protocol::{
    CONTENT_CHUNK_BYTES, CONTENT_OBJECT_BYTES, ContentReadResult, ExternalizedField,
};

use crate::Error;

/// The reader of one externalized object.
#[derive(Debug)]
pub(crate) struct Reassembly<'a> {
    field: &'a ExternalizedField,
    data: Vec<u8>,
    hasher: Sha256,
    done: bool,
}

impl<'a> Reassembly<'a> {
    /// Starts reading `field`; refuses a descriptor that promises more than an object may hold.
    pub(crate) fn new(field: &'a ExternalizedField) -> Result<Self, Error> {
        if field.total_bytes > CONTENT_OBJECT_BYTES as u64 {
            return Err(inconsistent(
                field,
                format!(
                    "totalBytes {} exceeds {CONTENT_OBJECT_BYTES}",
                    field.total_bytes
                ),
            ));
        }
        Ok(Reassembly {
            field,
            // The descriptor's length is bounded just above, so it is safe to reserve.
            data: Vec::with_capacity(field.total_bytes as usize),
            hasher: Sha256::new(),
            done: false,
        })
    }

    /// The offset of the next page to request, or `None` when every page has been read.
    pub(crate) fn next_offset(&self) -> Option<u64> {
        (!self.done).then_some(self.data.len() as u64)
    }

    /// Checks one page against the request and the descriptor and appends its bytes.
    pub(crate) fn accept(&mut self, page: &ContentReadResult) -> Result<(), Error> {
        let field = self.field;
        let offset = self.data.len() as u64;
        if page.content_ref != field.content_ref {
            return Err(inconsistent(field, "the page echoes another contentRef"));
        }
        if page.offset != offset {
            return Err(inconsistent(
                field,
                format!("asked for offset {offset}, the page echoes {}", page.offset),
            ));
        }
        if page.total_bytes != field.total_bytes {
            return Err(inconsistent(
                field,
                format!(
                    "the descriptor says totalBytes {}, the page {}",
                    field.total_bytes, page.total_bytes
                ),
            ));
        }
        if page.sha256 != field.sha256 {
            return Err(inconsistent(
                field,
                "the page's sha256 differs from the descriptor's",
            ));
        }
        let bytes = STANDARD
            .decode(&page.data_base64)
            .map_err(|err| inconsistent(field, format!("dataBase64 does not decode: {err}")))?;
        if bytes.len() > CONTENT_CHUNK_BYTES {
            return Err(inconsistent(
                field,
                format!(
                    "a page of {} bytes exceeds {CONTENT_CHUNK_BYTES}",
                    bytes.len()
                ),
            ));
        }
        let end = offset + bytes.len() as u64;
        if end > field.total_bytes {
            return Err(inconsistent(field, "the pages run past totalBytes"));
        }
        match page.next_offset {
            // The last page: it must end exactly at the object's end.
            None if end == field.total_bytes => self.done = true,
            None => return Err(inconsistent(field, "the pages end before totalBytes")),
            // A page that does not advance would make the reader ask for it forever.
            Some(next) if next != end || bytes.is_empty() => {
                return Err(inconsistent(
                    field,
                    format!("nextOffset {next} does not advance past offset {offset}"),
                ));
            }
            Some(_) => {}
        }
        self.hasher.update(&bytes);
        self.data.extend_from_slice(&bytes);
        Ok(())
    }

    /// The whole object, once its length and SHA-256 have been checked against the descriptor.
    pub(crate) fn finish(self) -> Result<Vec<u8>, Error> {
        let field = self.field;
        if !self.done || self.data.len() as u64 != field.total_bytes {
            return Err(inconsistent(
                field,
                format!(
                    "read {} bytes, the descriptor says {}",
                    self.data.len(),
                    field.total_bytes
                ),
            ));
        }
        let digest = self.hasher.finalize();
        if hex(&digest) != field.sha256 {
            return Err(inconsistent(
                field,
                "the SHA-256 of the bytes read differs from the descriptor's",
            ));
        }
        Ok(self.data)
    }
}

fn inconsistent(field: &ExternalizedField, detail: impl Into<String>) -> Error {
    Error::Content {
        content_ref: field.content_ref.clone(),
        detail: detail.into(),
    }
}

/// Lowercase hex, the form `sha256` members use.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests;
