//! Content references and `host/content/read` (§9): the externalization descriptor and the paged
//! read of a stored payload.
//!
//! Decoding checks each page on its own (base64 syntax, page size, `nextOffset` arithmetic,
//! object size); checking a page against the request and the descriptor (echoed ref, offset,
//! `totalBytes`, `sha256`) and reassembling the object are the reader's job in the SDK. This
//! module never decodes base64 or hashes bytes.

use serde::Serialize;

use crate::constants::{
    CONTENT_CHUNK_BYTES, CONTENT_OBJECT_BYTES, CONTENT_REF_HEX_DIGITS, CONTENT_REF_PREFIX,
};
use crate::decode::{Dto, Enum, Fields, NonBlank, Pattern, SHA256, Seg, Str, Uint, rule};
use crate::error::Error;

/// Whether `text` has the shape of a content ref: `content_` and 24 lowercase hex digits (§9).
///
/// Received refs are not required to have this shape: an unknown ref is answered
/// `content_ref_expired`, whatever it looks like.
pub fn is_content_ref(text: &str) -> bool {
    text.strip_prefix(CONTENT_REF_PREFIX).is_some_and(|hex| {
        hex.len() == CONTENT_REF_HEX_DIGITS
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// `ExternalizedField`: where an externalized value was stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalizedField {
    /// The JSON pointer of the externalized member; v1 allows only `/payload`.
    pub json_pointer: String,
    /// The content ref to read it with.
    pub content_ref: String,
    /// The stored object's length in bytes.
    pub total_bytes: u64,
    /// The SHA-256 of all bytes, lowercase hex.
    pub sha256: String,
}

impl Dto for ExternalizedField {
    const NAME: &'static str = "ExternalizedField";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ExternalizedField {
            json_pointer: f.req("jsonPointer", NonBlank)?,
            content_ref: f.req("contentRef", NonBlank)?,
            total_bytes: f.req("totalBytes", Uint::ANY)?,
            sha256: f.req("sha256", Pattern(&SHA256))?,
        })
    }
}

/// `ContentReadParams` (E→H): read one page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentReadParams {
    /// The ref from the descriptor.
    pub content_ref: String,
    /// Where the page starts; `totalBytes` is a legal empty read.
    pub offset: u64,
}

impl Dto for ContentReadParams {
    const NAME: &'static str = "ContentReadParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ContentReadParams {
            content_ref: f.req("contentRef", NonBlank)?,
            offset: f.req("offset", Uint::ANY)?,
        })
    }
}

/// `ContentReadResult.encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContentEncoding {
    /// `utf8`, the only v1 value.
    Utf8,
}

wire_enum!(ContentEncoding, "ContentEncoding", {
    Utf8 => "utf8",
});

/// `ContentReadResult`: one page of a stored object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentReadResult {
    /// The requested ref, echoed.
    pub content_ref: String,
    /// The requested offset, echoed.
    pub offset: u64,
    /// Standard base64 with padding of at most 262,144 bytes starting at `offset`.
    pub data_base64: String,
    /// `offset` + this page's decoded length; present iff that is below `totalBytes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// The whole object's length.
    pub total_bytes: u64,
    /// The whole object's SHA-256, lowercase hex.
    pub sha256: String,
    /// Always `utf8`.
    pub encoding: ContentEncoding,
}

impl ContentReadResult {
    /// The decoded length of `dataBase64`, or `None` when it is not standard padded base64.
    pub fn page_len(&self) -> Option<u64> {
        base64_decoded_len(&self.data_base64)
    }
}

/// The decoded length of standard base64 with padding, or `None` if the text is not that.
fn base64_decoded_len(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let padding = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    if padding > 2 {
        return None;
    }
    let body = &bytes[..bytes.len() - padding];
    if !body
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
    {
        return None;
    }
    Some((bytes.len() / 4 * 3 - padding) as u64)
}

impl Dto for ContentReadResult {
    const NAME: &'static str = "ContentReadResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let page = ContentReadResult {
            content_ref: f.req("contentRef", Str)?,
            offset: f.req("offset", Uint::ANY)?,
            data_base64: f.req("dataBase64", Str)?,
            next_offset: f.opt("nextOffset", Uint::ANY)?,
            total_bytes: f.req("totalBytes", Uint::ANY)?,
            sha256: f.req("sha256", Pattern(&SHA256))?,
            encoding: f.req("encoding", Enum::new())?,
        };
        f.check(|at| page.check(at))?;
        Ok(page)
    }
}

impl ContentReadResult {
    /// The page's own consistency (§9 reader obligations that need no outside knowledge).
    fn check(&self, at: &Seg<'_>) -> Result<(), Error> {
        let Some(len) = self.page_len() else {
            return Err(rule(
                &at.key("dataBase64"),
                "is not standard base64 with padding",
            ));
        };
        if len > CONTENT_CHUNK_BYTES as u64 {
            return Err(rule(
                &at.key("dataBase64"),
                format!("decodes to {len} bytes, more than {CONTENT_CHUNK_BYTES}"),
            ));
        }
        if self.total_bytes > CONTENT_OBJECT_BYTES as u64 {
            return Err(rule(
                &at.key("totalBytes"),
                format!("exceeds {CONTENT_OBJECT_BYTES}"),
            ));
        }
        let end = self.offset + len;
        if end > self.total_bytes {
            return Err(rule(&at.key("dataBase64"), "the page ends past totalBytes"));
        }
        match self.next_offset {
            None if end < self.total_bytes => Err(rule(
                &at.key("nextOffset"),
                "is required before the last page",
            )),
            Some(_) if end == self.total_bytes => Err(rule(
                &at.key("nextOffset"),
                "must be omitted on the last page",
            )),
            Some(next) if next != end => Err(rule(
                &at.key("nextOffset"),
                format!("must be offset + page length ({end})"),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
