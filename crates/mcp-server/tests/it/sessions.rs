//! `HandlerContext::session` and `Handler::session_ended`: every request of one legacy session
//! (or one stdio connection) carries the same key, two sessions never share one, a modern
//! HTTP request has none, and the handler hears once of each session's end.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sidewire_mcp_server::http::{HttpConfig, HttpServer};
use sidewire_mcp_server::{Limits, Server, SessionKey};

use crate::support::{ACCEPT, JSON, Probe, Raw, exchange, modern_meta, session, within};

type Ended = Arc<Mutex<Vec<SessionKey>>>;

async fn serve_http() -> (String, Ended) {
    let ended = Ended::default();
    let probe = Probe {
        ended: Arc::clone(&ended),
        ..Probe::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = HttpServer::new(Server::new(probe), HttpConfig::default());
    tokio::spawn(async move { server.serve(listener).await });
    (url, ended)
}

fn whoami(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "whoami", "arguments": {}}})
}

async fn whoami_in(url: &str, session: &str) -> String {
    let reply = exchange(
        url,
        "POST",
        &[
            JSON,
            ACCEPT,
            ("mcp-session-id", session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        &whoami(1).to_string(),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    text(&reply.json())
}

fn text(answer: &Value) -> String {
    let text = answer["result"]["content"][0]["text"].as_str();
    text.unwrap_or_else(|| panic!("no text: {answer}"))
        .to_owned()
}

/// Waits until `ended` holds `count` keys (the end is told on the transport's task).
async fn ended_count(ended: &Ended, count: usize) -> Vec<SessionKey> {
    within("the session's end told", async {
        loop {
            let now = ended.lock().unwrap().clone();
            if now.len() >= count {
                return now;
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
}

#[tokio::test]
async fn each_legacy_http_session_has_its_own_key_and_its_end_is_told_once() {
    let (url, ended) = serve_http().await;
    let (a, b) = (session(&url).await, session(&url).await);
    let first = whoami_in(&url, &a).await;
    assert!(first.starts_with("Some(SessionKey("), "{first}");
    assert_eq!(whoami_in(&url, &a).await, first, "one session, one key");
    let other = whoami_in(&url, &b).await;
    assert!(other.starts_with("Some("), "{other}");
    assert_ne!(other, first, "two sessions, two keys");

    // A modern request belongs to no session.
    let mut modern = whoami(2);
    modern["params"]["_meta"] = modern_meta();
    let reply = exchange(
        &url,
        "POST",
        &[
            JSON,
            ACCEPT,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "whoami"),
        ],
        &modern.to_string(),
    )
    .await;
    assert_eq!(text(&reply.json()), "None", "{}", reply.body);

    assert!(ended.lock().unwrap().is_empty());
    let deleted = exchange(&url, "DELETE", &[("mcp-session-id", &a)], "").await;
    assert_eq!(deleted.status, 200);
    let told = ended_count(&ended, 1).await;
    assert_eq!(
        format!("Some({:?})", told[0]),
        first,
        "the ended session is a's"
    );
    // b goes on, and its end was not told.
    assert_eq!(whoami_in(&url, &b).await, other);
    assert_eq!(ended.lock().unwrap().len(), 1, "told once, for a only");
}

#[tokio::test]
async fn a_stdio_connection_is_one_session_in_either_era_and_its_end_is_told() {
    let ended = Ended::default();
    let probe = Probe {
        ended: Arc::clone(&ended),
        ..Probe::default()
    };
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let server = Server::with_limits(probe, Limits::default());
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let _ = server.serve_stdio(read, write).await;
    });
    let (read, write) = tokio::io::split(client);
    let mut raw = Raw {
        reader: tokio::io::BufReader::new(read),
        writer: write,
    };
    raw.initialize().await;
    raw.send(whoami(1)).await;
    let legacy = text(&raw.answer(json!(1)).await);
    assert!(legacy.starts_with("Some(SessionKey("), "{legacy}");
    let mut modern = whoami(2);
    modern["params"]["_meta"] = modern_meta();
    raw.send(modern).await;
    assert_eq!(
        text(&raw.answer(json!(2)).await),
        legacy,
        "the connection's key"
    );

    drop(raw);
    let told = ended_count(&ended, 1).await;
    assert_eq!(format!("Some({:?})", told[0]), legacy);
    assert_eq!(told.len(), 1);
}
