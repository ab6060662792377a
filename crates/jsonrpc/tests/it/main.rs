//! Two peers over in-memory pipes, and one peer against a scripted raw end: the public API's
//! behaviour under load, cancellation, failure and abuse.

mod support;
mod text;
mod writer;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use sidewire_jsonrpc::{
    Activity, CallOptions, Cancelled, CloseReason, Error, ErrorObject, GarbagePolicy,
    HookNotification, Hooks, Id, LocalError, Router,
};
use support::*;

#[tokio::test]
async fn typed_round_trip_both_ways_at_once() {
    let (a, _ta, b, _tb) = pair((strict(), router(None)), (strict(), router(None)));
    let (x, y) = tokio::join!(
        a.request::<Add>(&AddParams { a: 2, b: 3 }),
        b.request::<Add>(&AddParams { a: 10, b: -4 })
    );
    assert_eq!(x.unwrap(), 5);
    assert_eq!(y.unwrap(), 6);
    // Many in both directions, interleaved.
    let mut calls = Vec::new();
    for i in 0..200i64 {
        let (from, _) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let from = from.clone();
        calls.push(tokio::spawn(async move {
            from.request::<Add>(&AddParams { a: i, b: 1 }).await
        }));
    }
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap(), i as i64 + 1);
    }
    assert_eq!(a.pending_requests(), 0);
    assert_eq!(b.pending_requests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_requests() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let calls: Vec<_> = (0..10_000i64)
        .map(|i| {
            let a = a.clone();
            tokio::spawn(async move { a.request::<Add>(&AddParams { a: i, b: i }).await })
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let sum = within("a response", call).await.unwrap().unwrap();
        assert_eq!(sum, 2 * i as i64);
    }
    assert_eq!(a.pending_requests(), 0);
}

#[tokio::test]
async fn handlers_awaiting_their_own_calls_do_not_deadlock() {
    // 32 handlers on B (its whole concurrency limit) each call back into A before answering;
    // A's responses must still be routed while B's slots are all taken.
    let (a, _ta, _b, _tb) = pair((strict(), router(None)), (strict(), router(None)));
    let calls: Vec<_> = (0..32)
        .map(|i| {
            let a = a.clone();
            tokio::spawn(async move { a.request::<CallBack>(&json!({ "n": i })).await })
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(
            within("a callback", call).await.unwrap().unwrap(),
            json!({ "n": i })
        );
    }
}

#[tokio::test]
async fn unknown_method_is_32601_and_bad_params_32602() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let err = a
        .call("no/such", Some(&json!({})), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.remote().unwrap().code, ErrorObject::METHOD_NOT_FOUND);
    let err = a
        .call(
            Add::METHOD_NAME,
            Some(&json!({"a": "x"})),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.remote().unwrap().code, ErrorObject::INVALID_PARAMS);
}

trait MethodName {
    const METHOD_NAME: &'static str;
}
impl<R: sidewire_jsonrpc::Request> MethodName for R {
    const METHOD_NAME: &'static str = R::METHOD;
}

#[tokio::test]
async fn a_panicking_handler_is_answered_32603_and_the_peer_keeps_serving() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let err = a.request::<Panic>(&json!({})).await.unwrap_err();
    assert_eq!(err.remote().unwrap().code, ErrorObject::INTERNAL_ERROR);
    assert_eq!(
        a.request::<Add>(&AddParams { a: 1, b: 1 }).await.unwrap(),
        2
    );
}

#[tokio::test]
async fn notifications_arrive_in_order() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(Some(tx))));
    for i in 0..1000u64 {
        a.notify::<Note>(&Seq { n: i }).await.unwrap();
    }
    for i in 0..1000u64 {
        assert_eq!(within("a notification", rx.recv()).await, Some(i));
    }
}

