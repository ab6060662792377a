//! Provider extensions (spec §14) through real sidecar processes: the catalog and its refresh,
//! routing, streams with every consumer rule of §14.5 (reorder, duplicates, gaps, ends,
//! cancels, crashes, the inbound queue bound), the SDK's provider example and the Python
//! provider fixture.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use sidewire_ext_host::{HostEvent, ProviderStream, REDACTED, StreamRequest};
use sidewire_ext_protocol::Reason;

use crate::support::{Env, ask, eventually, next_event, read_stream, recorded, texts};

const REF: &str = "plugin/prov/scripted/echo-1";

/// The happy path: the handshake's list is the catalog, a stream delivers its chunks in order
/// and ends cleanly, and the stream state is forgotten afterwards.
pub(crate) async fn the_handshake_catalog_routes_a_stream_that_ends_cleanly() {
    let env = Env::new();
    env.plugin("prov")
        .providers(&[REF])
        .open(json!({"after": [{"stream": 3}]}))
        .install();
    let (runtime, _events) = env.boot().await;
    let catalog = runtime.providers();
    assert_eq!(catalog.len(), 1);
    assert_eq!(catalog[0].plugin, "prov");
    assert_eq!(catalog[0].descriptor.reference, REF);

    let mut stream = runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect("the stream opens");
    assert_eq!(stream.plugin(), "prov");
    assert_eq!(stream.provider_ref(), REF);
    assert_eq!(stream.stream_id(), "s1");
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(texts(&chunks), ["w1", "w2", "w3"]);
    assert_eq!(
        runtime.sidecars()[0].streams,
        0,
        "the stream state is forgotten"
    );
    drop(stream);
    env.finish(runtime).await;
}

/// §17 item 91 (second half): a crash mid-stream fails the stream with `provider_interrupted`
/// at once, after the chunks delivered before it (the exit may be seen before the last
/// chunks are read from the pipe: whichever comes first is the crash, §13.4, so what was
/// delivered is a prefix of what was written).
pub(crate) async fn a_crash_mid_stream_is_provider_interrupted_at_once() {
    let env = Env::new();
    env.plugin("prov")
        .providers(&[REF])
        .open(json!({"after": [{"chunks": [1, 2]}, {"exit": 3}]}))
        .install();
    let (runtime, mut events) = env.boot().await;
    // The exit may even be seen before the open's answer is read (on a loaded machine): then
    // the open itself fails the same way, with nothing delivered.
    let (stream, chunks, error) = match runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
    {
        Ok(mut stream) => {
            let (chunks, error) = read_stream(&mut stream).await;
            (Some(stream), chunks, error.expect("the stream fails"))
        }
        Err(error) => (None, Vec::new(), error),
    };
    let written = ["w1", "w2"];
    assert!(written.starts_with(&texts(&chunks)), "{chunks:?}");
    assert!(error.is_provider());
    assert_eq!(error.reason(), Some(Reason::ProviderInterrupted));
    next_event(&mut events, "the crash", |e| {
        matches!(e, HostEvent::Crashed { .. }).then_some(())
    })
    .await;
    // No fallback: a later open fails the same way, and the crashed plugin serves no catalog.
    let err = runtime
        .open_stream(StreamRequest::new(REF, ask("again")))
        .await
        .expect_err("the sidecar is gone");
    assert_eq!(err.reason(), Some(Reason::ProviderInterrupted));
    assert!(runtime.providers().is_empty());
    drop(stream);
    env.finish(runtime).await;
}

