//! The HTTP transports against the in-process mock ([`crate::http_mock`]): headers, sessions,
//! expiry, SSE answers and server requests, resumption, redirects, caps, status errors, the
//! legacy transport (and the reconnection of its event stream) and the automatic fallback to
//! it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::Method;
use serde_json::json;
use sidewire_mcp::{Client, NoHandler, Restart, RestartPolicy, ServerSpec, Stage, ToolCallOptions};

use crate::http_mock::{Mock, answer, json_response, sse, status};
use crate::support::*;

pub(crate) async fn connect(spec: &ServerSpec) -> Client {
    let (client, driver) = within("connect", Client::connect(spec, NoHandler))
        .await
        .unwrap_or_else(|err| panic!("connect failed: {err}"));
    tokio::spawn(driver);
    client
}

pub(crate) async fn echo(client: &Client, message: &str) -> Result<String, sidewire_mcp::Error> {
    let args = json!({ "message": message });
    within(
        "tools/call",
        client.call_tool("echo", args, ToolCallOptions::new()),
    )
    .await
    .map(|result| result.joined_text())
}

#[tokio::test]
async fn streamable_http_sends_the_headers_and_keeps_the_session() {
    let mock = Mock::start().await;
    let spec = ServerSpec::http("web", mock.url("/mcp"))
        .header("Authorization", "Bearer secret")
        .header("X-Extra", "1");
    let client = connect(&spec).await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    assert_eq!(echo(&client, "hi").await.unwrap(), "echo: hi");

    let init = &mock.posts("initialize")[0];
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(
        init.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(init.header("authorization"), Some("Bearer secret"));
    assert_eq!(init.header("x-extra"), Some("1"));
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.header("mcp-protocol-version"), None);
    for later in mock
        .posts("notifications/initialized")
        .iter()
        .chain(&mock.posts("tools/list"))
        .chain(&mock.posts("tools/call"))
    {
        assert_eq!(later.header("mcp-session-id"), Some("s1"), "{later:?}");
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-11-25"));
        assert_eq!(later.header("authorization"), Some("Bearer secret"));
    }

    // Closing ends the session with a DELETE that carries it.
    within("close", client.close()).await;
    let deletes: Vec<_> = mock
        .seen()
        .into_iter()
        .filter(|s| s.method == Method::DELETE)
        .collect();
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    assert_eq!(deletes[0].header("mcp-session-id"), Some("s1"));
    assert!(client.is_closed());
}

#[tokio::test]
async fn configured_headers_override_the_defaults() {
    let mock = Mock::start().await;
    let spec = ServerSpec::http("web", mock.url("/mcp"))
        .header("Accept", "application/json, text/event-stream, */*");
    let _client = connect(&spec).await;
    assert_eq!(
        mock.posts("initialize")[0].header("accept"),
        Some("application/json, text/event-stream, */*")
    );
}

#[tokio::test]
async fn sse_answers_route_server_messages_and_answer_them_with_separate_posts() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.rpc_method() == "tools/call").then(|| {
            let done = answer(seen);
            sse(vec![
                (Duration::ZERO, ": comment\n\n".to_owned()),
                (
                    Duration::ZERO,
                    "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n"
                        .to_owned(),
                ),
                (
                    Duration::from_millis(20),
                    "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\
                     \"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n"
                        .to_owned(),
                ),
                (
                    Duration::from_millis(20),
                    format!("id: e2\ndata: {done}\n\n"),
                ),
            ])
        })
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    assert_eq!(echo(&client, "streamed").await.unwrap(), "echo: streamed");
    eventually("our answer to the server's ping", || {
        mock.seen()
            .iter()
            .any(|s| s.body.get("id") == Some(&json!("srv-1")) && s.body.get("result").is_some())
    })
    .await;
    let answer = mock
        .seen()
        .into_iter()
        .find(|s| s.body.get("id") == Some(&json!("srv-1")))
        .unwrap();
    assert_eq!(answer.method, Method::POST);
    assert_eq!(answer.header("mcp-session-id"), Some("s1"));
}

