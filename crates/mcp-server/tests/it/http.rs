//! Raw Streamable HTTP exchanges: who may call, sessions, resumption, the modern checks.

use serde_json::json;
use sidewire_mcp_server::Limits;
use sidewire_mcp_server::http::{BearerToken, HttpConfig};

use crate::support::{ACCEPT, JSON, exchange, exchange_until, http, modern_meta, session};

#[tokio::test]
async fn other_hosts_and_origins_are_forbidden() {
    let (url, server) = http(Limits::default(), HttpConfig::default()).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string();
    let evil = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("host", "evil.example.com")],
        &body,
    )
    .await;
    assert_eq!(evil.status, 403);
    let origin = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("origin", "http://evil.example.com")],
        &body,
    )
    .await;
    assert_eq!(origin.status, 403);
    assert_eq!(server.sessions(), 0, "a refused request opens no session");
    let local = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("origin", "http://localhost:8080")],
        &body,
    )
    .await;
    assert_eq!(local.status, 200);
}

#[tokio::test]
async fn a_bearer_token_is_required_when_set() {
    let mut config = HttpConfig::default();
    config.bearer = Some(BearerToken::new("tok-123").expect("a token"));
    assert!(
        !format!("{config:?}").contains("tok-123"),
        "Debug hides the token"
    );
    let (url, server) = http(Limits::default(), config).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string();
    for refused in [
        None,
        Some("Bearer tok-124"),
        Some("Basic tok-123"),
        Some("Bearer tok-1234"),
    ] {
        let mut headers = vec![JSON, ACCEPT];
        if let Some(value) = refused {
            headers.push(("authorization", value));
        }
        let reply = exchange(&url, "POST", &headers, &body).await;
        assert_eq!(reply.status, 401, "{refused:?}");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    }
    assert_eq!(server.sessions(), 0, "a refused request opens no session");
    let admitted = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("authorization", "bearer tok-123")],
        &body,
    )
    .await;
    assert_ne!(admitted.status, 401);
    assert!(BearerToken::new("").is_none() && BearerToken::new("a b").is_none());
}

#[tokio::test]
async fn a_body_over_the_bound_is_413() {
    let mut limits = Limits::default();
    limits.max_message_bytes = 1024;
    let (url, _server) = http(limits, HttpConfig::default()).await;
    let big =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(2048)}});
    let reply = exchange(&url, "POST", &[JSON, ACCEPT], &big.to_string()).await;
    assert_eq!(reply.status, 413);
}

#[tokio::test]
async fn a_deleted_or_unknown_session_is_404() {
    let (url, server) = http(Limits::default(), HttpConfig::default()).await;
    let id = session(&url).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let unknown = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", "nope")],
        &list,
    )
    .await;
    assert_eq!(unknown.status, 404);
    let ok = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &id)],
        &list,
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(
        ok.json()["result"]["tools"].as_array().map(Vec::len),
        Some(11)
    );
    let deleted = exchange(&url, "DELETE", &[("mcp-session-id", &id)], "").await;
    assert_eq!(deleted.status, 200);
    assert_eq!(server.sessions(), 0);
    let gone = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &id)],
        &list,
    )
    .await;
    assert_eq!(gone.status, 404);
}

#[tokio::test]
async fn a_session_has_one_standalone_stream() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (url, _server) = http(Limits::default(), HttpConfig::default()).await;
    let id = session(&url).await;
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    // The first GET stays open, primed.
    let mut first = BufReader::new(tokio::net::TcpStream::connect(&authority).await.unwrap());
    let request = format!(
        "GET /mcp HTTP/1.1\r\nhost: {authority}\r\naccept: text/event-stream\r\nmcp-session-id: {id}\r\n\r\n"
    );
    first.get_mut().write_all(request.as_bytes()).await.unwrap();
    crate::support::within("the priming event", async {
        let mut line = String::new();
        while !line.starts_with("retry:") {
            line.clear();
            assert!(
                first.read_line(&mut line).await.unwrap() > 0,
                "the stream ended"
            );
        }
    })
    .await;
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", id.as_str()),
    ];
    let second = exchange(&url, "GET", &headers, "").await;
    assert_eq!(second.status, 409, "one standalone stream per session");
    drop(first);
    let mut reopened = 0;
    for _ in 0..1000 {
        let third = exchange_until(&url, "GET", &headers, "", |text| text.contains("retry:")).await;
        reopened = third.status;
        if reopened == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        reopened, 200,
        "the stream is free again once its client left"
    );
}

#[tokio::test]
async fn a_stream_the_server_closed_resumes_with_last_event_id() {
    let (url, _server) = http(Limits::default(), HttpConfig::default()).await;
    let id = session(&url).await;
    let call =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "close"}});
    let posted = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &id)],
        &call.to_string(),
    )
    .await;
    assert_eq!(posted.status, 200);
    assert_eq!(posted.header("content-type"), Some("text/event-stream"));
    assert!(
        posted.body.contains("retry:"),
        "a priming event: {}",
        posted.body
    );
    assert!(
        !posted.body.contains("after the close"),
        "the answer is not on the closed stream"
    );
    let last = posted
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("id: "))
        .next_back()
        .expect("an event id")
        .to_owned();
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", id.as_str()),
        ("last-event-id", last.as_str()),
    ];
    let resumed = exchange_until(&url, "GET", &headers, "", |text| {
        text.contains("after the close")
    })
    .await;
    assert_eq!(resumed.status, 200);
    assert_eq!(resumed.json()["id"], 7);
}

#[tokio::test]
async fn modern_requests_are_checked_in_the_protocol_order() {
    let (url, _server) = http(Limits::default(), HttpConfig::default()).await;
    let version = ("mcp-protocol-version", "2026-07-28");
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": modern_meta()}}).to_string();
    let wrong = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, version, ("mcp-method", "prompts/list")],
        &list,
    )
    .await;
    assert_eq!(
        (wrong.status, wrong.json()["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let missing = exchange(&url, "POST", &[JSON, ACCEPT, version], &list).await;
    assert_eq!(
        (missing.status, missing.json()["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let bare = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}}).to_string();
    let no_meta = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, version, ("mcp-method", "tools/list")],
        &bare,
    )
    .await;
    assert_eq!(
        (no_meta.status, no_meta.json()["error"]["code"].as_i64()),
        (400, Some(-32602))
    );
    assert_eq!(no_meta.json()["id"], 4);
    let ping =
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"_meta": modern_meta()}})
            .to_string();
    let removed = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, version, ("mcp-method", "ping")],
        &ping,
    )
    .await;
    assert_eq!(
        (removed.status, removed.json()["error"]["code"].as_i64()),
        (404, Some(-32601))
    );
    let ok = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, version, ("mcp-method", "tools/list")],
        &list,
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.json()["result"]["resultType"], "complete");
    assert_eq!(ok.json()["result"]["cacheScope"], "private");
}

#[tokio::test]
async fn a_modern_request_whose_connection_closes_is_cancelled() {
    use std::sync::atomic::Ordering;
    use tokio::io::AsyncWriteExt;
    let (url, server) = http(Limits::default(), HttpConfig::default()).await;
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "hang", "arguments": {}, "_meta": modern_meta()}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: hang\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(&authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let probe = server.server().handler();
    sidewire_test_support::eventually(crate::support::LIMIT, "the call running", || {
        probe.hanging.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 0);
    drop(stream);
    sidewire_test_support::eventually(crate::support::LIMIT, "the call cancelled", || {
        probe.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
}