/// Boots one provider plugin `prov` serving [`REF`] whose opens follow `opens` (one action per
/// open, the last repeating), recording what it receives, with short stream deadlines.
async fn boot_provider(
    env: &Env,
    opens: &[serde_json::Value],
    script: &[(&str, serde_json::Value)],
) -> (
    sidewire_ext_host::ExtensionHost,
    sidewire_ext_host::HostEvents,
) {
    let mut plugin = env.plugin("prov").providers(&[REF]).record("prov.jsonl");
    for open in opens {
        plugin = plugin.open(open.clone());
    }
    for (key, value) in script {
        plugin = plugin.script(key, value.clone());
    }
    plugin.install();
    let config = env
        .config()
        .stream_gap_timeout(Duration::from_millis(200))
        .stream_cancel_timeout(Duration::from_millis(300))
        .provider_call_timeout(Duration::from_millis(500));
    env.boot_with(config).await.expect("the host boots")
}

async fn open(runtime: &sidewire_ext_host::ExtensionHost) -> ProviderStream {
    runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect("the stream opens")
}

/// Opens one stream on a sidecar that answers with `after` and reads it to its end.
async fn stream_of(after: serde_json::Value) -> (Vec<String>, Option<sidewire_ext_host::Error>) {
    let env = Env::new();
    let (runtime, _events) = boot_provider(&env, &[json!({ "after": after })], &[]).await;
    let mut stream = open(&runtime).await;
    let (chunks, error) = read_stream(&mut stream).await;
    drop(stream);
    env.finish(runtime).await;
    (
        texts(&chunks).into_iter().map(str::to_owned).collect(),
        error,
    )
}

fn reason_of(error: Option<sidewire_ext_host::Error>) -> Option<Reason> {
    let error = error?;
    assert!(error.is_provider(), "{error}");
    error.reason()
}

/// Frames the recording sidecar received whose method is `method`.
fn received(env: &Env, method: &str) -> Vec<serde_json::Value> {
    recorded(env, "prov.jsonl")
        .into_iter()
        .filter(|f| f["method"] == method)
        .collect()
}

/// Chunks written before the open's answer are delivered (the stream is registered before the
/// open is written); out-of-order chunks are delivered in `seq` order and duplicates ignored.
pub(crate) async fn early_reordered_and_duplicate_chunks_are_delivered_once_in_order() {
    let env = Env::new();
    let open_action = json!({
        "before": [{"c": 2}, {"c": 1}],
        "after": [{"c": 1}, {"c": 4}, {"c": 2}, {"c": 3}, {"c": 4}, {"end": 4}, {"end": 4}],
    });
    let (runtime, _events) = boot_provider(&env, &[open_action], &[]).await;
    let mut stream = open(&runtime).await;
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(texts(&chunks), ["w1", "w2", "w3", "w4"]);
    let opened = received(&env, "extension/provider/stream/open");
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0]["params"]["seqBase"], 0);
    assert_eq!(opened[0]["params"]["providerRef"], REF);
    assert_eq!(opened[0]["params"]["streamId"], "s1");
    drop(stream);
    env.finish(runtime).await;
}

/// `stream_gap` in its three forms: the 256-seq window exceeded, a chunk after the end beyond
/// `lastSeq`, and a chunk still missing when the gap timeout passes after the end (§17 item 91,
/// first half; the timeout shortened to 200 ms). A chunk arriving after the end but within
/// the timeout completes the stream.
pub(crate) async fn gaps_fail_the_stream_and_a_late_chunk_in_time_does_not() {
    // Chunk 1 missing: 2..=256 wait in the window, 257 exceeds it.
    let (chunks, error) = stream_of(json!([{"chunks": [2, 257]}])).await;
    assert!(chunks.is_empty());
    assert_eq!(reason_of(error), Some(Reason::StreamGap));

    let (chunks, error) = stream_of(json!([{"c": 1}, {"end": 2}, {"c": 3}])).await;
    assert_eq!(chunks, ["w1"]);
    assert_eq!(reason_of(error), Some(Reason::StreamGap));

    let (chunks, error) = stream_of(json!([{"c": 1}, {"c": 3}, {"end": 3}])).await;
    assert_eq!(chunks, ["w1"]);
    assert_eq!(reason_of(error), Some(Reason::StreamGap));

    // The end comes before the chunk it waits for, which arrives 20 ms later.
    let (chunks, error) =
        stream_of(json!([{"c": 2}, {"end": 2}, {"sleep_ms": 20}, {"c": 1}])).await;
    assert_eq!(chunks, ["w1", "w2"]);
    assert!(error.is_none(), "{error:?}");
}

