//! The modern era (2026-07-28) over Streamable HTTP against the in-process mock
//! ([`crate::http_mock`]): the headers of a modern POST (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, the `Mcp-Param-*` mirrors) and no session, no GET stream and no DELETE; error
//! statuses whose bodies are JSON-RPC errors reaching the caller typed; a legacy server's
//! answer to the probe; cancellation and timeouts by closing the response stream; and a broken
//! SSE answer, which fails a call but sends an idempotent request again.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};
use sidewire_mcp::{Client, Era, MAX_HEADER_VALUE_BYTES, ServerSpec, ToolCallOptions};
use tokio::sync::mpsc;

use crate::http::connect;
use crate::http_mock::{Body, Mock, Seen, answer, json_response, sse, sse_channel, typed};
use crate::support::*;

/// `Response<Body>`.
type Response = http::Response<Body>;

fn spec(mock: &Mock) -> ServerSpec {
    ServerSpec::http("modern", mock.url("/mcp")).call_timeout(Duration::from_secs(120))
}

fn id(seen: &Seen) -> Value {
    seen.body.get("id").cloned().unwrap_or(Value::Null)
}

/// A result answer to `seen`, `resultType: "complete"` added, carrying an `Mcp-Session-Id`
/// (which a modern client must not send back).
fn complete(seen: &Seen, mut result: Value) -> Response {
    result["resultType"] = json!("complete");
    let mut response = json_response(&json!({"jsonrpc": "2.0", "id": id(seen), "result": result}));
    response
        .headers_mut()
        .insert("mcp-session-id", "not-for-the-modern-era".parse().unwrap());
    response
}

/// An error answer to `seen` with this HTTP status.
fn error_status(seen: &Seen, status: u16, code: i64, data: Option<Value>) -> Response {
    let mut error = json!({"code": code, "message": "refused"});
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({"jsonrpc": "2.0", "id": id(seen), "error": error});
    typed(status, "application/json", body.to_string())
}

/// The tools the header test lists: one with designations of every kind.
fn header_tools() -> Value {
    json!({"tools": [{"name": "headers", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "pad": {"type": "string", "x-mcp-header": "Pad"},
        "text": {"type": "string", "x-mcp-header": "NonAscii"},
        "query": {"type": "string"}
    }}}]})
}

/// A modern server: `server/discover` names 2026-07-28, everything else is answered as the
/// default mock would, `complete`.
fn modern(seen: &Seen) -> Option<Response> {
    if seen.method != Method::POST {
        return None;
    }
    let result = match seen.rpc_method() {
        "server/discover" => json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "modern-http", "version": "1"},
            "ttlMs": 0,
            "cacheScope": "private",
        }),
        "prompts/get" => json!({"messages": []}),
        "resources/read" => json!({"contents": []}),
        _ => answer(seen)["result"].clone(),
    };
    Some(complete(seen, result))
}

async fn echo(client: &Client) -> Result<String, sidewire_mcp::Error> {
    crate::http::echo(client, "hi").await
}

