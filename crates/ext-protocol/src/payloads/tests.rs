//! Fixtures of the 13 hook payload DTOs.

use crate::testkit::{check_dto, check_rejects};
use crate::{
    AgentStartPayload, CompactionCompletePayload, CompactionPreparePayload, ContextPayload, Error,
    FrontendEventPayload, InputPayload, PermissionPayload, ProviderRequestPayload,
    ProviderResponsePayload, SessionPayload, SystemPromptPayload, ToolAfterPayload,
    ToolBeforePayload,
};

const MESSAGES: &str = r#"[{"role":"assistant","content":"c","images":["i"],
    "reasoning_content":"r","reasoning_signature":"rs","tool_call_id":"t","name":"n",
    "tool_calls":[{"id":"1","name":"bash","arguments":"{}","thought_signature":"ts"}]}]"#;

#[test]
fn every_payload_dto_round_trips_and_rejects_violations() {
    let mut cases = 0;
    cases += check_dto::<SessionPayload>(r#"{"sessionPath":"/s/1.jsonl","phase":"save"}"#, "{}");
    cases += check_dto::<InputPayload>(r#"{"text":"fix teh tests"}"#, "{}");
    cases += check_dto::<AgentStartPayload>(r#"{"model":"m","toolCount":0,"sessionId":"s"}"#, "{}");
    cases += check_dto::<SystemPromptPayload>(r#"{"prompt":"p","workspaceRoot":"/w"}"#, "{}");
    cases += check_dto::<ContextPayload>(
        &format!(r#"{{"messages":{MESSAGES}}}"#),
        r#"{"messages":[]}"#,
    );
    cases += check_dto::<ProviderRequestPayload>(
        &format!(
            r#"{{"request":{{"messages":{MESSAGES},"tools":[{{"name":"bash","description":"d",
            "parameters":{{"type":"object"}}}}],"temperature":0,"maxTokens":100,
            "responseFormat":{{"type":"json_object"}}}}}}"#
        ),
        r#"{"request":{"messages":[],"tools":[],"maxTokens":0}}"#,
    );
    cases += check_dto::<ProviderResponsePayload>(
        r#"{"text":"t","reasoning":"r","signature":"s",
            "calls":[{"id":"1","name":"bash","arguments":""}],
            "usage":{"promptTokens":1,"completionTokens":2,"totalTokens":3,"cacheHitTokens":0,
                "cacheMissTokens":1,"reasoningTokens":0,"finishReason":"stop"}}"#,
        "{}",
    );
    cases += check_dto::<ToolBeforePayload>(
        r#"{"name":"bash","arguments":"{\"cmd\":\"ls\"}","callId":"c1"}"#,
        "{}",
    );
    cases += check_dto::<ToolAfterPayload>(
        r#"{"name":"bash","arguments":"{}","callId":"c1","result":"ok","isError":false}"#,
        "{}",
    );
    cases += check_dto::<PermissionPayload>(
        r#"{"name":"bash","arguments":"{}","readOnly":true,"hostDecision":"deny"}"#,
        r#"{"hostDecision":"allow"}"#,
    );
    cases += check_dto::<CompactionPreparePayload>(
        &format!(r#"{{"messages":{MESSAGES},"guidance":"g"}}"#),
        r#"{"messages":[]}"#,
    );
    cases += check_dto::<CompactionCompletePayload>(r#"{"summary":"s"}"#, "{}");
    cases += check_dto::<FrontendEventPayload>(
        r#"{"kind":"turn_started","text":"t","detail":"d"}"#,
        "{}",
    );
    assert!(cases > 200, "only {cases} mutations");
}

#[test]
fn required_lists_are_always_sent() {
    // §7.3: `messages` is R and always sent, `[]` when empty (checklist 40).
    let encoded = serde_json::to_string(&ContextPayload::default()).unwrap();
    assert_eq!(encoded, r#"{"messages":[]}"#);
    check_rejects::<ContextPayload>(&[("{}", "params.messages", Error::is_missing)]);
    check_rejects::<CompactionPreparePayload>(&[(
        r#"{"guidance":"g"}"#,
        "params.messages",
        Error::is_missing,
    )]);
}

#[test]
fn meaningful_zero_and_false_are_kept() {
    let payload = ToolAfterPayload {
        is_error: Some(false),
        ..ToolAfterPayload::default()
    };
    assert_eq!(
        serde_json::to_string(&payload).unwrap(),
        r#"{"isError":false}"#
    );
    let payload = AgentStartPayload {
        tool_count: Some(0),
        ..AgentStartPayload::default()
    };
    assert_eq!(
        serde_json::to_string(&payload).unwrap(),
        r#"{"toolCount":0}"#
    );
}
