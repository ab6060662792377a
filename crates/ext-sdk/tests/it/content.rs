//! Externalized payloads (§9): rehydration before callbacks, the reader's checks, deadlines,
//! and 32 callbacks waiting on the host at once.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sidewire_ext_protocol::{CONTENT_CHUNK_BYTES, InputPayload, Reason};
use sidewire_ext_sdk::{Decision, Extension, point};
use tokio::sync::mpsc;

use crate::support::{HostEnd, Sidecar, assert_error, within};

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn content_ref(n: u64) -> String {
    format!("content_{n:024x}")
}

/// A descriptor of `bytes` stored under `content_ref(n)`.
fn descriptor(bytes: &[u8], n: u64) -> Value {
    json!({
        "jsonPointer": "/payload",
        "contentRef": content_ref(n),
        "totalBytes": bytes.len(),
        "sha256": sha256(bytes)
    })
}

/// Intercept params whose payload is externalized as `bytes`.
fn externalized(point: &str, seq: u64, bytes: &[u8]) -> Value {
    json!({
        "event": point, "seq": seq, "payload": null, "timeoutMillis": 30_000,
        "externalized": [descriptor(bytes, seq)]
    })
}

/// The page a correct host returns.
fn page(bytes: &[u8], n: u64, offset: usize, size: usize) -> Value {
    let end = (offset + size).min(bytes.len());
    let mut page = json!({
        "contentRef": content_ref(n), "offset": offset,
        "dataBase64": STANDARD.encode(&bytes[offset..end]),
        "totalBytes": bytes.len(), "sha256": sha256(bytes), "encoding": "utf8"
    });
    if end < bytes.len() {
        page["nextOffset"] = json!(end);
    }
    page
}

/// Answers content reads of `bytes` (stored as `n`) until the last page.
async fn serve_pages<R, W>(host: &mut HostEnd<R, W>, bytes: &[u8], n: u64, size: usize)
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    loop {
        let read = host.recv().await;
        assert_eq!(read["method"], "host/content/read", "{read}");
        assert_eq!(read["params"]["contentRef"], content_ref(n));
        let offset = read["params"]["offset"].as_u64().unwrap() as usize;
        let answer = page(bytes, n, offset, size);
        let last = answer.get("nextOffset").is_none();
        host.reply(&read, answer).await;
        if last {
            return;
        }
    }
}

/// An input interceptor that blocks with the length of the text it saw.
fn measuring() -> Extension {
    Extension::new("x", "1")
        .on_intercept(point::INPUT_RECEIVE, |_, input: InputPayload| async move {
            Ok(Decision::block(input.text.len().to_string()))
        })
}

async fn ready(extension: Extension) -> Sidecar {
    let mut sidecar = Sidecar::start(extension);
    sidecar
        .host
        .handshake(&["input.receive", "frontend.event"], &["interceptors"])
        .await;
    sidecar
}

#[tokio::test]
async fn an_externalized_payload_is_rehydrated_before_the_callback() {
    // Checklist 60 (first half), over several pages.
    let mut sidecar = ready(measuring()).await;
    let text = "w".repeat(CONTENT_CHUNK_BYTES + 1000);
    let bytes = serde_json::to_vec(&json!({"text": text})).unwrap();
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept",
            "params": externalized("input.receive", 1, &bytes)}),
        )
        .await;
    serve_pages(&mut sidecar.host, &bytes, 1, CONTENT_CHUNK_BYTES).await;
    let answer = sidecar.host.recv().await;
    assert_eq!(
        answer["result"]["reason"],
        text.len().to_string(),
        "{answer}"
    );

    // Small pages are fine too; the reader follows nextOffset.
    let bytes = br#"{"text":"hello"}"#;
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "extension/intercept",
            "params": externalized("input.receive", 2, bytes)}),
        )
        .await;
    serve_pages(&mut sidecar.host, bytes, 2, 3).await;
    assert_eq!(sidecar.host.recv().await["result"]["reason"], "5");
    sidecar.finish().await;
}

#[tokio::test]
async fn an_externalized_event_is_rehydrated_too() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let extension = Extension::new("x", "1").on_event(point::FRONTEND_EVENT, move |_, event| {
        let tx = tx.clone();
        async move {
            tx.send(event.text).unwrap();
            Ok(())
        }
    });
    let mut sidecar = ready(extension).await;
    let bytes = br#"{"kind":"turn_started","text":"big"}"#;
    sidecar
        .host
        .notify(
            "extension/event",
            json!({"event": "frontend.event", "payload": null,
            "externalized": [descriptor(bytes, 7)]}),
        )
        .await;
    serve_pages(&mut sidecar.host, bytes, 7, 1000).await;
    assert_eq!(within("the event", rx.recv()).await.unwrap(), "big");
    sidecar.finish().await;
}

