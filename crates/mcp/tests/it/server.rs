//! sidewire-mcp-server's `Toolbox` (which replaced this crate's `server` module) against the
//! client, in process: the handshake (the modern era, which `auto` finds), its listing, a call
//! with progress, and the end; and, through a raw JSON-RPC peer, its checks of the modern
//! envelope and its legacy answers after `initialize`.

use std::sync::{Arc, Mutex};

use serde_json::json;
use sidewire_mcp::{CallToolResult, Client, Era, NoHandler, ServerSpec, ToolCallOptions};
use sidewire_mcp_server::Toolbox;

use crate::support::within;

#[tokio::test]
async fn the_test_server_lists_and_runs_its_tools_with_progress() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = Toolbox::new("test-server", "1.2.3").tool(
        "echo",
        "Echoes its text back",
        json!({"type": "object"}),
        |args, context| async move {
            context.progress(0.5, Some(1.0), Some("half way")).await;
            CallToolResult::text(args["text"].as_str().unwrap_or_default())
        },
    );
    let (server_read, server_write) = tokio::io::split(server_io);
    let serving = tokio::spawn(server.serve(server_read, server_write));
    let (read, write) = tokio::io::split(client_io);
    let spec = ServerSpec::stdio("test", "unused");
    let (client, driver) = within(
        "connect",
        Client::connect_streams(&spec, read, write, NoHandler),
    )
    .await
    .expect("the handshake succeeds");
    tokio::spawn(driver);
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().name, "test-server");
    assert_eq!(client.server_info().version, "1.2.3");
    let tools = within("tools/list", client.list_tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["echo"]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let progress = Arc::clone(&seen);
    let options = ToolCallOptions::new().on_progress(move |report| {
        progress.lock().unwrap().push(report.progress);
    });
    let result = within(
        "tools/call",
        client.call_tool("echo", json!({"text": "hi"}), options),
    )
    .await
    .unwrap();
    assert_eq!(result.joined_text(), "hi");
    assert_eq!(
        *seen.lock().unwrap(),
        [0.5],
        "progress arrives before the result"
    );
    let unknown = within(
        "tools/call",
        client.call_tool("missing", json!({}), ToolCallOptions::new()),
    )
    .await;
    let err = unknown.expect_err("an unknown tool is refused");
    assert_eq!(err.remote().map(|error| error.code), Some(-32602));
    client.close().await;
    within("the server ends", serving)
        .await
        .unwrap()
        .expect("the server sees a clean end");
}

/// A raw JSON-RPC peer connected to a fresh `Toolbox` with one tool.
async fn raw_peer() -> sidewire_jsonrpc::Peer {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = Toolbox::new("raw", "1").tool(
        "echo",
        "Echoes its text back",
        json!({"type": "object"}),
        |args, _| async move { CallToolResult::text(args["text"].as_str().unwrap_or_default()) },
    );
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(server.serve(read, write));
    let config = sidewire_jsonrpc::Config::new(sidewire_jsonrpc::Profile::Lenient, 1 << 20);
    let (read, write) = tokio::io::split(client_io);
    let (stream, sink) = sidewire_jsonrpc::ndjson(read, write, &config);
    let (peer, driver) =
        sidewire_jsonrpc::connect(stream, sink, sidewire_jsonrpc::Router::new(), config);
    tokio::spawn(driver);
    peer
}

async fn ask(
    peer: &sidewire_jsonrpc::Peer,
    method: &str,
    params: serde_json::Value,
) -> Result<serde_json::Value, sidewire_jsonrpc::ErrorObject> {
    within(method, peer.call(method, Some(&params), Default::default()))
        .await
        .map(|raw| raw.decode().unwrap())
        .map_err(|err| err.remote().cloned().expect("a JSON-RPC error"))
}

fn envelope(version: &str) -> serde_json::Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// The answer to a modern request: `params` with the 2026-07-28 envelope.
async fn modern_ok(
    peer: &sidewire_jsonrpc::Peer,
    method: &str,
    mut params: serde_json::Value,
) -> serde_json::Value {
    params["_meta"] = envelope("2026-07-28");
    ask(peer, method, params).await.unwrap()
}

#[tokio::test]
async fn the_built_in_server_checks_the_modern_envelope() {
    let peer = raw_peer().await;
    let discovered = modern_ok(&peer, "server/discover", json!({})).await;
    let versions = discovered["supportedVersions"].as_array().unwrap();
    assert_eq!(versions[0], "2026-07-28");
    assert!(versions.contains(&json!("2025-11-25")), "{discovered}");
    assert!(versions.contains(&json!("2024-11-05")), "{discovered}");
    assert_eq!(discovered["capabilities"], json!({"tools": {}}));
    assert_eq!(
        discovered["serverInfo"],
        json!({"name": "raw", "version": "1"})
    );
    assert_eq!(discovered["resultType"], "complete");
    assert_eq!(discovered["ttlMs"], 0);
    assert_eq!(discovered["cacheScope"], "private");

    let listed = modern_ok(&peer, "tools/list", json!({})).await;
    assert_eq!(listed["tools"][0]["name"], "echo");
    assert_eq!(listed["resultType"], "complete");
    assert_eq!(listed["ttlMs"], 0);
    assert_eq!(listed["cacheScope"], "private");
    let arguments = json!({"name": "echo", "arguments": {"text": "hi"}});
    let called = modern_ok(&peer, "tools/call", arguments).await;
    assert_eq!(called["content"][0]["text"], "hi");
    assert_eq!(called["resultType"], "complete");
    assert!(called.get("ttlMs").is_none(), "{called}");

    // No envelope, or half of one: -32602.
    for params in [
        json!({}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
    ] {
        let err = ask(&peer, "tools/list", params.clone()).await.unwrap_err();
        assert_eq!(err.code, -32602, "{params}");
    }
    // A version it does not speak, legacy ones included: -32022 naming what it does.
    for version in ["2030-01-01", "2025-11-25"] {
        let err = ask(
            &peer,
            "tools/call",
            json!({"name": "echo", "_meta": envelope(version)}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code, -32022, "{version}");
        assert_eq!(
            err.data,
            Some(json!({"supported": ["2026-07-28"], "requested": version}))
        );
    }
}

#[tokio::test]
async fn after_initialize_the_built_in_server_is_legacy() {
    let peer = raw_peer().await;
    let init = ask(
        &peer,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    )
    .await
    .unwrap();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    let listed = ask(&peer, "tools/list", json!({})).await.unwrap();
    assert_eq!(
        listed,
        json!({"tools": [{"name": "echo", "description": "Echoes its text back", "inputSchema": {"type": "object"}}]})
    );
    let called = ask(
        &peer,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    )
    .await
    .unwrap();
    assert!(called.get("resultType").is_none(), "{called}");
    assert_eq!(ask(&peer, "ping", json!({})).await.unwrap(), json!({}));
}