#[tokio::test]
async fn a_404_on_a_session_reinitializes_once_and_retries_once() {
    let mock = Mock::start().await;
    mock.script(|seen, mock| {
        // The first tools/call of session s1 finds the session gone (with a body no spec
        // names: any 404 counts).
        let first_call = seen.rpc_method() == "tools/call"
            && seen.header("mcp-session-id") == Some("s1")
            && mock.posts("tools/call").len() == 1;
        first_call.then(|| status(404, "gone"))
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    assert_eq!(echo(&client, "again").await.unwrap(), "echo: again");
    assert_eq!(mock.posts("initialize").len(), 2);
    assert_eq!(mock.posts("notifications/initialized").len(), 2);
    let calls = mock.posts("tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].header("mcp-session-id"), Some("s2"));
    let reinit = &mock.posts("initialize")[1];
    assert_eq!(reinit.header("mcp-session-id"), None);
    // Later calls stay on the new session.
    echo(&client, "later").await.unwrap();
    assert_eq!(
        mock.posts("tools/call")[2].header("mcp-session-id"),
        Some("s2")
    );
}

#[tokio::test]
async fn a_second_404_is_a_status_error_not_a_loop() {
    let mock = Mock::start().await;
    mock.script(|seen, _| (seen.rpc_method() == "tools/call").then(|| status(404, "gone")));
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    let err = echo(&client, "x").await.unwrap_err();
    assert_eq!(err.http_status(), Some(404), "{err}");
    assert_eq!(mock.posts("initialize").len(), 2);
    assert_eq!(mock.posts("tools/call").len(), 2);
}

#[tokio::test]
async fn an_sse_stream_that_ends_early_is_resumed_after_retry_with_last_event_id() {
    let mock = Mock::start().await;
    let call_id = Arc::new(Mutex::new(serde_json::Value::Null));
    let ids = Arc::clone(&call_id);
    mock.script(move |seen, _| {
        if seen.rpc_method() == "tools/call" {
            *lock(&ids) = seen.body["id"].clone();
            return Some(sse(vec![(
                Duration::ZERO,
                "id: ev-1\nretry: 300\ndata: \n\n".to_owned(),
            )]));
        }
        if seen.method == Method::GET && seen.header("last-event-id") == Some("ev-1") {
            let call = json!({"jsonrpc": "2.0", "id": lock(&ids).clone(), "result": {
                "content": [{ "type": "text", "text": "resumed" }] }});
            return Some(sse(vec![(
                Duration::ZERO,
                format!("id: ev-2\ndata: {call}\n\n"),
            )]));
        }
        None
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    assert_eq!(echo(&client, "x").await.unwrap(), "resumed");
    let seen = mock.seen();
    let post = seen
        .iter()
        .find(|s| s.rpc_method() == "tools/call")
        .unwrap();
    let resume = seen
        .iter()
        .find(|s| s.header("last-event-id").is_some())
        .unwrap();
    assert_eq!(resume.method, Method::GET);
    assert_eq!(resume.header("mcp-session-id"), Some("s1"));
    let waited = resume.at - post.at;
    assert!(
        waited >= Duration::from_millis(290) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
}

#[tokio::test]
async fn redirects_are_followed_only_within_the_origin() {
    let elsewhere = Mock::start().await;
    let mock = Mock::start().await;
    let target = elsewhere.url("/mcp");
    mock.script(move |seen, _| match seen.path.as_str() {
        "/old" => Some(redirect(308, "/mcp")),
        "/away" => Some(redirect(307, &target)),
        _ => None,
    });
    // Same origin: followed, credentials and all.
    let spec = ServerSpec::http("web", mock.url("/old")).header("Authorization", "Bearer s");
    let client = connect(&spec).await;
    assert_eq!(echo(&client, "moved").await.unwrap(), "echo: moved");

    // Another origin (another port): not followed, so the credentials never travel.
    let spec = ServerSpec::http("web", mock.url("/away")).header("Authorization", "Bearer s");
    let err = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), Some(307), "{err}");
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());
}

fn redirect(code: u16, location: &str) -> http::Response<crate::http_mock::Body> {
    let mut response = status(code, "");
    response
        .headers_mut()
        .insert("location", location.parse().unwrap());
    response
}

#[tokio::test]
async fn bodies_and_events_over_the_cap_fail_their_request() {
    let mock = Mock::start().await;
    let big = "x".repeat(8 * 1024);
    mock.script(move |seen, _| {
        let mut reply = answer(seen);
        reply["result"]["pad"] = json!(big);
        match seen
            .body
            .pointer("/params/arguments/message")
            .and_then(|m| m.as_str())
        {
            Some("json") => Some(json_response(&reply)),
            Some("sse") => Some(sse(vec![(Duration::ZERO, format!("data: {reply}\n\n"))])),
            _ => None,
        }
    });
    let spec = ServerSpec::http("web", mock.url("/mcp")).max_message_bytes(4096);
    let client = connect(&spec).await;
    for how in ["json", "sse"] {
        let err = echo(&client, how).await.unwrap_err();
        assert!(err.is_too_large(), "{how}: {err}");
    }
    // The connection lives on.
    assert_eq!(echo(&client, "small").await.unwrap(), "echo: small");
}

#[tokio::test]
async fn a_401_is_a_typed_error_naming_the_server_and_method() {
    let mock = Mock::start().await;
    mock.script(|_, _| Some(status(401, "{\"error\":\"invalid_token\"}")));
    let spec = ServerSpec::http("secured", mock.url("/mcp"));
    let err = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap_err();
    assert!(err.is_http(), "{err:?}");
    assert_eq!(err.http_status(), Some(401));
    assert_eq!(err.server(), Some("secured"));
    assert_eq!(err.stage().unwrap().0, Stage::Initialize);
    let text = err.to_string();
    assert!(
        text.contains("initialize") && text.contains("401"),
        "{text}"
    );
    assert!(text.contains("invalid_token"), "{text}");
}

#[tokio::test]
async fn an_unreachable_server_is_an_http_error_without_status() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    // A refused connection is retried within the startup budget: a short one keeps it quick.
    let spec = ServerSpec::http("gone", url).startup_timeout(Duration::from_secs(1));
    let err = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap_err();
    assert!(err.is_http(), "{err:?}");
    assert_eq!(err.http_status(), None);
    // The retries are not silent: the error says how many attempts were made, over how long.
    assert!(err.to_string().contains(" attempts over "), "{err}");
}

#[tokio::test]
async fn legacy_sse_posts_to_the_announced_endpoint() {
    let mock = Mock::start().await;
    let spec = ServerSpec::sse("old", mock.url("/sse")).header("Authorization", "Bearer s");
    let client = connect(&spec).await;
    assert_eq!(echo(&client, "legacy").await.unwrap(), "echo: legacy");
    let seen = mock.seen();
    assert_eq!(seen[0].method, Method::GET);
    assert_eq!(seen[0].header("accept"), Some("text/event-stream"));
    assert_eq!(seen[0].header("authorization"), Some("Bearer s"));
    for post in seen.iter().filter(|s| s.method == Method::POST) {
        assert_eq!(post.path, "/messages?session=1");
        assert_eq!(post.header("authorization"), Some("Bearer s"));
        assert_eq!(post.header("mcp-protocol-version"), None);
    }
}

#[tokio::test]
async fn a_bare_url_falls_back_to_legacy_sse_on_405() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.method == Method::POST && seen.path == "/sse").then(|| status(405, ""))
    });
    let client = connect(&ServerSpec::http("auto", mock.url("/sse"))).await;
    assert_eq!(echo(&client, "fallback").await.unwrap(), "echo: fallback");
    assert_eq!(mock.posts("initialize").len(), 2); // Streamable, then legacy.
    assert_eq!(mock.posts("initialize")[1].path, "/messages?session=1");
}