/// A second, conflicting `stream/end` fails the stream with `provider_interrupted`; an
/// interrupted end is `provider_interrupted` when the host did not cancel.
pub(crate) async fn a_conflicting_end_or_an_interrupted_one_is_provider_interrupted() {
    let (chunks, error) = stream_of(json!([{"c": 2}, {"end": 2}, {"end": 3}])).await;
    assert!(chunks.is_empty());
    assert_eq!(reason_of(error), Some(Reason::ProviderInterrupted));

    let (chunks, error) = stream_of(json!([{"c": 1}, {"end": 1, "interrupted": true}])).await;
    assert_eq!(chunks, ["w1"]);
    assert_eq!(reason_of(error), Some(Reason::ProviderInterrupted));
}

/// An `error` chunk fails the stream with its code, after the chunks before it; `end.error` is
/// `provider_failed` with the message redacted again.
pub(crate) async fn an_error_chunk_or_end_error_fails_the_stream_redacted() {
    let error_chunk = json!({"type": "error",
        "error": {"code": "provider_interrupted", "message": "upstream went away"}});
    let (chunks, error) =
        stream_of(json!([{"c": 1}, {"c": 2, "chunk": error_chunk}, {"c": 3}, {"end": 3}])).await;
    assert_eq!(chunks, ["w1"]);
    assert_eq!(reason_of(error), Some(Reason::ProviderInterrupted));

    let secret = "Bearer abcdefghijklmnopqrstuvwxyz0123456789";
    let (chunks, error) = stream_of(json!([
        {"c": 1},
        {"end": 1, "error": format!("upstream refused: {secret}")},
    ]))
    .await;
    assert_eq!(chunks, ["w1"]);
    let error = error.expect("the stream fails");
    assert_eq!(error.reason(), Some(Reason::ProviderFailed));
    let failure = error.provider().expect("a provider failure");
    assert_eq!(failure.plugin.as_deref(), Some("prov"));
    assert_eq!(failure.provider_ref, REF);
    assert!(
        !failure.message.contains("abcdefghijklmnop") && failure.message.contains(REDACTED),
        "not redacted: {}",
        failure.message
    );
}

/// `accepted: false` is `provider_failed`; an error answer fails with its reason; an open not
/// answered within the deadline (shortened to 500 ms) is `intercept_timeout`. None leaves
/// stream state behind.
pub(crate) async fn refused_failed_and_unanswered_opens() {
    let env = Env::new();
    let opens = [
        json!({"answer": {"accepted": false}}),
        json!({"answer": {"error": {"code": -32602, "message": "no such model",
            "data": {"reason": "invalid_params", "retryable": false}}}}),
        json!({"answer": "hang"}),
    ];
    let (runtime, _events) = boot_provider(&env, &opens, &[]).await;
    for expected in [
        Reason::ProviderFailed,
        Reason::InvalidParams,
        Reason::InterceptTimeout,
    ] {
        let err = runtime
            .open_stream(StreamRequest::new(REF, ask("hello")))
            .await
            .expect_err("the open fails");
        assert!(err.is_provider(), "{err}");
        assert_eq!(err.reason(), Some(expected), "{err}");
        assert_eq!(err.provider().unwrap().plugin.as_deref(), Some("prov"));
    }
    eventually("the stream state to be forgotten", || {
        runtime.sidecars()[0].streams == 0
    })
    .await;
    env.finish(runtime).await;
}

