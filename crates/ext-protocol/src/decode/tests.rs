//! Tests of the decoding engine itself: the duplicate-rejecting parser, trailing data, paths,
//! number classification and the "non-empty" definition.

use serde_json::json;

use crate::testkit::{accepts, check_rejects, rejects};
use crate::{
    Error, InterceptResult, ProviderMessage, SessionContext, ShutdownParams, Target,
    UiSubmitParams, decode, decode_params, decode_result,
};

#[test]
fn absent_params_are_an_empty_object() {
    let params: crate::InitializedParams = decode_params(None).unwrap();
    assert_eq!(params, crate::InitializedParams {});
    let err = decode_params::<ShutdownParams>(None).unwrap_err();
    assert!(err.is_missing());
    assert_eq!(err.path(), "params.timeoutMillis");
    assert_eq!(
        err.to_string(),
        "params.timeoutMillis: required member is missing"
    );
    let wire = err.to_error_object();
    assert_eq!(wire.code, -32602);
    assert_eq!(wire.message, err.to_string());
}

#[test]
fn the_value_must_be_an_object() {
    check_rejects::<ShutdownParams>(&[
        ("[]", "params", Error::is_type),
        ("null", "params", Error::is_type),
        ("\"x\"", "params", Error::is_type),
        ("1", "params", Error::is_type),
    ]);
}

#[test]
fn syntax_errors_and_trailing_data_are_rejected() {
    check_rejects::<ShutdownParams>(&[
        ("{\"timeoutMillis\":1} x", "params", Error::is_syntax),
        ("{\"timeoutMillis\":1}{}", "params", Error::is_syntax),
        ("{\"timeoutMillis\":1", "params", Error::is_syntax),
        ("", "params", Error::is_syntax),
        ("{\"timeoutMillis\":1,}", "params", Error::is_syntax),
        ("\u{feff}{\"timeoutMillis\":1}", "params", Error::is_syntax),
    ]);
    // Whitespace around the value is JSON, not trailing data.
    accepts::<ShutdownParams>(" {\"timeoutMillis\":1}\r\n");
}

#[test]
fn repeated_member_names_are_rejected_at_every_depth() {
    check_rejects::<ShutdownParams>(&[
        // A known member repeated.
        (
            r#"{"timeoutMillis":1,"timeoutMillis":1}"#,
            "params.timeoutMillis",
            Error::is_duplicate,
        ),
        // An unknown member repeated is still a duplicate first.
        (
            r#"{"timeoutMillis":1,"x":1,"x":2}"#,
            "params.x",
            Error::is_duplicate,
        ),
    ]);
    check_rejects::<InterceptResult>(&[
        // Inside an `any` value, at depth.
        (
            r#"{"decision":"replace","replacement":{"a":{"b":[{"c":1,"c":1}]}}}"#,
            "params.replacement.a.b[0].c",
            Error::is_duplicate,
        ),
    ]);
    check_rejects::<UiSubmitParams>(&[
        // Inside a map.
        (
            r#"{"surfaceId":"f","sessionId":"s","generation":1,"values":{"k":1,"k":2}}"#,
            "params.values.k",
            Error::is_duplicate,
        ),
        // A map key that is not an identifier is quoted in the path.
        (
            r#"{"surfaceId":"f","sessionId":"s","generation":1,"values":{"a.b":1,"a.b":2}}"#,
            "params.values[\"a.b\"]",
            Error::is_duplicate,
        ),
    ]);
}

#[test]
fn paths_name_nested_members_and_indices() {
    let err = rejects::<crate::ContextPayload>(
        r#"{"messages":[{"role":"user"},{"role":"robot"}]}"#,
        "params.messages[1].role",
    );
    assert!(err.is_enum());
    let err = rejects::<crate::InitializeParams>(
        r#"{"protocolId":"reasonix.extension.v1","protocolVersion":"1","manifest":{},
            "session":{"workspaceRoot":"/w","generation":1},
            "capabilities":{"contentRefs":true,"uiHost":"tui"}}"#,
        "params.session.sessionId",
    );
    assert!(err.is_missing());
    assert_eq!(err.reason(), crate::Reason::InvalidParams);
}

