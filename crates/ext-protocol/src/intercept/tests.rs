//! Fixtures and rules of the intercept, event and resources-changed DTOs.

use serde_json::json;

use crate::testkit::{accepts, check_dto, check_rejects};
use crate::{
    DecisionKind, Error, EventParams, HookPayload, InputPayload, InterceptParams, InterceptResult,
    ResourcesChangedParams,
};

const SHA: &str = "5e4ce7b36ba37b78a5d5f9fd08e6b7b54ba6879d651aa46ec9e1d6fa24ebe30a";

fn externalized(pointer: &str) -> String {
    format!(
        r#"{{"jsonPointer":"{pointer}","contentRef":"content_dd52f655b36f8402bb80800e",
            "totalBytes":15,"sha256":"{SHA}"}}"#
    )
}

#[test]
fn every_intercept_dto_round_trips_and_rejects_violations() {
    let mut cases = 0;
    cases += check_dto::<InterceptParams>(
        r#"{"event":"input.receive","seq":1,"payload":{"text":"fix teh tests"},
            "timeoutMillis":5000}"#,
        r#"{"event":"tool.before","seq":2,"payload":{},"timeoutMillis":1}"#,
    );
    cases += check_dto::<InterceptParams>(
        &format!(
            r#"{{"event":"context.prepare","seq":4,"payload":null,"timeoutMillis":30000,
                "externalized":[{}]}}"#,
            externalized("/payload")
        ),
        r#"{"event":"context.prepare","seq":4,"payload":{"messages":[]},"timeoutMillis":30000}"#,
    );
    cases += check_dto::<EventParams>(
        r#"{"event":"frontend.event","payload":{"kind":"turn_started","text":"fix the tests"}}"#,
        &format!(
            r#"{{"event":"session.start","payload":null,"externalized":[{}]}}"#,
            externalized("/payload")
        ),
    );
    cases += check_dto::<InterceptResult>(
        r#"{"decision":"replace","reason":"typo","replacement":{"text":"fix the tests"}}"#,
        r#"{"decision":"continue"}"#,
    );
    cases += check_dto::<ResourcesChangedParams>(
        r#"{"paths":["/home/dev/.skills/a.md","/w/commands/b.md"]}"#,
        r#"{"paths":["/a"]}"#,
    );
    assert!(cases > 60, "only {cases} mutations");
}

#[test]
fn payloads_are_decoded_as_their_points_dto() {
    let params = accepts::<InterceptParams>(
        r#"{"event":"input.receive","seq":1,"payload":{"text":"hi"},"timeoutMillis":5000}"#,
    );
    assert_eq!(
        params.payload,
        Some(HookPayload::Input(InputPayload { text: "hi".into() }))
    );
    check_rejects::<InterceptParams>(&[
        // A member of another point's DTO is unknown here.
        (
            r#"{"event":"input.receive","seq":1,"payload":{"kind":"x"},"timeoutMillis":5000}"#,
            "params.payload.kind",
            Error::is_unknown,
        ),
        (
            r#"{"event":"context.prepare","seq":1,"payload":{},"timeoutMillis":5000}"#,
            "params.payload.messages",
            Error::is_missing,
        ),
        (
            r#"{"event":"permission.decision","seq":1,"payload":{"hostDecision":"maybe"},
                "timeoutMillis":5000}"#,
            "params.payload.hostDecision",
            Error::is_enum,
        ),
        (
            r#"{"event":"input.receive","seq":1,"payload":[],"timeoutMillis":5000}"#,
            "params.payload",
            Error::is_type,
        ),
        (
            r#"{"event":"input.receive","seq":0,"payload":{},"timeoutMillis":5000}"#,
            "params.seq",
            Error::is_range,
        ),
        (
            r#"{"event":"input.receive","seq":1,"payload":{},"timeoutMillis":0}"#,
            "params.timeoutMillis",
            Error::is_range,
        ),
    ]);
}

#[test]
fn externalization_combinations_follow_section_9() {
    let with = |payload: &str, descriptors: &[String]| {
        format!(
            r#"{{"event":"context.prepare","seq":1,"payload":{payload},"timeoutMillis":1,
                "externalized":[{}]}}"#,
            descriptors.join(",")
        )
        .replace(r#","externalized":[]"#, "")
    };
    let one = externalized("/payload");
    accepts::<InterceptParams>(&with("null", std::slice::from_ref(&one)));
    check_rejects::<InterceptParams>(&[
        (&with("null", &[]), "params.payload", Error::is_rule),
        (
            &with(r#"{"messages":[]}"#, std::slice::from_ref(&one)),
            "params.payload",
            Error::is_rule,
        ),
        (
            &with("null", &[one.clone(), one.clone()]),
            "params.externalized",
            Error::is_rule,
        ),
        (
            &with("null", &[externalized("/messages/0/content")]),
            "params.externalized[0].jsonPointer",
            Error::is_rule,
        ),
    ]);
    check_rejects::<EventParams>(&[(
        r#"{"event":"session.end","payload":null}"#,
        "params.payload",
        Error::is_rule,
    )]);
}

#[test]
fn replacement_is_present_iff_decision_is_replace() {
    check_rejects::<InterceptResult>(&[
        (
            r#"{"decision":"replace"}"#,
            "params.replacement",
            Error::is_rule,
        ),
        (
            r#"{"decision":"replace","replacement":null}"#,
            "params.replacement",
            Error::is_null,
        ),
        (
            r#"{"decision":"continue","replacement":{"text":"x"}}"#,
            "params.replacement",
            Error::is_rule,
        ),
        (
            r#"{"decision":"block","reason":"r","replacement":1}"#,
            "params.replacement",
            Error::is_rule,
        ),
        // §7.1 and checklist 61: results never carry `externalized`.
        (
            r#"{"decision":"continue","externalized":[]}"#,
            "params.externalized",
            Error::is_unknown,
        ),
    ]);
    let result = accepts::<InterceptResult>(r#"{"decision":"deny","reason":"no"}"#);
    assert_eq!(result.decision, DecisionKind::Deny);
    assert_eq!(
        serde_json::to_value(InterceptResult::continue_()).unwrap(),
        json!({"decision": "continue"})
    );
}

#[test]
fn resources_changed_is_never_empty() {
    check_rejects::<ResourcesChangedParams>(&[
        (r#"{"paths":[]}"#, "params.paths", Error::is_rule),
        ("{}", "params.paths", Error::is_missing),
    ]);
}