/// A ref not in the catalog fails with `invalid_params` before anything is sent: no frame
/// reaches any sidecar. Stream notifications from a connection without capability `providers`
/// are dropped: 300 of them (more than the queue holds) leave it running.
pub(crate) async fn unknown_refs_are_never_routed_and_foreign_streams_are_dropped() {
    let env = Env::new();
    let flood: Vec<String> = (1..=300)
        .map(|seq| {
            json!({"jsonrpc":"2.0","method":"extension/provider/stream/chunk",
                "params":{"streamId":"s1","seq":seq,"chunk":{"type":"text","text":"x"}}})
            .to_string()
        })
        .collect();
    env.plugin("plain")
        .script("after_init", json!(flood))
        .record("plain.jsonl")
        .install();
    env.plugin("prov")
        .providers(&[REF])
        .record("prov.jsonl")
        .install();
    let (runtime, _events) = env.boot().await;
    for reference in [
        "plugin/prov/scripted/other",
        "plugin/plain/x/y",
        "plugin/prov",
        "openai/gpt",
        "",
    ] {
        let err = runtime
            .open_stream(StreamRequest::new(reference, ask("hello")))
            .await
            .expect_err("an unknown ref is refused");
        assert_eq!(
            err.reason(),
            Some(Reason::InvalidParams),
            "{reference}: {err}"
        );
        assert_eq!(err.provider().unwrap().plugin, None);
    }
    // Let the flood be read, then prove nothing was sent but the handshake.
    crate::support::within(
        crate::support::WAIT,
        "an intercept-free round trip",
        async { runtime.refresh_providers().await.expect("a refresh") },
    )
    .await;
    for file in ["plain.jsonl", "prov.jsonl"] {
        let methods: Vec<String> = recorded(&env, file)
            .iter()
            .filter_map(|f| f["method"].as_str().map(str::to_owned))
            .filter(|m| m.starts_with("extension/provider/stream"))
            .collect();
        assert!(methods.is_empty(), "{file} received {methods:?}");
    }
    assert!(runtime.sidecars().iter().all(|s| s.ready));
    env.finish(runtime).await;
}

/// `refresh_providers` replaces a plugin's list with a valid answer, and rejects whole a list
/// with a duplicate ref (`protocol_error`) or a foreign one (`capability_not_declared`), or a
/// failed call: the plugin keeps its previous list and a warning carries the reason. Routing
/// follows the current list.
pub(crate) async fn refresh_replaces_the_catalog_or_rejects_it_whole() {
    let env = Env::new();
    let new_ref = "plugin/prov/scripted/echo-2";
    let catalogs = json!([
        {"providers": [{"ref": new_ref, "displayName": "Echo 2"}]},
        {"providers": [{"ref": "plugin/prov/a"}, {"ref": "plugin/prov/a"}]},
        {"providers": [{"ref": "plugin/prov/a"}, {"ref": "plugin/other/a"}]},
        {"error": {"code": -32603, "message": "catalog down",
            "data": {"reason": "internal", "retryable": true}}},
    ]);
    let (runtime, mut events) = boot_provider(
        &env,
        &[json!({"after": [{"stream": 1}]})],
        &[("catalog", catalogs)],
    )
    .await;
    let refs = |entries: Vec<sidewire_ext_host::CatalogEntry>| -> Vec<String> {
        entries
            .into_iter()
            .map(|e| e.descriptor.reference)
            .collect()
    };
    assert_eq!(refs(runtime.providers()), [REF]);
    assert_eq!(refs(runtime.refresh_providers().await.unwrap()), [new_ref]);
    assert_eq!(refs(runtime.providers()), [new_ref]);
    // The old ref is no longer routed.
    let err = runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect_err("the old ref is gone");
    assert_eq!(err.reason(), Some(Reason::InvalidParams));
    assert!(received(&env, "extension/provider/stream/open").is_empty());

    for expected in [
        Reason::ProtocolError,
        Reason::CapabilityNotDeclared,
        Reason::Internal,
    ] {
        assert_eq!(refs(runtime.refresh_providers().await.unwrap()), [new_ref]);
        let reason = next_event(&mut events, "the rejection warning", |e| match e {
            HostEvent::Warning {
                plugin: Some(p),
                reason,
                ..
            } if p == "prov" => Some(reason),
            _ => None,
        })
        .await;
        assert_eq!(reason, Some(expected));
    }
    let mut stream = runtime
        .open_stream(StreamRequest::new(new_ref, ask("hello")))
        .await
        .expect("the refreshed ref opens");
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(texts(&chunks), ["w1"]);
    drop(stream);
    env.finish(runtime).await;
}

