//! Real MCP servers over HTTP, at the versions `.ci/mcp-peers/install.sh` pins:
//! server-everything in its `streamableHttp` and `sse` modes and the Python SDK peer
//! (`tests/peers/py_peer.py`) in `streamable-http` and `sse` modes. Gated like the stdio peer
//! tests (`SIDEWIRE_MCP_PEERS`, `SIDEWIRE_REQUIRE_PEERS`). Every server listens on 127.0.0.1 on
//! a port found free just before, and is killed when its test ends, however it ends.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sidewire_mcp::{ServerSpec, Transport};
use tokio::process::{Child, Command};

use crate::peers::{EVERYTHING, Handler, PYTHON, Yes, call, connect, peers};
use crate::support::*;

/// A peer server process, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Server {
    /// Starts `command` with the free port it needs, and waits (bounded) until it accepts.
    async fn start(mut command: Command, port: u16) -> Server {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let child = command.spawn().expect("start the peer server");
        let server = Server { child, port };
        within_for(
            "the peer server to listen",
            Duration::from_secs(30),
            async {
                while tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_err()
                {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        )
        .await;
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = within("the peer server to exit", self.child.wait()).await;
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

async fn everything(dir: &Path, mode: &str) -> Server {
    everything_on(dir, mode, free_port()).await
}

async fn everything_on(dir: &Path, mode: &str, port: u16) -> Server {
    let loopback = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/loopback.cjs");
    let mut command = Command::new("node");
    command
        .arg("--require")
        .arg(loopback)
        .arg(dir.join(EVERYTHING))
        .arg(mode)
        .env("PORT", port.to_string());
    Server::start(command, port).await
}

async fn python(dir: &Path, mode: &str) -> Server {
    python_on(dir, mode, free_port()).await
}

async fn python_on(dir: &Path, mode: &str, port: u16) -> Server {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_peer.py");
    let mut command = Command::new(dir.join(PYTHON));
    command.arg(script).arg(mode).arg(port.to_string());
    Server::start(command, port).await
}

/// The checks every HTTP peer gets: handshake, listing, a call, a ping, a clean close.
async fn exercise(spec: &ServerSpec, tool: &str, args: serde_json::Value, expect: &str) {
    let client = connect(spec, Handler(Arc::new(Yes::default()))).await;
    assert!(!client.protocol_version().is_empty());
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == tool), "{tools:?}");
    let text = call(&client, tool, args).await;
    assert!(text.contains(expect), "{tool}: {text}");
    client.ping().await.unwrap();
    within("close", client.close()).await;
    assert!(client.is_closed());
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let Some(dir) = peers("server_everything_over_streamable_http", EVERYTHING) else {
        return;
    };
    let server = everything(&dir, "streamableHttp").await;
    let spec = ServerSpec::http("everything", server.url("/mcp"));
    exercise(&spec, "get-sum", json!({"a": 2, "b": 3}), "5").await;
    server.stop().await;
}

#[tokio::test]
async fn server_everything_over_legacy_sse() {
    let Some(dir) = peers("server_everything_over_legacy_sse", EVERYTHING) else {
        return;
    };
    let server = everything(&dir, "sse").await;
    let spec = ServerSpec::sse("everything", server.url("/sse"));
    assert_eq!(spec.transport(), Transport::Sse);
    exercise(&spec, "echo", json!({"message": "hi"}), "Echo: hi").await;
    server.stop().await;
}

#[tokio::test]
async fn python_sdk_server_over_streamable_http() {
    let Some(dir) = peers("python_sdk_server_over_streamable_http", PYTHON) else {
        return;
    };
    let server = python(&dir, "streamable-http").await;
    let spec = ServerSpec::http("py", server.url("/mcp"));
    exercise(&spec, "add", json!({"a": 2, "b": 3}), "5").await;
    server.stop().await;
}

#[tokio::test]
async fn python_sdk_server_over_legacy_sse() {
    let Some(dir) = peers("python_sdk_server_over_legacy_sse", PYTHON) else {
        return;
    };
    let server = python(&dir, "sse").await;
    let spec = ServerSpec::sse("py", server.url("/sse"));
    exercise(&spec, "echo", json!({"message": "hi"}), "echo: hi").await;
    server.stop().await;
}

#[tokio::test]
async fn a_bare_url_falls_back_to_the_python_sdk_legacy_server() {
    let Some(dir) = peers(
        "a_bare_url_falls_back_to_the_python_sdk_legacy_server",
        PYTHON,
    ) else {
        return;
    };
    let server = python(&dir, "sse").await;
    let spec = ServerSpec::http("py", server.url("/sse"));
    exercise(&spec, "add", json!({"a": 20, "b": 22}), "42").await;
    server.stop().await;
}

/// A server restarted on the same port under a live client: the old session is gone (the
/// server answers 404 or a 400 naming the session), so the next call re-initializes once and
/// succeeds, and the cached tool list is fetched again from the new session.
async fn survive_a_restart<F, Fut>(
    spec: &ServerSpec,
    first: Server,
    restart: F,
    tool: &str,
    args: serde_json::Value,
    expect: &str,
) where
    F: FnOnce(u16) -> Fut,
    Fut: std::future::Future<Output = Server>,
{
    let client = connect(spec, Handler(Arc::new(Yes::default()))).await;
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == tool), "{tools:?}");
    let text = call(&client, tool, args.clone()).await;
    assert!(text.contains(expect), "{tool}: {text}");
    let listed = client.list_revision();
    let port = first.port;
    first.stop().await;
    let second = restart(port).await;
    let text = call(&client, tool, args).await;
    assert!(text.contains(expect), "{tool} after the restart: {text}");
    within(
        "the tool list refreshed from the new session",
        client.list_changed_since(listed),
    )
    .await;
    assert!(client.tools().iter().any(|t| t.name == tool));
    within("close", client.close()).await;
    second.stop().await;
}

#[tokio::test]
async fn server_everything_restarted_on_its_port_is_reconnected() {
    let Some(dir) = peers(
        "server_everything_restarted_on_its_port_is_reconnected",
        EVERYTHING,
    ) else {
        return;
    };
    let server = everything(&dir, "streamableHttp").await;
    let spec = ServerSpec::http("everything", server.url("/mcp"));
    let restart = |port| everything_on(&dir, "streamableHttp", port);
    survive_a_restart(
        &spec,
        server,
        restart,
        "get-sum",
        json!({"a": 2, "b": 3}),
        "5",
    )
    .await;
}

#[tokio::test]
async fn python_sdk_server_restarted_on_its_port_is_reconnected() {
    let Some(dir) = peers(
        "python_sdk_server_restarted_on_its_port_is_reconnected",
        PYTHON,
    ) else {
        return;
    };
    let server = python(&dir, "streamable-http").await;
    // The legacy era: a restart is a session expiry there; a modern server keeps no session.
    let spec = ServerSpec::http("py", server.url("/mcp")).era(sidewire_mcp::EraChoice::Legacy);
    let restart = |port| python_on(&dir, "streamable-http", port);
    survive_a_restart(&spec, server, restart, "add", json!({"a": 2, "b": 3}), "5").await;
}
