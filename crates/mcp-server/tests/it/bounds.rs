//! Every bound of `Limits` hit once (the core's, the seal's and the event log's are hit by
//! their unit tests; the HTTP body's and the sessions' in `http.rs` and here).

use std::time::Duration;

use serde_json::json;
use sidewire_mcp_server::http::HttpConfig;
use sidewire_mcp_server::{INTERNAL_ERROR, INVALID_PARAMS, Limits};

use crate::support::{ACCEPT, JSON, Raw, call, exchange, http, modern_meta, session};

#[tokio::test]
async fn requests_in_flight_per_session_are_bounded() {
    let mut limits = Limits::default();
    limits.max_in_flight = 1;
    let (mut raw, server) = Raw::start(limits);
    raw.initialize().await;
    raw.send(call(1, "hang")).await;
    sidewire_test_support::eventually(crate::support::LIMIT, "the first call running", || {
        server
            .handler()
            .hanging
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1
    })
    .await;
    raw.send(call(2, "echo")).await;
    let refused = raw.answer(json!(2)).await;
    assert_eq!(refused["error"]["code"], INTERNAL_ERROR);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("in flight")
    );
    // Cancelling the first frees the slot.
    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    )
    .await;
    let mut answered = false;
    for id in 3..100 {
        raw.send(call(id, "echo")).await;
        if raw.answer(json!(id)).await.get("result").is_some() {
            answered = true;
            break;
        }
    }
    assert!(answered, "the cancelled call's slot is given back");
}

#[tokio::test]
async fn a_request_to_the_client_waits_within_its_bound() {
    let mut limits = Limits::default();
    limits.input_timeout = Duration::from_millis(200);
    let (mut raw, _server) = Raw::start(limits);
    raw.initialize().await;
    raw.send(call(1, "ask")).await;
    let request = raw.recv().await;
    assert_eq!(request["method"], "sampling/createMessage");
    // Never answered: the call fails once the bound passes.
    let failed = raw.answer(json!(1)).await;
    assert_eq!(failed["error"]["code"], INTERNAL_ERROR);
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not answer")
    );
}

#[tokio::test]
async fn requests_to_the_client_per_session_are_bounded() {
    let mut limits = Limits::default();
    limits.max_pending_inputs = 1;
    let (mut raw, _server) = Raw::start(limits);
    raw.initialize().await;
    raw.send(call(1, "ask")).await;
    assert_eq!(raw.recv().await["method"], "sampling/createMessage");
    raw.send(call(2, "ask")).await;
    let refused = raw.answer(json!(2)).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requests to the client")
    );
}

#[tokio::test]
async fn input_rounds_per_request_are_bounded() {
    let mut limits = Limits::default();
    limits.max_rounds = 2;
    let (mut raw, _server) = Raw::start(limits);
    raw.initialize().await;
    raw.send(call(1, "again")).await;
    for _ in 0..2 {
        let request = raw.recv().await;
        assert_eq!(request["method"], "elicitation/create");
        raw.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"ok": true}}}))
            .await;
    }
    let failed = raw.answer(json!(1)).await;
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("input rounds")
    );
}

#[tokio::test]
async fn a_forged_or_foreign_cursor_is_invalid_params() {
    let mut limits = Limits::default();
    limits.page_size = 3;
    let (mut raw, _server) = Raw::start(limits);
    raw.initialize().await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let first = raw.answer(json!(1)).await;
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    assert_eq!(first["result"]["tools"].as_array().map(Vec::len), Some(3));
    for forged in [
        "3".to_owned(),
        format!("{cursor}x"),
        cursor.replace('.', ""),
    ] {
        raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": forged}})).await;
        assert_eq!(raw.answer(json!(2)).await["error"]["code"], INVALID_PARAMS);
    }
    // A cursor of another list is refused too.
    raw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list", "params": {"cursor": cursor}})).await;
    assert_eq!(raw.answer(json!(3)).await["error"]["code"], INVALID_PARAMS);
}

#[tokio::test]
async fn a_cursor_from_another_list_generation_is_invalid_params() {
    let mut limits = Limits::default();
    limits.page_size = 3;
    let (mut raw, server) = Raw::start(limits);
    raw.initialize().await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let first = raw.answer(json!(1)).await;
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let next = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"cursor": cursor}});
    raw.send(next(2)).await;
    assert!(
        raw.answer(json!(2)).await["result"]["tools"].is_array(),
        "good in its generation"
    );
    // The lists changed: the cursor would page through another list.
    server
        .handler()
        .generation
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    raw.send(next(3)).await;
    assert_eq!(raw.answer(json!(3)).await["error"]["code"], INVALID_PARAMS);
}

