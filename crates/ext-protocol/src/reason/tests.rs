//! The reason table of §3 and the error-object bridge.

use serde_json::json;
use sidewire_jsonrpc::ErrorObject;

use crate::{ProtocolProfile, RESPONSE_TOO_LARGE_MESSAGE, Reason};

#[test]
fn the_table_matches_section_3() {
    let table: [(&str, i64, bool); 15] = [
        ("protocol_error", -32600, false),
        ("unknown_method", -32601, false),
        ("invalid_params", -32602, false),
        ("internal", -32603, true),
        ("frame_too_large", -32000, false),
        ("content_ref_expired", -32000, true),
        ("unsupported_version", -32000, false),
        ("capability_not_declared", -32000, false),
        ("shutdown_timeout", -32000, true),
        ("stream_gap", -32000, true),
        ("stream_cancelled", -32000, false),
        ("provider_failed", -32000, true),
        ("provider_interrupted", -32000, true),
        ("intercept_timeout", -32000, true),
        ("stale_generation", -32000, false),
    ];
    let v1 = Reason::in_profile(ProtocolProfile::V1);
    assert_eq!(v1.len(), table.len());
    for (reason, (name, code, retryable)) in v1.iter().zip(table) {
        assert_eq!(reason.as_str(), name);
        assert_eq!(reason.code(), code, "{name}");
        assert_eq!(reason.retryable(), retryable, "{name}");
        assert!(!reason.message().is_empty());
        let wire = reason.error_object();
        assert_eq!(wire.code, code);
        assert_eq!(
            wire.data,
            Some(json!({"reason": name, "retryable": retryable}))
        );
        assert_eq!(Reason::from_error_object(&wire), Some(*reason));
    }
}

#[test]
fn the_spec_example_round_trips() {
    let wire: ErrorObject = serde_json::from_str(
        r#"{"code":-32000,"message":"intercept timed out","data":{"reason":"intercept_timeout","retryable":true}}"#,
    )
    .unwrap();
    assert_eq!(
        Reason::from_error_object(&wire),
        Some(Reason::InterceptTimeout)
    );
    assert_eq!(
        serde_json::to_value(Reason::InterceptTimeout.error_object()).unwrap(),
        serde_json::to_value(&wire).unwrap()
    );
}

#[test]
fn missing_or_invalid_data_means_no_reason() {
    let with = |code: i64, data: Option<serde_json::Value>| ErrorObject {
        code,
        message: "m".into(),
        data,
    };
    let cases = [
        with(-32000, None),
        with(-32000, Some(json!("intercept_timeout"))),
        with(-32000, Some(json!({"reason": "intercept_timeout"}))),
        with(-32000, Some(json!({"retryable": true}))),
        with(
            -32000,
            Some(json!({"reason": "intercept_timeout", "retryable": false})),
        ),
        with(
            -32000,
            Some(json!({"reason": "intercept_timeout", "retryable": "true"})),
        ),
        with(
            -32000,
            Some(json!({"reason": "timeout", "retryable": true})),
        ),
        with(-32000, Some(json!({"reason": null, "retryable": true}))),
        // The code does not match the reason.
        with(
            -32602,
            Some(json!({"reason": "intercept_timeout", "retryable": true})),
        ),
    ];
    for error in cases {
        assert_eq!(Reason::from_error_object(&error), None, "{error:?}");
    }
    // Extra members of `data` are ignored.
    let extra = with(
        -32602,
        Some(json!({"reason": "invalid_params", "retryable": false, "x": 1})),
    );
    assert_eq!(
        Reason::from_error_object(&extra),
        Some(Reason::InvalidParams)
    );
}

#[test]
fn oversized_results_become_a_fixed_internal_error() {
    let wire = Reason::response_too_large();
    assert_eq!(wire.code, -32603);
    assert_eq!(wire.message, RESPONSE_TOO_LARGE_MESSAGE);
    assert_eq!(
        wire.data,
        Some(json!({"reason": "internal", "retryable": true}))
    );
}

/// Spec delta §3.1: v2's 13 reasons, all -32000, with the reference's retryable flags.
const V2_ONLY: [(&str, bool); 13] = [
    ("dependency_unsatisfied", false),
    ("dependency_cycle", false),
    ("schema_mismatch", false),
    ("activation_failed", false),
    ("cleanup_failed", true),
    ("browser_unavailable", true),
    ("browser_tab_not_found", false),
    ("browser_tab_busy", true),
    ("browser_stale_ref", false),
    ("browser_origin_mismatch", false),
    ("browser_permission_denied", false),
    ("browser_timeout", true),
    ("browser_cancelled", false),
];

#[test]
fn the_v2_table_is_the_union_of_28() {
    let v1 = Reason::in_profile(ProtocolProfile::V1);
    let v2 = Reason::in_profile(ProtocolProfile::V2);
    assert_eq!(v2.len(), 28);
    assert_eq!(&v2[..15], v1, "v1's reasons come first, unchanged");
    for (reason, (name, retryable)) in v2[15..].iter().zip(V2_ONLY) {
        assert_eq!(reason.as_str(), name);
        assert_eq!(reason.code(), -32000, "{name}");
        assert_eq!(reason.retryable(), retryable, "{name}");
        assert!(!reason.is_in(ProtocolProfile::V1), "{name}");
        assert!(reason.is_in(ProtocolProfile::V2), "{name}");
        let wire = reason.error_object();
        assert_eq!(
            wire.data,
            Some(json!({"reason": name, "retryable": retryable}))
        );
        assert_eq!(
            Reason::from_error_object_in(&wire, ProtocolProfile::V2),
            Some(*reason)
        );
        // On a V1 connection a v2-only reason is an error without a reason.
        assert_eq!(
            Reason::from_error_object_in(&wire, ProtocolProfile::V1),
            None
        );
        assert_eq!(Reason::from_error_object(&wire), None);
        assert_eq!(Reason::parse_in(name, ProtocolProfile::V1), None);
        assert_eq!(Reason::parse_in(name, ProtocolProfile::V2), Some(*reason));
        // The wrong retryable flag is no reason in either profile.
        let wrong = ErrorObject::new(-32000, "m")
            .with_data(json!({"reason": name, "retryable": !retryable}));
        assert_eq!(
            Reason::from_error_object_in(&wrong, ProtocolProfile::V2),
            None
        );
    }
    // Every v1 reason is understood on both profiles.
    for reason in v1 {
        let wire = reason.error_object();
        for profile in ProtocolProfile::ALL {
            assert_eq!(Reason::from_error_object_in(&wire, profile), Some(*reason));
        }
    }
}
