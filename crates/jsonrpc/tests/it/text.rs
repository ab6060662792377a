//! The quick way in for a request in the canonical shape, through `Router::request_text`, and
//! the usual way for everything it does not take (and for every response).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use sidewire_jsonrpc::{CloseReason, ErrorObject, Router};

use crate::support::{strict, with_raw};

/// How often each way in ran, and the params text the reader was given last.
#[derive(Default)]
struct Ways {
    read: AtomicUsize,
    decode: AtomicUsize,
    seen: std::sync::Mutex<String>,
}

/// `test/sum` with params `{"a":<int>,"b":<int>}`: the reader takes only `{"a":..,"b":..}` in
/// that order (and panics on `"panic"`), the usual way takes any order and words the error.
fn router(ways: &Arc<Ways>) -> Router {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Sum {
        a: i64,
        b: i64,
    }
    let (read, decode) = (Arc::clone(ways), Arc::clone(ways));
    Router::new().request_text(
        "test/sum",
        move |text: &str, _| {
            read.read.fetch_add(1, Ordering::SeqCst);
            *read.seen.lock().unwrap() = text.to_owned();
            assert!(!text.contains("panic"), "the reader panics on purpose");
            if text.find("\"a\"")? > text.find("\"b\"")? {
                return None;
            }
            let sum: Sum = serde_json::from_str(text).ok()?;
            Some(std::future::ready(Ok::<_, ErrorObject>(sum.a + sum.b)))
        },
        move |params, _| {
            decode.decode.fetch_add(1, Ordering::SeqCst);
            let text = params.map_or("{}", |p| p.get());
            let sum: Sum = serde_json::from_str(text)
                .map_err(|err| ErrorObject::invalid_params(err.to_string()))?;
            Ok(std::future::ready(Ok(sum.a + sum.b)))
        },
    )
}

/// A strict peer serving [`router`], its far end scripted by the test.
fn serve() -> (Arc<Ways>, crate::support::Task, crate::support::Raw) {
    let ways = Arc::new(Ways::default());
    let (_peer, task, raw) = with_raw(strict(), router(&ways));
    (ways, task, raw)
}

fn counts(ways: &Ways) -> (usize, usize) {
    (
        ways.read.load(Ordering::SeqCst),
        ways.decode.load(Ordering::SeqCst),
    )
}

#[tokio::test]
async fn a_canonical_frame_is_read_once_by_the_reader() {
    let (ways, _task, mut raw) = serve();
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"test/sum","params": {"a":2,"b":3} }"#)
        .await;
    assert_eq!(raw.recv().await, json!({"jsonrpc":"2.0","id":7,"result":5}));
    assert_eq!(counts(&ways), (1, 0));
    // The reader got the params' text, whitespace around it included, and nothing else.
    assert_eq!(*ways.seen.lock().unwrap(), r#" {"a":2,"b":3} "#);
}

#[tokio::test]
async fn every_other_shape_takes_the_usual_way() {
    let (ways, _task, mut raw) = serve();
    for (frame, id) in [
        // Members in another order, a string id, whitespace outside the params, an escaped
        // method, a member more.
        (
            r#"{"jsonrpc":"2.0","method":"test/sum","id":1,"params":{"a":2,"b":3}}"#,
            json!(1),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"s","method":"test/sum","params":{"a":2,"b":3}}"#,
            json!("s"),
        ),
        (
            r#"{"jsonrpc": "2.0","id":2,"method":"test/sum","params":{"a":2,"b":3}}"#,
            json!(2),
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"test\/sum","params":{"a":2,"b":3}}"#,
            json!(3),
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"test/sum","params":{"a":2,"b":3},"x":1}"#,
            json!(4),
        ),
    ] {
        raw.send(frame).await;
        assert_eq!(
            raw.recv().await,
            json!({"jsonrpc":"2.0","id":id,"result":5}),
            "{frame}"
        );
    }
    // A member after the params looks like more params until they are read: the reader
    // cannot read them as one value and declines; nothing else reached it.
    assert_eq!(counts(&ways), (1, 5));
}

#[tokio::test]
async fn a_declined_frame_gets_the_usual_verdict() {
    let (ways, _task, mut raw) = serve();
    // The reader declines other orders; the usual way accepts them.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/sum","params":{"b":3,"a":2}}"#)
        .await;
    assert_eq!(raw.recv().await, json!({"jsonrpc":"2.0","id":1,"result":5}));
    // Params the usual way refuses are its `-32602` (the reader only ever declines).
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"test/sum","params":{"a":2}}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], ErrorObject::INVALID_PARAMS);
    assert_eq!(counts(&ways), (2, 2));
}

#[tokio::test]
async fn params_that_are_not_json_make_the_frame_garbage_as_before() {
    let (ways, task, mut raw) = serve();
    // A frame whose params never end, or that has more after them, is not JSON: fatal under
    // the strict profile, whichever way it came in.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/sum","params":{"a":2,"b":3}}}"#)
        .await;
    let closed = crate::support::within("the driver ends", task)
        .await
        .unwrap();
    assert!(matches!(closed, Err(CloseReason::Garbage(_))), "{closed:?}");
    assert_eq!(counts(&ways), (1, 0));
}

#[tokio::test]
async fn a_panicking_reader_is_answered_32603_and_the_peer_keeps_serving() {
    let (ways, _task, mut raw) = serve();
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/sum","params":{"panic":1}}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(1), json!(ErrorObject::INTERNAL_ERROR))
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"test/sum","params":{"a":1,"b":1}}"#)
        .await;
    assert_eq!(raw.recv().await, json!({"jsonrpc":"2.0","id":2,"result":2}));
    // The panic was answered where it happened: the usual way did not run it again.
    assert_eq!(counts(&ways), (2, 0));
}

#[tokio::test]
async fn refusals_are_worded_by_the_usual_way() {
    let (ways, _task, mut raw) = serve();
    // Another method with the canonical shape and no reader: -32601 as ever.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/none","params":{}}"#)
        .await;
    assert_eq!(
        raw.recv().await["error"]["code"],
        ErrorObject::METHOD_NOT_FOUND
    );
    assert_eq!(counts(&ways), (0, 0));
}

#[tokio::test]
async fn a_canonical_response_is_delivered_and_one_with_more_members_is_judged_as_before() {
    let (peer, _task, mut raw) = with_raw(strict(), Router::new());
    for (answer, ok) in [
        // The canonical shape, whitespace around the result: the result, trimmed.
        (
            r#"{"jsonrpc":"2.0","id":ID,"result": {"a":[1,"}"]} }"#,
            true,
        ),
        // A result and an error: the canonical shape until the result is read; the usual
        // way finds both and fails the call.
        (
            r#"{"jsonrpc":"2.0","id":ID,"result":1,"error":{"code":1,"message":"m"}}"#,
            false,
        ),
    ] {
        let call = {
            let peer = peer.clone();
            tokio::spawn(async move {
                let options = sidewire_jsonrpc::CallOptions::default();
                let raw = peer.call("m", Some(&json!({})), options).await?;
                Ok::<_, sidewire_jsonrpc::Error>(raw.get().to_owned())
            })
        };
        let id = raw.recv().await["id"].clone();
        raw.send(&answer.replace("ID", &id.to_string())).await;
        let outcome = crate::support::within("the call", call).await.unwrap();
        if ok {
            assert_eq!(outcome.unwrap(), r#"{"a":[1,"}"]}"#);
        } else {
            assert!(outcome.unwrap_err().is_invalid_response());
        }
    }
}
