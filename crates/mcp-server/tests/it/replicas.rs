//! Replicas given one `SealingKey` behind a load balancer: a legacy session opened on one is
//! taken over by another, with what its client said at `initialize`; a modern request's
//! cursor made by one is good on the other. Without the key, or with another, neither holds.

use serde_json::json;
use sidewire_mcp_server::http::{HttpConfig, HttpServer};
use sidewire_mcp_server::{Limits, SealingKey, Server};

use crate::support::{ACCEPT, JSON, Probe, exchange, session};

async fn replica(key: Option<&SealingKey>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = match key {
        Some(key) => Server::with_sealing_key(Probe::default(), Limits::default(), key.clone()),
        None => Server::new(Probe::default()),
    };
    let server = HttpServer::new(server, HttpConfig::default());
    tokio::spawn(async move { server.serve(listener).await });
    url
}

async fn echo_in(url: &str, id: &str) -> (u16, serde_json::Value) {
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "moved"}}});
    let reply = exchange(
        url,
        "POST",
        &[
            JSON,
            ACCEPT,
            ("mcp-session-id", id),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        &body.to_string(),
    )
    .await;
    (reply.status, reply.json())
}

#[tokio::test]
async fn a_legacy_session_moves_between_replicas_that_share_the_key() {
    let key = SealingKey::from_bytes(&[42; 32]).unwrap();
    let (a, b) = (replica(Some(&key)).await, replica(Some(&key)).await);
    let id = session(&a).await;
    assert!(id.is_ascii() && !id.contains(char::is_whitespace), "{id}");
    let (status, answer) = echo_in(&b, &id).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "moved", "{answer}");
    // The replica that took it over keeps it; the first still has it too.
    assert_eq!(echo_in(&b, &id).await.0, 200);
    assert_eq!(echo_in(&a, &id).await.0, 200);

    // A replica with another key, or none, does not know the session.
    let other = SealingKey::from_bytes(&[7; 32]).unwrap();
    assert_eq!(echo_in(&replica(Some(&other)).await, &id).await.0, 404);
    assert_eq!(echo_in(&replica(None).await, &id).await.0, 404);
    // An id changed by one byte is no session.
    let mut forged = id.clone().into_bytes();
    forged[3] = if forged[3] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    assert_eq!(echo_in(&b, &forged).await.0, 404);
}

#[tokio::test]
async fn without_a_key_session_ids_stay_random_and_local() {
    let (a, b) = (replica(None).await, replica(None).await);
    let id = session(&a).await;
    assert_eq!(id.len(), 32, "{id}");
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(echo_in(&b, &id).await.0, 404);
    assert_eq!(echo_in(&a, &id).await.0, 200);
}
