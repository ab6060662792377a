//! Real MCP servers over HTTP, at the versions `.ci/mcp-peers/install.sh` pins:
//! server-everything in its `streamableHttp` and `sse` modes and the Python SDK peer
//! (`tests/peers/py_peer.py`) in `streamable-http` (legacy and modern era; stateful, stateless,
//! JSON responses) and `sse` modes. Gated like the stdio peer
//! tests (`SIDEWIRE_MCP_PEERS`, `SIDEWIRE_REQUIRE_PEERS`). Every server listens on 127.0.0.1 on
//! a port found free just before, and is killed when its test ends, however it ends.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sidewire_mcp::{Era, EraChoice, ServerSpec, Transport};
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
    python_with(dir, mode, port, &[]).await
}

/// The Python peer with `flags` after its port (`stateless`, `json`: see py_peer.py).
async fn python_with(dir: &Path, mode: &str, port: u16, flags: &[&str]) -> Server {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_peer.py");
    let mut command = Command::new(dir.join(PYTHON));
    command
        .arg(script)
        .arg(mode)
        .arg(port.to_string())
        .args(flags);
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

/// The Python peer over Streamable HTTP in the modern era, reached with [`EraChoice::Auto`]:
/// listing, a plain call, a multi-round-trip call answered by the handler, a ping, a close.
async fn exercise_modern(flags: &[&str]) {
    let what = format!("the Python SDK peer over modern Streamable HTTP {flags:?}");
    let Some(dir) = peers(&what, PYTHON) else {
        return;
    };
    let server = python_with(&dir, "streamable-http", free_port(), flags).await;
    let spec = ServerSpec::http("py", server.url("/mcp"));
    assert_eq!(spec.era_choice(), EraChoice::Auto);
    let yes = Arc::new(Yes::default());
    let client = connect(&spec, Handler(Arc::clone(&yes))).await;
    assert_eq!(client.era(), Era::Modern, "{flags:?}");
    assert_eq!(client.protocol_version(), "2026-07-28");
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "pick"), "{tools:?}");
    assert_eq!(call(&client, "add", json!({"a": 2, "b": 3})).await, "5");
    assert_eq!(call(&client, "pick", json!({})).await, "blue 7");
    assert_eq!(lock(&yes.elicitations).len(), 1);
    // Progress notifications ride the POST's response stream.
    let steps = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&steps);
    let options =
        sidewire_mcp::ToolCallOptions::new().on_progress(move |p| lock(&sink).push(p.progress));
    let slow = within(
        "slow",
        client.call_tool("slow", json!({"steps": 2}), options),
    )
    .await
    .unwrap();
    assert_eq!(slow.joined_text(), "done after 2 steps");
    if !flags.contains(&"json") {
        assert_eq!(lock(&steps).clone(), [1.0, 2.0], "{flags:?}");
    }
    client.ping().await.unwrap();
    within("close", client.close()).await;
    assert!(client.is_closed());
    server.stop().await;
}

#[tokio::test]
async fn python_sdk_server_over_modern_streamable_http_stateful() {
    exercise_modern(&[]).await;
}

#[tokio::test]
async fn python_sdk_server_over_modern_streamable_http_stateless() {
    exercise_modern(&["stateless"]).await;
}

#[tokio::test]
async fn python_sdk_server_over_modern_streamable_http_stateless_json() {
    exercise_modern(&["stateless", "json"]).await;
}

/// A modern server restarted on its port under a live client: there is no session to renew,
/// so the next call simply goes to the new process, still in the modern era.
#[tokio::test]
async fn a_restarted_modern_python_sdk_server_keeps_answering() {
    let Some(dir) = peers(
        "a_restarted_modern_python_sdk_server_keeps_answering",
        PYTHON,
    ) else {
        return;
    };
    let first = python(&dir, "streamable-http").await;
    let spec = ServerSpec::http("py", first.url("/mcp"));
    let client = connect(&spec, Handler(Arc::new(Yes::default()))).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(call(&client, "add", json!({"a": 2, "b": 3})).await, "5");
    let port = first.port;
    first.stop().await;
    let second = python_on(&dir, "streamable-http", port).await;
    assert_eq!(call(&client, "add", json!({"a": 4, "b": 5})).await, "9");
    assert_eq!(client.era(), Era::Modern);
    assert!(
        client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "add")
    );
    within("close", client.close()).await;
    second.stop().await;
}
