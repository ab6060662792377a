//! The hook-point registry: §7.2 table, decisions, timeouts and replacement re-validation.

use serde_json::{Value, json};
use std::time::Duration;

use crate::testkit::Predicate;

use crate::{
    Caller, DecisionKind, Error, HookPayload, HookPoint, InputPayload, PayloadKind,
    PermissionPayload, Reason, SessionPayload, SessionPhase, Slot, Target, Verdict,
};

#[test]
fn the_registry_matches_the_spec_table() {
    // (point, payload DTO, default timeout in seconds, slot) — §7.2, row by row.
    let table: [(&str, &str, u64, Option<&str>); 17] = [
        (
            "session.start",
            "SessionPayload",
            30,
            Some("session_policy"),
        ),
        ("session.end", "SessionPayload", 30, Some("session_policy")),
        ("session.load", "SessionPayload", 30, Some("session_policy")),
        ("session.save", "SessionPayload", 30, Some("session_policy")),
        (
            "session.rotate",
            "SessionPayload",
            30,
            Some("session_policy"),
        ),
        ("input.receive", "InputPayload", 5, None),
        ("agent.before_start", "AgentStartPayload", 30, None),
        (
            "system_prompt.build",
            "SystemPromptPayload",
            30,
            Some("system_prompt"),
        ),
        ("context.prepare", "ContextPayload", 30, Some("context")),
        (
            "provider.request",
            "ProviderRequestPayload",
            30,
            Some("provider_request"),
        ),
        (
            "provider.response",
            "ProviderResponsePayload",
            30,
            Some("provider_response"),
        ),
        ("tool.before", "ToolBeforePayload", 5, None),
        ("tool.after", "ToolAfterPayload", 5, None),
        (
            "permission.decision",
            "PermissionPayload",
            5,
            Some("permission"),
        ),
        (
            "compaction.prepare",
            "CompactionPreparePayload",
            30,
            Some("compaction"),
        ),
        (
            "compaction.complete",
            "CompactionCompletePayload",
            30,
            Some("compaction"),
        ),
        (
            "frontend.event",
            "FrontendEventPayload",
            30,
            Some("frontend_events"),
        ),
    ];
    assert_eq!(HookPoint::ALL.len(), table.len());
    for (point, (name, dto, secs, slot)) in HookPoint::ALL.iter().zip(table) {
        assert_eq!(point.as_str(), name);
        assert_eq!(HookPoint::parse(name), Some(*point));
        assert_eq!(point.payload_kind().dto_name(), dto, "{name}");
        assert_eq!(point.default_timeout(), Duration::from_secs(secs), "{name}");
        assert_eq!(point.slot().map(Slot::as_str), slot, "{name}");
    }
    assert_eq!(PayloadKind::ALL.len(), 13);
    assert_eq!(Slot::ALL.len(), 8);
    assert_eq!(Slot::SessionPolicy.points().count(), 5);
    assert_eq!(Slot::Compaction.points().count(), 2);
    for slot in Slot::ALL {
        assert!(slot.points().count() >= 1, "{slot}");
    }
    assert_eq!(HookPoint::parse("Session.Start"), None);
}

#[test]
fn timeouts_follow_section_7_9() {
    for point in HookPoint::ALL {
        assert_eq!(point.timeout(0), point.default_timeout());
        assert_eq!(point.timeout_millis(90_000), 60_000);
        assert_eq!(point.timeout_millis(1), 1);
        assert_eq!(point.timeout_millis(60_000), 60_000);
    }
    assert_eq!(HookPoint::ToolAfter.timeout_millis(0), 5_000);
    assert_eq!(HookPoint::ContextPrepare.timeout_millis(0), 30_000);
}

#[test]
fn decisions_follow_section_7_5() {
    for point in HookPoint::ALL {
        let permission = *point == HookPoint::PermissionDecision;
        for decision in [
            DecisionKind::Continue,
            DecisionKind::Block,
            DecisionKind::Replace,
        ] {
            assert!(point.allows(decision, Caller::Chain));
        }
        assert_eq!(point.allows(DecisionKind::Allow, Caller::Chain), permission);
        assert_eq!(point.allows(DecisionKind::Deny, Caller::Chain), permission);
        // §7.7: the slot owner may only continue or replace.
        assert!(point.allows(DecisionKind::Continue, Caller::SlotOwner));
        assert!(point.allows(DecisionKind::Replace, Caller::SlotOwner));
        for decision in [DecisionKind::Block, DecisionKind::Allow, DecisionKind::Deny] {
            assert!(!point.allows(decision, Caller::SlotOwner));
        }
    }
}

