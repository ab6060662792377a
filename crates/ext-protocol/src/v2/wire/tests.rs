//! The v2 member sets after the handshake, each beside v1's decoding of the same frame.

use serde_json::{Value, json};

use crate::v2;
use crate::{
    InterceptParams, InterceptResult, Reason, ResourcesChangedParams, ShutdownParams,
    StreamChunkParams, StreamOpenParams, decode_params, decode_result,
};

fn text(value: &Value) -> String {
    value.to_string()
}

const SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[test]
fn a_zero_timeout_is_accepted_on_v2_only() {
    // Checklist item 9.
    let intercept =
        json!({"event":"input.receive","seq":1,"payload":{"text":"x"},"timeoutMillis":0});
    let v2: v2::InterceptParams = decode_params(Some(&text(&intercept))).unwrap();
    assert_eq!(v2.0.timeout_millis, 0);
    let v1 = decode_params::<InterceptParams>(Some(&text(&intercept))).unwrap_err();
    assert!(v1.is_range(), "{v1}");
    assert_eq!(v1.reason(), Reason::InvalidParams);
    let shutdown = json!({"timeoutMillis":0});
    let v2: v2::ShutdownParams = decode_params(Some(&text(&shutdown))).unwrap();
    assert_eq!(v2.0.timeout_millis, 0);
    let v1 = decode_params::<ShutdownParams>(Some(&text(&shutdown))).unwrap_err();
    assert_eq!(v1.reason(), Reason::InvalidParams);
    // Negative stays invalid on v2.
    for bad in [
        json!({"timeoutMillis":-1}),
        json!({"timeoutMillis":1, "x":1}),
    ] {
        let err = decode_params::<v2::ShutdownParams>(Some(&text(&bad))).unwrap_err();
        assert_eq!(err.reason(), Reason::InvalidParams, "{bad}");
    }
    let mut negative = intercept.clone();
    negative["timeoutMillis"] = json!(-1);
    assert!(decode_params::<v2::InterceptParams>(Some(&text(&negative))).is_err());
}

#[test]
fn empty_resource_paths_are_accepted_on_v2_only() {
    // Checklist item 24 (the decoder's half).
    let empty = r#"{"paths":[]}"#;
    let v2: v2::ResourcesChangedParams = decode_params(Some(empty)).unwrap();
    assert!(v2.0.paths.is_empty());
    assert!(decode_params::<ResourcesChangedParams>(Some(empty)).is_err());
    assert!(decode_params::<v2::ResourcesChangedParams>(Some(r#"{"paths":null}"#)).is_err());
}

fn open_params() -> Value {
    json!({"streamId":"es_1","providerRef":"plugin/p/m/x","request":{"messages":[],"tools":[],"maxTokens":0},"seqBase":1})
}

#[test]
fn stream_generation_and_epoch_are_v2_members() {
    // Checklist items 21-23 (the decoder's half).
    let mut open = open_params();
    open["generation"] = json!(3);
    open["epoch"] = json!("cap|plugin/x|1.0.0|sha256:x");
    let v2: v2::StreamOpenParams = decode_params(Some(&text(&open))).unwrap();
    assert_eq!(v2.generation, Some(3));
    assert_eq!(v2.open.seq_base, 1);
    let err = decode_params::<StreamOpenParams>(Some(&text(&open))).unwrap_err();
    assert!(err.is_unknown(), "{err}");
    // Every other member is still refused on v2.
    let mut extra = open_params();
    extra["gen"] = json!(1);
    assert!(
        decode_params::<v2::StreamOpenParams>(Some(&text(&extra)))
            .unwrap_err()
            .is_unknown()
    );

    let chunk = json!({"streamId":"es_1","seq":1,"generation":2,
        "chunk":{"type":"text","text":"w","generation":5,"epoch":"e"}});
    let v2: v2::StreamChunkParams = decode_params(Some(&text(&chunk))).unwrap();
    assert_eq!(v2.generation(), Some(2), "the params' generation wins");
    assert_eq!(v2.chunk.generation, Some(5));
    assert_eq!(v2.clone().common().chunk.text, "w");
    let err = decode_params::<StreamChunkParams>(Some(&text(&chunk))).unwrap_err();
    assert!(err.is_unknown(), "{err}");
    let mut inner_only = chunk.clone();
    inner_only.as_object_mut().unwrap().remove("generation");
    let v2: v2::StreamChunkParams = decode_params(Some(&text(&inner_only))).unwrap();
    assert_eq!(v2.generation(), Some(5), "else the chunk's");
    assert!(
        decode_params::<StreamChunkParams>(Some(&text(&inner_only)))
            .unwrap_err()
            .is_unknown()
    );
    let zero = json!({"streamId":"es_1","seq":1,"generation":0,"chunk":{"type":"text","text":"w","generation":0}});
    let v2: v2::StreamChunkParams = decode_params(Some(&text(&zero))).unwrap();
    assert_eq!(v2.generation(), None, "0 is unset");
    // The chunk's own rules still hold.
    let bad = json!({"streamId":"es_1","seq":1,"chunk":{"type":"text","generation":1}});
    assert!(decode_params::<v2::StreamChunkParams>(Some(&text(&bad))).is_err());
}

fn descriptor(pointer: &str) -> Value {
    json!({"jsonPointer":pointer,"contentRef":"cr_0123456789abcdef0123456789abcdef","totalBytes":3,"sha256":SHA})
}

#[test]
fn externalized_replacements_are_v2_results() {
    // Checklist item 18 (the decoder's half: §2.9 steps 1 and 2).
    let ok = json!({"decision":"replace","externalized":[descriptor("/replacement")]});
    let result: v2::InterceptResult = decode_result(&text(&ok)).unwrap();
    assert_eq!(result.externalized.len(), 1);
    assert!(result.common().is_none());
    let null = json!({"decision":"replace","replacement":null,"externalized":[descriptor("/replacement")]});
    assert!(decode_result::<v2::InterceptResult>(&text(&null)).is_ok());
    // v1 keeps refusing the member.
    assert!(
        decode_result::<InterceptResult>(&text(&ok))
            .unwrap_err()
            .is_unknown()
    );
    let refused = [
        // Inline plus a descriptor.
        json!({"decision":"replace","replacement":{"text":"x"},"externalized":[descriptor("/replacement")]}),
        // The wrong pointer.
        json!({"decision":"replace","externalized":[descriptor("/payload")]}),
        // Two descriptors.
        json!({"decision":"replace","externalized":[descriptor("/replacement"),descriptor("/replacement")]}),
        // Neither.
        json!({"decision":"replace"}),
        // A descriptor on another decision.
        json!({"decision":"continue","externalized":[descriptor("/replacement")]}),
        json!({"decision":"continue","replacement":{"text":"x"}}),
        // `null` only stands for an externalized replacement.
        json!({"decision":"continue","replacement":null}),
        json!({"decision":"replace","replacement":null}),
    ];
    for bad in refused {
        let err = decode_result::<v2::InterceptResult>(&text(&bad)).unwrap_err();
        assert_eq!(err.reason(), Reason::ProtocolError, "{bad}");
    }
    // An inline result reads as v1's.
    let inline = json!({"decision":"replace","replacement":{"text":"x"}});
    let result: v2::InterceptResult = decode_result(&text(&inline)).unwrap();
    assert_eq!(
        result.common(),
        Some(decode_result::<InterceptResult>(&text(&inline)).unwrap())
    );
}
