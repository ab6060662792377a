//! An upstream that wants a sign-in mid-session: the client's call gets a tool error that
//! names the command that signs in, and the audit record says why the call failed.

use std::time::Duration;

use serde_json::{Value, json};
use sidewire_ext_host::{ExtensionHost, HostConfig};
use sidewire_gateway::{AuditSink, Gateway, GatewayConfig, Mode, Policy};
use sidewire_mcp::auth::Authorizer;
use sidewire_mcp::{EraChoice as Era, ServerSpec};
use sidewire_mcp_server::Server;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// A legacy Streamable HTTP server on a free loopback port that starts without a token, lists
/// one tool, and answers every call with 401: a server whose grant was revoked.
async fn revoking_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(connection(stream));
        }
    });
    url
}

/// One HTTP/1.1 connection of [`revoking_upstream`], request after request.
async fn connection(stream: tokio::net::TcpStream) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).await.unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await.unwrap();
        let response = if request_line.starts_with("POST ") {
            let message: Value = serde_json::from_slice(&body).unwrap();
            let id = message["id"].clone();
            match message["method"].as_str() {
                _ if id.is_null() => status(202, "", ""),
                Some("initialize") => json_answer(
                    &id,
                    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "revoking", "version": "1"}}),
                ),
                Some("tools/list") => json_answer(
                    &id,
                    json!({"tools": [{"name": "revoked", "inputSchema": {"type": "object"}}]}),
                ),
                Some("tools/call") => status(401, "www-authenticate: Bearer\r\n", ""),
                _ => {
                    let error = json!({"jsonrpc": "2.0", "id": id,
                                       "error": {"code": -32601, "message": "not here"}});
                    status(
                        200,
                        "content-type: application/json\r\n",
                        &error.to_string(),
                    )
                }
            }
        } else {
            status(405, "", "")
        };
        let stream = reader.get_mut();
        if stream.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn status(code: u16, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {code} X\r\n{headers}mcp-session-id: s-1\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn json_answer(id: &Value, result: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    status(200, "content-type: application/json\r\n", &body)
}

#[tokio::test]
async fn a_call_that_needs_a_sign_in_names_the_command_that_gives_it() {
    let url = revoking_upstream().await;
    let state = tempfile::tempdir().unwrap();
    let audit = state.path().join("audit.jsonl");
    let (extensions, _events) = ExtensionHost::boot(HostConfig::new(state.path(), "s-1", "."))
        .await
        .unwrap();
    // No token in the store and nobody to sign in: the 401 is a login-required failure.
    let spec = ServerSpec::http("work", url)
        .era(Era::Legacy)
        .authorizer(Authorizer::in_memory());
    let config = GatewayConfig::new()
        .server(spec)
        .policy(Policy::new(Mode::Allow))
        .audit(AuditSink::File(audit.clone()), false)
        .login_command("sidewire mcp login {server}");
    let (gateway, driver) = Gateway::new(config, extensions.clone()).unwrap();
    tokio::spawn(driver);
    assert!(gateway.start().await.unwrap().is_empty());

    let (client, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    let server = Server::new(gateway.clone());
    tokio::spawn(async move { server.serve_stdio(read, write).await });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let mut ask = async |message: Value| -> Value {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        if message["id"].is_null() {
            return Value::Null;
        }
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("an answer within 60 s")
            .unwrap()
            .expect("the gateway is there");
        serde_json::from_str(&line).unwrap()
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let called = ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "work__revoked", "arguments": {}}}))
    .await;
    assert_eq!(called["result"]["isError"], true, "{called}");
    let text = called["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`sidewire mcp login work`"), "{text}");

    let records = std::fs::read_to_string(&audit).unwrap();
    let record: Value = serde_json::from_str(records.lines().last().unwrap()).unwrap();
    assert_eq!(record["outcome"], "login_required", "{record}");
    gateway.shutdown().await;
    extensions.shutdown().await;
}