fn received(point: HookPoint) -> HookPayload {
    match point {
        HookPoint::PermissionDecision => HookPayload::Permission(PermissionPayload {
            name: "bash".into(),
            arguments: "{}".into(),
            read_only: None,
            host_decision: Verdict::Deny,
        }),
        _ => HookPayload::Input(InputPayload::default()),
    }
}

fn validate(point: HookPoint, replacement: Value, caller: Caller) -> Result<HookPayload, Error> {
    point.validate_replacement(&replacement, &received(point), caller)
}

#[test]
fn valid_replacements_are_decoded_fresh() {
    let ok: [(HookPoint, Value); 12] = [
        (HookPoint::SessionSave, json!({"phase": "save"})),
        (HookPoint::InputReceive, json!({"text": "fix the tests"})),
        (HookPoint::AgentBeforeStart, json!({"sessionId": "s"})),
        (HookPoint::SystemPromptBuild, json!({"workspaceRoot": "/w"})),
        (HookPoint::ContextPrepare, json!({"messages": []})),
        (
            HookPoint::ProviderRequest,
            json!({"request": {"messages": [], "tools": [], "maxTokens": 1}}),
        ),
        (
            HookPoint::ProviderResponse,
            json!({"calls": [{"id": "1", "name": "n", "arguments": ""}]}),
        ),
        (
            HookPoint::ToolBefore,
            json!({"name": "bash", "arguments": "{\"a\":1}"}),
        ),
        (HookPoint::ToolAfter, json!({"name": "bash"})),
        (HookPoint::CompactionPrepare, json!({"messages": []})),
        (HookPoint::CompactionComplete, json!({"summary": "s"})),
        (HookPoint::FrontendEvent, json!({"kind": "k"})),
    ];
    for (point, replacement) in ok {
        let payload = validate(point, replacement.clone(), Caller::Chain)
            .unwrap_or_else(|e| panic!("{point}: {e}"));
        assert_eq!(payload.kind(), point.payload_kind());
        // Whole-value semantics: what is encoded is exactly what was sent.
        assert_eq!(
            serde_json::to_value(&payload).unwrap(),
            replacement,
            "{point}"
        );
    }
    let payload = validate(
        HookPoint::SessionRotate,
        json!({"sessionPath": "/s", "phase": "rotate"}),
        Caller::SlotOwner,
    )
    .unwrap();
    assert_eq!(
        payload,
        HookPayload::Session(SessionPayload {
            session_path: "/s".into(),
            phase: Some(SessionPhase::Rotate)
        })
    );
}

