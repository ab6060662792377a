//! Provider extensions (§14), in-process: the dispatch order of the provider requests, the
//! catalog, and the §14.4 producer rules the SDK enforces on a provider's streams (numbering,
//! the one end, producer errors, invalid chunks, cancel, the active-stream bound, shutdown,
//! backpressure).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use futures_util::{StreamExt as _, stream};
use serde_json::{Value, json};
use sidewire_ext_protocol::{
    ChunkType, ProviderChunk, ProviderDescriptor, ProviderError, ProviderErrorCode, Reason,
    StreamOpenParams,
};
use sidewire_ext_sdk::{
    ChunkStream, Error, Extension, HostHandle, MAX_STREAMS, Provider, StreamContext,
};

use crate::support::{Sidecar, WAIT, assert_error};
use sidewire_test_support::eventually;

/// The test provider's one ref.
const REF: &str = "plugin/test/scripted/m1";

/// A provider whose streams do what the last message of the request says: `<script>:<n>`.
///
/// * `text:n`: n text chunks, then a clean end.
/// * `fail:n`: n chunks, then `Err` with a message (`fail-blank:n`: with an empty one).
/// * `invalid:n` / `error-chunk:n`: n chunks, then a chunk that breaks the DTO / an `error`
///   chunk, then one more valid chunk.
/// * `hang:n`: n chunks, then nothing, forever.
/// * `flood:0`: chunks without end.
/// * `refuse:0`: `open` fails.
#[derive(Clone, Default)]
struct TestProvider {
    catalog: Arc<Mutex<Vec<ProviderDescriptor>>>,
    /// Producers dropped so far.
    dropped: Arc<AtomicUsize>,
    /// Chunks the flood producer made so far.
    produced: Arc<AtomicU64>,
}

impl TestProvider {
    fn new() -> Self {
        let provider = TestProvider::default();
        provider.set_catalog(&[REF]);
        provider
    }

    fn set_catalog(&self, refs: &[&str]) {
        *self.catalog.lock().unwrap() = refs
            .iter()
            .map(|reference| ProviderDescriptor {
                reference: (*reference).to_owned(),
                ..ProviderDescriptor::default()
            })
            .collect();
    }

    fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }
}

