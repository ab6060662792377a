//! Frames and envelopes (§2.3, §4): what is fatal, what is answered how, what is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use sidewire_ext_protocol::{InputPayload, Reason};
use sidewire_ext_sdk::{Decision, Extension, point, samples};
use tokio::sync::Notify;

use crate::support::{Sidecar, assert_error, intercept};

/// An extension whose input interceptor counts its calls.
fn counting() -> (Extension, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let extension =
        Extension::new("x", "1").on_intercept(point::INPUT_RECEIVE, move |_, _: InputPayload| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(Decision::Continue) }
        });
    (extension, calls)
}

async fn ready(extension: Extension) -> Sidecar {
    let mut sidecar = Sidecar::start(extension);
    sidecar
        .host
        .handshake(&["input.receive"], &["interceptors", "ui"])
        .await;
    sidecar
}

#[tokio::test]
async fn blank_whitespace_and_bom_lines_are_fatal() {
    // Checklist 6.
    for line in [
        "",
        "   \t",
        "\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        "not json",
        "[]",
    ] {
        let mut sidecar = ready(samples::starter()).await;
        sidecar.host.send(line).await;
        sidecar.host.output_ends().await;
        let err = sidecar.outcome().await.unwrap_err();
        assert!(err.is_fatal(), "{line:?}: {err}");
        assert_eq!(err.reason(), Some(Reason::ProtocolError), "{line:?}: {err}");
    }
}

#[tokio::test]
async fn a_cr_before_the_lf_is_accepted() {
    let mut sidecar = ready(samples::starter()).await;
    let params = intercept("input.receive", 1, json!({"text": "starter: a"}), 5000);
    let line =
        json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept", "params": params});
    sidecar.host.send(&format!("{line}\r")).await;
    let answer = sidecar.host.recv().await;
    assert_eq!(answer["result"]["decision"], "replace", "{answer}");
    sidecar.finish().await;
}

#[tokio::test]
async fn repeated_member_names() {
    // Checklist 7: in the envelope, fatal; in params, invalid_params.
    let mut sidecar = ready(samples::starter()).await;
    sidecar
        .host
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{"event":"input.receive","seq":1,"seq":2,"payload":{"text":"a"},"timeoutMillis":5000}}"#)
        .await;
    assert_error(&sidecar.host.recv().await, &json!(2), Reason::InvalidParams);
    sidecar
        .host
        .send(r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"extension/intercept","params":{}}"#)
        .await;
    sidecar.host.output_ends().await;
    let err = sidecar.outcome().await.unwrap_err();
    assert_eq!(err.reason(), Some(Reason::ProtocolError), "{err}");
}

#[tokio::test]
async fn malformed_requests_are_rejected_before_any_handler_runs() {
    // Checklist 8 and 9.
    let (extension, calls) = counting();
    let mut sidecar = ready(extension).await;
    let params = intercept("input.receive", 1, json!({"text": "a"}), 5000);
    let host = &mut sidecar.host;
    host.send_json(&json!({"id": 2, "method": "extension/intercept", "params": params}))
        .await;
    assert_error(&host.recv().await, &json!(2), Reason::ProtocolError);
    host.send_json(
        &json!({"jsonrpc": "1.0", "id": 3, "method": "extension/intercept", "params": params}),
    )
    .await;
    assert_error(&host.recv().await, &json!(3), Reason::ProtocolError);
    host.send_json(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "extension/intercept", "params": [1]}),
    )
    .await;
    assert_error(&host.recv().await, &json!(4), Reason::ProtocolError);
    for id in [r#"{"a":1}"#, "1.0", "1e3", "null", "true", "[1]"] {
        host.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"extension/intercept","params":{params}}}"#
        ))
        .await;
        assert_error(&host.recv().await, &json!(null), Reason::ProtocolError);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    sidecar.finish().await;
}