#[tokio::test]
async fn modern_listens_per_server_are_bounded() {
    let mut limits = Limits::default();
    limits.max_listeners = 1;
    let (mut raw, server) = Raw::start(limits);
    let listen = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": modern_meta(), "notifications": {"toolsListChanged": true}}})
    };
    raw.send(listen(1)).await;
    let ack = raw.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
    raw.send(listen(2)).await;
    let refused = raw.answer(json!(2)).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("listen")
    );
    server.list_changed(sidewire_mcp_server::ListKind::Tools);
    let notice = raw.recv().await;
    assert_eq!(notice["method"], "notifications/tools/list_changed");
    assert_eq!(
        notice["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
}

#[tokio::test]
async fn sessions_are_bounded_and_the_longest_idle_goes_first() {
    let mut config = HttpConfig::default();
    config.max_sessions = 1;
    let (url, server) = http(Limits::default(), config).await;
    let first = session(&url).await;
    let second = session(&url).await;
    assert_eq!(server.sessions(), 1);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let evicted = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &first)],
        &list,
    )
    .await;
    assert_eq!(evicted.status, 404, "the idle session made room");
    // A session with a call in flight is never the one to go: a third is refused.
    let hang =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang"}})
            .to_string();
    let url_hang = url.clone();
    let busy = second.clone();
    tokio::spawn(async move {
        exchange(
            &url_hang,
            "POST",
            &[JSON, ACCEPT, ("mcp-session-id", &busy)],
            &hang,
        )
        .await
    });
    sidewire_test_support::eventually(crate::support::LIMIT, "the call running", || {
        server
            .server()
            .handler()
            .hanging
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1
    })
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}).to_string();
    let refused = exchange(&url, "POST", &[JSON, ACCEPT], &body).await;
    assert_eq!(refused.status, 503);
}

#[tokio::test]
async fn input_requests_per_round_are_bounded() {
    let mut limits = Limits::default();
    limits.max_input_requests = 2;
    let (mut raw, _server) = Raw::start(limits);
    raw.initialize().await;
    raw.send(call(1, "many")).await;
    let failed = raw.answer(json!(1)).await;
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("input requests per round")
    );
}

#[tokio::test]
async fn a_stream_the_client_does_not_read_holds_its_handler_at_the_queue_bound() {
    use std::sync::atomic::Ordering;
    let mut limits = Limits::default();
    limits.stream_queue = 4;
    // A pipe that holds less than one message: the writer waits on the client at once.
    let (mut raw, server) = Raw::start_with_pipe(limits, 64);
    raw.initialize().await;
    raw.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "flood", "arguments": {}, "_meta": {"progressToken": "p"}}}),
    )
    .await;
    let flooded = std::sync::Arc::clone(&server.handler().flooded);
    sidewire_test_support::eventually(crate::support::LIMIT, "the queue filled", || {
        flooded.load(Ordering::SeqCst) >= 4
    })
    .await;
    // The queue, the message being written and the one the handler holds: nothing more.
    assert!(
        flooded.load(Ordering::SeqCst) <= 4 + 3,
        "{}",
        flooded.load(Ordering::SeqCst)
    );
    // Read on: every notification arrives, then the answer (nothing lost).
    let mut progress = 0;
    loop {
        let message = raw.recv().await;
        if message.get("id") == Some(&json!(1)) {
            break;
        }
        progress += 1;
    }
    assert_eq!(progress, crate::support::FLOOD);
}

#[tokio::test]
async fn a_session_listening_on_its_stream_is_not_idle() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut config = HttpConfig::default();
    config.session_idle = Duration::ZERO;
    let (url, server) = http(Limits::default(), config).await;
    let listening = session(&url).await;
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut stream = BufReader::new(tokio::net::TcpStream::connect(&authority).await.unwrap());
    let get = format!(
        "GET /mcp HTTP/1.1\r\nhost: {authority}\r\naccept: text/event-stream\r\nmcp-session-id: {listening}\r\n\r\n"
    );
    stream.get_mut().write_all(get.as_bytes()).await.unwrap();
    crate::support::within("the priming event", async {
        let mut line = String::new();
        while !line.starts_with("retry:") {
            line.clear();
            assert!(
                stream.read_line(&mut line).await.unwrap() > 0,
                "the stream ended"
            );
        }
    })
    .await;
    let idle = session(&url).await;
    // A new session makes room: every session is past the (zero) idle time, but the one
    // listening on its stream stays.
    let _third = session(&url).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let gone = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &idle)],
        &list,
    )
    .await;
    assert_eq!(gone.status, 404);
    let kept = exchange(
        &url,
        "POST",
        &[JSON, ACCEPT, ("mcp-session-id", &listening)],
        &list,
    )
    .await;
    assert_eq!(kept.status, 200);
    assert!(server.sessions() >= 2);
    drop(stream);
}

#[tokio::test]
async fn a_line_without_a_readable_id_is_never_answered() {
    use tokio::io::AsyncWriteExt;
    let (mut raw, _server) = Raw::start(Limits::default());
    raw.writer
        .write_all(b"not json at all\n[1,2]\n{\"jsonrpc\":\"2.0\"}\n")
        .await
        .unwrap();
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": []}))
        .await;
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    // The first answer is to the malformed request with an id; nothing came before it.
    let first = raw.recv().await;
    assert_eq!(
        (first["id"].clone(), first["error"]["code"].clone()),
        (json!(1), json!(-32600))
    );
    assert_eq!(raw.recv().await["id"], 2);
}
