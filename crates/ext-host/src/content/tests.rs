use base64::Engine;
use sidewire_ext_protocol::{CONTENT_CHUNK_BYTES, CONTENT_OBJECT_BYTES, is_content_ref};

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

#[test]
fn the_store_is_bounded_in_bytes_and_keeps_the_newest() {
    // Ten objects of the largest size: without the byte bound the store would hold all ten
    // (80 MiB); with it, the newest four (32 MiB), and the newest is always readable.
    let mut store = ContentStore::default();
    let big = Bytes::from(vec![b'x'; CONTENT_OBJECT_BYTES]);
    let sha = sha256_hex(&big);
    let mut fields = Vec::new();
    for _ in 0..10 {
        fields.push(store.store(big.clone(), &sha));
        let (objects, bytes) = store.held();
        assert!(
            bytes <= CONTENT_STORE_BYTES,
            "{bytes} bytes in {objects} objects"
        );
    }
    assert_eq!(store.held(), (4, 4 * CONTENT_OBJECT_BYTES));
    let expired = |field: &ExternalizedField| {
        Reason::from_error_object(&read(&store, &field.content_ref, 0).unwrap_err())
    };
    assert_eq!(expired(&fields[5]), Some(Reason::ContentRefExpired));
    for field in &fields[6..] {
        assert_eq!(
            read(&store, &field.content_ref, 0).unwrap().total_bytes,
            CONTENT_OBJECT_BYTES as u64
        );
    }
    // Small objects still obey the count bound.
    for _ in 0..100 {
        store.store(Bytes::from_static(b"{}"), &sha256_hex(b"{}"));
    }
    assert_eq!(
        store.held(),
        (CONTENT_REFS_PER_CONNECTION, 2 * CONTENT_REFS_PER_CONNECTION)
    );
}

#[test]
fn one_payload_stored_on_many_connections_is_one_buffer() {
    let text = format!("{{\"text\":\"{}\"}}", "y".repeat(100_000));
    let payload = crate::conn::PayloadText::from_json(text);
    let mut stores: Vec<ContentStore> = (0..3).map(|_| ContentStore::default()).collect();
    for store in &mut stores {
        store.store(
            payload.shared_bytes(),
            &sha256_hex(payload.get().as_bytes()),
        );
    }
    let first = stores[0].objects[0].bytes.as_ptr();
    for store in &stores {
        assert_eq!(store.objects[0].bytes.as_ptr(), first, "a copy per store");
        assert_eq!(store.objects[0].bytes.len(), payload.get().len());
    }
}
