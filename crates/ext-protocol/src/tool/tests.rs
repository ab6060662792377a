//! `extension/tool/call`: strict decoding of its DTOs and its place in the registries.

use serde_json::json;

use crate::{
    Direction, Method, MethodKind, ProtocolProfile, Reason, ToolCallParams, ToolCallResult,
    decode_params, decode_result,
};

fn params(raw: &str) -> Result<ToolCallParams, Reason> {
    decode_params::<ToolCallParams>(Some(raw)).map_err(|err| err.reason())
}

#[test]
fn params_take_any_arguments_verbatim() {
    for arguments in [
        "null",
        "{}",
        "[]",
        "\"text\"",
        "7",
        "true",
        r#"{"a":[1,{"b":null}]}"#,
    ] {
        let raw = format!(r#"{{"name":"echo","arguments":{arguments},"timeoutMillis":0}}"#);
        let decoded = params(&raw).unwrap();
        assert_eq!(decoded.name, "echo");
        assert_eq!(decoded.timeout_millis, 0);
        let expected: serde_json::Value = serde_json::from_str(arguments).unwrap();
        assert_eq!(decoded.arguments, expected);
        // What the host writes is what it decoded, `null` arguments included.
        assert_eq!(
            serde_json::to_value(&decoded).unwrap()["arguments"],
            expected
        );
    }
}

#[test]
fn params_are_strict() {
    let bad = [
        r#"{"arguments":{},"timeoutMillis":0}"#,
        r#"{"name":"","arguments":{},"timeoutMillis":0}"#,
        r#"{"name":"echo","timeoutMillis":0}"#,
        r#"{"name":"echo","arguments":{}}"#,
        r#"{"name":"echo","arguments":{},"timeoutMillis":-1}"#,
        r#"{"name":"echo","arguments":{},"timeoutMillis":1.5}"#,
        r#"{"name":"echo","arguments":{},"timeoutMillis":0,"extra":1}"#,
        r#"{"name":7,"arguments":{},"timeoutMillis":0}"#,
    ];
    for raw in bad {
        assert_eq!(params(raw).unwrap_err(), Reason::InvalidParams, "{raw}");
    }
}

#[test]
fn results_are_strict() {
    let ok = decode_result::<ToolCallResult>(r#"{"content":"hi"}"#).unwrap();
    assert_eq!((ok.content.as_str(), ok.is_error), ("hi", false));
    let err = decode_result::<ToolCallResult>(r#"{"content":"","isError":true}"#).unwrap();
    assert!(err.is_error);
    assert_eq!(
        serde_json::to_value(&err).unwrap(),
        json!({"content": "", "isError": true})
    );
    assert_eq!(serde_json::to_value(&ok).unwrap(), json!({"content": "hi"}));
    for raw in [
        r#"{}"#,
        r#"{"content":1}"#,
        r#"{"content":"x","isError":"yes"}"#,
        r#"{"content":"x","extra":true}"#,
        r#"[]"#,
    ] {
        let reason = decode_result::<ToolCallResult>(raw).unwrap_err().reason();
        assert_eq!(reason, Reason::ProtocolError, "{raw}");
    }
}

#[test]
fn the_method_is_registered_in_v2_only() {
    let (he, req) = (Direction::HostToExtension, MethodKind::Request);
    let name = "extension/tool/call";
    assert_eq!(Method::lookup_in(ProtocolProfile::V1, name, he, req), None);
    assert_eq!(Method::lookup(name, he, req), None);
    assert_eq!(
        Method::lookup_in(ProtocolProfile::V2, name, he, req),
        Some(Method::ToolCall)
    );
    // Its direction and kind hold in v2 too.
    let eh = Direction::ExtensionToHost;
    assert_eq!(Method::lookup_in(ProtocolProfile::V2, name, eh, req), None);
    let note = MethodKind::Notification;
    assert_eq!(Method::lookup_in(ProtocolProfile::V2, name, he, note), None);
    // The v1 table is v2's too, and stays the whole of `ALL`.
    for method in Method::ALL {
        assert!(method.is_registered_in(ProtocolProfile::V1));
        assert!(method.is_registered_in(ProtocolProfile::V2));
    }
    assert!(!Method::ALL.contains(&Method::ToolCall));
    assert_eq!(Method::ToolCall.params_dto(), "ToolCallParams");
    assert_eq!(Method::ToolCall.result_dto(), Some("ToolCallResult"));
    assert_eq!(Method::ToolCall.deadline(), None);
}
