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
