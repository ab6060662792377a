//! The minimal test server (`sidewire_mcp::server`, behind the `server` feature) against the
//! client, in process: the handshake, its one-page listing, a call with progress, and the end.

use std::sync::{Arc, Mutex};

use serde_json::json;
use sidewire_mcp::server::Server;
use sidewire_mcp::{CallToolResult, Client, NoHandler, ServerSpec, ToolCallOptions};

use crate::support::within;

#[tokio::test]
async fn the_test_server_lists_and_runs_its_tools_with_progress() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = Server::new("test-server", "1.2.3").tool(
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
