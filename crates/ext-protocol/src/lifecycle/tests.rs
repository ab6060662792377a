//! Lifecycle DTO fixtures, their rules and the §6.3 manifest checks.

use crate::testkit::{accepts, check_dto, check_rejects};
use crate::{
    Capability, Error, HookPoint, HostCapabilities, InitializeParams, InitializeResult,
    InitializedParams, ManifestExpectation, Reason, RuntimeSpec, SessionContext, ShutdownParams,
    ShutdownResult, Slot, UiActionDecl, is_action_id,
};

const INIT_FULL: &str = r#"{"protocolId":"reasonix.extension.v1","protocolVersion":"1",
    "manifest":{"intercepts":["input.receive","frontend.event"],"replaces":["context"],
        "capabilities":["interceptors","strategies","ui"]},
    "session":{"sessionId":"s-7f3a","workspaceRoot":"/home/dev/project","generation":1},
    "capabilities":{"contentRefs":true,"uiHost":"tui","protocolVersion":"1"}}"#;

const RESULT_FULL: &str = r#"{"protocolVersion":"1","name":"acme-guard","version":"1.2.0",
    "subscriptions":["input.receive","context.prepare"],"replaces":["context"],
    "providers":[{"ref":"plugin/acme-guard/acme/fast"}],
    "uiActions":[{"actionId":"refresh","label":"Refresh"},{"actionId":"a-1"}],
    "stateSchemaVersion":0}"#;

#[test]
fn every_lifecycle_dto_round_trips_and_rejects_violations() {
    let mut cases = 0;
    cases += check_dto::<InitializeParams>(
        INIT_FULL,
        r#"{"protocolId":"reasonix.extension.v1","protocolVersion":"1","manifest":{},
            "session":{"sessionId":"s","workspaceRoot":"/w","generation":1},
            "capabilities":{"contentRefs":false,"uiHost":"headless"}}"#,
    );
    cases += check_dto::<ManifestExpectation>(
        r#"{"intercepts":["tool.before"],"replaces":["permission"],"capabilities":["ui"],
            "providers":["acme/fast"],"uiActions":["refresh"]}"#,
        "{}",
    );
    cases += check_dto::<SessionContext>(
        r#"{"sessionId":"s","workspaceRoot":"/w","generation":9007199254740991}"#,
        r#"{"sessionId":"s","workspaceRoot":"","generation":1}"#,
    );
    cases += check_dto::<HostCapabilities>(
        r#"{"contentRefs":true,"uiHost":"desktop","protocolVersion":"1"}"#,
        r#"{"contentRefs":false,"uiHost":"acp"}"#,
    );
    cases += check_dto::<UiActionDecl>(
        r#"{"actionId":"refresh-all","label":"Refresh all"}"#,
        r#"{"actionId":"0"}"#,
    );
    cases += check_dto::<InitializedParams>("{}", "{}");
    cases += check_dto::<ShutdownParams>(r#"{"timeoutMillis":5000}"#, r#"{"timeoutMillis":1}"#);
    cases += check_dto::<ShutdownResult>(r#"{"accepted":true}"#, r#"{"accepted":false}"#);
    cases += check_dto::<InitializeResult>(
        RESULT_FULL,
        r#"{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":2}"#,
    );
    assert!(cases > 150, "only {cases} mutations");
}

#[test]
fn initialize_rules() {
    check_rejects::<InitializeResult>(&[
        (
            r#"{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":0,
                "uiActions":[{"actionId":"a"},{"actionId":"a"}]}"#,
            "params.uiActions[1].actionId",
            Error::is_rule,
        ),
        (
            r#"{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":0,
                "uiActions":[{"actionId":"Bad.Id"}]}"#,
            "params.uiActions[0].actionId",
            Error::is_pattern,
        ),
        (
            r#"{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":0,
                "providers":[{"ref":"plugin/p/a"},{"ref":"plugin/p/a"}]}"#,
            "params.providers[1].ref",
            Error::is_rule,
        ),
        (
            r#"{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":0,
                "subscriptions":["tool.before","tool.before"]}"#,
            "params.subscriptions[1]",
            Error::is_rule,
        ),
        (
            r#"{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":0,
                "subscriptions":["tool.during"]}"#,
            "params.subscriptions[0]",
            Error::is_enum,
        ),
        (
            r#"{"protocolVersion":"1","name":"n","version":"v","stateSchemaVersion":0,
                "replaces":["tool:bash"]}"#,
            "params.replaces[0]",
            Error::is_enum,
        ),
        (
            r#"{"protocolVersion":"2","name":"n","version":"v","stateSchemaVersion":0}"#,
            "params.protocolVersion",
            Error::is_enum,
        ),
    ]);
    check_rejects::<InitializeParams>(&[(
        r#"{"protocolId":"reasonix.extension.v1","protocolVersion":"1","manifest":{},
            "session":{"sessionId":"s","workspaceRoot":"/w","generation":0},
            "capabilities":{"contentRefs":true,"uiHost":"tui"}}"#,
        "params.session.generation",
        Error::is_range,
    )]);
}

