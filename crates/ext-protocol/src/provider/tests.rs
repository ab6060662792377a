//! Fixtures and chunk invariants of the provider DTOs.

use crate::testkit::{accepts, check_dto, check_rejects};
use crate::{
    ChunkType, Error, ProviderCatalogParams, ProviderCatalogResult, ProviderChunk,
    ProviderDescriptor, ProviderError, ProviderErrorCode, Reason, StreamCancelParams,
    StreamCancelResult, StreamChunkParams, StreamEndParams, StreamOpenParams, StreamOpenResult,
    is_plugin_provider_ref,
};

const DESCRIPTOR: &str = r#"{"ref":"plugin/acme/openai/gpt","displayName":"GPT","model":"gpt",
    "pricingCurrency":"USD","defaultEffort":"medium","contextWindow":128000,
    "inputPerMillion":1.5,"outputPerMillion":0,"cacheHitPerMillion":0.1,"vision":true,
    "tools":true,"reasoning":false,"toolCallReasoning":false,"reasoningRoundTrip":true,
    "warnOnMissingToolCallReasoning":false,"efforts":["low","medium"]}"#;

const USAGE: &str = r#"{"promptTokens":1,"completionTokens":2,"totalTokens":3,
    "cacheHitTokens":0,"cacheMissTokens":1,"reasoningTokens":0}"#;

#[test]
fn every_provider_dto_round_trips_and_rejects_violations() {
    let mut cases = 0;
    cases += check_dto::<ProviderCatalogParams>("{}", "{}");
    cases += check_dto::<ProviderCatalogResult>(
        &format!(r#"{{"providers":[{DESCRIPTOR}]}}"#),
        r#"{"providers":[]}"#,
    );
    cases += check_dto::<ProviderDescriptor>(DESCRIPTOR, r#"{"ref":"plugin/a/b"}"#);
    cases += check_dto::<StreamOpenParams>(
        r#"{"streamId":"st-1","providerRef":"plugin/acme/openai/gpt","model":"m","effort":"high",
            "request":{"messages":[],"tools":[],"maxTokens":10},"seqBase":0}"#,
        r#"{"streamId":"s","providerRef":"","request":{"messages":[],"tools":[],"maxTokens":0},"seqBase":5}"#,
    );
    cases += check_dto::<StreamOpenResult>(r#"{"accepted":true}"#, r#"{"accepted":false}"#);
    cases += check_dto::<StreamCancelParams>(r#"{"streamId":"st-1"}"#, r#"{"streamId":""}"#);
    cases += check_dto::<StreamCancelResult>(r#"{"cancelled":true}"#, r#"{"cancelled":false}"#);
    cases += check_dto::<StreamChunkParams>(
        &format!(
            r#"{{"streamId":"st-1","seq":1,"chunk":{{"type":"tool_call","text":"t","signature":"s",
                "toolCall":{{"id":"1","name":"bash","arguments":"{{}}"}},"argChars":2,"usage":{USAGE}}}}}"#
        ),
        r#"{"streamId":"st-1","seq":2,"chunk":{"type":"done"}}"#,
    );
    cases += check_dto::<StreamEndParams>(
        r#"{"streamId":"st-1","lastSeq":7,"error":"boom","interrupted":true}"#,
        r#"{"streamId":"st-1","lastSeq":0}"#,
    );
    cases += check_dto::<ProviderChunk>(
        r#"{"type":"error","error":{"code":"provider_interrupted","message":"cut"}}"#,
        r#"{"type":"text","text":"hello"}"#,
    );
    cases += check_dto::<ProviderError>(
        r#"{"code":"provider_failed","message":"m"}"#,
        r#"{"code":"provider_interrupted","message":"m"}"#,
    );
    assert!(cases > 150, "only {cases} mutations");
}

