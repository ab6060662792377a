use sidewire_ext_host::protocol::ChunkType;

use super::*;
use crate::testing::{call, done, reasoning, text, usage};

#[test]
fn chunks_assemble_into_the_answer() {
    let mut collector = ResponseCollector::new(1024);
    let mut signed = reasoning("because");
    signed.signature = "sig".to_owned();
    let start = ProviderChunk {
        tool_call: call("c1", "t", "").tool_call,
        ..ProviderChunk::new(ChunkType::ToolCallStart)
    };
    let delta = ProviderChunk {
        arg_chars: Some(3),
        ..ProviderChunk::new(ChunkType::ToolCallArgsDelta)
    };
    for chunk in [
        signed,
        text("Hel"),
        text("lo"),
        start,
        delta,
        call("c1", "t", "{}"),
        usage(4),
        usage(6),
        done(),
    ] {
        collector.push(&chunk).expect("within the bound");
    }
    let response = collector.finish();
    assert_eq!(response.text, "Hello");
    assert_eq!(
        (response.reasoning.as_str(), response.signature.as_str()),
        ("because", "sig")
    );
    // Only the complete call counts; the last usage wins.
    assert_eq!(response.calls.len(), 1);
    assert_eq!(response.calls[0].arguments, "{}");
    assert_eq!(response.usage.map(|u| u.total_tokens), Some(6));
}

#[test]
fn the_byte_bound_counts_text_reasoning_and_calls() {
    let mut collector = ResponseCollector::new(10);
    collector.push(&text("12345")).unwrap();
    collector.push(&reasoning("678")).unwrap();
    // id 2 + name 1 + arguments 0 = 3 bytes: 11 in all.
    let err = collector
        .push(&call("c1", "t", ""))
        .expect_err("over the bound");
    assert!(matches!(err, Error::ResponseTooLarge { limit: 10 }));
    // Exactly at the bound is fine.
    let mut collector = ResponseCollector::new(5);
    collector.push(&text("12345")).unwrap();
    collector.push(&done()).unwrap();
}