#[test]
fn action_ids() {
    for ok in ["a", "refresh", "a-b-1", &"x".repeat(64)] {
        assert!(is_action_id(ok), "{ok}");
    }
    for bad in ["", "Bad.Id", "A", "a_b", "a b", &"x".repeat(65), "é"] {
        assert!(!is_action_id(bad), "{bad}");
    }
}

fn runtime(intercepts: &[HookPoint], replaces: &[Slot], caps: &[Capability]) -> RuntimeSpec {
    RuntimeSpec {
        command: "/bin/x".into(),
        intercepts: intercepts.to_vec(),
        replaces: replaces.to_vec(),
        capabilities: caps.to_vec(),
        ..RuntimeSpec::default()
    }
}

#[test]
fn manifest_checks_follow_section_6_3() {
    let result = accepts::<InitializeResult>(RESULT_FULL);
    let all = [
        Capability::Interceptors,
        Capability::Strategies,
        Capability::Providers,
        Capability::Ui,
    ];
    let full = runtime(
        &[HookPoint::InputReceive, HookPoint::ContextPrepare],
        &[Slot::Context],
        &all,
    );
    result.check_against_manifest("acme-guard", &full).unwrap();

    let cases: Vec<(RuntimeSpec, &str, &str)> = vec![
        (
            runtime(&[HookPoint::InputReceive], &[Slot::Context], &all),
            "acme-guard",
            "result.subscriptions[1]",
        ),
        (
            runtime(
                &[HookPoint::InputReceive, HookPoint::ContextPrepare],
                &[],
                &all,
            ),
            "acme-guard",
            "result.replaces[0]",
        ),
        (
            runtime(
                &[HookPoint::InputReceive, HookPoint::ContextPrepare],
                &[Slot::Context],
                &[Capability::Ui],
            ),
            "acme-guard",
            "result.providers",
        ),
        (full.clone(), "other", "result.providers[0].ref"),
        (
            runtime(
                &[HookPoint::InputReceive, HookPoint::ContextPrepare],
                &[Slot::Context],
                &[Capability::Providers],
            ),
            "acme-guard",
            "result.uiActions",
        ),
    ];
    for (runtime, plugin, path) in cases {
        let err = result.check_against_manifest(plugin, &runtime).unwrap_err();
        assert!(err.is_undeclared(), "{err:?}");
        assert_eq!(err.path(), path);
        assert_eq!(err.reason(), Reason::CapabilityNotDeclared);
    }
}

#[test]
fn constructors_carry_the_protocol_identity() {
    let params = InitializeParams::new(
        ManifestExpectation::from_runtime(&runtime(&[HookPoint::ToolBefore], &[], &[])),
        SessionContext {
            session_id: "s".into(),
            workspace_root: "/w".into(),
            generation: 1,
        },
        HostCapabilities::new(crate::UiHost::Tui),
    );
    let text = serde_json::to_string(&params).unwrap();
    assert_eq!(accepts::<InitializeParams>(&text), params);
    assert!(text.starts_with(r#"{"protocolId":"reasonix.extension.v1","protocolVersion":"1""#));
    // The host's capabilities repeat the version, as the reference host's do (its SDK requires
    // the member); the manifest copy never carries the v1-era lists the manifest cannot hold.
    let sent: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        sent["capabilities"],
        serde_json::json!({"contentRefs":true,"uiHost":"tui","protocolVersion":"1"})
    );
    assert_eq!(
        sent["manifest"],
        serde_json::json!({"intercepts":["tool.before"]})
    );
}