#[tokio::test]
async fn valid_ids_are_echoed_byte_for_byte() {
    // Checklist 9 and 10.
    let mut sidecar = ready(samples::starter()).await;
    let params = intercept("input.receive", 1, json!({"text": "a"}), 5000);
    for id in [
        "-5",
        "0",
        "18446744073709551616",
        r#""req-\u00e9""#,
        r#""""#,
    ] {
        sidecar
            .host
            .send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"extension/intercept","params":{params}}}"#
            ))
            .await;
        let text = sidecar.host.recv_text().await;
        assert!(text.contains(&format!(r#""id":{id}"#)), "{id}: {text}");
        assert!(text.contains(r#""decision":"continue""#), "{text}");
    }
    sidecar.finish().await;
}

#[tokio::test]
async fn a_reused_pending_id_is_refused_and_the_first_still_answered() {
    // Checklist 11.
    let release = Arc::new(Notify::new());
    let gate = Arc::clone(&release);
    let extension =
        Extension::new("x", "1").on_intercept(point::INPUT_RECEIVE, move |_, _: InputPayload| {
            let gate = Arc::clone(&gate);
            async move {
                gate.notified().await;
                Ok(Decision::block("first"))
            }
        });
    let mut sidecar = ready(extension).await;
    let params = intercept("input.receive", 1, json!({"text": "a"}), 60_000);
    let request =
        json!({"jsonrpc": "2.0", "id": 7, "method": "extension/intercept", "params": params});
    sidecar.host.send_json(&request).await;
    sidecar.host.send_json(&request).await;
    assert_error(&sidecar.host.recv().await, &json!(7), Reason::ProtocolError);
    release.notify_one();
    let answer = sidecar.host.recv().await;
    assert_eq!(answer["id"], 7);
    assert_eq!(
        answer["result"],
        json!({"decision": "block", "reason": "first"})
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn notifications_and_stray_responses_are_never_answered() {
    // Checklist 12.
    let mut sidecar = ready(samples::starter()).await;
    let host = &mut sidecar.host;
    host.send(r#"{"method":"extension/event","params":{}}"#)
        .await;
    host.send(r#"{"jsonrpc":"2.0","method":"nope/nothing","params":{}}"#)
        .await;
    host.send(r#"{"jsonrpc":"2.0","method":"extension/event","params":{"event":"nope"}}"#)
        .await;
    host.send(r#"{"jsonrpc":"2.0","method":"extension/intercept","params":{}}"#)
        .await;
    host.send(r#"{"jsonrpc":"2.0","id":99,"result":{"accepted":true}}"#)
        .await;
    host.send(r#"{"jsonrpc":"2.0","id":98,"error":{"code":1}}"#)
        .await;
    host.silent().await;
    let params = intercept("input.receive", 1, json!({"text": "starter: b"}), 5000);
    let answer = host.call(2, "extension/intercept", params).await;
    assert_eq!(
        answer["result"]["replacement"]["text"],
        "b [rewritten by starter-extension]"
    );
    sidecar.finish().await;
}

#[tokio::test]
async fn unregistered_methods_are_unknown_method_even_with_bad_params() {
    // Checklist 13: wrong direction, notification-only, unknown. (The provider requests are
    // registered: `provider::provider_requests_follow_the_dispatch_order` holds them.)
    let methods = [
        "host/ui/publish",
        "host/content/read",
        "extension/initialized",
        "extension/event",
        "extension/provider/stream/chunk",
        "nope/nothing",
    ];
    let mut sidecar = Sidecar::start(samples::starter());
    let mut id = 100;
    let mut check_all = async |sidecar: &mut Sidecar| {
        for method in methods {
            id += 1;
            let answer = sidecar.host.call(id, method, json!({"bad": [1.5]})).await;
            assert_error(&answer, &json!(id), Reason::UnknownMethod);
        }
    };
    check_all(&mut sidecar).await;
    sidecar.host.initialize(&[], &[]).await;
    check_all(&mut sidecar).await;
    sidecar
        .host
        .notify("extension/initialized", json!({}))
        .await;
    check_all(&mut sidecar).await;
    sidecar
        .host
        .call(2, "extension/shutdown", json!({"timeoutMillis": 1000}))
        .await;
    check_all(&mut sidecar).await;
    sidecar.finish().await;
}

#[tokio::test]
async fn params_that_fail_strict_decoding_are_invalid_params() {
    // Checklist 20.
    let (extension, calls) = counting();
    let extension = extension
        .on_action("go", "Go", |_, _| async {
            Ok(sidewire_ext_sdk::protocol::UiActionResult {
                accepted: true,
                message: String::new(),
            })
        })
        .on_submit(|_, _| async {
            Ok(sidewire_ext_sdk::protocol::UiSubmitResult { accepted: true })
        });
    let mut sidecar = ready(extension).await;
    let good = intercept("input.receive", 1, json!({"text": "a"}), 5000);
    let mut cases = Vec::new();
    let mut unknown = good.clone();
    unknown["extra"] = json!(1);
    cases.push(("extension/intercept", unknown));
    let mut nested = good.clone();
    nested["payload"]["extra"] = json!(1);
    cases.push(("extension/intercept", nested));
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("seq");
    cases.push(("extension/intercept", missing));
    let mut null = good.clone();
    null["payload"]["text"] = json!(null);
    cases.push(("extension/intercept", null));
    let mut fraction = good.clone();
    fraction["seq"] = json!(1.5);
    cases.push(("extension/intercept", fraction));
    let mut zero = good.clone();
    zero["timeoutMillis"] = json!(0);
    cases.push(("extension/intercept", zero));
    cases.push((
        "extension/ui/action",
        json!({"actionId": "go", "sessionId": "\u{3000}", "generation": 1}),
    ));
    cases.push((
        "extension/ui/action",
        json!({"actionId": "Bad.Id", "sessionId": "s-1", "generation": 1}),
    ));
    cases.push((
        "extension/ui/submit",
        json!({"surfaceId": "f", "sessionId": "s-1", "generation": 1}),
    ));
    cases.push(("extension/shutdown", json!({"timeoutMillis": "5"})));
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let id = 10 + 2 * i as u64;
        let answer = sidecar.host.call(id, method, params.clone()).await;
        assert_error(&answer, &json!(id), Reason::InvalidParams);
        // In the order hosts write, which must be judged the same.
        let answer = sidecar
            .host
            .call_as_a_host_writes(id + 1, method, params.clone())
            .await;
        assert_error(&answer, &json!(id + 1), Reason::InvalidParams);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    // The good one, both ways.
    let answer = sidecar
        .host
        .call(90, "extension/intercept", good.clone())
        .await;
    assert_eq!(answer["result"]["decision"], "continue", "{answer}");
    let answer = sidecar
        .host
        .call_as_a_host_writes(91, "extension/intercept", good)
        .await;
    assert_eq!(answer["result"]["decision"], "continue", "{answer}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    sidecar.finish().await;
}