/// Counts its drop: the producer is dropped when the stream is cancelled.
struct DropFlag(Arc<AtomicUsize>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn text(n: usize) -> ProviderChunk {
    let mut chunk = ProviderChunk::new(ChunkType::Text);
    chunk.text = format!("w{n}");
    chunk
}

fn texts(n: usize) -> Vec<Result<ProviderChunk, Error>> {
    (1..=n).map(|i| Ok(text(i))).collect()
}

impl Provider for TestProvider {
    async fn catalog(&self, _host: &HostHandle) -> Result<Vec<ProviderDescriptor>, Error> {
        Ok(self.catalog.lock().unwrap().clone())
    }

    async fn open(
        &self,
        ctx: StreamContext,
        params: StreamOpenParams,
    ) -> Result<ChunkStream, Error> {
        assert_eq!(ctx.stream_id(), params.stream_id);
        assert_eq!(ctx.provider_ref(), params.provider_ref);
        let script = params
            .request
            .messages
            .last()
            .expect("a message")
            .content
            .clone();
        let (word, n) = script.split_once(':').expect("<script>:<n>");
        let n: usize = n.parse().expect("a count");
        let flag = DropFlag(Arc::clone(&self.dropped));
        let chunks = texts(n);
        Ok(match word {
            "text" => Box::pin(stream::iter(chunks).map(move |chunk| {
                let _keep = &flag;
                chunk
            })),
            "fail" | "fail-blank" => {
                let message = if word == "fail" { "upstream 503" } else { "" };
                Box::pin(stream::iter(chunks).chain(stream::iter([Err(Error::callback(message))])))
            }
            "invalid" => {
                let bad = ProviderChunk::new(ChunkType::Usage);
                Box::pin(stream::iter(chunks).chain(stream::iter([Ok(bad), Ok(text(99))])))
            }
            "error-chunk" => {
                let mut bad = ProviderChunk::new(ChunkType::Error);
                bad.error = Some(ProviderError {
                    code: ProviderErrorCode::ProviderFailed,
                    message: "boom".to_owned(),
                });
                Box::pin(stream::iter(chunks).chain(stream::iter([Ok(bad), Ok(text(99))])))
            }
            "hang" => Box::pin(stream::iter(chunks).chain(stream::poll_fn(move |_| {
                let _keep = &flag;
                Poll::Pending
            }))),
            "flood" => {
                let produced = Arc::clone(&self.produced);
                Box::pin(stream::repeat_with(move || {
                    let _keep = &flag;
                    let n = produced.fetch_add(1, Ordering::SeqCst);
                    Ok(text(n as usize))
                }))
            }
            "refuse" => return Err(Error::callback("no capacity")),
            other => panic!("unknown script {other}"),
        })
    }
}

/// A sidecar serving `provider`, through the handshake with capability `providers`.
async fn start(provider: TestProvider) -> Sidecar {
    let mut sidecar = Sidecar::start(Extension::new("test", "0.1.0").provider(provider));
    let result = sidecar.host.handshake(&[], &["providers"]).await;
    assert_eq!(result["providers"], json!([{"ref": REF}]));
    sidecar
}

fn open_params(stream_id: &str, seq_base: u64, script: &str) -> Value {
    json!({
        "streamId": stream_id,
        "providerRef": REF,
        "request": {
            "messages": [{"role": "user", "content": script}],
            "tools": [],
            "maxTokens": 100
        },
        "seqBase": seq_base
    })
}

/// Opens a stream and asserts it was accepted.
async fn open(sidecar: &mut Sidecar, id: u64, stream_id: &str, seq_base: u64, script: &str) {
    let answer = sidecar
        .host
        .call(
            id,
            "extension/provider/stream/open",
            open_params(stream_id, seq_base, script),
        )
        .await;
    assert_eq!(answer["result"], json!({"accepted": true}), "{answer}");
}

/// Reads `stream_id`'s frames up to and including its end: (the chunks' params, the end's
/// params). Any other frame fails the test.
async fn drain(sidecar: &mut Sidecar, stream_id: &str) -> (Vec<Value>, Value) {
    let mut chunks = Vec::new();
    loop {
        let frame = sidecar.host.recv().await;
        assert_eq!(frame["params"]["streamId"], stream_id, "{frame}");
        match frame["method"].as_str() {
            Some("extension/provider/stream/chunk") => chunks.push(frame["params"].clone()),
            Some("extension/provider/stream/end") => return (chunks, frame["params"].clone()),
            _ => panic!("not a stream frame: {frame}"),
        }
    }
}

fn seqs(chunks: &[Value]) -> Vec<u64> {
    chunks.iter().map(|c| c["seq"].as_u64().unwrap()).collect()
}

async fn cancel(sidecar: &mut Sidecar, id: u64, stream_id: &str) -> Value {
    let answer = sidecar
        .host
        .call(
            id,
            "extension/provider/stream/cancel",
            json!({"streamId": stream_id}),
        )
        .await;
    answer["result"].clone()
}

#[tokio::test]
async fn chunks_are_numbered_from_seq_base_and_one_end_follows() {
    // Checklist 89.
    let mut sidecar = start(TestProvider::new()).await;
    // The open's answer comes before the stream's first chunk.
    open(&mut sidecar, 2, "s1", 0, "text:3").await;
    let (chunks, end) = drain(&mut sidecar, "s1").await;
    assert_eq!(seqs(&chunks), [1, 2, 3]);
    assert_eq!(chunks[0]["chunk"], json!({"type": "text", "text": "w1"}));
    assert_eq!(end, json!({"streamId": "s1", "lastSeq": 3}));

    open(&mut sidecar, 3, "s2", 41, "text:2").await;
    let (chunks, end) = drain(&mut sidecar, "s2").await;
    assert_eq!(seqs(&chunks), [42, 43]);
    assert_eq!(end, json!({"streamId": "s2", "lastSeq": 43}));

    // No chunk: lastSeq is seqBase.
    open(&mut sidecar, 4, "s3", 7, "text:0").await;
    let (chunks, end) = drain(&mut sidecar, "s3").await;
    assert!(chunks.is_empty());
    assert_eq!(end, json!({"streamId": "s3", "lastSeq": 7}));

    // Exactly one end: nothing follows, and the ended id is not active any more.
    sidecar.host.silent().await;
    assert_eq!(
        cancel(&mut sidecar, 5, "s1").await,
        json!({"cancelled": false})
    );
    open(&mut sidecar, 6, "s1", 0, "text:1").await;
    let (chunks, _) = drain(&mut sidecar, "s1").await;
    assert_eq!(seqs(&chunks), [1]);
    sidecar.finish().await;
}

#[tokio::test]
async fn a_producer_error_ends_the_stream_with_end_error_and_no_error_chunk() {
    // Checklist 90, second half.
    let mut sidecar = start(TestProvider::new()).await;
    open(&mut sidecar, 2, "s1", 0, "fail:2").await;
    let (chunks, end) = drain(&mut sidecar, "s1").await;
    assert_eq!(seqs(&chunks), [1, 2]);
    assert!(chunks.iter().all(|c| c["chunk"]["type"] == "text"));
    assert_eq!(
        end,
        json!({"streamId": "s1", "lastSeq": 2, "error": "upstream 503"})
    );
    // An error without a message still fails the stream: `error` is never empty.
    open(&mut sidecar, 3, "s2", 5, "fail-blank:0").await;
    let (chunks, end) = drain(&mut sidecar, "s2").await;
    assert!(chunks.is_empty());
    assert_eq!(end["lastSeq"], 5);
    assert!(
        end["error"].as_str().is_some_and(|e| !e.trim().is_empty()),
        "{end}"
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn an_invalid_or_error_chunk_ends_the_stream_with_a_generic_error() {
    let mut sidecar = start(TestProvider::new()).await;
    for (id, script) in [(2, "invalid:1"), (3, "error-chunk:1")] {
        let stream_id = format!("s{id}");
        open(&mut sidecar, id, &stream_id, 0, script).await;
        let (chunks, end) = drain(&mut sidecar, &stream_id).await;
        // The bad chunk and the one after it are not sent.
        assert_eq!(seqs(&chunks), [1], "{script}");
        assert_eq!(end["lastSeq"], 1, "{script}");
        assert!(end.get("interrupted").is_none(), "{end}");
        let error = end["error"].as_str().expect("an end.error");
        assert!(!error.is_empty());
        assert!(
            !error.contains("boom"),
            "the details stay on stderr: {error}"
        );
    }
    let logs = sidecar.logs();
    assert!(
        logs.iter().filter(|l| l.contains("invalid chunk")).count() >= 2,
        "{logs:?}"
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn a_cancel_stops_the_stream_drops_the_producer_and_the_end_says_interrupted() {
    // Checklist 90, first half.
    let provider = TestProvider::new();
    let mut sidecar = start(provider.clone()).await;
    open(&mut sidecar, 2, "s1", 10, "hang:2").await;
    for seq in [11, 12] {
        let chunk = sidecar.host.recv().await;
        assert_eq!(chunk["params"]["seq"], seq, "{chunk}");
    }
    assert_eq!(provider.dropped(), 0);
    assert_eq!(
        cancel(&mut sidecar, 3, "s1").await,
        json!({"cancelled": true})
    );
    let end = sidecar.host.recv().await;
    assert_eq!(end["method"], "extension/provider/stream/end", "{end}");
    assert_eq!(
        end["params"],
        json!({"streamId": "s1", "lastSeq": 12, "interrupted": true})
    );
    assert_eq!(provider.dropped(), 1, "the producer is dropped on cancel");
    // Cancelled, then ended: a second cancel and a cancel of an unknown stream are false.
    assert_eq!(
        cancel(&mut sidecar, 4, "s1").await,
        json!({"cancelled": false})
    );
    assert_eq!(
        cancel(&mut sidecar, 5, "nope").await,
        json!({"cancelled": false})
    );
    sidecar.host.silent().await;
    sidecar.finish().await;
}

#[tokio::test]
async fn no_chunk_follows_a_processed_cancel_even_mid_flood() {
    let provider = TestProvider::new();
    let mut sidecar = start(provider.clone()).await;
    open(&mut sidecar, 2, "s1", 0, "flood:0").await;
    let mut last = 0;
    for _ in 0..5 {
        let chunk = sidecar.host.recv().await;
        last = chunk["params"]["seq"].as_u64().expect("a chunk");
    }
    sidecar
        .host
        .send_json(&json!({
            "jsonrpc": "2.0", "id": 3, "method": "extension/provider/stream/cancel",
            "params": {"streamId": "s1"}
        }))
        .await;
    // Chunks sent before the cancel was processed may still arrive before its answer, in
    // order; after the answer only the end.
    loop {
        let frame = sidecar.host.recv().await;
        if frame["id"] == 3 {
            assert_eq!(frame["result"], json!({"cancelled": true}));
            break;
        }
        let seq = frame["params"]["seq"].as_u64().expect("a chunk");
        assert_eq!(seq, last + 1, "contiguous");
        last = seq;
    }
    let end = sidecar.host.recv().await;
    assert_eq!(
        end["params"],
        json!({"streamId": "s1", "lastSeq": last, "interrupted": true}),
        "{end}"
    );
    sidecar.host.silent().await;
    assert_eq!(provider.dropped(), 1);
    sidecar.finish().await;
}

#[tokio::test]
async fn a_producer_waits_while_the_host_does_not_read() {
    // Backpressure: chunks are sent through the writer's bounded queue, so a host that stops
    // reading stops the producer instead of growing a buffer.
    let provider = TestProvider::new();
    let mut sidecar = start(provider.clone()).await;
    open(&mut sidecar, 2, "s1", 0, "flood:0").await;
    // Stalled: the count has not moved over five looks in a row. An unbounded producer would
    // never stall, and this would time out.
    let (mut last, mut still) = (0, 0);
    eventually(WAIT, "the producer to stall", || {
        let now = provider.produced.load(Ordering::SeqCst);
        still = if now == last && now > 0 { still + 1 } else { 0 };
        last = now;
        still >= 5
    })
    .await;
    let stalled = last;
    // The pipe (64 KiB), the writer's queue and the outbound lane (256 frames) hold some
    // thousands of these ~80-byte frames; far fewer than an unbounded producer would make.
    assert!(
        stalled < 20_000,
        "{stalled} chunks produced without a reader"
    );
    // Reading lets it go on.
    for _ in 0..(stalled + 10) {
        sidecar.host.recv().await;
    }
    assert!(provider.produced.load(Ordering::SeqCst) > stalled);
}

#[tokio::test]
async fn open_refusals_follow_the_rules() {
    let provider = TestProvider::new();
    let mut sidecar = start(provider.clone()).await;
    // Unknown ref (and a plausible one of another plugin): invalid_params.
    for (id, reference) in [(2, "plugin/test/scripted/other"), (3, "plugin/x/y/z")] {
        let mut params = open_params("s1", 0, "text:1");
        params["providerRef"] = json!(reference);
        let answer = sidecar
            .host
            .call(id, "extension/provider/stream/open", params)
            .await;
        assert_error(&answer, &json!(id), Reason::InvalidParams);
    }
    // Bad params: invalid_params.
    let mut params = open_params("s1", 0, "text:1");
    params["seqBase"] = json!(-1);
    let answer = sidecar
        .host
        .call(4, "extension/provider/stream/open", params)
        .await;
    assert_error(&answer, &json!(4), Reason::InvalidParams);
    // The provider refuses: provider_failed, and the id is not kept.
    let answer = sidecar
        .host
        .call(
            5,
            "extension/provider/stream/open",
            open_params("s1", 0, "refuse:0"),
        )
        .await;
    assert_error(&answer, &json!(5), Reason::ProviderFailed);
    // An active id reused: protocol_error; the first stream goes on.
    open(&mut sidecar, 6, "s1", 0, "hang:1").await;
    assert_eq!(sidecar.host.recv().await["params"]["seq"], 1);
    let answer = sidecar
        .host
        .call(
            7,
            "extension/provider/stream/open",
            open_params("s1", 0, "text:1"),
        )
        .await;
    assert_error(&answer, &json!(7), Reason::ProtocolError);
    assert_eq!(
        cancel(&mut sidecar, 8, "s1").await,
        json!({"cancelled": true})
    );
    let end = sidecar.host.recv().await;
    assert_eq!(end["params"]["lastSeq"], 1);
    sidecar.finish().await;
}

#[tokio::test]
async fn the_active_stream_bound_refuses_one_more_with_provider_failed() {
    let mut sidecar = start(TestProvider::new()).await;
    for n in 0..MAX_STREAMS {
        open(&mut sidecar, 100 + n as u64, &format!("s{n}"), 0, "hang:0").await;
    }
    let answer = sidecar
        .host
        .call(
            2,
            "extension/provider/stream/open",
            open_params("one-more", 0, "text:1"),
        )
        .await;
    assert_error(&answer, &json!(2), Reason::ProviderFailed);
    // Ending one makes room.
    assert_eq!(
        cancel(&mut sidecar, 3, "s0").await,
        json!({"cancelled": true})
    );
    let end = sidecar.host.recv().await;
    assert_eq!(end["params"]["streamId"], "s0");
    open(&mut sidecar, 4, "one-more", 0, "text:1").await;
    let (chunks, _) = drain(&mut sidecar, "one-more").await;
    assert_eq!(seqs(&chunks), [1]);
    sidecar.finish().await;
}

#[tokio::test]
async fn shutdown_cancels_active_streams() {
    let provider = TestProvider::new();
    let mut sidecar = start(provider.clone()).await;
    open(&mut sidecar, 2, "s1", 0, "hang:1").await;
    assert_eq!(sidecar.host.recv().await["params"]["seq"], 1);
    sidecar
        .host
        .send_json(&json!({
            "jsonrpc": "2.0", "id": 3, "method": "extension/shutdown",
            "params": {"timeoutMillis": 1000}
        }))
        .await;
    // The answer and the end, in either order; no chunk.
    let mut frames = [sidecar.host.recv().await, sidecar.host.recv().await];
    frames.sort_by_key(|f| f.get("id").is_none());
    assert_eq!(frames[0]["result"], json!({"accepted": true}), "{frames:?}");
    assert_eq!(
        frames[1]["params"],
        json!({"streamId": "s1", "lastSeq": 1, "interrupted": true}),
        "{frames:?}"
    );
    assert_eq!(provider.dropped(), 1);
    sidecar.host.silent().await;
    sidecar.finish().await;
}

#[tokio::test]
async fn the_catalog_is_answered_checked_and_refreshes_the_served_refs() {
    let provider = TestProvider::new();
    let mut sidecar = start(provider.clone()).await;
    let answer = sidecar
        .host
        .call(2, "extension/provider/catalog", json!({}))
        .await;
    assert_eq!(answer["result"], json!({"providers": [{"ref": REF}]}));
    // Checklist 89: an empty catalog is `[]`, and its refs are no longer served.
    provider.set_catalog(&[]);
    let answer = sidecar
        .host
        .call(3, "extension/provider/catalog", json!({}))
        .await;
    assert_eq!(answer["result"], json!({"providers": []}));
    let answer = sidecar
        .host
        .call(
            4,
            "extension/provider/stream/open",
            open_params("s1", 0, "text:1"),
        )
        .await;
    assert_error(&answer, &json!(4), Reason::InvalidParams);
    // A catalog breaking the rules is never sent: `internal`, and the last one stands.
    provider.set_catalog(&["plugin/test/a", "plugin/test/a"]);
    let answer = sidecar
        .host
        .call(5, "extension/provider/catalog", json!({}))
        .await;
    assert_error(&answer, &json!(5), Reason::Internal);
    assert!(sidecar.logs().iter().any(|l| l.contains("catalog")));
    // Bad params: invalid_params.
    let answer = sidecar
        .host
        .call(6, "extension/provider/catalog", json!({"x": 1}))
        .await;
    assert_error(&answer, &json!(6), Reason::InvalidParams);
    sidecar.finish().await;
}

#[tokio::test]
async fn a_bad_catalog_at_the_handshake_offers_nothing() {
    let provider = TestProvider::new();
    provider.set_catalog(&["plugin/test/a", "plugin/test/a"]);
    let mut sidecar = Sidecar::start(Extension::new("test", "0.1.0").provider(provider.clone()));
    let result = sidecar.host.handshake(&[], &["providers"]).await;
    assert!(result.get("providers").is_none(), "{result}");
    assert!(sidecar.logs().iter().any(|l| l.contains("catalog")));
    // A later catalog call may offer it.
    provider.set_catalog(&[REF]);
    let answer = sidecar
        .host
        .call(2, "extension/provider/catalog", json!({}))
        .await;
    assert_eq!(answer["result"], json!({"providers": [{"ref": REF}]}));
    open(&mut sidecar, 3, "s1", 0, "text:1").await;
    drain(&mut sidecar, "s1").await;
    sidecar.finish().await;
}

#[tokio::test]
async fn provider_requests_follow_the_dispatch_order() {
    // §6.5: the state gate (protocol_error), then no provider (unknown_method, before the
    // params are decoded), then decoding (invalid_params).
    let methods = [
        "extension/provider/catalog",
        "extension/provider/stream/open",
        "extension/provider/stream/cancel",
    ];
    async fn check(sidecar: &mut Sidecar, id: &mut u64, reason: Reason, methods: &[&str]) {
        for method in methods {
            *id += 1;
            let answer = sidecar.host.call(*id, method, json!({"bad": [1.5]})).await;
            assert_error(&answer, &json!(*id), reason);
        }
    }
    let mut id = 100;
    // With a provider and the capability: gated before ready, invalid_params once ready.
    let mut sidecar = Sidecar::start(Extension::new("test", "0.1.0").provider(TestProvider::new()));
    check(&mut sidecar, &mut id, Reason::ProtocolError, &methods).await;
    sidecar.host.initialize(&[], &["providers"]).await;
    check(&mut sidecar, &mut id, Reason::ProtocolError, &methods).await;
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    check(&mut sidecar, &mut id, Reason::InvalidParams, &methods).await;
    sidecar
        .host
        .call(2, "extension/shutdown", json!({"timeoutMillis": 1000}))
        .await;
    check(&mut sidecar, &mut id, Reason::ProtocolError, &methods).await;
    sidecar.finish().await;

    // No provider registered: unknown_method in ready, even with invalid params.
    let mut sidecar = Sidecar::start(Extension::new("test", "0.1.0"));
    sidecar.host.handshake(&[], &["providers"]).await;
    check(&mut sidecar, &mut id, Reason::UnknownMethod, &methods).await;
    sidecar.finish().await;

    // A provider, but the manifest lacks `providers`: not offered, said on stderr, and
    // unknown_method.
    let mut sidecar = Sidecar::start(Extension::new("test", "0.1.0").provider(TestProvider::new()));
    let result = sidecar.host.handshake(&[], &["interceptors"]).await;
    assert!(result.get("providers").is_none(), "{result}");
    assert!(
        sidecar.logs().iter().any(|l| l.contains("\"providers\"")),
        "{:?}",
        sidecar.logs()
    );
    check(&mut sidecar, &mut id, Reason::UnknownMethod, &methods).await;
    sidecar.finish().await;
}

#[tokio::test]
async fn a_provider_registered_twice_is_a_config_error() {
    let extension = Extension::new("test", "0.1.0")
        .provider(TestProvider::new())
        .provider(TestProvider::new());
    let sidecar = Sidecar::start(extension);
    let err = sidecar.outcome().await.expect_err("refused before reading");
    assert!(err.is_config(), "{err}");
}
