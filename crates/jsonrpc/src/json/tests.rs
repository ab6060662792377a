//! `write_json` against its limit and its errors.

use bytes::BytesMut;

use sidewire_framing::Error;

use super::write_json;

#[test]
fn write_json_serializes_in_place_after_what_is_there() {
    let mut dst = BytesMut::from(&b"x:"[..]);
    write_json(
        &serde_json::json!({"jsonrpc": "2.0", "id": 1}),
        &mut dst,
        100,
    )
    .unwrap();
    assert_eq!(&dst[..], b"x:{\"id\":1,\"jsonrpc\":\"2.0\"}");
}

#[test]
fn write_json_stops_at_the_limit_and_restores_the_buffer() {
    // The limit bounds the buffer's whole length, not the value's: 2 bytes are there already.
    let mut dst = BytesMut::from(&b"x:"[..]);
    // Exactly at the limit: 2 + 9 bytes.
    write_json("1234567", &mut dst, 11).unwrap();
    assert_eq!(&dst[..], b"x:\"1234567\"");
    // One byte over: the error keeps what was written of it, then the buffer is put back.
    let err = write_json("12345678", &mut dst, 20).unwrap_err();
    assert!(
        matches!(&err, Error::TooLarge { limit: 20, prefix } if b"\"12345678\"".starts_with(prefix)),
        "{err:?}"
    );
    let err = write_json(&vec!["a very long string"; 100_000], &mut dst, 1000).unwrap_err();
    match &err {
        Error::TooLarge {
            limit: 1000,
            prefix,
        } => {
            assert!(prefix.len() <= sidewire_framing::PREFIX_BYTES, "{err:?}");
        }
        _ => panic!("{err:?}"),
    }
    assert_eq!(&dst[..], b"x:\"1234567\"");
}

#[test]
fn write_json_refuses_raw_values_with_newlines() {
    let raw = serde_json::value::RawValue::from_string("{\n}".to_owned()).unwrap();
    let mut dst = BytesMut::new();
    let err = write_json(&raw, &mut dst, 100).unwrap_err();
    assert!(err.is_embedded_newline(), "{err:?}");
    assert!(dst.is_empty());
}

#[test]
fn write_json_reports_serialize_errors() {
    use std::collections::HashMap;
    // Maps with non-string keys do not serialize to JSON.
    let bad: HashMap<(u8, u8), u8> = HashMap::from([((1, 2), 3)]);
    let mut dst = BytesMut::new();
    let err = write_json(&bad, &mut dst, 100).unwrap_err();
    assert!(err.is_serialize(), "{err:?}");
    assert!(dst.is_empty());
}