#[test]
fn result_errors_are_protocol_errors() {
    let err = decode_result::<crate::ShutdownResult>(r#"{"accepted":"yes"}"#).unwrap_err();
    assert!(err.is_type());
    assert_eq!(err.path(), "result.accepted");
    assert_eq!(err.target(), Target::Result);
    assert_eq!(err.reason(), crate::Reason::ProtocolError);
    let wire = err.to_error_object();
    assert_eq!(wire.code, -32600);
    assert_eq!(
        wire.data,
        Some(json!({"reason": "protocol_error", "retryable": false}))
    );
}

#[test]
fn integers_are_exact() {
    let uint = |n: &str| format!(r#"{{"timeoutMillis":{n}}}"#);
    for ok in ["1", "9007199254740991"] {
        accepts::<ShutdownParams>(&uint(ok));
    }
    for (bad, predicate) in [
        ("1.0", Error::is_type as fn(&Error) -> bool),
        ("1e3", Error::is_type),
        ("1E3", Error::is_type),
        ("1.5", Error::is_type),
        ("-0", Error::is_type),
        ("0", Error::is_range),
        ("-1", Error::is_range),
        ("9007199254740992", Error::is_range),
        ("18446744073709551616", Error::is_range),
        ("1e300", Error::is_range),
        ("\"5\"", Error::is_type),
        ("true", Error::is_type),
    ] {
        let err = rejects::<ShutdownParams>(&uint(bad), "params.timeoutMillis");
        assert!(predicate(&err), "{bad}: {err:?}");
    }
    // `int` members reach −(2^53−1) at most; `stateSchemaVersion` is also ≥ 0.
    let result = |n: &str| {
        format!(r#"{{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":{n}}}"#)
    };
    accepts::<crate::InitializeResult>(&result("9007199254740991"));
    for bad in ["-1", "9007199254740992", "-9007199254740992", "0.5"] {
        rejects::<crate::InitializeResult>(&result(bad), "params.stateSchemaVersion");
    }
}

#[test]
fn non_empty_means_a_character_outside_unicode_white_space() {
    let ctx = |id: &str| {
        format!(
            r#"{{"sessionId":{},"workspaceRoot":"/w","generation":1}}"#,
            json!(id)
        )
    };
    for blank in [
        "",
        " ",
        "\t\r\n",
        "\u{3000}",
        "\u{85}",
        "\u{a0}\u{2028}\u{202f}",
    ] {
        let err = rejects::<SessionContext>(&ctx(blank), "params.sessionId");
        assert!(err.is_blank(), "{blank:?}: {err:?}");
    }
    // Not White_Space: a zero-width space and a BOM count as characters.
    for ok in ["a", " a ", "\u{200b}", "\u{feff}"] {
        accepts::<SessionContext>(&ctx(ok));
    }
}

#[test]
fn the_schema_pattern_for_non_empty_lists_exactly_the_white_space_characters() {
    let spaces: Vec<char> = (0..=0x10FFFF_u32)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect();
    assert_eq!(spaces.len(), 25);
    let pattern = super::kind::NON_BLANK_PATTERN;
    for c in spaces {
        let spelled = format!("\\u{:04X}", c as u32);
        let listed = pattern.contains(&spelled)
            || matches!(c, '\t' | '\n' | '\u{c}' | '\r' | ' ')
            || (('\u{2000}'..='\u{200A}').contains(&c) && pattern.contains("\\u2000-\\u200A"));
        assert!(listed, "U+{:04X} missing from {pattern}", c as u32);
    }
}

#[test]
fn nulls_are_rejected_unless_nullable() {
    check_rejects::<ProviderMessage>(&[
        (r#"{"role":null}"#, "params.role", Error::is_null),
        (r#"{"content":null}"#, "params.content", Error::is_null),
        (r#"{"images":[null]}"#, "params.images[0]", Error::is_null),
        (
            r#"{"tool_calls":null}"#,
            "params.tool_calls",
            Error::is_null,
        ),
    ]);
    check_rejects::<UiSubmitParams>(&[(
        r#"{"surfaceId":"f","sessionId":"s","generation":1,"values":{"k":null}}"#,
        "params.values.k",
        Error::is_null,
    )]);
    // Null nested inside an `any` value is ordinary JSON.
    accepts::<UiSubmitParams>(
        r#"{"surfaceId":"f","sessionId":"s","generation":1,"values":{"k":[null,{"x":null}]}}"#,
    );
}

#[test]
fn optional_enums_treat_empty_string_as_absent() {
    let message = accepts::<ProviderMessage>(r#"{"role":""}"#);
    assert_eq!(message, ProviderMessage::default());
    // A required enum has no such escape.
    let err = rejects::<InterceptResult>(r#"{"decision":""}"#, "params.decision");
    assert!(err.is_enum());
}

#[test]
fn errors_echo_values_only_briefly() {
    let long = "x".repeat(500);
    let err =
        decode::<ProviderMessage>(&format!(r#"{{"role":"{long}"}}"#), Target::Params).unwrap_err();
    assert!(err.to_string().len() < 200, "{err}");
}
