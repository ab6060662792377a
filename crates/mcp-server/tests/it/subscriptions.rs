//! `Handler::subscription_changed`: told once per change of a session's subscriptions, and of
//! each one left when the session ends.

use serde_json::json;
use sidewire_mcp_server::Limits;

use crate::support::{Raw, within};

fn subscribe(id: i64, method: &str, uri: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"uri": uri}})
}

#[tokio::test]
async fn the_handler_is_told_each_change_of_a_sessions_subscriptions_and_its_end() {
    let (mut raw, server) = Raw::start(Limits::default());
    let told = std::sync::Arc::clone(&server.handler().subscriptions);
    raw.initialize().await;
    let steps = [
        ("resources/subscribe", "r://a"),
        // Again: already subscribed, nothing changes.
        ("resources/subscribe", "r://a"),
        ("resources/subscribe", "r://b"),
        ("resources/unsubscribe", "r://a"),
        // Not subscribed: nothing changes.
        ("resources/unsubscribe", "r://c"),
    ];
    for (id, (method, uri)) in (1..).zip(steps) {
        raw.send(subscribe(id, method, uri)).await;
        let answer = raw.answer(json!(id)).await;
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    assert_eq!(
        *told.lock().unwrap(),
        [
            ("r://a".to_owned(), true),
            ("r://b".to_owned(), true),
            ("r://a".to_owned(), false)
        ]
    );
    // The client goes away: its remaining subscription ends.
    drop(raw);
    within("the session's end", async {
        while told.lock().unwrap().len() < 4 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(told.lock().unwrap()[3], ("r://b".to_owned(), false));
}

#[tokio::test]
async fn a_modern_listen_tells_the_handler_of_its_resources_as_it_opens_and_ends() {
    let (mut raw, server) = Raw::start(Limits::default());
    let told = std::sync::Arc::clone(&server.handler().subscriptions);
    raw.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": crate::support::modern_meta(), "notifications":
            {"resourceSubscriptions": ["r://a", "r://a", "r://b"]}}}),
    )
    .await;
    let ack = raw.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        *told.lock().unwrap(),
        [("r://a".to_owned(), true), ("r://b".to_owned(), true)]
    );
    // The client cancels the listen: each resource is told as ended.
    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}}),
    )
    .await;
    within("the listen's end", async {
        while told.lock().unwrap().len() < 4 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(
        told.lock().unwrap()[2..],
        [("r://a".to_owned(), false), ("r://b".to_owned(), false)]
    );
}