/// `cancel()` sends `stream/cancel`; with a sidecar that answers and ends interrupted, the
/// stream ends `stream_cancelled`; with one that ignores the cancel, it ends `stream_cancelled`
/// once the cancel's wait (shortened to 300 ms) is over, and the stream state is forgotten.
pub(crate) async fn cancel_ends_the_stream_even_when_the_sidecar_ignores_it() {
    for cancel in [
        json!({"then": [{"end": 1, "interrupted": true}]}),
        json!("ignore"),
    ] {
        let env = Env::new();
        let (runtime, _events) =
            boot_provider(&env, &[json!({"after": [{"c": 1}]})], &[("cancel", cancel)]).await;
        let mut stream = open(&runtime).await;
        let first = crate::support::within(crate::support::WAIT, "the first chunk", stream.next())
            .await
            .expect("a chunk")
            .expect("not an error");
        assert_eq!(first.text, "w1");
        stream.cancel();
        stream.cancel();
        let (chunks, error) = read_stream(&mut stream).await;
        assert!(chunks.is_empty());
        assert_eq!(reason_of(error), Some(Reason::StreamCancelled));
        let cancels = received(&env, "extension/provider/stream/cancel");
        assert_eq!(cancels.len(), 1, "one cancel");
        assert_eq!(cancels[0]["params"]["streamId"], stream.stream_id());
        assert_eq!(runtime.sidecars()[0].streams, 0);
        drop(stream);
        env.finish(runtime).await;
    }
}

/// Dropping a stream before its end cancels it, and its state is forgotten once the cancel's
/// wait is over even when the sidecar never answers; chunks still arriving are not kept.
pub(crate) async fn dropping_a_stream_cancels_it_and_forgets_its_state() {
    let env = Env::new();
    let (runtime, _events) = boot_provider(
        &env,
        &[json!({"after": [{"c": 1}]})],
        &[("cancel", json!("ignore"))],
    )
    .await;
    let mut stream = open(&runtime).await;
    let _ = crate::support::within(crate::support::WAIT, "the first chunk", stream.next()).await;
    assert_eq!(runtime.sidecars()[0].streams, 1);
    drop(stream);
    eventually("the cancel to reach the sidecar", || {
        received(&env, "extension/provider/stream/cancel").len() == 1
    })
    .await;
    eventually("the stream state to be forgotten", || {
        runtime.sidecars()[0].streams == 0
    })
    .await;
    // A stream dropped outside any runtime cancels too.
    let stream = open(&runtime).await;
    std::thread::spawn(move || drop(stream)).join().unwrap();
    eventually("the second cancel", || {
        received(&env, "extension/provider/stream/cancel").len() == 2
    })
    .await;
    eventually("the second stream state to be forgotten", || {
        runtime.sidecars()[0].streams == 0
    })
    .await;
    env.finish(runtime).await;
}

/// Ordered data is never dropped: when the application does not read and a connection has
/// 65,536 chunks waiting, one more fails the connection (the crash path), and the stream ends
/// `provider_interrupted` after what it held. The same holds for 32 MiB of waiting chunks: the
/// 32nd chunk of 1 MiB text (plus its params and overhead) goes over.
pub(crate) async fn a_full_inbound_queue_fails_the_connection() {
    let mb = json!({"type": "text", "text": "@fill:1048576@"});
    let big: Vec<serde_json::Value> = (1..=33).map(|seq| json!({"c": seq, "chunk": mb})).collect();
    for (after, held) in [(json!([{"chunks": [1, 65_537]}]), 65_537), (json!(big), 32)] {
        let env = Env::new();
        let (runtime, mut events) = boot_provider(&env, &[json!({ "after": after })], &[]).await;
        let mut stream = open(&runtime).await;
        let cause = next_event(&mut events, "the crash", |e| match e {
            HostEvent::Crashed { plugin, cause, .. } if plugin == "prov" => Some(cause),
            _ => None,
        })
        .await;
        assert!(cause.contains("inbound queue"), "{cause}");
        let (chunks, error) = read_stream(&mut stream).await;
        assert_eq!(chunks.len(), held);
        assert_eq!(reason_of(error), Some(Reason::ProviderInterrupted));
        drop(stream);
        env.finish(runtime).await;
    }
}

