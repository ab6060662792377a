//! Fixtures and rules of the UI DTOs.

use crate::testkit::{accepts, check_dto, check_rejects};
use crate::{
    CardAction, CardField, CardPayload, Error, NotificationPayload, Reason, StatusPayload,
    SurfaceKind, SurfacePayload, UiActionDecl, UiActionParams, UiActionResult, UiFormField,
    UiFormPayload, UiPublishParams, UiPublishResult, UiRequestParams, UiRequestResult,
    UiSubmitParams, UiSubmitResult,
};

const CARD: &str = r#"{"title":"t","markdown":"**m**","text":"x",
    "fields":[{"key":"k","value":"v"}],"progress":0.5,
    "actions":[{"actionId":"refresh","label":"Refresh"}]}"#;

const FORM: &str = r#"{"title":"t","message":"m","fields":[{"key":"name","label":"Name",
    "kind":"select","options":["a","b"],"default":"a","required":true}]}"#;

fn publish(kind: &str, payload: &str) -> String {
    format!(
        r#"{{"surfaceId":"typos","sessionId":"s-7f3a","generation":1,"kind":"{kind}","payload":{payload}}}"#
    )
}

#[test]
fn every_ui_dto_round_trips_and_rejects_violations() {
    let mut cases = 0;
    cases += check_dto::<UiPublishParams>(
        &publish(
            "status",
            r#"{"label":"1 typo fixed","detail":"d","severity":"info","progress":1}"#,
        ),
        &publish("notification", r#"{"title":"t"}"#),
    );
    cases += check_dto::<StatusPayload>(
        r#"{"label":"l","detail":"d","severity":"warn","progress":0}"#,
        r#"{"label":"l"}"#,
    );
    cases += check_dto::<CardPayload>(CARD, "{}");
    cases += check_dto::<CardField>(r#"{"key":"k","value":"v"}"#, r#"{"key":"k"}"#);
    cases += check_dto::<CardAction>(
        r#"{"actionId":"refresh","label":"Refresh"}"#,
        r#"{"actionId":"a","label":"b"}"#,
    );
    cases += check_dto::<UiFormPayload>(FORM, r#"{"fields":[]}"#);
    cases += check_dto::<UiFormField>(
        r#"{"key":"k","label":"l","kind":"multiselect","options":["x"],"default":["x"],"required":false}"#,
        r#"{"key":"k","kind":"confirm"}"#,
    );
    cases += check_dto::<NotificationPayload>(
        r#"{"title":"t","body":"b","severity":"error"}"#,
        r#"{"title":"t"}"#,
    );
    cases += check_dto::<UiPublishResult>(r#"{"accepted":true}"#, r#"{"accepted":false}"#);
    cases += check_dto::<UiRequestParams>(
        &format!(
            r#"{{"surfaceId":"p","sessionId":"s","generation":2,"kind":"input","payload":{FORM}}}"#
        ),
        r#"{"surfaceId":"p","sessionId":"s","generation":0,"kind":"confirm","payload":{"fields":[]}}"#,
    );
    cases += check_dto::<UiRequestResult>(
        r#"{"cancelled":false,"values":{"value":true,"name":"x","tags":["a"]}}"#,
        r#"{"cancelled":true}"#,
    );
    cases += check_dto::<UiActionParams>(
        r#"{"actionId":"refresh","sessionId":"s","generation":1,"args":{"surfaceId":"card-1"}}"#,
        r#"{"actionId":"r","sessionId":"s","generation":0}"#,
    );
    cases += check_dto::<UiActionResult>(
        r#"{"accepted":true,"message":"done"}"#,
        r#"{"accepted":false}"#,
    );
    cases += check_dto::<UiSubmitParams>(
        r#"{"surfaceId":"f","sessionId":"s","generation":1,"values":{"name":"x","ok":true}}"#,
        r#"{"surfaceId":"f","sessionId":"s","generation":1,"values":{}}"#,
    );
    cases += check_dto::<UiSubmitResult>(r#"{"accepted":true}"#, r#"{"accepted":false}"#);
    assert!(cases > 200, "only {cases} mutations");
}

#[test]
fn publish_payloads_are_decoded_per_kind() {
    for (kind, payload) in [
        (SurfaceKind::Status, r#"{"label":"l"}"#),
        (SurfaceKind::Card, CARD),
        (SurfaceKind::Form, FORM),
        (SurfaceKind::Notification, r#"{"title":"t"}"#),
    ] {
        let params = accepts::<UiPublishParams>(&publish(kind.as_str(), payload));
        assert_eq!(params.payload.kind(), kind);
    }
    check_rejects::<UiPublishParams>(&[
        // Checklist 65: a status without label.
        (
            &publish("status", r#"{"detail":"d"}"#),
            "params.payload.label",
            Error::is_missing,
        ),
        (
            &publish("status", r#"{"label":"l","title":"t"}"#),
            "params.payload.title",
            Error::is_unknown,
        ),
        (
            &publish("card", r#"{"label":"l"}"#),
            "params.payload.label",
            Error::is_unknown,
        ),
        (
            &publish("form", "{}"),
            "params.payload.fields",
            Error::is_missing,
        ),
        (
            &publish("notification", r#"{"title":"\u3000"}"#),
            "params.payload.title",
            Error::is_blank,
        ),
        (
            &publish("status", r#"{"label":"l","progress":1.5}"#),
            "params.payload.progress",
            Error::is_range,
        ),
        (
            &publish("status", r#"{"label":"l","progress":-0.1}"#),
            "params.payload.progress",
            Error::is_range,
        ),
        (
            &publish("status", r#"{"label":"l","severity":"fatal"}"#),
            "params.payload.severity",
            Error::is_enum,
        ),
        (&publish("status", "null"), "params.payload", Error::is_null),
        // §15: `panel` and `view` are not v1 kinds.
        (&publish("panel", "{}"), "params.kind", Error::is_enum),
    ]);
    // An optional enum given as "" is absent.
    let params = accepts::<UiPublishParams>(&publish("status", r#"{"label":"l","severity":""}"#));
    let SurfacePayload::Status(status) = params.payload else {
        panic!()
    };
    assert_eq!(status.severity, None);
}

#[test]
fn card_actions_must_be_declared() {
    let params = accepts::<UiPublishParams>(&publish("card", CARD));
    let declared = |id: &str| UiActionDecl {
        action_id: id.into(),
        label: String::new(),
    };
    params.check_card_actions(&[declared("refresh")]).unwrap();
    let err = params.check_card_actions(&[declared("other")]).unwrap_err();
    assert_eq!(err.path(), "params.payload.actions[0].actionId");
    assert_eq!(err.reason(), Reason::InvalidParams);
}

#[test]
fn action_ids_are_checked_on_actions() {
    check_rejects::<UiActionParams>(&[
        (
            r#"{"actionId":"Bad.Id","sessionId":"s","generation":1}"#,
            "params.actionId",
            Error::is_pattern,
        ),
        (
            r#"{"actionId":"","sessionId":"s","generation":1}"#,
            "params.actionId",
            Error::is_pattern,
        ),
        (
            r#"{"actionId":"a","sessionId":"s","generation":1,"args":{"k":1}}"#,
            "params.args.k",
            Error::is_type,
        ),
    ]);
}