#[tokio::test]
async fn a_modern_post_carries_the_headers_and_no_session() {
    let mock = Mock::start().await;
    mock.script(|seen, _| match seen.rpc_method() {
        "tools/list" => Some(complete(seen, header_tools())),
        _ => modern(seen),
    });
    let client = connect(&spec(&mock)).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().name, "modern-http");
    within("tools/list", client.list_tools()).await.unwrap();
    let arguments = json!({
        "region": "us-west1", "priority": 42, "verbose": null, "pad": " padded ",
        "text": "Hello, 世界", "query": "SELECT 1"
    });
    within(
        "tools/call",
        client.call_tool("headers", arguments, ToolCallOptions::new()),
    )
    .await
    .unwrap();
    within(
        "tools/call",
        client.call_tool("headers", json!({"priority": 1}), ToolCallOptions::new()),
    )
    .await
    .unwrap();
    within("prompts/get", client.get_prompt("greet", BTreeMap::new()))
        .await
        .unwrap();
    let uri = "file:///path/to/file%20name.txt";
    within("resources/read", client.read_resource(uri))
        .await
        .unwrap();
    within("close", client.close()).await;

    let seen = mock.seen();
    // Only POSTs: no GET stream, no DELETE on close.
    assert!(seen.iter().all(|s| s.method == Method::POST), "{seen:?}");
    assert_eq!(seen.len(), 6, "{seen:?}");
    for post in &seen {
        let version = post.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .unwrap();
        assert_eq!(
            post.header("mcp-protocol-version"),
            Some(version),
            "{post:?}"
        );
        assert_eq!(
            post.header("mcp-method"),
            Some(post.rpc_method()),
            "{post:?}"
        );
        assert_eq!(post.header("mcp-session-id"), None, "{post:?}");
        let name = match post.rpc_method() {
            "tools/call" => Some("headers"),
            "prompts/get" => Some("greet"),
            "resources/read" => Some(uri),
            _ => None,
        };
        assert_eq!(post.header("mcp-name"), name, "{post:?}");
    }
    let calls = mock.posts("tools/call");
    let first = &calls[0];
    let b64 = |text: &str| {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    };
    assert_eq!(first.header("mcp-param-region"), Some("us-west1"));
    assert_eq!(first.header("mcp-param-priority"), Some("42"));
    assert_eq!(first.header("mcp-param-verbose"), None, "null: no header");
    assert_eq!(
        first.header("mcp-param-pad"),
        Some(b64(" padded ").as_str())
    );
    assert_eq!(
        first.header("mcp-param-nonascii"),
        Some(b64("Hello, 世界").as_str())
    );
    let params: Vec<&str> = first
        .headers
        .keys()
        .map(|name| name.as_str())
        .filter(|name| name.starts_with("mcp-param-"))
        .collect();
    assert_eq!(
        params.len(),
        4,
        "no header for an undesignated argument: {params:?}"
    );
    // Absent arguments get no header.
    let second = &calls[1];
    assert_eq!(second.header("mcp-param-priority"), Some("1"));
    assert_eq!(second.header("mcp-param-region"), None);
    assert_eq!(second.header("mcp-param-pad"), None);
}

#[tokio::test]
async fn a_400_with_unsupported_version_renegotiates_once() {
    let mock = Mock::start().await;
    let unsupported = |seen: &Seen| {
        error_status(
            seen,
            400,
            -32022,
            Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
        )
    };
    mock.script(move |seen, mock| match seen.rpc_method() {
        "tools/list" if mock.posts("tools/list").len() == 1 => Some(unsupported(seen)),
        "tools/call" => Some(unsupported(seen)),
        _ => modern(seen),
    });
    let client = connect(&spec(&mock)).await;
    within("tools/list", client.list_tools()).await.unwrap();
    let lists = mock.posts("tools/list");
    assert_eq!(lists.len(), 2);
    assert_ne!(lists[0].body["id"], lists[1].body["id"]);
    assert_eq!(lists[1].header("mcp-protocol-version"), Some("2026-07-28"));
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_incompatible_version(), "{err:?}");
    assert_eq!(mock.posts("tools/call").len(), 2);
    assert!(mock.posts("initialize").is_empty());
}