/// A connection holds at most 64 open streams; one more fails locally with `provider_failed`
/// and writes nothing. A `stream/open` that does not fit a frame fails locally with
/// `frame_too_large`, never externalized.
pub(crate) async fn opens_are_bounded_in_count_and_frame_size() {
    let env = Env::new();
    let (runtime, _events) = boot_provider(&env, &[json!({})], &[]).await;
    let mut streams = Vec::new();
    for _ in 0..64 {
        streams.push(open(&runtime).await);
    }
    let err = runtime
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect_err("the 65th open fails");
    assert_eq!(err.reason(), Some(Reason::ProviderFailed));
    drop(streams);
    eventually("the streams to be forgotten", || {
        runtime.sidecars()[0].streams == 0
    })
    .await;
    let huge = "x".repeat(sidewire_ext_protocol::FRAME_BYTES);
    let err = runtime
        .open_stream(StreamRequest::new(REF, ask(&huge)))
        .await
        .expect_err("the open does not fit a frame");
    assert_eq!(err.reason(), Some(Reason::FrameTooLarge));
    assert_eq!(received(&env, "extension/provider/stream/open").len(), 64);
    assert_eq!(runtime.sidecars()[0].streams, 0);
    env.finish(runtime).await;
}

/// What the scripted model (the SDK's provider example, and the Python fixture) must answer to
/// "hello there" and to "please add 2 and 40" with an `add` tool offered.
async fn the_scripted_model_answers(runtime: &sidewire_ext_host::ExtensionHost, reference: &str) {
    use sidewire_ext_protocol::{ChunkType, ProviderToolSchema};
    let catalog = runtime.providers();
    assert!(
        catalog.iter().any(|e| e.descriptor.reference == reference),
        "{catalog:?}"
    );
    let mut stream = runtime
        .open_stream(StreamRequest::new(reference, ask("hello there")))
        .await
        .expect("the stream opens");
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    let kinds: Vec<ChunkType> = chunks.iter().map(|c| c.kind).collect();
    assert_eq!(kinds.first(), Some(&ChunkType::Reasoning));
    assert_eq!(
        &kinds[kinds.len() - 2..],
        [ChunkType::Usage, ChunkType::Done]
    );
    let answer: String = chunks
        .iter()
        .filter(|c| c.kind == ChunkType::Text)
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(answer, "You said: hello there");
    drop(stream);

    let mut request = ask("please add 2 and 40");
    request.tools = vec![ProviderToolSchema {
        name: "mcp__calc__add".into(),
        description: "Adds two integers".into(),
        parameters: json!({"type": "object"}).as_object().unwrap().clone(),
    }];
    let mut stream = runtime
        .open_stream(StreamRequest::new(reference, request))
        .await
        .expect("the stream opens");
    let (chunks, error) = read_stream(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    let call = chunks
        .iter()
        .find(|c| c.kind == ChunkType::ToolCall)
        .and_then(|c| c.tool_call.clone())
        .expect("a tool call");
    assert_eq!(call.name, "mcp__calc__add");
    let arguments: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(arguments, json!({"a": 2, "b": 40}));
    drop(stream);
}

/// The SDK's provider example (`samples::scripted_model`) through the host: its catalog comes
/// from the handshake, it answers word by word and asks for the offered `add` tool.
pub(crate) async fn the_sdk_provider_example_streams_through_the_host() {
    let env = Env::new();
    env.install_example("provider");
    let (runtime, _events) = env.boot().await;
    the_scripted_model_answers(&runtime, "plugin/scripted-model/scripted/echo-1").await;
    // A refresh answers the same list.
    let refreshed = runtime.refresh_providers().await.unwrap();
    assert_eq!(refreshed, runtime.providers());
    assert_eq!(refreshed.len(), 1);
    env.finish(runtime).await;
}

/// The Python provider fixture (stdlib only) through the host: a provider in another language.
/// Installed with its command set to the absolute path of `python3` found on `PATH`.
pub(crate) async fn the_python_provider_fixture_streams_through_the_host() {
    let Some(python) = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("python3"))
            .find(|candidate| candidate.is_file())
    }) else {
        // As the CLI's Python tests do: CI sets SIDEWIRE_REQUIRE_PEERS=1, where this must run.
        let required = std::env::var("SIDEWIRE_REQUIRE_PEERS").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "SIDEWIRE_REQUIRE_PEERS=1 but there is no python3"
        );
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: the Python provider test did not run (no python3)\n",
        );
        return;
    };
    let env = Env::new();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/python_provider");
    let root = env.path("pkg-python");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::copy(fixture.join("provider.py"), root.join("provider.py")).unwrap();
    let manifest_path = fixture.join(sidewire_ext_protocol::MANIFEST_FILE);
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest_path).unwrap()).unwrap();
    manifest["runtime"]["command"] = json!(python.display().to_string());
    manifest["runtime"]["args"] = json!(["${REASONIX_PLUGIN_ROOT}/provider.py"]);
    std::fs::write(
        root.join(sidewire_ext_protocol::MANIFEST_FILE),
        manifest.to_string(),
    )
    .unwrap();
    env.store()
        .install(&root, sidewire_ext_host::InstallOptions::copy())
        .unwrap();
    let (runtime, _events) = env.boot().await;
    the_scripted_model_answers(&runtime, "plugin/python-provider/scripted/echo-1").await;
    env.finish(runtime).await;
}