#[tokio::test]
async fn a_cross_origin_endpoint_is_refused() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.method == Method::GET).then(|| {
            sse(vec![
                (
                    Duration::ZERO,
                    "event: endpoint\ndata: http://127.0.0.2:9/messages\n\n".to_owned(),
                ),
                (Duration::from_secs(30), String::new()),
            ])
        })
    });
    let spec = ServerSpec::sse("old", mock.url("/sse"));
    let err = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("cross-origin"), "{err}");
    assert!(mock.posts("initialize").is_empty());
}

#[tokio::test]
async fn the_get_stream_carries_server_initiated_requests() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.method == Method::GET).then(|| {
            sse(vec![
                (Duration::ZERO, "id: g1\ndata: \n\n".to_owned()),
                (
                    Duration::from_millis(20),
                    "id: g2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-get\",\"method\":\"ping\"}\n\n"
                        .to_owned(),
                ),
                (Duration::from_secs(30), String::new()),
            ])
        })
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    client.list_tools().await.unwrap();
    eventually("our answer to the ping on the GET stream", || {
        mock.seen()
            .iter()
            .any(|s| s.body.get("id") == Some(&json!("srv-get")) && s.method == Method::POST)
    })
    .await;
    let get = mock
        .seen()
        .into_iter()
        .find(|s| s.method == Method::GET)
        .unwrap();
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("s1"));
    // The GET went out before any request that followed initialize.
    let list = &mock.posts("tools/list")[0];
    assert!(get.at <= list.at);
}

