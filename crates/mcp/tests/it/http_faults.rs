//! The Streamable HTTP transport under faults, against the in-process mock
//! ([`crate::http_mock`]): 2xx answers that are not the response, 202s with and without a GET
//! stream, the initialized notification's ordering, session expiry as real servers signal it
//! (404, a 400 naming the session) with many calls in flight and the lists refreshed,
//! initialize retries while the server is not up, the legacy fallback on 400 and 404, the GET
//! stream's reconnect, and the version header on the closing DELETE.

use std::time::Duration;

use http::Method;
use serde_json::{Value, json};
use sidewire_mcp::{Client, NoHandler, ServerSpec};

use crate::http::{connect, echo};
use crate::http_mock::{
    Mock, answer, json_response, slow, sse, sse_channel, status, truncated, typed,
};
use crate::support::*;

/// A spec whose calls would wait two minutes: every failure below must come long before.
fn patient(mock: &Mock) -> ServerSpec {
    ServerSpec::http("web", mock.url("/mcp")).call_timeout(Duration::from_secs(120))
}

/// The message a tools/call carries, which the scripts below branch on.
fn message(seen: &crate::http_mock::Seen) -> &str {
    seen.body
        .pointer("/params/arguments/message")
        .and_then(Value::as_str)
        .unwrap_or("")
}

#[tokio::test]
async fn a_2xx_answer_that_is_not_the_response_fails_its_call_at_once() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        if seen.rpc_method() != "tools/call" {
            return None;
        }
        let id = seen.body["id"].clone();
        let mut other = answer(seen);
        other["id"] = json!(987_654);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "hi"}});
        Some(match message(seen) {
            "portal" => typed(
                200,
                "text/html; charset=utf-8",
                "<html>\x1b[31mSign in\r\n</html>",
            ),
            "text" => typed(200, "", "hello"),
            "not-rpc" => typed(200, "application/json", "{\"hello\":1}"),
            "other-id" => json_response(&other),
            "notification" => json_response(&note),
            "cut" => typed(
                200,
                "application/json",
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"res"),
            ),
            "broke-off" => truncated(
                "application/json",
                &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},"),
            ),
            _ => return None,
        })
    });
    let client = connect(&patient(&mock)).await;
    for case in [
        "portal",
        "text",
        "not-rpc",
        "other-id",
        "notification",
        "cut",
        "broke-off",
    ] {
        let err = echo(&client, case).await.unwrap_err();
        assert!(err.is_unexpected_answer(), "{case}: {err:?}");
        assert_eq!(err.http_status(), Some(200), "{case}");
        let text = err.to_string();
        assert!(
            !text.contains('\x1b') && !text.contains('\r'),
            "{case}: {text:?}"
        );
    }
    let portal = echo(&client, "portal").await.unwrap_err().to_string();
    assert!(portal.contains("text/html"), "{portal}");
    assert!(portal.contains("Sign in"), "{portal}");
    // The connection lives on.
    assert_eq!(echo(&client, "fine").await.unwrap(), "echo: fine");
}

#[tokio::test]
async fn a_server_request_in_an_unexpected_answer_is_still_served() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.rpc_method() == "tools/call")
            .then(|| json_response(&json!({"jsonrpc": "2.0", "id": "srv-9", "method": "ping"})))
    });
    let client = connect(&patient(&mock)).await;
    let err = echo(&client, "x").await.unwrap_err();
    assert!(err.is_unexpected_answer(), "{err:?}");
    eventually("our answer to the ping that came instead", || {
        mock.seen()
            .iter()
            .any(|s| s.body.get("id") == Some(&json!("srv-9")) && s.body.get("result").is_some())
    })
    .await;
}

#[tokio::test]
async fn a_202_without_a_get_stream_fails_at_once() {
    for get in [404, 405, 406] {
        let mock = Mock::start().await;
        mock.script(move |seen, _| {
            if seen.method == Method::GET {
                return Some(status(get, ""));
            }
            (seen.rpc_method() == "tools/call").then(|| status(202, ""))
        });
        let client = connect(&patient(&mock)).await;
        let err = echo(&client, "x").await.unwrap_err();
        assert!(err.is_unexpected_answer(), "GET {get}: {err:?}");
        assert_eq!(err.http_status(), Some(202));
        // No stream, and none tried again.
        let gets = mock
            .seen()
            .iter()
            .filter(|s| s.method == Method::GET)
            .count();
        assert_eq!(gets, 1, "GET {get}");
    }
}