/// A provider that sends one chunk and then nothing: once nothing new arrived for the idle
/// bound (the stream's own, 300 ms, here; the host's in the second half), the sidecar is sent
/// `stream/cancel` as for an ordinary cancel, and when that cancel is over (here ignored, so
/// its 300 ms wait; answered in the second half) the stream ends idle, after the chunk, with
/// `intercept_timeout`. Its state is forgotten.
pub(crate) async fn a_stream_with_nothing_new_for_its_idle_bound_ends_idle_and_is_cancelled() {
    let bound = Duration::from_millis(300);
    let env = Env::new();
    let (runtime, _events) = boot_provider(
        &env,
        &[json!({"after": [{"c": 1}]})],
        &[("cancel", json!("ignore"))],
    )
    .await;
    let mut stream = runtime
        .open_stream(StreamRequest::new(REF, ask("hello")).idle_timeout(bound))
        .await
        .expect("the stream opens");
    let (chunks, error) = read_stream(&mut stream).await;
    assert_eq!(texts(&chunks), ["w1"]);
    let error = error.expect("the stream fails");
    assert!(error.is_stream_idle(), "{error}");
    assert_eq!(error.reason(), Some(Reason::InterceptTimeout));
    let failure = error.provider().expect("a provider failure");
    assert_eq!(failure.idle_timeout, Some(bound));
    assert!(failure.message.contains("went idle"), "{}", failure.message);
    eventually("the cancel to reach the sidecar", || {
        received(&env, "extension/provider/stream/cancel").len() == 1
    })
    .await;
    let cancel = &received(&env, "extension/provider/stream/cancel")[0];
    assert_eq!(cancel["params"]["streamId"], stream.stream_id());
    eventually("the stream state to be forgotten", || {
        runtime.sidecars()[0].streams == 0
    })
    .await;
    drop(stream);
    env.finish(runtime).await;

    // The host's bound, when the stream has none of its own; an ordinary failure is not idle.
    let env = Env::new();
    env.plugin("prov")
        .providers(&[REF])
        .record("prov.jsonl")
        .open(json!({"after": [{"c": 1}]}))
        .install();
    let config = env.config().stream_idle_timeout(bound);
    assert_eq!(config.get_stream_idle_timeout(), bound);
    let (runtime, _events) = env.boot_with(config).await.expect("the host boots");
    let mut stream = open(&runtime).await;
    let (chunks, error) = read_stream(&mut stream).await;
    assert_eq!(texts(&chunks), ["w1"]);
    assert!(error.expect("the stream fails").is_stream_idle());
    eventually("the cancel to reach the sidecar", || {
        received(&env, "extension/provider/stream/cancel").len() == 1
    })
    .await;
    drop(stream);
    env.finish(runtime).await;
    let (_, error) = stream_of(json!([{"c": 1}, {"end": 1, "interrupted": true}])).await;
    assert!(!error.expect("the stream fails").is_stream_idle());
}