#[tokio::test]
async fn timeout_removes_the_pending_entry_and_late_responses_are_counted() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let err = a
        .request_with::<Sleep>(
            &Ms { ms: 200 },
            CallOptions::timeout(Duration::from_millis(20)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(a.pending_requests(), 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(a.stats().late_responses, 1);
    assert_eq!(
        a.request::<Add>(&AddParams { a: 1, b: 2 }).await.unwrap(),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn request_deadlines_follow_a_paused_clock() {
    // Deadlines are on tokio's clock: a paused clock auto-advances to them at once. On std's
    // clock the driver would spin until 20 s of real time had passed, and fail the assert.
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let started = std::time::Instant::now();
    let err = a
        .request_with::<Sleep>(
            &Ms { ms: 60_000 },
            CallOptions::timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[derive(Default)]
struct RecordingHooks {
    /// Each cancel: the method, whether it timed out, whether it was the idle timeout.
    cancelled: Arc<std::sync::Mutex<Vec<(String, bool, bool)>>>,
}

impl Hooks for RecordingHooks {
    fn error_data(&self, kind: LocalError) -> Option<Value> {
        Some(json!({ "reason": format!("{kind:?}"), "retryable": false }))
    }

    fn on_cancel(&self, cancelled: Cancelled<'_>) -> Option<HookNotification> {
        self.cancelled.lock().unwrap().push((
            cancelled.method.to_owned(),
            cancelled.timed_out,
            cancelled.idle,
        ));
        Some(HookNotification {
            method: "test/cancelled".into(),
            params: json!({ "requestId": cancelled.id }),
        })
    }
}

#[tokio::test]
async fn dropping_a_call_cancels_it_and_runs_the_hook() {
    let hooks = RecordingHooks::default();
    let cancelled = Arc::clone(&hooks.cancelled);
    let (peer, _task, mut raw) = with_raw(strict().hooks(hooks), Router::new());
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request::<Echo>(&json!(1)).await })
    };
    let request = raw.recv().await;
    assert_eq!(request["method"], "test/echo");
    assert_eq!(peer.pending_requests(), 1);
    call.abort();
    let _ = call.await;
    assert_eq!(peer.pending_requests(), 0);
    let notice = raw.recv().await;
    assert_eq!(notice["method"], "test/cancelled");
    assert_eq!(notice["params"]["requestId"], request["id"]);
    assert_eq!(
        cancelled.lock().unwrap().as_slice(),
        &[("test/echo".to_owned(), false, false)]
    );
    // The late answer is dropped and counted.
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":1}}"#,
        request["id"]
    ))
    .await;
    within("the late response to be counted", async {
        while peer.stats().late_responses == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

/// The cause a test's owner fails a request with.
#[derive(Debug, thiserror::Error)]
#[error("the transport gave up on it")]
struct Undeliverable;

/// Calls `test/echo` on a task of its own.
fn spawn_echo(
    peer: &sidewire_jsonrpc::Peer,
    value: Value,
) -> tokio::task::JoinHandle<Result<Value, sidewire_jsonrpc::Error>> {
    let peer = peer.clone();
    tokio::spawn(async move { peer.request::<Echo>(&value).await })
}

#[tokio::test]
async fn a_request_failed_locally_gets_the_typed_cause_and_its_late_response_is_dropped() {
    let hooks = RecordingHooks::default();
    let cancelled = Arc::clone(&hooks.cancelled);
    let (peer, _task, mut raw) = with_raw(strict().hooks(hooks), Router::new());
    let call = spawn_echo(&peer, json!(1));
    let request = raw.recv().await;
    let id = request["id"].as_i64().expect("our ids are integers");
    assert!(
        !peer.fail_request(&Id::string(&id.to_string()), Box::new(Undeliverable)),
        "a string id never names one of ours"
    );
    assert!(!peer.fail_request(&Id::int(id + 1), Box::new(Undeliverable)));
    assert_eq!(
        peer.pending_requests(),
        1,
        "only its own id fails a request"
    );
    assert!(peer.fail_request(&Id::int(id), Box::new(Undeliverable)));
    assert!(
        !peer.fail_request(&Id::int(id), Box::new(Undeliverable)),
        "failed twice"
    );
    let err = within("the failed call", call).await.unwrap().unwrap_err();
    assert!(err.is_local(), "{err:?}");
    let cause = std::error::Error::source(&err).expect("the cause is the source");
    assert!(cause.downcast_ref::<Undeliverable>().is_some(), "{cause:?}");
    assert_eq!(err.to_string(), "test/echo failed locally");
    assert!(
        cancelled.lock().unwrap().is_empty(),
        "nothing is cancelled on the wire"
    );
    // A response that arrives for it later is late; the next call (answered after it, so
    // the driver has read it) works.
    raw.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":1}}"#))
        .await;
    let next = spawn_echo(&peer, json!(2));
    let second = raw.recv().await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":2}}"#,
        second["id"]
    ))
    .await;
    assert_eq!(
        within("the next call", next).await.unwrap().unwrap(),
        json!(2)
    );
    assert_eq!(peer.stats().late_responses, 1);
    assert_eq!(peer.pending_requests(), 0);
}

#[tokio::test]
async fn timeouts_run_the_cancel_hook_too() {
    let hooks = RecordingHooks::default();
    let cancelled = Arc::clone(&hooks.cancelled);
    let (peer, _task, mut raw) = with_raw(strict().hooks(hooks), Router::new());
    let err = peer
        .request_with::<Echo>(&json!(1), CallOptions::timeout(Duration::from_millis(30)))
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    let _request = raw.recv().await;
    assert_eq!(raw.recv().await["method"], "test/cancelled");
    assert_eq!(
        cancelled.lock().unwrap().as_slice(),
        &[("test/echo".to_owned(), true, false)]
    );
}

#[tokio::test(start_paused = true)]
async fn an_idle_timeout_restarts_with_activity_and_the_cap_still_holds() {
    let hooks = RecordingHooks::default();
    let cancelled = Arc::clone(&hooks.cancelled);
    let (peer, _task, mut raw) = with_raw(strict().hooks(hooks), Router::new());
    let touch_every = |activity: &Activity, times: usize| {
        let activity = activity.clone();
        tokio::spawn(async move {
            for _ in 0..times {
                tokio::time::sleep(Duration::from_millis(500)).await;
                activity.touch();
            }
        })
    };
    // Activity every 500 ms for 5 s keeps a 1 s idle timeout from running out; then silence.
    let activity = peer.activity();
    let _toucher = touch_every(&activity, 10);
    let started = tokio::time::Instant::now();
    let options =
        CallOptions::timeout(Duration::from_secs(20)).with_idle(Duration::from_secs(1), &activity);
    let err = peer
        .request_with::<Echo>(&json!(1), options)
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(
        matches!(err, Error::Timeout { idle: true, after, .. } if after == Duration::from_secs(1)),
        "{err:?}"
    );
    assert!(
        took >= Duration::from_secs(6) && took < Duration::from_millis(6500),
        "{took:?}"
    );
    let _request = raw.recv().await;
    assert_eq!(raw.recv().await["method"], "test/cancelled");
    assert_eq!(peer.pending_requests(), 0);
    // Activity that never stops cannot carry a request past its cap.
    let activity = peer.activity();
    let toucher = touch_every(&activity, usize::MAX);
    let started = tokio::time::Instant::now();
    let options =
        CallOptions::timeout(Duration::from_secs(3)).with_idle(Duration::from_secs(1), &activity);
    let err = peer
        .request_with::<Echo>(&json!(2), options)
        .await
        .unwrap_err();
    let took = started.elapsed();
    toucher.abort();
    assert!(
        matches!(err, Error::Timeout { idle: false, after, .. } if after == Duration::from_secs(3)),
        "{err:?}"
    );
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_millis(3500),
        "{took:?}"
    );
    assert_eq!(
        cancelled.lock().unwrap().as_slice(),
        &[
            ("test/echo".to_owned(), true, true),
            ("test/echo".to_owned(), true, false)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_request_whose_idle_timeout_ran_out_before_it_is_never_sent() {
    let hooks = RecordingHooks::default();
    let cancelled = Arc::clone(&hooks.cancelled);
    let (peer, _task, mut raw) = with_raw(strict().hooks(hooks), Router::new());
    // A later leg of one call, after its caller sat on an answer longer than the idle timeout.
    let activity = peer.activity();
    tokio::time::advance(Duration::from_secs(2)).await;
    let options =
        CallOptions::timeout(Duration::from_secs(20)).with_idle(Duration::from_secs(1), &activity);
    let err = peer
        .request_with::<Echo>(&json!(1), options.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { idle: true, .. }), "{err:?}");
    assert_eq!(peer.pending_requests(), 0);
    // Activity makes the next one go out, and nothing was sent or cancelled before it.
    activity.touch();
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request_with::<Echo>(&json!(2), options).await })
    };
    let request = raw.recv().await;
    assert_eq!(request["params"], json!(2));
    call.abort();
    assert!(cancelled.lock().unwrap().is_empty());
}

