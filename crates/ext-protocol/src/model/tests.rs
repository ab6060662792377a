//! Fixtures and rules of the shared model DTOs.

use crate::testkit::{check_dto, check_rejects};
use crate::{
    Error, ProviderMessage, ProviderRequest, ProviderToolCall, ProviderToolSchema, ProviderUsage,
    ResponseFormat,
};

#[test]
fn every_model_dto_round_trips_and_rejects_violations() {
    let mut cases = 0;
    cases += check_dto::<ProviderRequest>(
        r#"{"messages":[{"role":"user","content":"hi"}],
            "tools":[{"name":"t","parameters":{"type":"object","properties":{}}}],
            "temperature":0.7,"maxTokens":4096,"responseFormat":{"type":"json_object"}}"#,
        r#"{"messages":[],"tools":[],"maxTokens":1}"#,
    );
    cases += check_dto::<ProviderMessage>(
        r#"{"role":"tool","content":"c","images":["data:x"],"reasoning_content":"r",
            "reasoning_signature":"s","tool_call_id":"1","name":"bash",
            "tool_calls":[{"id":"1","name":"bash","arguments":"{}"}]}"#,
        "{}",
    );
    cases += check_dto::<ProviderToolCall>(
        r#"{"id":"call_1","name":"bash","arguments":"{\"a\":1}","thought_signature":"sig"}"#,
        r#"{"id":"1","name":"n","arguments":""}"#,
    );
    cases += check_dto::<ProviderToolSchema>(
        r#"{"name":"bash","description":"run","parameters":{"type":"object"}}"#,
        r#"{"name":"bash","parameters":{}}"#,
    );
    cases += check_dto::<ProviderUsage>(
        r#"{"promptTokens":1,"completionTokens":2,"totalTokens":3,"cacheHitTokens":4,
            "cacheMissTokens":5,"reasoningTokens":6,"finishReason":"length"}"#,
        r#"{"promptTokens":0,"completionTokens":0,"totalTokens":0,"cacheHitTokens":0,
            "cacheMissTokens":0,"reasoningTokens":0}"#,
    );
    cases += check_dto::<ResponseFormat>(r#"{"type":"json_object"}"#, r#"{"type":"text"}"#);
    assert!(cases > 100, "only {cases} mutations");
}

#[test]
fn model_rules() {
    check_rejects::<ProviderRequest>(&[
        (
            r#"{"messages":null,"tools":[],"maxTokens":1}"#,
            "params.messages",
            Error::is_null,
        ),
        (
            r#"{"messages":[],"maxTokens":1}"#,
            "params.tools",
            Error::is_missing,
        ),
        (
            r#"{"messages":[],"tools":[{"name":"t","parameters":[]}],"maxTokens":1}"#,
            "params.tools[0].parameters",
            Error::is_type,
        ),
        (
            r#"{"messages":[],"tools":[],"maxTokens":1,"disableServerTools":true}"#,
            "params.disableServerTools",
            Error::is_unknown,
        ),
        (
            r#"{"messages":[],"tools":[],"maxTokens":1,"responseFormat":{"type":" "}}"#,
            "params.responseFormat.type",
            Error::is_blank,
        ),
        (
            r#"{"messages":[{"toolCalls":[]}],"tools":[],"maxTokens":1}"#,
            "params.messages[0].toolCalls",
            Error::is_unknown,
        ),
    ]);
}
