//! Manifest fixtures, rules and top-level error paths.

use crate::testkit::{Predicate, check_dto, check_rejects};
use crate::{
    Capability, Error, HookPoint, Manifest, RuntimeSpec, is_accepted_manifest_api_version,
    is_plugin_id,
};

const EXAMPLE: &str = r#"{
  "apiVersion": "reasonix.io/plugin/v1", "name": "acme-guard", "version": "1.2.0",
  "description": "Fixes typos in input and shows a status line",
  "runtime": {
    "command": "${REASONIX_PLUGIN_ROOT}/bin/acme-guard", "args": ["--mode", "strict"],
    "env": {"ACME_LOG": "info"}, "priority": -10,
    "intercepts": ["input.receive", "frontend.event"], "capabilities": ["interceptors", "ui"]
  }
}"#;

const FULL: &str = r#"{"apiVersion":"reasonix.io/plugin/v1.3","name":"a0-b","version":"1",
    "description":"d","homepage":"https://h","repository":"https://r",
    "contributes":{"skills":["s"],"anything":{"goes":null}},
    "runtime":{"command":"/bin/x","args":["a"],"env":{"K":"v"},"required":true,
        "priority":1000,"intercepts":["tool.before"],"replaces":["permission"],
        "capabilities":["interceptors","strategies","providers","ui"],"timeoutMillis":90000}}"#;

#[test]
fn manifests_round_trip_and_reject_violations() {
    let mut cases = 0;
    cases += check_dto::<Manifest>(
        FULL,
        r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1"}"#,
    );
    cases += check_dto::<RuntimeSpec>(
        r#"{"command":"/x","required":true,"priority":-1000,"timeoutMillis":1}"#,
        r#"{"command":"/x"}"#,
    );
    assert!(cases > 80, "only {cases} mutations");
}

#[test]
fn the_spec_example_parses() {
    let manifest = Manifest::parse(EXAMPLE).unwrap();
    let runtime = manifest.runtime.unwrap();
    assert_eq!(runtime.priority, -10);
    assert_eq!(
        runtime.intercepts,
        [HookPoint::InputReceive, HookPoint::FrontendEvent]
    );
    assert!(runtime.has(Capability::Ui));
    assert!(!runtime.required);
    assert_eq!(runtime.timeout_millis, 0);
}

#[test]
fn manifest_errors_name_their_json_path() {
    let cases: [(&str, &str, Predicate); 14] = [
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","x":1}"#,
            "x",
            Error::is_unknown,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{"command":"/x","shell":true}}"#,
            "runtime.shell",
            Error::is_unknown,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v3","name":"a","version":"1"}"#,
            "apiVersion",
            Error::is_pattern,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1.","name":"a","version":"1"}"#,
            "apiVersion",
            Error::is_pattern,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"Acme","version":"1"}"#,
            "name",
            Error::is_pattern,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":" "}"#,
            "version",
            Error::is_blank,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","contributes":[]}"#,
            "contributes",
            Error::is_type,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","contributes":null}"#,
            "contributes",
            Error::is_null,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{"command":"/x","env":{"":"v"}}}"#,
            "runtime.env[\"\"]",
            Error::is_blank,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{"command":"/x","priority":1001}}"#,
            "runtime.priority",
            Error::is_range,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{"command":"/x","intercepts":["tool.before"]}}"#,
            "runtime.intercepts",
            Error::is_rule,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{"command":"/x","replaces":["context"],"capabilities":["interceptors"]}}"#,
            "runtime.replaces",
            Error::is_rule,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{"command":"/x","intercepts":["tool.before","tool.before"],"capabilities":["interceptors"]}}"#,
            "runtime.intercepts[1]",
            Error::is_rule,
        ),
        (
            r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","runtime":{"command":"/x","capabilities":["tools"]}}"#,
            "runtime.capabilities[0]",
            Error::is_enum,
        ),
    ];
    for (json, path, predicate) in cases {
        let err = Manifest::parse(json).unwrap_err();
        assert_eq!(err.path(), path, "{json}: {err}");
        assert!(predicate(&err), "{json}: {err:?}");
    }
    let err = Manifest::parse("[]").unwrap_err();
    assert_eq!(err.path(), "");
    assert!(err.to_string().starts_with("(top level)"), "{err}");
    // Repeated names are rejected even inside the opaque `contributes`.
    check_rejects::<Manifest>(&[(
        r#"{"apiVersion":"reasonix.io/plugin/v1","name":"a","version":"1","contributes":{"a":1,"a":2}}"#,
        "params.contributes.a",
        Error::is_duplicate,
    )]);
}

#[test]
fn ids_and_api_versions() {
    for ok in ["a", "0", "acme-guard", "a-", &"a".repeat(64)] {
        assert!(is_plugin_id(ok), "{ok}");
    }
    for bad in ["", "-a", "Acme", "a_b", "a.b", &"a".repeat(65)] {
        assert!(!is_plugin_id(bad), "{bad}");
    }
    for ok in [
        "reasonix.io/plugin/v1",
        "reasonix.io/plugin/v1.0",
        "reasonix.io/plugin/v1.3",
        "reasonix.io/plugin/v1.12",
    ] {
        assert!(is_accepted_manifest_api_version(ok), "{ok}");
    }
    for bad in [
        "reasonix.io/plugin/v2",
        "reasonix.io/plugin/v1.",
        "reasonix.io/plugin/v1.x",
        "reasonix.io/plugin/v10",
        "reasonix.io/plugin/v1.3.1",
        "reasonix.io/plugin/v1.+3",
    ] {
        assert!(!is_accepted_manifest_api_version(bad), "{bad}");
    }
}