#[tokio::test]
async fn generated_errors_carry_the_hook_data() {
    let (_peer, _task, mut raw) =
        with_raw(strict().hooks(RecordingHooks::default()), Router::new());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32601);
    assert_eq!(
        answer["error"]["data"],
        json!({"reason": "MethodNotFound", "retryable": false})
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"nope","params":[]}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32600);
    assert_eq!(answer["error"]["data"]["reason"], "InvalidRequest");
}

#[tokio::test]
async fn strict_rejections_on_the_wire() {
    let (_peer, _task, mut raw) = with_raw(strict(), router(None));
    // An id that is null, fractional or structured is answered with "id": null.
    for bad in ["null", "1.5", "true", "[1]", "{}"] {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{bad},"method":"test/echo","params":{{}}}}"#
        ))
        .await;
        let answer = raw.recv_text().await;
        assert!(answer.contains(r#""id":null"#), "{bad}: {answer}");
        assert!(answer.contains("-32600"), "{answer}");
    }
    // A huge id is echoed byte for byte.
    raw.send(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"test/echo","params":{"a":1}}"#).await;
    assert!(
        raw.recv_text()
            .await
            .starts_with(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"result""#)
    );
    // Array params are -32600, never -32602.
    raw.send(r#"{"jsonrpc":"2.0","id":"p","method":"test/echo","params":[1]}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!("p"), json!(-32600))
    );
    // Malformed without an id: never answered.
    raw.send(r#"{"jsonrpc":"2.0","method":5}"#).await;
    raw.send(r#"{"method":"test/note","params":1}"#).await;
    raw.silent().await;
}

#[tokio::test]
async fn a_reused_pending_id_is_rejected_and_the_first_request_unaffected() {
    let (_peer, _task, mut raw) = with_raw(strict(), router(None));
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"test/sleep","params":{"ms":100}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"test/echo","params":{}}"#)
        .await;
    let first = raw.recv().await;
    assert_eq!(first["error"]["code"], -32600);
    let second = raw.recv().await;
    assert_eq!(second, json!({"jsonrpc": "2.0", "id": 9, "result": 100}));
}

#[tokio::test]
async fn strict_garbage_is_fatal_and_the_reason_sticks() {
    for garbage in [
        "not json",
        "",
        "[]",
        "\u{feff}{}",
        r#"{"jsonrpc":"2.0","method":"a","method":"b"}"#,
    ] {
        let (peer, task, mut raw) = with_raw(strict(), router(None));
        let call = {
            let peer = peer.clone();
            tokio::spawn(async move { peer.request::<Echo>(&json!(1)).await })
        };
        let _ = raw.recv().await;
        raw.send(garbage).await;
        let reason = within("the driver to end", task)
            .await
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(reason, CloseReason::Garbage(_)),
            "{garbage:?}: {reason:?}"
        );
        let err = call.await.unwrap().unwrap_err();
        assert_eq!(err.close_reason(), Some(&reason));
        // Later calls fail at once with the same reason.
        let later = peer.request::<Echo>(&json!(2)).await.unwrap_err();
        assert_eq!(later.close_reason(), Some(&reason));
    }
}

#[tokio::test]
async fn lenient_garbage_is_skipped_and_counted() {
    let (peer, _task, mut raw) = with_raw(lenient(), router(None));
    raw.send("Starting server v1.2...").await;
    raw.send("").await;
    raw.send("\u{feff}").await;
    raw.send("[1, 2]").await; // batches are not supported
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/add","params":{"a":1,"b":2}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 3);
    assert_eq!(peer.stats().garbage_frames, 2);
    let _ = GarbagePolicy::Skip;
}

#[tokio::test]
async fn strict_profile_refuses_batches() {
    let (_peer, task, mut raw) = with_raw(strict(), router(None));
    raw.send(r#"[{"jsonrpc":"2.0","id":1,"method":"test/echo"}]"#)
        .await;
    let reason = within("the driver", task).await.unwrap().unwrap_err();
    assert!(matches!(reason, CloseReason::Garbage(_)), "{reason:?}");
}

/// An inbound array (a JSON-RPC batch) is garbage under both profiles: skipped and counted, or
/// fatal, per the garbage policy; nothing answers it and no handler runs.
#[tokio::test]
async fn an_inbound_array_gets_the_strict_answer_under_the_lenient_profile() {
    let array = r#"[{"jsonrpc":"2.0","id":1,"method":"test/add","params":{"a":1,"b":2}}]"#;
    let next = r#"{"jsonrpc":"2.0","id":2,"method":"test/add","params":{"a":2,"b":2}}"#;
    for config in [strict(), lenient()] {
        let skip = config.clone().garbage(GarbagePolicy::Skip);
        let (peer, _task, mut raw) = with_raw(skip, router(None));
        raw.send(array).await;
        raw.send(next).await;
        assert_eq!(raw.recv().await, json!({"jsonrpc":"2.0","id":2,"result":4}));
        assert_eq!(peer.stats().garbage_frames, 1);
        let fatal = config.garbage(GarbagePolicy::Fatal);
        let (_peer, task, mut raw) = with_raw(fatal, router(None));
        raw.send(array).await;
        let reason = within("the driver", task).await.unwrap().unwrap_err();
        assert!(matches!(reason, CloseReason::Garbage(_)), "{reason:?}");
    }
}

#[tokio::test]
async fn oversized_outgoing_frames_fail_locally_and_write_nothing() {
    let (peer, _task, mut raw) = with_raw(strict(), router(None));
    let err = peer
        .request::<Echo>(&json!("y".repeat(CAP)))
        .await
        .unwrap_err();
    assert!(err.is_too_large(), "{err}");
    let err = peer.notify::<Note>(&Seq { n: 1 }).await;
    assert!(err.is_ok());
    let err = peer
        .notify_untyped("test/n", Some(&"z".repeat(CAP)))
        .await
        .unwrap_err();
    assert!(err.is_too_large());
    // Only the small notification was written.
    assert_eq!(raw.recv().await["method"], "test/note");
    raw.silent().await;
}

#[tokio::test]
async fn oversized_responses_become_a_small_32603() {
    let (a, _ta, _b, _tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let err = a.request::<Big>(&Len { n: CAP + 10 }).await.unwrap_err();
    let remote = err.remote().expect("an error response");
    assert_eq!(remote.code, ErrorObject::INTERNAL_ERROR);
    assert_eq!(remote.message, "response exceeds frame size limit");
    // Just under the cap still works.
    let ok = a.request::<Big>(&Len { n: CAP - 100 }).await.unwrap();
    assert_eq!(ok.len(), CAP - 100);
}

#[tokio::test]
async fn strict_oversized_inbound_frame_is_fatal() {
    let (peer, task, mut raw) = with_raw(strict(), router(None));
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request::<Echo>(&json!(1)).await })
    };
    let _ = raw.recv().await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":"{}"}}"#,
        "x".repeat(CAP)
    ))
    .await;
    let reason = within("the driver", task).await.unwrap().unwrap_err();
    assert_eq!(reason, CloseReason::FrameTooLarge { limit: CAP });
    assert_eq!(
        call.await.unwrap().unwrap_err().close_reason(),
        Some(&reason)
    );
}