#[tokio::test]
async fn descriptors_other_than_one_payload_pointer_are_invalid_params() {
    // Checklist 60 (second half).
    let mut sidecar = ready(measuring()).await;
    let bytes = br#"{"text":"a"}"#;
    let mut cases = Vec::new();
    let mut two = externalized("input.receive", 1, bytes);
    two["externalized"] = json!([descriptor(bytes, 1), descriptor(bytes, 2)]);
    cases.push(two);
    let mut pointer = externalized("input.receive", 1, bytes);
    pointer["externalized"][0]["jsonPointer"] = json!("/payload/text");
    cases.push(pointer);
    let mut inline = externalized("input.receive", 1, bytes);
    inline["payload"] = json!({"text": "a"});
    cases.push(inline);
    let mut none = externalized("input.receive", 1, bytes);
    none.as_object_mut().unwrap().remove("externalized");
    cases.push(none);
    for (i, params) in cases.into_iter().enumerate() {
        let id = 10 + i as u64;
        let answer = sidecar.host.call(id, "extension/intercept", params).await;
        assert_error(&answer, &json!(id), Reason::InvalidParams);
    }
    // Content that is not the point's DTO is invalid params as well.
    let bytes = br#"{"text":"a","extra":1}"#;
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 20, "method": "extension/intercept",
            "params": externalized("input.receive", 3, bytes)}),
        )
        .await;
    serve_pages(&mut sidecar.host, bytes, 3, 1000).await;
    assert_error(
        &sidecar.host.recv().await,
        &json!(20),
        Reason::InvalidParams,
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn content_that_does_not_match_its_descriptor_is_protocol_error() {
    // Checklist 59.
    let mut sidecar = ready(measuring()).await;
    let bytes = br#"{"text":"hello"}"#;
    let other = br#"{"text":"HELLO"}"#;
    type Spoil = fn(&mut Value);
    let cases: [(&str, Spoil); 4] = [
        ("bytes differ from the hash", |page| {
            page["dataBase64"] = json!(STANDARD.encode(br#"{"text":"HELLO"}"#));
        }),
        ("echoed totalBytes", |page| {
            // A page consistent on its own (15 bytes of 15), so only the echo is wrong.
            page["totalBytes"] = json!(15);
            page["dataBase64"] = json!(STANDARD.encode(&br#"{"text":"hello"}"#[..15]));
        }),
        ("echoed sha256", |page| page["sha256"] = json!(sha256(b"x"))),
        ("echoed ref", |page| {
            page["contentRef"] = json!(content_ref(99))
        }),
    ];
    assert_eq!(bytes.len(), other.len());
    for (i, (what, spoil)) in cases.into_iter().enumerate() {
        let id = 10 + i as u64;
        sidecar
            .host
            .send_json(
                &json!({"jsonrpc": "2.0", "id": id, "method": "extension/intercept",
                "params": externalized("input.receive", 1, bytes)}),
            )
            .await;
        let read = sidecar.host.recv().await;
        let mut answer = page(bytes, 1, 0, 1000);
        spoil(&mut answer);
        sidecar.host.reply(&read, answer).await;
        let frame = sidecar.host.recv().await;
        assert_error(&frame, &json!(id), Reason::ProtocolError);
        assert!(
            frame["error"]["message"].as_str().is_some(),
            "{what}: {frame}"
        );
    }
    // A host error on the read is answered with its reason.
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 30, "method": "extension/intercept",
            "params": externalized("input.receive", 1, bytes)}),
        )
        .await;
    let read = sidecar.host.recv().await;
    let error = Reason::ContentRefExpired.error_object();
    sidecar
        .host
        .send_json(&json!({"jsonrpc": "2.0", "id": read["id"], "error": error}))
        .await;
    assert_error(
        &sidecar.host.recv().await,
        &json!(30),
        Reason::ContentRefExpired,
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn thirty_two_callbacks_wait_on_content_reads_at_once() {
    // Checklist 16: every callback awaits host/content/read, and the host answers none until
    // it has seen all 32 reads; the reader keeps routing responses meanwhile.
    let mut sidecar = ready(measuring()).await;
    let bytes = br#"{"text":"abc"}"#;
    for seq in 1..=32 {
        sidecar
            .host
            .send_json(
                &json!({"jsonrpc": "2.0", "id": 100 + seq, "method": "extension/intercept",
                "params": externalized("input.receive", seq, bytes)}),
            )
            .await;
    }
    let mut reads = Vec::new();
    for _ in 0..32 {
        let read = sidecar.host.recv().await;
        assert_eq!(read["method"], "host/content/read", "{read}");
        reads.push(read);
    }
    for read in &reads {
        let n =
            u64::from_str_radix(&read["params"]["contentRef"].as_str().unwrap()[8..], 16).unwrap();
        sidecar.host.reply(read, page(bytes, n, 0, 1000)).await;
    }
    let mut answered = Vec::new();
    for _ in 0..32 {
        let answer = sidecar.host.recv().await;
        assert_eq!(answer["result"]["reason"], "3", "{answer}");
        answered.push(answer["id"].as_u64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, (101..=132).collect::<Vec<_>>());
    sidecar.finish().await;
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_content_read_times_out_after_thirty_seconds() {
    // Checklist 19, on a paused clock.
    let mut sidecar = ready(measuring()).await;
    let bytes = br#"{"text":"abc"}"#;
    let mut params = externalized("input.receive", 1, bytes);
    params["timeoutMillis"] = json!(60_000);
    sidecar
        .host
        .send_json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept", "params": params}),
        )
        .await;
    let read = sidecar.host.recv_within(Duration::from_secs(1)).await;
    assert_eq!(read["method"], "host/content/read");
    let started = tokio::time::Instant::now();
    let answer = sidecar.host.recv_within(Duration::from_secs(120)).await;
    assert_error(&answer, &json!(2), Reason::InterceptTimeout);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );
    // The late answer is ignored.
    sidecar.host.reply(&read, page(bytes, 1, 0, 1000)).await;
    sidecar.host.silent().await;
    sidecar.finish().await;
}