#[tokio::test]
async fn a_202_with_an_open_get_stream_waits_for_the_response_there() {
    let mock = Mock::start().await;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let rx = std::sync::Mutex::new(Some(rx));
    mock.script(move |seen, _| {
        if seen.method == Method::GET {
            return lock(&rx).take().map(sse_channel);
        }
        (seen.rpc_method() == "tools/call").then(|| {
            let done = answer(seen);
            let _ = tx.send(bytes::Bytes::from(format!("data: {done}\n\n")));
            status(202, "")
        })
    });
    let client = connect(&patient(&mock)).await;
    assert_eq!(echo(&client, "later").await.unwrap(), "echo: later");
}

#[tokio::test]
async fn requests_wait_for_the_initialized_notifications_answer() {
    // Longer than the wait for the GET stream's first answer (2 s), which was all that held
    // requests back before.
    const HELD: Duration = Duration::from_millis(2500);
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.rpc_method() == "notifications/initialized").then(|| slow(202, HELD))
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    within("tools/list", client.list_tools()).await.unwrap();
    let initialized = &mock.posts("notifications/initialized")[0];
    let list = &mock.posts("tools/list")[0];
    assert!(
        list.at >= initialized.at + HELD,
        "tools/list went {:?} after the notification",
        list.at - initialized.at
    );
}

/// A scripted answer.
type Reply = fn() -> http::Response<crate::http_mock::Body>;

/// A mock whose sessions after the first list one more tool, and whose first session
/// expires at its first tools/call with `expired`.
fn expiring(mock: &Mock, expired: Reply) {
    mock.script(
        move |seen, _| match (seen.rpc_method(), seen.header("mcp-session-id")) {
            ("tools/call", Some("s1")) => Some(expired()),
            ("tools/list", Some(session)) if session != "s1" => {
                let mut list = answer(seen);
                list["result"]["tools"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({ "name": "fresh", "inputSchema": { "type": "object" } }));
                Some(json_response(&list))
            }
            _ => None,
        },
    );
}

#[tokio::test]
async fn session_expiry_as_real_servers_answer_it_reinitializes_and_refreshes_the_lists() {
    let answers: [(&str, Reply); 3] = [
        ("404", || status(404, "")),
        ("server-everything", || {
            status(
                400,
                r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
            )
        }),
        ("FastMCP", || status(400, "Bad Request: no session")),
    ];
    for (who, expired) in answers {
        let mock = Mock::start().await;
        expiring(&mock, expired);
        let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
        assert_eq!(client.list_tools().await.unwrap().len(), 1, "{who}");
        assert_eq!(
            echo(&client, "again").await.unwrap(),
            "echo: again",
            "{who}"
        );
        assert_eq!(mock.posts("initialize").len(), 2, "{who}");
        assert_eq!(
            mock.posts("tools/call")[1].header("mcp-session-id"),
            Some("s2")
        );
        eventually("the tool list of the new session", || {
            client.tools().len() == 2
        })
        .await;
        let relisted = mock.posts("tools/list");
        assert_eq!(
            relisted.last().unwrap().header("mcp-session-id"),
            Some("s2"),
            "{who}"
        );
    }
}

#[tokio::test]
async fn a_400_that_does_not_name_the_session_is_a_status_error() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.rpc_method() == "tools/call").then(|| status(400, "invalid params"))
    });
    let client = connect(&patient(&mock)).await;
    let err = echo(&client, "x").await.unwrap_err();
    assert_eq!(err.http_status(), Some(400), "{err}");
    assert_eq!(mock.posts("initialize").len(), 1);
}

