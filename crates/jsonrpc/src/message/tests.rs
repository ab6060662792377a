use proptest::prelude::*;
use serde_json::{Value, json};

use crate::Profile;
use crate::fuzz::{Parsed, encode, message, parse};

fn arb_json() -> impl Strategy<Value = Value> {
    // No floats: serde_json without `float_roundtrip` may change their last digit, which
    // would test serde_json, not us.
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(".{0,6}", arb_json(), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn arb_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        ".{0,10}".prop_map(Value::String)
    ]
}

proptest! {
    #[test]
    fn requests_round_trip(id in arb_id(), method in ".{1,20}", params in proptest::option::of(arb_object())) {
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = &params {
            message["params"] = params.clone();
        }
        let frame = message.to_string();
        let parsed = parse(&frame, Profile::Strict);
        let Parsed::Request { id: got_id, method: got_method, params: got_params } = &parsed else {
            panic!("{frame} parsed as {parsed:?}");
        };
        prop_assert_eq!(got_id, &id.to_string());
        prop_assert_eq!(got_method, &method);
        prop_assert_eq!(got_params.as_ref().map(|p| serde_json::from_str::<Value>(p).unwrap()), params);
        let again = encode(&parsed).unwrap();
        prop_assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), message);
        prop_assert_eq!(parse(&again, Profile::Strict), parsed);
    }

    #[test]
    fn notifications_and_responses_round_trip(
        method in ".{1,20}",
        params in arb_object(),
        result in arb_json(),
        id in any::<u32>(),
        code in any::<i32>(),
        text in ".{0,20}",
        data in proptest::option::of(arb_json()),
    ) {
        let mut error = json!({"code": code, "message": text});
        if let Some(data) = data {
            error["data"] = data;
        }
        for message in [
            json!({"jsonrpc": "2.0", "method": method, "params": params}),
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
            json!({"jsonrpc": "2.0", "id": id, "error": error}),
        ] {
            let frame = message.to_string();
            for profile in [Profile::Strict, Profile::Lenient] {
                let parsed = parse(&frame, profile);
                prop_assert!(!matches!(parsed, Parsed::Garbage | Parsed::Other), "{} -> {:?}", frame, parsed);
                let again = encode(&parsed).unwrap();
                prop_assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), message.clone());
                prop_assert_eq!(parse(&again, profile), parsed);
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        message(text.as_bytes());
    }

    /// Requests with params that are JSON, broken JSON, or JSON with more after it: `message`
    /// holds the parser's round trip on frames close to well-formed.
    #[test]
    fn near_well_formed_requests_keep_the_round_trip(
        id in any::<u32>(),
        method in "[a-z/é\\\\\"]{1,8}",
        params in arb_object(),
        noise in "[{}\\[\\],:\" 0-9a-z]{0,8}",
        ws in "[ \t\r\n]{0,2}",
    ) {
        let params = params.to_string();
        for params in [params.clone(), format!("{ws}{params}{ws}"), format!("{params}{noise}"), format!("{{{noise}")] {
            message(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#).as_bytes());
        }
    }

    #[test]
    fn json_ish_text_never_panics(value in arb_json(), noise in "[{}\\[\\],:\"0-9a-z ]{0,40}") {
        message(value.to_string().as_bytes());
        message(format!("{{\"jsonrpc\":\"2.0\",{noise}").as_bytes());
    }
}

/// Deep params: the frame's parser captures params without a depth limit (serde_json skips a
/// value without recursing), so params of any depth are a request, and the depth limit is the
/// params decoder's own.
#[test]
fn requests_with_deep_params_are_requests() {
    for depth in [127, 128, 129, 1000] {
        let params = format!("{}{}", "{\"a\":".repeat(depth - 1) + "{", "}".repeat(depth));
        let frame = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#);
        message(frame.as_bytes());
        let parsed = parse(&frame, Profile::Strict);
        assert!(matches!(parsed, Parsed::Request { .. }), "{depth}");
    }
}

/// A method name is written as serde_json writes it, whether it is copied (no escape needed)
/// or escaped, and a limit anywhere in the frame fails it with nothing left behind.
#[test]
fn method_names_are_serde_jsons_text_and_keep_to_the_limit() {
    use bytes::BytesMut;

    use crate::Id;
    use crate::message::{encode_notification, encode_request};

    for method in [
        "extension/intercept",
        "a",
        "",
        "tools/call é🦀",
        "quote\"d",
        "back\\slash",
        "tab\tand\u{1}",
    ] {
        let expected = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":{}}}",
            serde_json::to_string(method).unwrap()
        );
        let mut dst = BytesMut::new();
        encode_request(&mut dst, usize::MAX, &Id::int(7), method, None::<&Value>).unwrap();
        assert_eq!(std::str::from_utf8(&dst).unwrap(), expected);
        for limit in 0..expected.len() {
            let mut dst = BytesMut::from(&b"head"[..]);
            let err = encode_request(&mut dst, limit + 4, &Id::int(7), method, None::<&Value>)
                .unwrap_err();
            assert!(err.is_too_large(), "{method:?} at {limit}: {err}");
            assert_eq!(&dst[..], b"head", "{method:?} at {limit}");
        }
        let mut dst = BytesMut::new();
        encode_notification::<Value>(&mut dst, usize::MAX, method, None).unwrap();
        assert_eq!(
            std::str::from_utf8(&dst).unwrap(),
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":{}}}",
                serde_json::to_string(method).unwrap()
            )
        );
    }
}