/// A chunk whose params do not decode is not left to look like a gap: its stream fails with
/// `protocol_error` naming the chunk's `seq`, its type (escaped, cut) and why, after the chunks
/// before it.
pub(crate) async fn an_invalid_chunk_fails_its_stream_naming_the_chunk_and_its_type() {
    let hostile = format!("\u{1b}[2K\u{202e}{}", "t".repeat(500));
    let (chunks, error) = stream_of(json!([
        {"c": 1},
        {"c": 2, "chunk": {"type": hostile, "text": "x"}},
        {"c": 3},
        {"end": 3},
    ]))
    .await;
    assert_eq!(chunks, ["w1"]);
    let error = error.expect("the stream fails");
    assert_eq!(error.reason(), Some(Reason::ProtocolError), "{error}");
    let message = &error.provider().unwrap().message;
    assert!(
        message.contains("chunk 2 (type \"\\u{1b}[2K\\u{202e}ttt"),
        "{message}"
    );
    assert!(message.contains("is not one of"), "{message}");
    assert!(
        !message.contains('\u{1b}') && !message.contains('\u{202e}'),
        "{message}"
    );
    assert!(message.len() < 1000, "{message}");

    // A chunk of a known type without the member its type requires.
    let (chunks, error) = stream_of(json!([
        {"c": 1},
        {"c": 2, "chunk": {"type": "text"}},
        {"end": 2},
    ]))
    .await;
    assert_eq!(chunks, ["w1"]);
    let error = error.expect("the stream fails");
    assert_eq!(error.reason(), Some(Reason::ProtocolError), "{error}");
    let message = &error.provider().unwrap().message;
    assert!(message.contains("chunk 2 (type \"text\")"), "{message}");
}

/// A stream pins its turn's generation for its life, even past the turn it was opened in: a
/// reload waits until the stream is dropped.
pub(crate) async fn an_open_stream_holds_off_a_reload_until_dropped() {
    let env = Env::new();
    let (runtime, _events) = boot_provider(&env, &[json!({"after": [{"c": 1}]})], &[]).await;
    let turn = runtime.turn().await;
    let stream = turn
        .open_stream(StreamRequest::new(REF, ask("hello")))
        .await
        .expect("the stream opens");
    assert_eq!(turn.providers(), runtime.providers());
    drop(turn);
    let mut reload = Box::pin(runtime.reload());
    // A bounded look, not a sync: the reload must not run while the stream lives.
    let waited = tokio::time::timeout(Duration::from_millis(300), reload.as_mut()).await;
    assert!(waited.is_err(), "the reload ran under an open stream");
    drop(stream);
    let report = crate::support::within(crate::support::WAIT, "the reload", reload)
        .await
        .expect("the reload succeeds");
    assert_eq!(report.generation, 2);
    env.finish(runtime).await;
}
