//! The v2 `InitializeResult`: strict decoding in the v2 profile, the §2.2.1 checks against the
//! manifest, and duplicate action ids.

use crate::{Manifest, ProtocolProfile, Reason, decode_initialize_result_in};

fn manifest(runtime: &str, extra: &str) -> Manifest {
    Manifest::parse(&format!(
        r#"{{"apiVersion":"reasonix.io/plugin/v2","name":"p","version":"1"{extra},"runtime":{{"command":"/x",{runtime}}}}}"#
    ))
    .unwrap()
}

fn result(members: &str) -> String {
    format!(r#"{{"protocolVersion":"2","name":"n","version":"1","stateSchemaVersion":0{members}}}"#)
}

#[test]
fn the_go_starter_result_decodes() {
    let raw = r#"{"protocolVersion":"2","name":"starter-extension","version":"0.1.0","subscriptions":["input.receive"],"stateSchemaVersion":0}"#;
    let result = decode_initialize_result_in(raw, ProtocolProfile::V2).unwrap();
    let manifest = manifest(r#""intercepts":["input.receive"]"#, "");
    let v2 = manifest.v2.as_deref().unwrap();
    result
        .check_against_manifest("p", manifest.runtime.as_ref().unwrap(), v2)
        .unwrap();
    assert_eq!(result.common().subscriptions.len(), 1);
}

#[test]
fn version_then_strict_decoding() {
    let reason = |raw: &str| {
        decode_initialize_result_in(raw, ProtocolProfile::V2)
            .unwrap_err()
            .reason()
    };
    assert_eq!(
        reason(&result("").replace(r#""2""#, r#""1""#)),
        Reason::UnsupportedVersion
    );
    assert_eq!(
        reason(&result("").replace(r#""2""#, r#""02""#)),
        Reason::ProtocolError
    );
    assert_eq!(reason(&result(r#","epoch":"e""#)), Reason::ProtocolError);
    assert_eq!(reason(&result(r#","tools":"t""#)), Reason::ProtocolError);
    // v1's extra decoding checks stay.
    assert_eq!(
        reason(&result(
            r#","subscriptions":["input.receive","input.receive"]"#
        )),
        Reason::ProtocolError
    );
    // In the v1 profile a v2 member is unknown.
    let err = decode_initialize_result_in(
        &result(r#","componentId":"c""#).replace(r#""2""#, r#""1""#),
        ProtocolProfile::V1,
    )
    .unwrap_err();
    assert!(err.is_unknown(), "{err:?}");
    let ok = result(
        r#","componentId":"c","requires":[{"namespace":"n","kind":"k","id":"i","optional":true}],"provides":[{"namespace":"n","kind":"k","id":"i"}],"tools":["t"],"replaces":["tool:t"]"#,
    );
    decode_initialize_result_in(&ok, ProtocolProfile::V2).unwrap();
}

#[test]
fn checks_against_the_manifest() {
    let check = |members: &str, manifest: &Manifest| {
        let result = decode_initialize_result_in(&result(members), ProtocolProfile::V2).unwrap();
        result.check_against_manifest(
            "p",
            manifest.runtime.as_ref().unwrap(),
            manifest.v2.as_deref().unwrap(),
        )
    };
    let plain = manifest(r#""intercepts":["input.receive"]"#, "");
    let cases = [
        (
            r#","subscriptions":["tool.before"]"#,
            "result.subscriptions[0]",
        ),
        (r#","replaces":["permission"]"#, "result.replaces[0]"),
        (r#","providers":[{"ref":"plugin/p/x"}]"#, "result.providers"),
        (r#","uiActions":[{"actionId":"a"}]"#, "result.uiActions"),
        (r#","tools":["t"]"#, "result.tools"),
    ];
    for (members, path) in cases {
        let err = check(members, &plain).unwrap_err();
        assert_eq!(err.reason(), Reason::CapabilityNotDeclared, "{members}");
        assert_eq!(err.path(), path, "{members}");
    }
    // Without `provides` in the manifest, the ceiling check is skipped.
    check(
        r#","provides":[{"namespace":"n","kind":"k","id":"i"}]"#,
        &plain,
    )
    .unwrap();
    let tools = manifest(
        r#""capabilities":["tools","providers"],"replaces":["tool:t"],"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]"#,
        r#","provides":[{"namespace":"n","kind":"k","id":"i","version":"1.0.0"}]"#,
    );
    check(
        r#","tools":["t"],"replaces":["tool:t"],"provides":[{"namespace":"n","kind":"k","id":"i"}],"providers":[{"ref":"plugin/p/x"}]"#,
        &tools,
    )
    .unwrap();
    for (members, path) in [
        (r#","tools":["u"]"#, "result.tools[0]"),
        (
            r#","provides":[{"namespace":"n","kind":"k","id":"j"}]"#,
            "result.provides[0]",
        ),
        (
            r#","providers":[{"ref":"plugin/q/x"}]"#,
            "result.providers[0].ref",
        ),
    ] {
        let err = check(members, &tools).unwrap_err();
        assert_eq!(err.reason(), Reason::CapabilityNotDeclared, "{members}");
        assert_eq!(err.path(), path, "{members}");
    }
}

#[test]
fn duplicate_action_ids_keep_the_first() {
    let mut result = decode_initialize_result_in(
        &result(r#","uiActions":[{"actionId":"a","label":"A"},{"actionId":"b"},{"actionId":"a","label":"B"}]"#),
        ProtocolProfile::V2,
    )
    .unwrap();
    assert_eq!(result.drop_duplicate_actions(), ["a"]);
    let labels: Vec<&str> = result.ui_actions.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(labels, ["A", ""]);
}

/// The reference Go SDK's `fullsidecar` example, built from esengine/DeepSeek-Reasonix at
/// d314cee5 (`sdk/go/examples/fullsidecar`) and run under a scripted v2 host: its shipped
/// manifest and the handshake answer it wrote, byte for byte (recorded data, not its code).
const GO_FULLSIDECAR_MANIFEST: &str = r#"{"apiVersion":"reasonix.io/plugin/v2","name":"full-sidecar","version":"1.0.0","description":"Conformance sidecar for Extension Protocol + plugin v2","provides":[{"namespace":"plugin/full-sidecar","kind":"interceptors","id":"default","version":"1.0.0"},{"namespace":"plugin/full-sidecar","kind":"strategies","id":"system_prompt","version":"1.0.0"},{"namespace":"plugin/full-sidecar","kind":"provider","id":"fake/echo","version":"1.0.0","schemaHash":"sha256:416af537aeb7edd2ff0b96fd2ecb385bc10f900e8b320292857c5279cb5bce50"},{"namespace":"plugin/full-sidecar","kind":"uiaction","id":"demo","version":"1.0.0","schemaHash":"sha256:8532d24af25d5aaeb763c35d8c9d3283d8604a3473f8ddd06a4c910565b86aeb"}],"runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/full-sidecar","required":false,"intercepts":["input.receive","tool.before","system_prompt.build","session.start"],"replaces":["system_prompt"],"capabilities":["interceptors","strategies","providers","ui"]}}"#;

const GO_FULLSIDECAR_RESULT: &str = r#"{"protocolVersion":"2","name":"full-sidecar","version":"1.0.0","subscriptions":["input.receive","tool.before","system_prompt.build","session.start"],"replaces":["system_prompt"],"providers":[{"ref":"plugin/full-sidecar/fake/echo","displayName":"fullsidecar fake","model":"echo","contextWindow":64000,"tools":true,"reasoning":true,"efforts":["low","high"],"defaultEffort":"low"}],"uiActions":[{"actionId":"demo","label":"Run the fullsidecar demo"}],"provides":[{"namespace":"plugin/full-sidecar","kind":"interceptors","id":"default","version":"1.0.0"},{"namespace":"plugin/full-sidecar","kind":"strategies","id":"system_prompt","version":"1.0.0"},{"namespace":"plugin/full-sidecar","kind":"provider","id":"fake/echo","version":"1.0.0","schemaHash":"sha256:416af537aeb7edd2ff0b96fd2ecb385bc10f900e8b320292857c5279cb5bce50"},{"namespace":"plugin/full-sidecar","kind":"uiaction","id":"demo","version":"1.0.0","schemaHash":"sha256:8532d24af25d5aaeb763c35d8c9d3283d8604a3473f8ddd06a4c910565b86aeb"}],"stateSchemaVersion":0}"#;

#[test]
fn the_reference_go_fullsidecar_manifest_and_handshake_pass() {
    let manifest = Manifest::parse(GO_FULLSIDECAR_MANIFEST).unwrap();
    assert_eq!(manifest.profile(), ProtocolProfile::V2);
    let result = decode_initialize_result_in(GO_FULLSIDECAR_RESULT, ProtocolProfile::V2).unwrap();
    let v2 = manifest.v2.as_deref().unwrap();
    result
        .check_against_manifest("full-sidecar", manifest.runtime.as_ref().unwrap(), v2)
        .unwrap();
    let common = result.common();
    assert_eq!(common.subscriptions.len(), 4);
    assert_eq!(
        common.providers[0].reference,
        "plugin/full-sidecar/fake/echo"
    );
    assert_eq!(common.ui_actions[0].action_id, "demo");
}
