//! The version check (§1, §16.1) and the handshake decoders (§6.1, checklist 22–25).

use crate::{
    Reason, check_protocol_id, check_protocol_version, check_version, decode_initialize_params,
    decode_initialize_result,
};

#[test]
fn protocol_versions() {
    assert_eq!(check_protocol_version("1"), Ok(()));
    for (version, reason) in [
        ("0", Reason::UnsupportedVersion),
        ("2", Reason::UnsupportedVersion),
        ("18446744073709551617", Reason::UnsupportedVersion),
        ("01", Reason::ProtocolError),
        ("+1", Reason::ProtocolError),
        ("-1", Reason::ProtocolError),
        ("", Reason::ProtocolError),
        ("x", Reason::ProtocolError),
        ("1.0", Reason::ProtocolError),
        (" 1", Reason::ProtocolError),
        ("1 ", Reason::ProtocolError),
        ("١", Reason::ProtocolError),
    ] {
        assert_eq!(check_protocol_version(version), Err(reason), "{version:?}");
    }
    assert_eq!(check_protocol_id("reasonix.extension.v1"), Ok(()));
    assert_eq!(
        check_protocol_id("reasonix.extension.v2"),
        Err(Reason::UnsupportedVersion)
    );
    assert_eq!(
        check_protocol_id("Reasonix.extension.v1"),
        Err(Reason::UnsupportedVersion)
    );
    assert_eq!(check_version(None, "1"), Ok(()));
    assert_eq!(
        check_version(Some("x"), "01"),
        Err(Reason::UnsupportedVersion)
    );
}

fn params(id: &str, version: &str, extra: &str) -> String {
    format!(
        r#"{{{id}{version}"manifest":{{}},"session":{{"sessionId":"s","workspaceRoot":"/w","generation":1}},
            "capabilities":{{"contentRefs":true,"uiHost":"tui"}}{extra}}}"#
    )
}

#[test]
fn initialize_params_check_identity_before_decoding() {
    let id = r#""protocolId":"reasonix.extension.v1","#;
    let v1 = r#""protocolVersion":"1","#;
    decode_initialize_params(Some(&params(id, v1, ""))).unwrap();
    let cases = [
        // Checklist 22 and 24: foreign id, even with an unknown member.
        (
            params(r#""protocolId":"reasonix.extension.v2","#, v1, r#","x":1"#),
            Reason::UnsupportedVersion,
            "params.protocolId",
        ),
        // Checklist 23.
        (
            params(id, r#""protocolVersion":"2","#, ""),
            Reason::UnsupportedVersion,
            "params.protocolVersion",
        ),
        (
            params(id, r#""protocolVersion":"0","#, ""),
            Reason::UnsupportedVersion,
            "params.protocolVersion",
        ),
        (
            params("", v1, ""),
            Reason::UnsupportedVersion,
            "params.protocolId",
        ),
        (
            params(r#""protocolId":1,"#, v1, ""),
            Reason::UnsupportedVersion,
            "params.protocolId",
        ),
        (
            params(id, r#""protocolVersion":"x","#, ""),
            Reason::ProtocolError,
            "params.protocolVersion",
        ),
        (
            params(id, r#""protocolVersion":"","#, ""),
            Reason::ProtocolError,
            "params.protocolVersion",
        ),
        (
            params(id, r#""protocolVersion":"01","#, ""),
            Reason::ProtocolError,
            "params.protocolVersion",
        ),
        (
            params(id, r#""protocolVersion":1,"#, ""),
            Reason::ProtocolError,
            "params.protocolVersion",
        ),
        (
            params(id, "", ""),
            Reason::ProtocolError,
            "params.protocolVersion",
        ),
        // Identity fine, the rest is invalid params.
        (
            params(id, v1, r#","x":1"#),
            Reason::InvalidParams,
            "params.x",
        ),
    ];
    for (json, reason, path) in cases {
        let err = decode_initialize_params(Some(&json)).unwrap_err();
        assert_eq!(err.reason(), reason, "{json}: {err}");
        assert_eq!(err.path(), path, "{json}: {err}");
        let wire = err.to_error_object();
        assert_eq!(Reason::from_error_object(&wire), Some(reason));
    }
    // Absent params have no protocolId.
    let err = decode_initialize_params(None).unwrap_err();
    assert_eq!(err.reason(), Reason::UnsupportedVersion);
}

#[test]
fn initialize_results_check_the_version_first() {
    let result = |version: &str, extra: &str| {
        format!(r#"{{{version}"name":"n","version":"v","stateSchemaVersion":0{extra}}}"#)
    };
    decode_initialize_result(&result(r#""protocolVersion":"1","#, "")).unwrap();
    let cases = [
        // Checklist 25.
        (
            result(r#""protocolVersion":"2","#, r#","x":1"#),
            Reason::UnsupportedVersion,
            "result.protocolVersion",
        ),
        (
            result(r#""protocolVersion":"01","#, ""),
            Reason::ProtocolError,
            "result.protocolVersion",
        ),
        (
            result("", ""),
            Reason::ProtocolError,
            "result.protocolVersion",
        ),
        (
            result(
                r#""protocolVersion":"1","#,
                r#","uiActions":[{"actionId":"Bad.Id"}]"#,
            ),
            Reason::ProtocolError,
            "result.uiActions[0].actionId",
        ),
    ];
    for (json, reason, path) in cases {
        let err = decode_initialize_result(&json).unwrap_err();
        assert_eq!(err.reason(), reason, "{json}: {err}");
        assert_eq!(err.path(), path, "{json}: {err}");
    }
}