#[test]
fn invalid_replacements_are_violations() {
    let cases: Vec<(HookPoint, Value, Caller, &str, Predicate)> = vec![
        // Checklist 45.
        (
            HookPoint::SessionSave,
            json!({"phase": "load"}),
            Caller::Chain,
            "result.replacement.phase",
            Error::is_rule,
        ),
        (
            HookPoint::SessionSave,
            json!({}),
            Caller::Chain,
            "result.replacement.phase",
            Error::is_rule,
        ),
        (
            HookPoint::InputReceive,
            json!({"text": ""}),
            Caller::Chain,
            "result.replacement.text",
            Error::is_blank,
        ),
        (
            HookPoint::InputReceive,
            json!({}),
            Caller::Chain,
            "result.replacement.text",
            Error::is_blank,
        ),
        (
            HookPoint::InputReceive,
            json!({"text": "\u{3000}"}),
            Caller::Chain,
            "result.replacement.text",
            Error::is_blank,
        ),
        (
            HookPoint::InputReceive,
            json!(null),
            Caller::Chain,
            "result.replacement",
            Error::is_null,
        ),
        (
            HookPoint::InputReceive,
            json!("text"),
            Caller::Chain,
            "result.replacement",
            Error::is_type,
        ),
        (
            HookPoint::InputReceive,
            json!({"text": "x", "extra": 1}),
            Caller::Chain,
            "result.replacement.extra",
            Error::is_unknown,
        ),
        (
            HookPoint::AgentBeforeStart,
            json!({"model": "m"}),
            Caller::Chain,
            "result.replacement.sessionId",
            Error::is_blank,
        ),
        (
            HookPoint::SystemPromptBuild,
            json!({"prompt": "p"}),
            Caller::Chain,
            "result.replacement.workspaceRoot",
            Error::is_blank,
        ),
        (
            HookPoint::ContextPrepare,
            json!({}),
            Caller::Chain,
            "result.replacement.messages",
            Error::is_missing,
        ),
        (
            HookPoint::ProviderRequest,
            json!({"request": {"messages": [], "tools": null, "maxTokens": 1}}),
            Caller::Chain,
            "result.replacement.request.tools",
            Error::is_null,
        ),
        (
            HookPoint::ProviderResponse,
            json!({"calls": [{"id": "1", "name": " ", "arguments": ""}]}),
            Caller::Chain,
            "result.replacement.calls[0].name",
            Error::is_blank,
        ),
        (
            HookPoint::ToolBefore,
            json!({"name": "bash", "arguments": "[1]"}),
            Caller::Chain,
            "result.replacement.arguments",
            Error::is_rule,
        ),
        (
            HookPoint::ToolAfter,
            json!({"name": "bash", "arguments": "{"}),
            Caller::Chain,
            "result.replacement.arguments",
            Error::is_rule,
        ),
        (
            HookPoint::ToolAfter,
            json!({"arguments": "{}"}),
            Caller::Chain,
            "result.replacement.name",
            Error::is_blank,
        ),
        // Checklist 44: a chain member must keep hostDecision; omitting it is a change.
        (
            HookPoint::PermissionDecision,
            json!({"name": "bash", "hostDecision": "allow"}),
            Caller::Chain,
            "result.replacement.hostDecision",
            Error::is_rule,
        ),
        (
            HookPoint::PermissionDecision,
            json!({"name": "bash"}),
            Caller::Chain,
            "result.replacement.hostDecision",
            Error::is_missing,
        ),
        (
            HookPoint::PermissionDecision,
            json!({"name": "bash"}),
            Caller::SlotOwner,
            "result.replacement.hostDecision",
            Error::is_missing,
        ),
        (
            HookPoint::CompactionComplete,
            json!({"summary": ""}),
            Caller::Chain,
            "result.replacement.summary",
            Error::is_blank,
        ),
        (
            HookPoint::FrontendEvent,
            json!({"text": "t"}),
            Caller::Chain,
            "result.replacement.kind",
            Error::is_blank,
        ),
    ];
    for (point, replacement, caller, path, predicate) in cases {
        let err = validate(point, replacement.clone(), caller).unwrap_err();
        assert_eq!(err.path(), path, "{point} {replacement}: {err}");
        assert!(predicate(&err), "{point} {replacement}: {err:?}");
        assert_eq!(err.target(), Target::Replacement);
        assert_eq!(err.reason(), Reason::ProtocolError);
    }
}

#[test]
fn the_permission_slot_owner_sets_the_verdict() {
    let kept = validate(
        HookPoint::PermissionDecision,
        json!({"name": "bash", "hostDecision": "deny"}),
        Caller::Chain,
    );
    assert!(kept.is_ok());
    let HookPayload::Permission(payload) = validate(
        HookPoint::PermissionDecision,
        json!({"name": "bash", "hostDecision": "allow"}),
        Caller::SlotOwner,
    )
    .unwrap() else {
        panic!("not a permission payload")
    };
    assert_eq!(payload.host_decision, Verdict::Allow);
}

#[test]
fn rehydrated_payloads_are_decoded_strictly() {
    let payload = HookPoint::ContextPrepare
        .decode_payload(r#"{"messages":[]}"#)
        .unwrap();
    assert_eq!(payload.kind(), PayloadKind::Context);
    let err = HookPoint::ContextPrepare
        .decode_payload(r#"{"messages":[],"messages":[]}"#)
        .unwrap_err();
    assert!(err.is_duplicate());
    assert_eq!(err.path(), "params.payload.messages");
    assert_eq!(err.reason(), Reason::InvalidParams);
    // Rehydrated content must be exactly one JSON value (§4).
    let err = HookPoint::InputReceive
        .decode_payload(r#"{"text":"a"} {"text":"b"}"#)
        .unwrap_err();
    assert!(err.is_syntax());
}