#[tokio::test]
async fn many_calls_in_flight_at_expiry_reinitialize_once() {
    const CALLS: usize = 16;
    let mock = Mock::start().await;
    expiring(&mock, || status(400, "No valid session ID"));
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    let calls = (0..CALLS).map(|n| {
        let client = client.clone();
        async move { echo(&client, &n.to_string()).await }
    });
    let results = within("the calls", futures_util::future::join_all(calls)).await;
    for (n, result) in results.into_iter().enumerate() {
        assert_eq!(result.unwrap(), format!("echo: {n}"));
    }
    assert_eq!(mock.posts("initialize").len(), 2, "one re-initialize");
    let on_s1 = mock
        .posts("tools/call")
        .iter()
        .filter(|s| s.header("mcp-session-id") == Some("s1"))
        .count();
    assert!(on_s1 >= 1);
    assert_eq!(mock.posts("tools/call").len(), CALLS + on_s1);
}

#[tokio::test]
async fn initialize_is_retried_while_the_server_is_unavailable_honouring_retry_after() {
    let mock = Mock::start().await;
    mock.script(|seen, mock| {
        if seen.rpc_method() != "initialize" {
            return None;
        }
        let retry_after = match mock.posts("initialize").len() {
            1 => "0",
            2 => "1",
            _ => return None,
        };
        let mut response = status(503, "starting");
        response
            .headers_mut()
            .insert("retry-after", retry_after.parse().unwrap());
        Some(response)
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    assert_eq!(echo(&client, "up").await.unwrap(), "echo: up");
    let inits = mock.posts("initialize");
    assert_eq!(inits.len(), 3);
    let waited = inits[2].at - inits[1].at;
    assert!(waited >= Duration::from_millis(950), "{waited:?}");
}

#[tokio::test]
async fn initialize_retries_are_bounded_in_count_and_by_the_startup_budget() {
    for (code, retry_after, budget, attempts) in [
        // No Retry-After: the backoff, until the attempts run out.
        (502, None, Duration::from_secs(30), 5),
        (504, Some("0"), Duration::from_secs(30), 5),
        // A Retry-After past the startup budget: the answer stands at once.
        (503, Some("60"), Duration::from_secs(5), 1),
        (
            503,
            Some("Fri, 31 Dec 9999 23:59:59 GMT"),
            Duration::from_secs(5),
            1,
        ),
    ] {
        let mock = Mock::start().await;
        mock.script(move |seen, _| {
            (seen.rpc_method() == "initialize").then(|| {
                let mut response = status(code, "");
                if let Some(value) = retry_after {
                    response
                        .headers_mut()
                        .insert("retry-after", value.parse().unwrap());
                }
                response
            })
        });
        let spec = ServerSpec::http("web", mock.url("/mcp")).startup_timeout(budget);
        let err = within("connect", Client::connect(&spec, NoHandler))
            .await
            .unwrap_err();
        assert_eq!(err.http_status(), Some(code), "{err}");
        assert_eq!(
            mock.posts("initialize").len(),
            attempts,
            "{code} {retry_after:?}"
        );
    }
}

#[tokio::test]
async fn initialize_is_retried_until_a_refused_port_listens() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spec = ServerSpec::http("web", format!("http://127.0.0.1:{port}/mcp"));
    let connecting = tokio::spawn(async move { Client::connect(&spec, NoHandler).await });
    // The first attempt goes at once and is refused (nothing listens); the retry comes 250 ms
    // later. This wait only places the listener between them: were it late or early, the
    // test would still pass, having tested less.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_stop, stop) = tokio::sync::watch::channel(false);
    let mock = Mock::start_on(port, stop).await;
    let (client, driver) = within("connect", connecting).await.unwrap().unwrap();
    tokio::spawn(driver);
    assert_eq!(echo(&client, "up").await.unwrap(), "echo: up");
    assert_eq!(mock.posts("initialize").len(), 1);
}

#[tokio::test]
async fn a_bare_url_falls_back_to_legacy_sse_on_400_and_404() {
    for code in [400, 404] {
        let mock = Mock::start().await;
        mock.script(move |seen, _| {
            (seen.method == Method::POST && seen.path == "/sse").then(|| status(code, ""))
        });
        let client = connect(&ServerSpec::http("auto", mock.url("/sse"))).await;
        assert_eq!(echo(&client, "fallback").await.unwrap(), "echo: fallback");
        let inits = mock.posts("initialize");
        assert_eq!(inits.len(), 2, "{code}"); // Streamable, then legacy.
        assert_eq!(inits[1].path, "/messages?session=1");
    }
}

#[tokio::test]
async fn the_get_stream_reconnects_with_the_last_event_id() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        if seen.method != Method::GET {
            return None;
        }
        Some(match seen.header("last-event-id") {
            // The first stream sets an id and a short retry, then ends.
            None => sse(vec![(
                Duration::ZERO,
                "id: g1\nretry: 50\ndata: \n\n".to_owned(),
            )]),
            Some(_) => sse(vec![
                (Duration::ZERO, "id: g2\ndata: \n\n".to_owned()),
                (Duration::from_secs(30), String::new()),
            ]),
        })
    });
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    client.list_tools().await.unwrap();
    eventually("the GET stream's reconnect", || {
        mock.seen()
            .iter()
            .any(|s| s.method == Method::GET && s.header("last-event-id").is_some())
    })
    .await;
    let gets: Vec<_> = mock
        .seen()
        .into_iter()
        .filter(|s| s.method == Method::GET)
        .collect();
    assert_eq!(gets[0].header("last-event-id"), None);
    assert_eq!(gets[1].header("last-event-id"), Some("g1"));
    assert_eq!(gets[1].header("mcp-session-id"), Some("s1"));
}