#[tokio::test]
async fn lenient_oversized_response_fails_only_its_request() {
    let (peer, _task, mut raw) = with_raw(lenient(), router(None));
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let peer = peer.clone();
            tokio::spawn(async move { peer.request::<Echo>(&json!(i)).await })
        })
        .collect();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let request = raw.recv().await;
        ids.push((request["id"].as_u64().unwrap(), request["params"].clone()));
    }
    ids.sort_by_key(|(id, _)| *id);
    // The middle request's answer is too large; the others are fine.
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":"{}"}}"#,
        ids[1].0,
        "x".repeat(CAP)
    ))
    .await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        ids[0].0, ids[0].1
    ))
    .await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        ids[2].0, ids[2].1
    ))
    .await;
    let mut too_large = 0;
    for call in calls {
        match within("a call", call).await.unwrap() {
            Ok(_) => {}
            Err(err) => {
                assert!(
                    matches!(err, sidewire_jsonrpc::Error::ResponseTooLarge { .. }),
                    "{err}"
                );
                too_large += 1;
            }
        }
    }
    assert_eq!(too_large, 1);
    assert_eq!(peer.pending_requests(), 0);
}

/// A response that does not decode (not UTF-8, broken or cut-off JSON) but names its
/// request fails that request at once with the reason; the others, and lines that name no
/// pending request or are the peer's own requests, are skipped as before.
#[tokio::test]
async fn lenient_undecodable_response_fails_the_request_it_names() {
    let (peer, _task, mut raw) = with_raw(lenient(), router(None));
    let calls: Vec<_> = (0..4)
        .map(|i| {
            let peer = peer.clone();
            tokio::spawn(async move { peer.request::<Echo>(&json!(i)).await })
        })
        .collect();
    let mut ids = Vec::new();
    for _ in 0..4 {
        let request = raw.recv().await;
        ids.push((request["id"].as_u64().unwrap(), request["params"].clone()));
    }
    ids.sort_by_key(|(id, _)| *id);
    // Lines that name nothing of ours: skipped, nothing fails.
    raw.send("not json, just a log line").await;
    raw.send(&format!(r#"{{"id":{},"method":"ping","x":}}"#, ids[0].0))
        .await;
    raw.send(r#"{"id":999999,"result":}"#).await;
    let mut broken = format!(r#"{{"jsonrpc":"2.0","id":{},"result":""#, ids[0].0).into_bytes();
    broken.extend_from_slice(b"\xff\xfe\"}");
    raw.send_bytes(&broken).await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"a":1,}}}}"#,
        ids[1].0
    ))
    .await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"text":"cut"#,
        ids[2].0
    ))
    .await;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        ids[3].0, ids[3].1
    ))
    .await;
    let mut outcomes = Vec::new();
    for call in calls {
        outcomes.push(within("a call", call).await.unwrap());
    }
    // `outcomes[i]` is the call that sent params `i`; `ids` is sorted by request id.
    for (k, (_, params)) in ids.iter().enumerate() {
        let outcome = &outcomes[params.as_u64().unwrap() as usize];
        if k < 3 {
            let err = outcome.as_ref().unwrap_err();
            assert!(err.is_invalid_response(), "{err}");
        } else {
            assert_eq!(outcome.as_ref().unwrap(), params);
        }
    }
    assert_eq!(peer.pending_requests(), 0);
    assert_eq!(peer.stats().garbage_frames, 6);
}

