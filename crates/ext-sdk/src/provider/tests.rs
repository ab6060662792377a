//! Unit tests of the provider machinery: the stream registry (reservation, cancel, the
//! active-stream bound), the chunk checks and the `end.error` text.

use super::*;

#[test]
fn a_reserved_id_is_active_until_its_reservation_ends() {
    let streams = Arc::new(Streams::default());
    let first = streams.reserve("s1").expect("a fresh id is reserved");
    assert_eq!(streams.reserve("s1").unwrap_err(), Refusal::Active);
    assert_eq!(streams.active(), 1);
    drop(first);
    assert_eq!(streams.active(), 0);
    let again = streams
        .reserve("s1")
        .expect("an ended id may be used again");
    drop(again);
}

#[test]
fn an_old_reservation_does_not_remove_a_newer_one_with_the_same_id() {
    let streams = Arc::new(Streams::default());
    let old = streams.reserve("s1").expect("reserved");
    assert!(!old.finish(), "not cancelled");
    let new = streams.reserve("s1").expect("the id is free after finish");
    drop(old);
    assert_eq!(streams.active(), 1, "the newer stream is still active");
    drop(new);
    assert_eq!(streams.active(), 0);
}

#[test]
fn the_active_stream_bound_refuses_one_more() {
    let streams = Arc::new(Streams::default());
    let held: Vec<Reservation> = (0..MAX_STREAMS)
        .map(|i| streams.reserve(&format!("s{i}")).expect("within the bound"))
        .collect();
    assert_eq!(streams.reserve("one-more").unwrap_err(), Refusal::Full);
    drop(held);
    streams.reserve("one-more").expect("room again");
}

#[test]
fn cancel_is_true_once_for_an_active_stream_and_false_otherwise() {
    let streams = Arc::new(Streams::default());
    assert!(!streams.cancel("unknown"));
    let reservation = streams.reserve("s1").expect("reserved");
    assert!(streams.cancel("s1"));
    assert!(reservation.token().is_cancelled());
    assert!(!streams.cancel("s1"), "a stream is cancelled once");
    assert!(reservation.finish(), "the end says interrupted");
    assert!(!streams.cancel("s1"), "an ended stream is not cancelled");
}

#[test]
fn a_finished_stream_is_not_cancelled_after_its_end_is_decided() {
    let streams = Arc::new(Streams::default());
    let reservation = streams.reserve("s1").expect("reserved");
    assert!(!reservation.finish(), "a clean end");
    assert!(!streams.cancel("s1"));
}

#[test]
fn cancel_all_cancels_every_active_stream() {
    let streams = Arc::new(Streams::default());
    let a = streams.reserve("a").expect("reserved");
    let b = streams.reserve("b").expect("reserved");
    streams.cancel_all();
    assert!(a.token().is_cancelled() && b.token().is_cancelled());
}

#[test]
fn the_catalog_decides_which_refs_are_served() {
    let streams = Streams::default();
    assert!(!streams.in_catalog("plugin/p/m"));
    let result = ProviderCatalogResult {
        providers: vec![ProviderDescriptor {
            reference: "plugin/p/m".to_owned(),
            ..ProviderDescriptor::default()
        }],
    };
    streams.set_catalog(&result);
    assert!(streams.in_catalog("plugin/p/m"));
    streams.set_catalog(&ProviderCatalogResult::default());
    assert!(
        !streams.in_catalog("plugin/p/m"),
        "a refresh replaces the refs"
    );
}

#[test]
fn chunks_are_checked_against_the_dto() {
    let mut text = ProviderChunk::new(ChunkType::Text);
    text.text = "hi".to_owned();
    assert_eq!(
        checked_chunk(&text).expect("valid").get(),
        r#"{"type":"text","text":"hi"}"#
    );
    assert!(checked_chunk(&ProviderChunk::new(ChunkType::Done)).is_ok());
    // A text chunk without text, a usage chunk without usage, an error chunk.
    assert!(checked_chunk(&ProviderChunk::new(ChunkType::Text)).is_err());
    assert!(checked_chunk(&ProviderChunk::new(ChunkType::Usage)).is_err());
    let mut error = ProviderChunk::new(ChunkType::Error);
    error.error = Some(sidewire_ext_protocol::ProviderError {
        code: sidewire_ext_protocol::ProviderErrorCode::ProviderFailed,
        message: "boom".to_owned(),
    });
    assert!(
        checked_chunk(&error).is_err(),
        "an error chunk never goes out"
    );
    // A tool call with a blank id breaks the nested DTO.
    let mut call = ProviderChunk::new(ChunkType::ToolCall);
    call.tool_call = Some(sidewire_ext_protocol::ProviderToolCall::default());
    assert!(checked_chunk(&call).is_err());
}

