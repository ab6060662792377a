use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use sidewire_ext_protocol::{ContentEncoding, ContentReadResult, ExternalizedField};

use super::*;

fn descriptor(bytes: &[u8]) -> ExternalizedField {
    ExternalizedField {
        json_pointer: "/payload".to_owned(),
        content_ref: "content_000000000000000000000001".to_owned(),
        total_bytes: bytes.len() as u64,
        sha256: hex(&Sha256::digest(bytes)),
    }
}

/// The page a correct host returns for `offset` with pages of `page` bytes.
fn page(field: &ExternalizedField, bytes: &[u8], offset: usize, page: usize) -> ContentReadResult {
    let end = (offset + page).min(bytes.len());
    ContentReadResult {
        content_ref: field.content_ref.clone(),
        offset: offset as u64,
        data_base64: STANDARD.encode(&bytes[offset..end]),
        next_offset: (end < bytes.len()).then_some(end as u64),
        total_bytes: field.total_bytes,
        sha256: field.sha256.clone(),
        encoding: ContentEncoding::Utf8,
    }
}

fn read_all(field: &ExternalizedField, bytes: &[u8], size: usize) -> Result<Vec<u8>, Error> {
    let mut reader = Reassembly::new(field)?;
    while let Some(offset) = reader.next_offset() {
        reader.accept(&page(field, bytes, offset as usize, size))?;
    }
    reader.finish()
}

#[test]
fn pages_reassemble_into_the_object() {
    let bytes = br#"{"messages":[{"role":"user","content":"hello"}]}"#;
    let field = descriptor(bytes);
    for size in [1, 7, bytes.len(), 1000] {
        assert_eq!(read_all(&field, bytes, size).unwrap(), bytes);
    }
}

#[test]
fn an_empty_object_is_one_empty_read() {
    let field = descriptor(b"");
    let mut reader = Reassembly::new(&field).unwrap();
    assert_eq!(reader.next_offset(), Some(0));
    reader.accept(&page(&field, b"", 0, 10)).unwrap();
    assert_eq!(reader.next_offset(), None);
    assert!(reader.finish().unwrap().is_empty());
}

#[test]
fn echoes_must_match_the_request_and_the_descriptor() {
    let bytes = b"0123456789";
    let field = descriptor(bytes);
    type Spoil = fn(&mut ContentReadResult);
    let cases: [(&str, Spoil); 4] = [
        ("ref", |p| p.content_ref = "content_x".to_owned()),
        ("offset", |p| p.offset = 3),
        ("totalBytes", |p| p.total_bytes = 11),
        ("sha256", |p| p.sha256 = "0".repeat(64)),
    ];
    for (what, spoil) in cases {
        let mut reader = Reassembly::new(&field).unwrap();
        let mut bad = page(&field, bytes, 0, 4);
        spoil(&mut bad);
        let err = reader.accept(&bad).unwrap_err();
        assert!(err.is_content(), "{what}: {err}");
        assert_eq!(
            err.reason(),
            Some(sidewire_ext_protocol::Reason::ProtocolError)
        );
    }
}

#[test]
fn the_bytes_must_match_the_descriptor() {
    let bytes = b"0123456789";
    // The host stored other bytes than the descriptor's hash says.
    let mut field = descriptor(bytes);
    field.sha256 = descriptor(b"9876543210").sha256;
    let pages_hash = field.sha256.clone();
    let mut reader = Reassembly::new(&field).unwrap();
    let mut first = page(&field, bytes, 0, 10);
    first.sha256 = pages_hash;
    reader.accept(&first).unwrap();
    assert!(reader.finish().unwrap_err().to_string().contains("SHA-256"));
}

#[test]
fn pages_must_advance_and_end_exactly() {
    let bytes = b"0123456789";
    let field = descriptor(bytes);
    // An empty page that claims more follows would be asked for forever.
    let mut reader = Reassembly::new(&field).unwrap();
    let mut stuck = page(&field, bytes, 0, 0);
    stuck.next_offset = Some(0);
    assert!(reader.accept(&stuck).is_err());
    // A last page that ends before totalBytes.
    let mut reader = Reassembly::new(&field).unwrap();
    let mut short = page(&field, bytes, 0, 4);
    short.next_offset = None;
    assert!(reader.accept(&short).is_err());
    // A page running past the end.
    let mut reader = Reassembly::new(&field).unwrap();
    let mut long = page(&field, b"0123456789AB", 0, 12);
    long.next_offset = None;
    assert!(reader.accept(&long).is_err());
    // Stopping early is caught at the end.
    let mut reader = Reassembly::new(&field).unwrap();
    reader.accept(&page(&field, bytes, 0, 4)).unwrap();
    assert!(reader.finish().is_err());
}

#[test]
fn descriptors_beyond_the_object_cap_are_refused() {
    let mut field = descriptor(b"x");
    field.total_bytes = CONTENT_OBJECT_BYTES as u64 + 1;
    assert!(Reassembly::new(&field).unwrap_err().is_content());
}
