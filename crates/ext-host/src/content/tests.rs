use base64::Engine;
use sidewire_ext_protocol::{CONTENT_CHUNK_BYTES, is_content_ref};

use super::*;

fn read(
    store: &ContentStore,
    reference: &str,
    offset: u64,
) -> Result<ContentReadResult, ErrorObject> {
    store.read(&ContentReadParams {
        content_ref: reference.to_owned(),
        offset,
    })
}

#[test]
fn pages_hold_at_most_256_kib_and_chain_by_next_offset() {
    let mut store = ContentStore::default();
    let data: Vec<u8> = (0..600_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let sha = sha256_hex(&data);
    let field = store.store(Bytes::from(data.clone()), &sha);
    assert!(is_content_ref(&field.content_ref), "{}", field.content_ref);
    assert_eq!(field.json_pointer, "/payload");
    assert_eq!(field.total_bytes, 600_000);
    let mut offset = 0;
    let mut all = Vec::new();
    loop {
        let page = read(&store, &field.content_ref, offset).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&page.data_base64)
            .unwrap();
        assert!(bytes.len() <= CONTENT_CHUNK_BYTES);
        assert_eq!(page.total_bytes, 600_000);
        assert_eq!(page.sha256, sha);
        all.extend_from_slice(&bytes);
        match page.next_offset {
            Some(next) => {
                assert_eq!(next, offset + bytes.len() as u64);
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(all, data);
    let empty = read(&store, &field.content_ref, 600_000).unwrap();
    assert_eq!(empty.data_base64, "");
    assert_eq!(empty.next_offset, None);
}

#[test]
fn past_the_end_unknown_and_evicted_refs_are_expired() {
    let mut store = ContentStore::default();
    let first = store.store(Bytes::from_static(b"{}"), &sha256_hex(b"{}"));
    let reason =
        |r: Result<ContentReadResult, ErrorObject>| Reason::from_error_object(&r.unwrap_err());
    assert_eq!(
        reason(read(&store, &first.content_ref, 3)),
        Some(Reason::ContentRefExpired)
    );
    assert_eq!(
        reason(read(&store, "content_000000000000000000000000", 0)),
        Some(Reason::ContentRefExpired)
    );
    for _ in 0..64 {
        store.store(Bytes::from_static(b"{}"), &sha256_hex(b"{}"));
    }
    assert_eq!(
        reason(read(&store, &first.content_ref, 0)),
        Some(Reason::ContentRefExpired)
    );
}
