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

/// The reference host's first frame, verbatim (issue 11): its `capabilities` repeat the
/// protocol version, a member the spec's HostCapabilities table does not list.
const REFERENCE_HOST_PARAMS: &str = r#"{"protocolId":"reasonix.extension.v1","protocolVersion":"1","manifest":{"intercepts":["input.receive"],"capabilities":["interceptors"]},"session":{"sessionId":"5d9d21234425b47b3c28c573dc8144a9","workspaceRoot":"/home/user/project","generation":1},"capabilities":{"contentRefs":true,"uiHost":"headless","protocolVersion":"1"}}"#;

#[test]
fn the_reference_hosts_capabilities_version_is_accepted() {
    let params = decode_initialize_params(Some(REFERENCE_HOST_PARAMS)).unwrap();
    assert_eq!(params.capabilities.protocol_version.as_deref(), Some("1"));
    assert_eq!(params.capabilities.ui_host, crate::UiHost::Headless);
    // The v1-era manifest lists the reference host may add decode too, and are kept.
    let with_lists = REFERENCE_HOST_PARAMS.replace(
        r#""capabilities":["interceptors"]"#,
        r#""capabilities":["interceptors"],"providers":["acme/fast"],"uiActions":["refresh"]"#,
    );
    let params = decode_initialize_params(Some(&with_lists)).unwrap();
    assert_eq!(params.manifest.providers, ["acme/fast"]);
    assert_eq!(params.manifest.ui_actions, ["refresh"]);
}