#[tokio::test]
async fn the_closing_delete_carries_the_session_and_the_protocol_version() {
    let mock = Mock::start().await;
    let client = connect(&ServerSpec::http("web", mock.url("/mcp"))).await;
    within("close", client.close()).await;
    let delete = mock
        .seen()
        .into_iter()
        .find(|s| s.method == Method::DELETE)
        .expect("a DELETE");
    assert_eq!(delete.header("mcp-session-id"), Some("s1"));
    assert_eq!(delete.header("mcp-protocol-version"), Some("2025-11-25"));
}

/// The secrets filled into a server URL (as a config's variables are), in the tests below.
const URL_SECRETS: [(&str, &str); 3] = [
    ("API_KEY", "qk-1234-never-print"),
    ("API_PASSWORD", "pw-5678-never-print"),
    ("API_TENANT", "tn-9012-never-print"),
];

/// The server `remote` whose URL (under `base`) has a secret userinfo, path segment and query
/// value, the values given as its URL secrets (what `sidewire-mcp-config` does for the values
/// it expands into a URL), with a short startup budget.
fn spec_with_url_secrets(base: &str) -> ServerSpec {
    let [(_, key), (_, password), (_, tenant)] = URL_SECRETS;
    let url = format!("http://svc:{password}@{base}/{tenant}/mcp?key={key}&x=1");
    ServerSpec::http("remote", url)
        .url_secrets(URL_SECRETS.map(|(_, value)| value))
        .startup_timeout(Duration::from_secs(2))
}

fn assert_no_url_secret(text: &str) {
    for (name, value) in URL_SECRETS {
        assert!(!text.contains(value), "{name}'s value is in: {text}");
    }
}

#[tokio::test]
async fn a_server_error_never_shows_the_secrets_expanded_into_its_url() {
    let mock = Mock::start().await;
    // A 500 whose body echoes the request line, as many frameworks' error pages do.
    mock.script(|seen, _| {
        Some(typed(
            500,
            "text/plain",
            format!("no route for {}", seen.path),
        ))
    });
    let base = mock.addr.to_string();
    let spec = spec_with_url_secrets(&base);
    let err = within("connect", Client::connect(&spec, NoHandler))
        .await
        .expect_err("a 500 fails the connection");
    assert!(err.is_http(), "{err}");
    let text = err.to_string();
    assert_no_url_secret(&text);
    assert_no_url_secret(&format!("{err:?}"));
    // What is not secret still says where.
    assert!(
        text.contains(&format!(
            "http://REDACTED@{base}/REDACTED/mcp?key=REDACTED&x=REDACTED"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn an_unreachable_server_never_shows_the_secrets_expanded_into_its_url() {
    // A port nothing listens on: the connection is refused.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = listener.local_addr().unwrap().to_string();
    drop(listener);
    let spec = spec_with_url_secrets(&base);
    let err = within("connect", Client::connect(&spec, NoHandler))
        .await
        .expect_err("nothing listens there");
    assert!(err.is_http() && err.http_status().is_none(), "{err}");
    assert_no_url_secret(&err.to_string());
    assert_no_url_secret(&format!("{err:?}"));
}