#[test]
fn end_errors_are_never_empty_and_bounded() {
    assert_eq!(end_error(String::new()), UNNAMED_FAILURE);
    assert_eq!(end_error("  ".to_owned()), UNNAMED_FAILURE);
    assert_eq!(end_error("boom".to_owned()), "boom");
    // A multi-byte character straddling the cut is not split.
    let long = "é".repeat(END_ERROR_BYTES);
    let cut = end_error(long);
    assert!(cut.len() <= END_ERROR_BYTES && cut.len() >= END_ERROR_BYTES - 1);
    assert!(cut.chars().all(|c| c == 'é'));
}

#[test]
fn catalogs_with_repeated_or_blank_refs_are_refused() {
    let descriptor = |reference: &str| ProviderDescriptor {
        reference: reference.to_owned(),
        ..ProviderDescriptor::default()
    };
    assert!(check_catalog(Vec::new()).is_ok());
    let twice = check_catalog(vec![descriptor("plugin/p/a"), descriptor("plugin/p/a")]);
    assert!(twice.unwrap_err().is_invalid());
    assert!(
        check_catalog(vec![descriptor(" ")])
            .unwrap_err()
            .is_invalid()
    );
    let negative = ProviderDescriptor {
        input_per_million: Some(-1.0),
        ..descriptor("plugin/p/a")
    };
    assert!(check_catalog(vec![negative]).unwrap_err().is_invalid());
}

/// A producer that counts the chunks it made, forever.
fn counting_flood(made: Arc<std::sync::atomic::AtomicUsize>) -> ChunkStream {
    Box::pin(futures_util::stream::repeat_with(move || {
        let n = made.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let mut chunk = ProviderChunk::new(ChunkType::Text);
        chunk.text = format!("w{n}");
        Ok(chunk)
    }))
}

#[tokio::test]
async fn a_cancel_abandons_a_chunk_waiting_for_room() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::AsyncBufReadExt as _;

    // A handles' queue of one frame and a driver not yet polled: the first chunk fills the
    // queue and the producer waits with the second in hand.
    let config = sidewire_ext_protocol::jsonrpc_config().outbound_queue(1);
    let (_input, sdk_in) = tokio::io::duplex(1024);
    let (sdk_out, host_out) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = sidewire_jsonrpc::ndjson(sdk_in, sdk_out, &config);
    let (peer, driver) =
        sidewire_jsonrpc::connect(reader, writer, sidewire_jsonrpc::Router::new(), config);
    let streams = Arc::new(Streams::default());
    let reservation = streams.reserve("s1").expect("reserved");
    let made = Arc::new(AtomicUsize::new(0));
    let job = tokio::spawn(produce(
        peer,
        Logger::new(|_| {}),
        reservation,
        (0, sidewire_ext_protocol::ProtocolProfile::V1),
        Some(counting_flood(Arc::clone(&made))),
    ));
    sidewire_test_support::eventually(std::time::Duration::from_secs(10), "two chunks", || {
        made.load(Ordering::SeqCst) >= 2
    })
    .await;
    assert_eq!(
        made.load(Ordering::SeqCst),
        2,
        "the producer waits for room"
    );
    assert!(streams.cancel("s1"));
    // Now let the frames out: chunk 1, then the end; chunk 2 is never sent.
    let _driver = tokio::spawn(driver);
    let mut lines = tokio::io::BufReader::new(host_out).lines();
    let mut next = async || -> serde_json::Value {
        let line = sidewire_test_support::within(
            std::time::Duration::from_secs(10),
            "a frame",
            lines.next_line(),
        )
        .await
        .expect("readable")
        .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    };
    let chunk = next().await;
    assert_eq!(chunk["params"]["seq"], 1, "{chunk}");
    let end = next().await;
    assert_eq!(
        end["params"],
        serde_json::json!({"streamId": "s1", "lastSeq": 1, "interrupted": true}),
        "{end}"
    );
    sidewire_test_support::within(std::time::Duration::from_secs(10), "the job", job)
        .await
        .expect("the job ends");
    assert_eq!(
        made.load(Ordering::SeqCst),
        2,
        "not polled after the cancel"
    );
}