#[tokio::test]
async fn a_header_value_over_the_cap_is_refused_before_anything_is_sent() {
    let mock = Mock::start().await;
    mock.script(|seen, _| match seen.rpc_method() {
        "tools/list" => Some(complete(seen, header_tools())),
        _ => modern(seen),
    });
    let client = connect(&spec(&mock)).await;
    within("tools/list", client.list_tools()).await.unwrap();
    let call = |arguments: Value| {
        within(
            "tools/call",
            client.call_tool("headers", arguments, ToolCallOptions::new()),
        )
    };
    // At the cap: sent, the header whole.
    let at_cap = "r".repeat(MAX_HEADER_VALUE_BYTES);
    call(json!({"region": at_cap})).await.unwrap();
    let posts = mock.posts("tools/call");
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].header("mcp-param-region"), Some(at_cap.as_str()));
    // One byte over (here a 1 MiB argument): refused, typed, and not a byte on the wire.
    for value in [
        "r".repeat(MAX_HEADER_VALUE_BYTES + 1),
        "r".repeat(1024 * 1024),
    ] {
        let err = call(json!({"region": value})).await.unwrap_err();
        assert!(err.is_too_large(), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("Mcp-Param-Region"), "{text}");
        assert!(text.len() < 1024, "{} bytes", text.len());
    }
    // The same for a value whose base64 form, which is what is sent, is over the cap.
    let err = call(json!({"text": "é".repeat(MAX_HEADER_VALUE_BYTES / 2)}))
        .await
        .unwrap_err();
    assert!(err.is_too_large(), "{err:?}");
    assert_eq!(mock.posts("tools/call").len(), 1);
    // The connection lives on.
    call(json!({"region": "eu"})).await.unwrap();
    assert_eq!(mock.posts("tools/call").len(), 2);
}

/// What a legacy Streamable HTTP server answers a request before `initialize`.
fn not_initialized(seen: &Seen) -> Response {
    error_status(seen, 400, -32000, None)
}

#[tokio::test]
async fn a_legacy_servers_400_to_the_probe_falls_back_to_initialize() {
    let mock = Mock::start().await;
    mock.script(|seen, _| (seen.rpc_method() == "server/discover").then(|| not_initialized(seen)));
    let client = connect(&spec(&mock)).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(mock.posts("server/discover").len(), 1);
    assert_eq!(mock.posts("initialize").len(), 1);
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
    let call = &mock.posts("tools/call")[0];
    assert_eq!(call.header("mcp-session-id"), Some("s1"));
}

#[tokio::test]
async fn a_legacy_sse_servers_400s_fall_back_to_initialize_then_to_http_sse() {
    let mock = Mock::start().await;
    mock.script(|seen, _| {
        (seen.method == Method::POST && seen.path == "/sse").then(|| not_initialized(seen))
    });
    let client = connect(&ServerSpec::http("auto", mock.url("/sse"))).await;
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(echo(&client).await.unwrap(), "echo: hi");
    assert_eq!(mock.posts("server/discover").len(), 1);
    let inits = mock.posts("initialize");
    assert_eq!(inits.len(), 2); // Streamable, then legacy.
    assert_eq!(inits[1].path, "/messages?session=1");
}

#[tokio::test]
async fn a_404_method_not_found_to_a_modern_call_is_a_remote_error() {
    let mock = Mock::start().await;
    mock.script(|seen, _| match seen.rpc_method() {
        "tools/call" => Some(error_status(seen, 404, -32601, None)),
        _ => modern(seen),
    });
    let client = connect(&spec(&mock)).await;
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_remote(), "{err:?}");
    assert_eq!(err.remote().unwrap().code, -32601);
    // Not a session expiry: nothing initialized, nothing sent again.
    assert!(mock.posts("initialize").is_empty());
    assert_eq!(mock.posts("tools/call").len(), 1);
    // The connection lives on.
    within("tools/list", client.list_tools()).await.unwrap();
}

/// A script that answers `tools/call` with an SSE stream that never ends, whose sender it
/// hands to `streams`.
fn hanging_calls(
    streams: mpsc::UnboundedSender<mpsc::UnboundedSender<Bytes>>,
) -> impl Fn(&Seen, &Mock) -> Option<Response> + Send + Sync + 'static {
    let streams = Mutex::new(streams);
    move |seen, _| match seen.rpc_method() {
        "tools/call" => {
            let (tx, rx) = mpsc::unbounded_channel();
            let _ = lock(&streams).send(tx);
            Some(sse_channel(rx))
        }
        _ => modern(seen),
    }
}