#[tokio::test]
async fn peer_death_mid_request_fails_pending_with_eof() {
    let (peer, task, raw) = with_raw(strict(), router(None));
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request::<Echo>(&json!(1)).await })
    };
    let mut raw = raw;
    let _ = raw.recv().await;
    drop(raw);
    let err = within("the call", call).await.unwrap().unwrap_err();
    assert_eq!(err.close_reason(), Some(&CloseReason::Eof));
    assert_eq!(within("the driver", task).await.unwrap(), Ok(()));
    assert_eq!(
        peer.request::<Echo>(&json!(1))
            .await
            .unwrap_err()
            .close_reason(),
        Some(&CloseReason::Eof)
    );
}

#[tokio::test]
async fn a_peer_that_closed_its_input_is_a_hangup_not_an_io_failure() {
    // The far end still writes (its output stays open) but has closed its input, as a process
    // that exited leaves its stdin pipe: the write fails with a broken pipe.
    let (read, _their_write) = tokio::io::duplex(1024);
    let (write, their_read) = tokio::io::duplex(1024);
    drop(their_read);
    let config = strict();
    let (stream, sink) = sidewire_jsonrpc::ndjson(read, write, &config);
    let (peer, driver) = sidewire_jsonrpc::connect(stream, sink, Router::new(), config);
    let task = tokio::spawn(driver);
    let err = within("the call", peer.request::<Echo>(&json!(1)))
        .await
        .unwrap_err();
    assert_eq!(err.close_reason(), Some(&CloseReason::Hangup));
    assert_eq!(
        within("the driver", task).await.unwrap(),
        Err(CloseReason::Hangup)
    );
}

