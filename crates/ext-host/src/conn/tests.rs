//! The intercept's params as written from their parts, against serde's text of them.

use std::sync::atomic::AtomicU64;

use bytes::BytesMut;
use proptest::prelude::*;
use sidewire_ext_protocol::{AgentStartPayload, HookPayload, InputPayload};
use sidewire_ext_protocol::{ExternalizedField, HookPoint};
use sidewire_jsonrpc::EncodeParams;

use super::{PayloadText, WireIntercept};

fn both(params: &WireIntercept<'_>) -> (String, String) {
    let mut serde = BytesMut::new();
    sidewire_jsonrpc::write_json(params, &mut serde, usize::MAX).unwrap();
    let mut written = BytesMut::new();
    params.encode_params(&mut written, usize::MAX).unwrap();
    (
        String::from_utf8(serde.to_vec()).unwrap(),
        String::from_utf8(written.to_vec()).unwrap(),
    )
}

/// Every point, the extremes of the numbers, payloads of each JSON kind, and an externalized
/// payload: the same text as serde's, byte for byte.
#[test]
fn the_written_intercept_is_serdes() {
    let payloads = [
        r#"{"text":"a \"quoted\" line\n"}"#,
        r#"{}"#,
        r#"null"#,
        r#"[1,{"é":"🦀"}]"#,
    ];
    for event in HookPoint::ALL.iter().copied() {
        for (seq, timeout_millis) in [(1, 1), (u64::MAX, u64::MAX), (42, 30_000)] {
            let seq = AtomicU64::new(seq);
            for payload in &payloads {
                let params = WireIntercept {
                    event,
                    seq: &seq,
                    payload,
                    timeout_millis,
                    externalized: Vec::new(),
                };
                let (serde, written) = both(&params);
                assert_eq!(written, serde);
            }
        }
    }
    let seq = AtomicU64::new(3);
    let params = WireIntercept {
        event: HookPoint::InputReceive,
        seq: &seq,
        payload: "null",
        timeout_millis: 5,
        externalized: vec![ExternalizedField {
            json_pointer: "/payload".into(),
            content_ref: "c1".into(),
            total_bytes: 9,
            sha256: "0".repeat(64),
        }],
    };
    let (serde, written) = both(&params);
    assert_eq!(written, serde);
}

/// A limit anywhere in the text fails with `TooLarge` and writes nothing past it.
#[test]
fn the_written_intercept_keeps_to_the_limit() {
    let seq = AtomicU64::new(7);
    let params = WireIntercept {
        event: HookPoint::InputReceive,
        seq: &seq,
        payload: r#"{"text":"hi"}"#,
        timeout_millis: 5,
        externalized: Vec::new(),
    };
    let (_, text) = both(&params);
    for limit in 0..text.len() {
        let mut dst = BytesMut::from(&b"head"[..]);
        let err = params.encode_params(&mut dst, limit + 4).unwrap_err();
        assert!(err.is_too_large(), "{limit}: {err}");
        assert!(dst.len() <= limit + 4);
    }
}

fn input(text: &str) -> HookPayload {
    HookPayload::Input(InputPayload {
        text: text.to_owned(),
    })
}

/// A payload's text is serde_json's, whether written from its parts (an input text that
/// needs no escape, or none) or by serde (anything else).
#[test]
fn payload_text_is_serdes() {
    let mut payloads: Vec<HookPayload> = [
        "",
        "hello",
        "a \"quoted\" line\n",
        "back\\slash",
        "\u{1}\u{1f}",
        "é🦀 \u{7f}",
    ]
    .map(input)
    .into();
    payloads.push(input(&"x".repeat(100_000)));
    payloads.push(HookPayload::AgentStart(AgentStartPayload {
        model: "m\"1".into(),
        ..AgentStartPayload::default()
    }));
    for payload in payloads {
        let expected = serde_json::to_string(&payload).unwrap();
        assert_eq!(PayloadText::of(&payload).get(), expected);
    }
}

proptest! {
    #[test]
    fn any_input_payload_text_is_serdes(text in any::<String>()) {
        let payload = input(&text);
        let text = PayloadText::of(&payload);
        prop_assert_eq!(text.get(), serde_json::to_string(&payload).unwrap());
    }
}