/// Waits until the server's side of `stream` is gone (the client closed the connection):
/// keep-alive comments go out until one cannot.
async fn closed_by_the_client(stream: mpsc::UnboundedSender<Bytes>) {
    within("the server to see the stream closed", async {
        while stream.send(Bytes::from_static(b": keep-alive\n\n")).is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}

/// A modern HTTP server whose `tools/call` answers with a stream that never ends, connected;
/// the receiver yields each such stream's sender.
async fn hanging() -> (
    Mock,
    Client,
    mpsc::UnboundedReceiver<mpsc::UnboundedSender<Bytes>>,
) {
    let mock = Mock::start().await;
    let (streams, opened) = mpsc::unbounded_channel();
    mock.script(hanging_calls(streams));
    let client = connect(&spec(&mock)).await;
    (mock, client, opened)
}

/// After the client closed `stream`: a round trip (so a cancel queued with the close would
/// have gone by now), and no `notifications/cancelled` was POSTed.
async fn closed_without_a_cancel(
    mock: &Mock,
    client: &Client,
    stream: mpsc::UnboundedSender<Bytes>,
) {
    closed_by_the_client(stream).await;
    within("tools/list", client.list_tools()).await.unwrap();
    let cancels = mock.posts("notifications/cancelled");
    assert!(cancels.is_empty(), "{cancels:?}");
}

#[tokio::test]
async fn dropping_a_modern_call_closes_its_stream_and_posts_no_cancel() {
    let (mock, client, mut opened) = hanging().await;
    let caller = client.clone();
    let call = tokio::spawn(async move { echo(&caller).await });
    let stream = within("the call's stream", opened.recv()).await.unwrap();
    call.abort();
    closed_without_a_cancel(&mock, &client, stream).await;
}

#[tokio::test]
async fn a_modern_call_that_times_out_closes_its_stream_and_posts_no_cancel() {
    let (mock, client, mut opened) = hanging().await;
    let options = ToolCallOptions::new().timeout(Duration::from_millis(300));
    let call = client.call_tool("echo", json!({}), options);
    let (result, stream) = tokio::join!(within("the timeout", call), async {
        within("the call's stream", opened.recv()).await.unwrap()
    });
    let err = result.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    closed_without_a_cancel(&mock, &client, stream).await;
}

#[tokio::test]
async fn progress_arrives_on_the_calls_own_stream() {
    let mock = Mock::start().await;
    mock.script(|seen, _| match seen.rpc_method() {
        "tools/call" => {
            let token = seen.body["params"]["_meta"]["progressToken"].clone();
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2}});
            let mut response = answer(seen);
            response["result"]["resultType"] = json!("complete");
            Some(sse(vec![
                (
                    Duration::ZERO,
                    format!("event: message\ndata: {progress}\n\n"),
                ),
                (
                    Duration::ZERO,
                    format!("event: message\ndata: {response}\n\n"),
                ),
            ]))
        }
        _ => modern(seen),
    });
    let client = connect(&spec(&mock)).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options =
        ToolCallOptions::new().on_progress(move |report| lock(&sink).push(report.progress));
    let result = within(
        "tools/call",
        client.call_tool("echo", json!({"message": "p"}), options),
    )
    .await
    .unwrap();
    assert_eq!(result.joined_text(), "echo: p");
    assert_eq!(*lock(&seen), [1.0]);
}

#[tokio::test]
async fn a_broken_sse_answer_fails_a_call_but_an_idempotent_request_goes_again() {
    let mock = Mock::start().await;
    let broken = || sse(vec![(Duration::ZERO, ": begun\n\n".to_owned())]);
    mock.script(move |seen, mock| match seen.rpc_method() {
        "tools/call" => Some(broken()),
        "tools/list" if mock.posts("tools/list").len() == 1 => Some(broken()),
        _ => modern(seen),
    });
    let client = connect(&spec(&mock)).await;
    let err = echo(&client).await.unwrap_err();
    assert!(err.is_http() && err.http_status().is_none(), "{err:?}");
    assert_eq!(
        mock.posts("tools/call").len(),
        1,
        "a call is not sent twice"
    );
    let tools = within("tools/list", client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 1);
    let lists = mock.posts("tools/list");
    assert_eq!(lists.len(), 2);
    assert_ne!(lists[0].body["id"], lists[1].body["id"]);
}