#[tokio::test]
async fn a_reinitialized_session_reopens_the_get_stream() {
    let mock = Mock::start().await;
    mock.script(|seen, mock| {
        if seen.method == Method::GET {
            // Each session's stream pings once (with an id naming the session, so our answer
            // shows which stream it came from) and then stays open.
            let session = seen.header("mcp-session-id").unwrap_or("none");
            let ping = json!({"jsonrpc": "2.0", "id": format!("ping-{session}"), "method": "ping"});
            return Some(sse(vec![
                (Duration::ZERO, format!("data: {ping}\n\n")),
                (Duration::from_secs(30), String::new()),
            ]));
        }
        let first_call = seen.rpc_method() == "tools/call"
            && seen.header("mcp-session-id") == Some("s1")
            && mock.posts("tools/call").len() == 1;
        first_call.then(|| status(404, "gone"))
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    assert_eq!(echo(&client, "again").await.unwrap(), "echo: again");

    let gets: Vec<_> = mock
        .seen()
        .into_iter()
        .filter(|s| s.method == Method::GET)
        .collect();
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert_eq!(gets[0].header("mcp-session-id"), Some("s1"));
    assert_eq!(gets[1].header("mcp-session-id"), Some("s2"));
    // A new session's stream starts from scratch: the old stream's event ids mean nothing to it.
    assert_eq!(gets[1].header("last-event-id"), None);
    // Like after the first initialize, the retried request waited for the new stream.
    let reinit = &mock.posts("initialize")[1];
    let retried = &mock.posts("tools/call")[1];
    assert_eq!(retried.header("mcp-session-id"), Some("s2"));
    assert!(reinit.at <= gets[1].at && gets[1].at <= retried.at);

    // The new stream is live: the server's request on it is answered within the new session.
    eventually("our answer to the ping on the new GET stream", || {
        mock.seen()
            .iter()
            .any(|s| s.body.get("id") == Some(&json!("ping-s2")) && s.method == Method::POST)
    })
    .await;
    let answer = mock
        .seen()
        .into_iter()
        .find(|s| s.body.get("id") == Some(&json!("ping-s2")))
        .unwrap();
    assert_eq!(answer.header("mcp-session-id"), Some("s2"));
}

/// A legacy server whose event stream reconnects quickly: at most `max` attempts in an hour,
/// 10 ms apart; calls get a long timeout, so one that ends early was failed on purpose.
fn reconnecting(mock: &Mock, max: u32) -> ServerSpec {
    let policy = RestartPolicy::default()
        .max_restarts(max)
        .within(Duration::from_secs(3600))
        .backoff(Duration::from_millis(10), Duration::from_millis(10));
    ServerSpec::sse("old", mock.url("/sse"))
        .restart(Restart::OnCrash(policy))
        .call_timeout(Duration::from_secs(300))
}

/// The event-stream GETs the mock saw.
fn gets(mock: &Mock) -> usize {
    mock.seen()
        .iter()
        .filter(|s| s.method == Method::GET)
        .count()
}

/// Ends the mock's event stream once the client's first handshake is through.
async fn drop_after_the_handshake(mock: &Mock) {
    eventually("the first handshake", || {
        mock.posts("notifications/initialized").len() == 1
    })
    .await;
    mock.legacy_drop();
}

#[tokio::test]
async fn a_dropped_legacy_stream_reconnects_and_initializes_the_new_session() {
    let mock = Mock::start().await;
    let client = connect(&reconnecting(&mock, 3)).await;
    client.list_tools().await.unwrap();
    let listed = client.list_revision();
    drop_after_the_handshake(&mock).await;
    eventually("the second GET", || gets(&mock) == 2).await;
    assert_eq!(echo(&client, "again").await.unwrap(), "echo: again");
    // The new session's lists are fetched again.
    within("the refresh", client.list_changed_since(listed)).await;
    assert_eq!(
        mock.posts("tools/list").last().unwrap().path,
        "/messages?session=2"
    );

    // The same initialize, replayed on the new session's endpoint, then initialized, then the
    // call.
    let inits = mock.posts("initialize");
    assert_eq!(inits.len(), 2, "{inits:?}");
    assert_eq!(inits[1].path, "/messages?session=2");
    assert_eq!(inits[1].body, inits[0].body);
    let initialized = mock.posts("notifications/initialized");
    assert_eq!(initialized.len(), 2, "{initialized:?}");
    assert_eq!(initialized[1].path, "/messages?session=2");
    let calls = mock.posts("tools/call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].path, "/messages?session=2");
    assert!(inits[1].at <= initialized[1].at && initialized[1].at <= calls[0].at);
    assert_eq!(gets(&mock), 2);
    assert!(!client.is_closed());
}

#[tokio::test]
async fn a_call_in_flight_when_the_legacy_stream_drops_fails_at_once() {
    let mock = Mock::start().await;
    mock.script(|seen, mock| {
        let hang = seen.body.pointer("/params/arguments/message") == Some(&json!("hang"));
        hang.then(|| {
            mock.legacy_drop(); // Its answer would have come on this stream.
            status(202, "Accepted")
        })
    });
    let client = connect(&reconnecting(&mock, 3)).await;
    let started = Instant::now();
    let err = echo(&client, "hang").await.unwrap_err();
    assert!(err.is_http(), "{err:?}");
    assert_eq!(err.http_status(), None, "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // The connection lives on, on the new stream.
    assert_eq!(echo(&client, "after").await.unwrap(), "echo: after");
    assert_eq!(mock.posts("tools/call")[1].path, "/messages?session=2");
}

#[tokio::test]
async fn a_legacy_stream_that_keeps_dropping_ends_the_connection_after_max_restarts() {
    let mock = Mock::start().await;
    // Every stream ends right after its handshake.
    mock.script(|seen, mock| {
        (seen.rpc_method() == "notifications/initialized").then(|| {
            mock.legacy_drop();
            status(202, "Accepted")
        })
    });
    let client = connect(&reconnecting(&mock, 2)).await;
    eventually("the connection to end", || client.is_closed()).await;
    assert_eq!(gets(&mock), 3); // The first stream and two reconnects.
    assert_eq!(mock.posts("initialize").len(), 3);
    let err = echo(&client, "late").await.unwrap_err();
    assert!(err.is_closed(), "{err:?}");
}

#[tokio::test]
async fn restart_never_ends_the_legacy_connection_with_its_stream() {
    let mock = Mock::start().await;
    let spec = ServerSpec::sse("old", mock.url("/sse")).restart(Restart::Never);
    let client = connect(&spec).await;
    drop_after_the_handshake(&mock).await;
    eventually("the connection to end", || client.is_closed()).await;
    assert_eq!(gets(&mock), 1);
    let err = echo(&client, "late").await.unwrap_err();
    assert!(err.is_closed(), "{err:?}");
}

#[tokio::test]
async fn a_failed_legacy_reconnect_is_retried_within_the_policy() {
    let mock = Mock::start().await;
    // The first reconnect finds the server down for a moment.
    mock.script(|seen, mock| {
        (seen.method == Method::GET && gets(mock) == 2).then(|| status(503, "restarting"))
    });
    let client = connect(&reconnecting(&mock, 3)).await;
    drop_after_the_handshake(&mock).await;
    eventually("the third GET", || gets(&mock) == 3).await;
    assert_eq!(echo(&client, "third").await.unwrap(), "echo: third");
    assert_eq!(mock.posts("tools/call")[0].path, "/messages?session=2");
    assert_eq!(mock.posts("initialize").len(), 2);
}

#[tokio::test]
async fn a_call_dropped_with_the_last_client_handle_still_posts_its_cancel() {
    // How an interrupted program ends: the call's future and the client go together, and the
    // cancel is only queued by then. The connection writes it, and the transport finishes its
    // POST, before it ends (`CANCEL_FLUSH`), every time.
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.rpc_method() == "tools/call")
            .then(|| crate::http_mock::slow(200, Duration::from_secs(60)))
    });
    let spec = ServerSpec::http("web", mock.url("/mcp"));
    for run in 1..=20 {
        let client = connect(&spec).await;
        // The task owns the only handle: aborting it drops the call, then the client.
        let call = tokio::spawn(async move { echo(&client, "hi").await });
        eventually("the call to reach the server", || {
            mock.posts("tools/call").len() == run
        })
        .await;
        call.abort();
        eventually(&format!("run {run}: the cancel's POST"), || {
            mock.posts("notifications/cancelled").len() == run
        })
        .await;
        let id = &mock.posts("tools/call")[run - 1].body["id"];
        assert_eq!(
            mock.posts("notifications/cancelled")[run - 1].body["params"]["requestId"],
            *id
        );
    }
}

#[tokio::test]
async fn a_cancel_post_left_unanswered_holds_the_connection_only_for_the_flush_bound() {
    // The server takes the cancel's POST and never answers it: the connection still ends, once
    // `CANCEL_FLUSH` has passed, and its driver with it.
    let mock = Mock::start().await;
    mock.script(|seen, _| match seen.rpc_method() {
        "tools/call" | "notifications/cancelled" => {
            Some(crate::http_mock::slow(200, Duration::from_secs(60)))
        }
        _ => None,
    });
    let spec = ServerSpec::http("web", mock.url("/mcp"));
    let (client, driver) = within("connect", Client::connect(&spec, NoHandler))
        .await
        .unwrap_or_else(|err| panic!("connect failed: {err}"));
    let driver = tokio::spawn(driver);
    let call = tokio::spawn(async move { echo(&client, "hi").await });
    eventually("the call to reach the server", || {
        mock.posts("tools/call").len() == 1
    })
    .await;
    call.abort();
    eventually("the cancel's POST", || {
        mock.posts("notifications/cancelled").len() == 1
    })
    .await;
    within("the driver to end", driver)
        .await
        .expect("the driver ends");
}