#[tokio::test]
async fn a_peer_that_stops_reading_trips_the_write_stall() {
    // Tiny pipe, nobody reading the far end: writes back up, and the stall bound fails the
    // connection instead of hanging.
    let (ours, _theirs) = tokio::io::duplex(1024);
    let config = strict().write_stall(Duration::from_millis(200));
    let (peer, task) = spawn(ours, config, Router::new());
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request::<Echo>(&json!("w".repeat(8 * 1024))).await })
    };
    let reason = within("the stall", task).await.unwrap().unwrap_err();
    assert_eq!(reason, CloseReason::WriteStall(Duration::from_millis(200)));
    assert!(call.await.unwrap().unwrap_err().is_closed());
}

#[tokio::test]
async fn queue_overflow_is_answered_without_running_a_handler() {
    let started = Arc::new(AtomicUsize::new(0));
    let router = {
        let started = Arc::clone(&started);
        Router::new().request::<Sleep, _, _>(move |p, _| {
            started.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(Duration::from_millis(p.ms)).await;
                Ok(p.ms)
            }
        })
    };
    let config = strict().max_concurrent_requests(2).max_queued_requests(3);
    let (_peer, _task, mut raw) = with_raw(config, router);
    for id in 1..=6 {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"test/sleep","params":{{"ms":300}}}}"#
        ))
        .await;
    }
    // 2 run, 3 wait, the 6th is refused at once.
    let refused = raw.recv().await;
    assert_eq!(refused["id"], 6);
    assert_eq!(refused["error"]["code"], -32603);
    let mut done = Vec::new();
    for _ in 0..5 {
        done.push(raw.recv().await["id"].as_u64().unwrap());
    }
    done.sort_unstable();
    assert_eq!(done, vec![1, 2, 3, 4, 5]);
    assert_eq!(started.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn concurrency_limit_holds_and_the_reader_keeps_routing() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let limited = {
        let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
        Router::new().request::<Sleep, _, _>(move |p, _| {
            let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(p.ms)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(p.ms)
            }
        })
    };
    let (a, _ta, _b, _tb) = pair(
        (strict(), router(None)),
        (strict().max_concurrent_requests(4), limited),
    );
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let a = a.clone();
            tokio::spawn(async move { a.request::<Sleep>(&Ms { ms: 20 }).await })
        })
        .collect();
    for call in calls {
        within("a sleep", call).await.unwrap().unwrap();
    }
    assert_eq!(peak.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn graceful_shutdown_drains_in_flight_work() {
    let (a, _ta, b, tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let slow = {
        let a = a.clone();
        tokio::spawn(async move { a.request::<Sleep>(&Ms { ms: 100 }).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    within("shutdown", b.shutdown(Duration::from_secs(5))).await;
    assert_eq!(within("the slow call", slow).await.unwrap().unwrap(), 100);
    assert_eq!(within("B's driver", tb).await.unwrap(), Ok(()));
    assert_eq!(b.close_reason_if_closed(), Some(CloseReason::ShutDown));
    // A sees B's end of input.
    assert_eq!(within("A closing", a.closed()).await, CloseReason::Eof);
}

#[tokio::test]
async fn shutdown_grace_is_bounded() {
    let (a, _ta, b, tb) = pair((strict(), Router::new()), (strict(), router(None)));
    let slow = {
        let a = a.clone();
        tokio::spawn(async move { a.request::<Sleep>(&Ms { ms: 60_000 }).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    within("shutdown", b.shutdown(Duration::from_millis(50))).await;
    assert_eq!(within("B's driver", tb).await.unwrap(), Ok(()));
    let err = within("the slow call", slow).await.unwrap().unwrap_err();
    assert_eq!(err.close_reason(), Some(&CloseReason::Eof));
}

#[tokio::test]
async fn requests_during_shutdown_are_refused() {
    let (peer, _task, mut raw) = with_raw(strict(), router(None));
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/sleep","params":{"ms":200}}"#)
        .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let shutdown = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.shutdown(Duration::from_secs(5)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"test/echo","params":{}}"#)
        .await;
    let refused = raw.recv().await;
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(2), json!(-32603))
    );
    assert_eq!(raw.recv().await["result"], 200);
    within("shutdown", shutdown).await.unwrap();
}

#[tokio::test]
async fn dropping_the_driver_fails_pending_calls() {
    let (ours, _theirs) = tokio::io::duplex(1024);
    let config = strict();
    let (read, write) = tokio::io::split(ours);
    let (stream, sink) = sidewire_jsonrpc::ndjson(read, write, &config);
    let (peer, driver) = sidewire_jsonrpc::connect(stream, sink, Router::new(), config);
    let task = tokio::spawn(driver);
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request::<Echo>(&json!(1)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    task.abort();
    let err = within("the call", call).await.unwrap().unwrap_err();
    assert_eq!(err.close_reason(), Some(&CloseReason::ShutDown));
}

#[tokio::test]
async fn a_call_waiting_for_queue_room_still_times_out() {
    // Nobody reads the far end: the first 1 MiB frame fills the driver's write high-water
    // mark, the second fills the one-slot queue, and later calls cannot even be queued. Their
    // timeout must still end them, long before the 10 s stall bound.
    let (ours, _theirs) = tokio::io::duplex(64);
    let config =
        sidewire_jsonrpc::Config::new(sidewire_jsonrpc::Profile::Strict, 4 << 20).outbound_queue(1);
    let (peer, _task) = spawn(ours, config, Router::new());
    let blockers: Vec<_> = (0..3)
        .map(|_| {
            let peer = peer.clone();
            tokio::spawn(async move { peer.request::<Echo>(&json!("b".repeat(1 << 20))).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = std::time::Instant::now();
    let err = within(
        "the queued call",
        peer.request_with::<Echo>(&json!(1), CallOptions::timeout(Duration::from_millis(100))),
    )
    .await
    .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    for blocker in blockers {
        blocker.abort();
    }
}

#[tokio::test]
async fn notifications_a_handler_sends_arrive_before_its_response() {
    let router = Router::new().request::<Echo, _, _>(|params, ctx| async move {
        for n in 0..3 {
            ctx.peer()
                .notify::<Note>(&Seq { n })
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?;
        }
        Ok(params)
    });
    let (_peer, _task, mut raw) = with_raw(strict(), router);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/echo","params":{"x":1}}"#)
        .await;
    for n in 0..3 {
        let note = raw.recv().await;
        assert_eq!(note["params"]["n"], n, "{note}");
    }
    assert_eq!(raw.recv().await["result"], json!({"x": 1}));
}

#[tokio::test]
async fn queued_requests_are_bounded_in_bytes_too() {
    // One slot, room for 100 queued requests but only 1,000 bytes of them: the third padded
    // request would go over the bytes and is refused at once, without running.
    let started = Arc::new(AtomicUsize::new(0));
    let router = {
        let started = Arc::clone(&started);
        Router::new().request::<Sleep, _, _>(move |p, _| {
            started.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(Duration::from_millis(p.ms)).await;
                Ok(p.ms)
            }
        })
    };
    let config = strict()
        .max_concurrent_requests(1)
        .max_queued_requests(100)
        .max_queued_request_bytes(1000);
    let (_peer, _task, mut raw) = with_raw(config, router);
    let pad = "p".repeat(350);
    for id in 1..=4 {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"test/sleep","params":{{"ms":200,"pad":"{pad}"}}}}"#
        ))
        .await;
    }
    // 1 runs, 2 and 3 wait (about 800 bytes), the 4th would make about 1,200 and is refused.
    let refused = raw.recv().await;
    assert_eq!(refused["id"], 4);
    assert_eq!(refused["error"]["code"], -32603);
    let mut done = Vec::new();
    for _ in 0..3 {
        done.push(raw.recv().await["id"].as_u64().unwrap());
    }
    done.sort_unstable();
    assert_eq!(done, vec![1, 2, 3]);
    // The bytes were given back: the queue takes as much again.
    for id in 5..=7 {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"test/sleep","params":{{"ms":50,"pad":"{pad}"}}}}"#
        ))
        .await;
    }
    let mut done = Vec::new();
    for _ in 0..3 {
        let answer = raw.recv().await;
        assert!(answer.get("result").is_some(), "{answer}");
        done.push(answer["id"].as_u64().unwrap());
    }
    done.sort_unstable();
    assert_eq!(done, vec![5, 6, 7]);
    assert_eq!(started.load(Ordering::SeqCst), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_notifications_never_delay_a_request() {
    // A 16 KiB pipe whose far end does not read yet, and a flood of 8 KiB background
    // notifications: a request sent after the flood is written after at most the frames the
    // pipe, the sink's 64 KiB buffer and the background low-water mark hold, not after all
    // 200 of them.
    let (ours, theirs) = tokio::io::duplex(16 * 1024);
    let (peer, _task) = spawn(ours, strict(), Router::new());
    let (read, write) = tokio::io::split(theirs);
    let mut raw = Raw {
        lines: sidewire_framing::FrameReader::new(
            read,
            sidewire_framing::NdjsonCodec::new(CAP, sidewire_framing::Oversize::Terminate),
        ),
        write,
    };
    const FLOOD: u64 = 200;
    let (twenty, mut queued) = tokio::sync::mpsc::channel(1);
    let flood = {
        let peer = peer.clone();
        tokio::spawn(async move {
            let pad = "n".repeat(8 * 1024);
            for n in 0..FLOOD {
                peer.notify_background("test/note", Some(&json!({"n": n, "pad": pad})))
                    .await
                    .unwrap();
                if n == 20 {
                    twenty.send(()).await.unwrap();
                }
            }
            // Everything above is handed to the writer before a frame sent after this.
            peer.background_flushed().await.unwrap();
            peer.notify_untyped("test/after", Some(&json!({})))
                .await
                .unwrap();
        })
    };
    within("the flood to back up", queued.recv()).await.unwrap();
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request::<Echo>(&json!("urgent")).await })
    };
    // The request is queued once its frame reached the handles' queue; wait for that from the
    // writer side by reading, which is what lets everything move.
    let mut notes = Vec::new();
    let mut request_at = None;
    loop {
        let frame = raw.recv().await;
        match frame["method"].as_str() {
            Some("test/note") => notes.push(frame["params"]["n"].as_u64().unwrap()),
            Some("test/echo") => {
                request_at = Some(notes.len());
                raw.send(&json!({"jsonrpc":"2.0","id":frame["id"],"result":"urgent"}).to_string())
                    .await;
            }
            Some("test/after") => break,
            other => panic!("unexpected frame {other:?}"),
        }
    }
    let request_at = request_at.expect("the request was written");
    assert!(
        request_at < 60,
        "the request waited behind {request_at} background frames"
    );
    assert_eq!(within("the call", call).await.unwrap().unwrap(), "urgent");
    assert_eq!(
        notes,
        (0..FLOOD).collect::<Vec<_>>(),
        "background frames keep their order"
    );
    within("the flood task", flood).await.unwrap();
}

/// A handler that answers `None` sends nothing, and its id is free again; `Some` answers as
/// usual.
#[tokio::test]
async fn a_silenced_request_gets_no_response_and_frees_its_id() {
    let router = Router::new().request_or_silence::<Echo, _, _>(|params: Value, _| async move {
        (params != json!(["hush"])).then_some(Ok(params))
    });
    let (_peer, _task, mut raw) = with_raw(lenient(), router);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/echo","params":["hush"]}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"test/echo","params":["two"]}"#)
        .await;
    // The first frame back answers the second request: the first got nothing.
    let answer = raw.recv().await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 2, "result": ["two"]})
    );
    // Its id is free again.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"test/echo","params":["again"]}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": ["again"]})
    );
    raw.silent().await;
}