#[test]
fn a_capabilities_version_other_than_the_negotiated_one_is_refused_by_section_1() {
    let with = |version: &str| {
        REFERENCE_HOST_PARAMS.replace(
            r#""uiHost":"headless","protocolVersion":"1""#,
            &format!(r#""uiHost":"headless","protocolVersion":{version}"#),
        )
    };
    let path = "params.capabilities.protocolVersion";
    for (version, reason) in [
        (r#""2""#, Reason::UnsupportedVersion),
        (r#""0""#, Reason::UnsupportedVersion),
        (r#""01""#, Reason::ProtocolError),
        (r#""""#, Reason::ProtocolError),
        (r#""v1""#, Reason::ProtocolError),
        ("1", Reason::ProtocolError),
        ("null", Reason::ProtocolError),
    ] {
        let json = with(version);
        // An unknown member elsewhere does not change the answer: the identity check comes
        // first, as for the top-level members.
        let json = json.replace(r#""generation":1"#, r#""generation":1,"extra":true"#);
        let err = decode_initialize_params(Some(&json)).unwrap_err();
        assert!(err.is_version(), "{version}: {err}");
        assert_eq!(err.reason(), reason, "{version}: {err}");
        assert_eq!(err.path(), path, "{version}: {err}");
    }
    // The top-level identity is checked before the capabilities' copy of it.
    let json = with(r#""2""#).replace(
        r#""protocolVersion":"1","manifest""#,
        r#""protocolVersion":"01","manifest""#,
    );
    let err = decode_initialize_params(Some(&json)).unwrap_err();
    assert_eq!(err.path(), "params.protocolVersion", "{err}");
    // Other members of the capabilities stay strict.
    let json = REFERENCE_HOST_PARAMS.replace(
        r#""protocolVersion":"1"}}"#,
        r#""protocolVersion":"1","dependencySchemaVersion":1}}"#,
    );
    let err = decode_initialize_params(Some(&json)).unwrap_err();
    assert!(err.is_unknown(), "{err}");
    assert_eq!(err.path(), "params.capabilities.dependencySchemaVersion");
    assert_eq!(err.reason(), Reason::InvalidParams);
}

/// The reference host's first frame to the starter example (spec delta §5.3), verbatim.
const REFERENCE_V2_INITIALIZE: &str = r#"{"protocolVersion":"2","protocolId":"reasonix.extension.v2","manifest":{"intercepts":["input.receive"],"capabilities":["interceptors"]},"session":{"sessionId":"s-7f3a","workspaceRoot":"/home/dev/project","generation":1},"capabilities":{"contentRefs":true,"uiHost":"headless","protocolVersion":"2","dependencySchemaVersion":1},"dependencySchemaVersion":1}"#;

#[test]
fn the_reference_hosts_v2_first_frame_picks_the_v2_profile() {
    use crate::{HookPoint, Initialize, ProtocolProfile, decode_initialize_params_in};
    let both = [ProtocolProfile::V1, ProtocolProfile::V2];
    let decoded = decode_initialize_params_in(Some(REFERENCE_V2_INITIALIZE), &both).unwrap();
    assert_eq!(decoded.profile(), ProtocolProfile::V2);
    let Initialize::V2(params) = &decoded else {
        panic!("{decoded:?}")
    };
    assert_eq!(params.dependency_schema_version, Some(1));
    assert_eq!(params.capabilities.dependency_schema_version, Some(1));
    let common = decoded.common();
    assert_eq!(common.protocol_id, "reasonix.extension.v2");
    assert_eq!(common.manifest.intercepts, [HookPoint::InputReceive]);
    assert_eq!(common.session.session_id, "s-7f3a");
    // A v1 frame still picks v1, decoded as the v1 decoder decodes it.
    let v1 = params_text("reasonix.extension.v1", "1", "");
    let decoded = decode_initialize_params_in(Some(&v1), &both).unwrap();
    assert_eq!(decoded.profile(), ProtocolProfile::V1);
    assert_eq!(
        decoded.common(),
        decode_initialize_params(Some(&v1)).unwrap()
    );
}

#[test]
fn profiles_never_mix_and_a_refused_profile_is_unsupported_version() {
    use crate::{ProtocolProfile, decode_initialize_params_in};
    let both = [ProtocolProfile::V1, ProtocolProfile::V2];
    let reason = |raw: &str, accepted: &[ProtocolProfile]| {
        decode_initialize_params_in(Some(raw), accepted)
            .map(|decoded| decoded.profile())
            .map_err(|err| err.reason())
    };
    // A v2 id with v1's version, and the other way round.
    let mixed =
        REFERENCE_V2_INITIALIZE.replacen(r#""protocolVersion":"2""#, r#""protocolVersion":"1""#, 1);
    assert_eq!(reason(&mixed, &both), Err(Reason::UnsupportedVersion));
    let mixed = params_text("reasonix.extension.v1", "2", "");
    assert_eq!(reason(&mixed, &both), Err(Reason::UnsupportedVersion));
    // The capabilities' version is the profile's too.
    let caps = REFERENCE_V2_INITIALIZE.replace(
        r#""uiHost":"headless","protocolVersion":"2""#,
        r#""uiHost":"headless","protocolVersion":"1""#,
    );
    assert_eq!(reason(&caps, &both), Err(Reason::UnsupportedVersion));
    // An SDK restricted to one profile refuses the other.
    assert_eq!(
        reason(REFERENCE_V2_INITIALIZE, &[ProtocolProfile::V1]),
        Err(Reason::UnsupportedVersion)
    );
    let v1 = params_text("reasonix.extension.v1", "1", "");
    assert_eq!(
        reason(&v1, &[ProtocolProfile::V2]),
        Err(Reason::UnsupportedVersion)
    );
    // v1's own decoder is unchanged: a v2 host is refused.
    assert_eq!(
        decode_initialize_params(Some(REFERENCE_V2_INITIALIZE))
            .unwrap_err()
            .reason(),
        Reason::UnsupportedVersion
    );
    // Each profile's member set, strictly: v2's members are unknown to v1, and the other way
    // round a v2 host must send `capabilities.protocolVersion`.
    let v1_with_v2_member = params_text(
        "reasonix.extension.v1",
        "1",
        r#","dependencySchemaVersion":1"#,
    );
    assert_eq!(
        reason(&v1_with_v2_member, &both),
        Err(Reason::InvalidParams)
    );
    let v2_without = REFERENCE_V2_INITIALIZE.replace(
        r#","protocolVersion":"2","dependencySchemaVersion":1}"#,
        "}",
    );
    assert_eq!(reason(&v2_without, &both), Err(Reason::InvalidParams));
    let v2_unknown = REFERENCE_V2_INITIALIZE.replacen('{', r#"{"extra":1,"#, 1);
    assert_eq!(reason(&v2_unknown, &both), Err(Reason::InvalidParams));
}

#[test]
fn a_v2_manifest_expectation_keeps_what_v1_has_no_word_for() {
    use crate::{Capability, Initialize, ProtocolProfile, Slot, decode_initialize_params_in};
    let frame = REFERENCE_V2_INITIALIZE.replace(
        r#""manifest":{"intercepts":["input.receive"],"capabilities":["interceptors"]}"#,
        r#""manifest":{"intercepts":["input.receive"],"replaces":["permission","tool:shell"],"capabilities":["interceptors","tools","ui"],"tools":["grep"],"provides":[{"namespace":"plugin/x","kind":"tool","id":"grep","version":"1.0.0"}],"requires":[{"namespace":"host","kind":"ui","id":"panel","optional":true}]}"#,
    );
    let decoded = decode_initialize_params_in(Some(&frame), &[ProtocolProfile::V2]).unwrap();
    let Initialize::V2(params) = &decoded else {
        panic!("{decoded:?}")
    };
    assert_eq!(params.manifest.tools, ["grep"]);
    assert_eq!(params.manifest.provides[0].kind, "tool");
    assert_eq!(params.manifest.requires[0].optional, Some(true));
    let common = decoded.common();
    assert_eq!(common.manifest.replaces, [Slot::Permission]);
    assert_eq!(
        common.manifest.capabilities,
        [Capability::Interceptors, Capability::Ui]
    );
}

/// A whole v1-shaped `InitializeParams` with this identity and `extra` members.
fn params_text(id: &str, version: &str, extra: &str) -> String {
    params(
        &format!(r#""protocolId":"{id}","#),
        &format!(r#""protocolVersion":"{version}","#),
        extra,
    )
}