#[test]
fn chunks_carry_their_types_member() {
    let chunk = |body: &str| format!(r#"{{"streamId":"s","seq":1,"chunk":{body}}}"#);
    for ok in [
        r#"{"type":"text","text":"t"}"#.to_owned(),
        r#"{"type":"reasoning","text":"t","signature":"s"}"#.to_owned(),
        r#"{"type":"tool_call_start","toolCall":{"id":"1","name":"n","arguments":""}}"#.to_owned(),
        r#"{"type":"tool_call_args_delta","argChars":0}"#.to_owned(),
        format!(r#"{{"type":"usage","usage":{USAGE}}}"#),
        r#"{"type":"done"}"#.to_owned(),
    ] {
        accepts::<StreamChunkParams>(&chunk(&ok));
    }
    check_rejects::<StreamChunkParams>(&[
        (
            &chunk(r#"{"type":"text"}"#),
            "params.chunk.text",
            Error::is_missing,
        ),
        (
            &chunk(r#"{"type":"reasoning","signature":"s"}"#),
            "params.chunk.text",
            Error::is_missing,
        ),
        (
            &chunk(r#"{"type":"tool_call_start"}"#),
            "params.chunk.toolCall",
            Error::is_missing,
        ),
        (
            &chunk(r#"{"type":"tool_call"}"#),
            "params.chunk.toolCall",
            Error::is_missing,
        ),
        (
            &chunk(r#"{"type":"tool_call_args_delta"}"#),
            "params.chunk.argChars",
            Error::is_missing,
        ),
        (
            &chunk(r#"{"type":"usage"}"#),
            "params.chunk.usage",
            Error::is_missing,
        ),
        (
            &chunk(r#"{"type":"error"}"#),
            "params.chunk.error",
            Error::is_missing,
        ),
        (
            &chunk(r#"{"type":"done","error":{"code":"provider_failed","message":"m"}}"#),
            "params.chunk.error",
            Error::is_rule,
        ),
        (
            &chunk(r#"{"type":"tool_call","toolCall":{"id":"","name":"n","arguments":""}}"#),
            "params.chunk.toolCall.id",
            Error::is_blank,
        ),
        (
            &chunk(r#"{"type":"delta"}"#),
            "params.chunk.type",
            Error::is_enum,
        ),
        (
            &chunk(r#"{"type":"error","error":{"code":"internal","message":"m"}}"#),
            "params.chunk.error.code",
            Error::is_enum,
        ),
        (
            r#"{"streamId":"s","seq":0,"chunk":{"type":"done"}}"#,
            "params.seq",
            Error::is_range,
        ),
    ]);
    assert_eq!(
        ProviderErrorCode::ProviderFailed.reason(),
        Reason::ProviderFailed
    );
    assert_eq!(
        serde_json::to_string(&ProviderChunk::new(ChunkType::Done)).unwrap(),
        r#"{"type":"done"}"#
    );
}

#[test]
fn catalog_refs_are_unique_and_prices_non_negative() {
    check_rejects::<ProviderCatalogResult>(&[
        (
            r#"{"providers":[{"ref":"plugin/p/a"},{"ref":"plugin/p/b"},{"ref":"plugin/p/a"}]}"#,
            "params.providers[2].ref",
            Error::is_rule,
        ),
        (r#"{"providers":null}"#, "params.providers", Error::is_null),
        ("{}", "params.providers", Error::is_missing),
        (
            r#"{"providers":[{"ref":"plugin/p/a","inputPerMillion":-1}]}"#,
            "params.providers[0].inputPerMillion",
            Error::is_range,
        ),
        (
            r#"{"providers":[{"ref":"plugin/p/a","endpoint":"https://x"}]}"#,
            "params.providers[0].endpoint",
            Error::is_unknown,
        ),
    ]);
    // Checklist 89: an empty catalog is `[]`, never omitted.
    assert_eq!(
        serde_json::to_string(&ProviderCatalogResult::default()).unwrap(),
        r#"{"providers":[]}"#
    );
}

#[test]
fn plugin_provider_refs() {
    assert!(is_plugin_provider_ref("plugin/acme/openai/gpt", "acme"));
    assert!(is_plugin_provider_ref("plugin/acme/x", "acme"));
    for bad in [
        "plugin/acme",
        "plugin/acme/",
        "plugin/acmex/y",
        "plugin/other/y",
        "acme/x",
        "plugin//acme/x",
    ] {
        assert!(!is_plugin_provider_ref(bad, "acme"), "{bad}");
    }
}

#[test]
fn stream_chunk_rejections_name_their_rule() {
    // The whole text is parsed first, so a duplicate after a type error is still reported as
    // the duplicate.
    for (text, is) in [
        (
            r#"{"streamId":1,"seq":1,"chunk":{"type":"done"},"seq":2}"#,
            Error::is_duplicate as fn(&Error) -> bool,
        ),
        (
            r#"{"streamId":"s","seq":1.0,"chunk":{"type":"done"}}"#,
            Error::is_type,
        ),
        (
            r#"{"streamId":"s","seq":0,"chunk":{"type":"done"}}"#,
            Error::is_range,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"text"}}"#,
            Error::is_missing,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"text","text":""}}"#,
            Error::is_missing,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"done","error":{"code":"provider_failed","message":"m"}}}"#,
            Error::is_rule,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"error","error":{"code":"provider_failed","message":" "}}}"#,
            Error::is_blank,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"done","x":1}}"#,
            Error::is_unknown,
        ),
        (
            r#"{"streamId":"s","seq":1,"chunk":{"type":"done"}} x"#,
            Error::is_syntax,
        ),
    ] {
        let err = crate::decode::<StreamChunkParams>(text, crate::Target::Params).unwrap_err();
        assert!(is(&err), "{text}: {err}");
        assert_eq!(err.reason(), Reason::InvalidParams);
    }
}
