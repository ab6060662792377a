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

/// A legacy Streamable HTTP server on a free loopback port that starts without a token and
/// lists one tool, and its authorization server on the same port (metadata, registration, an
/// authorization endpoint that grants at once by redirecting with a code, a token endpoint):
/// a call without the token it issued is answered 401, as by a server whose grant was revoked.
async fn revoking_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/mcp");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(connection(stream, base.clone()));
        }
    });
    url
}

/// The token the authorization server issues.
const TOKEN: &str = "at-signed-in";

/// One HTTP/1.1 connection of [`revoking_upstream`], request after request.
async fn connection(stream: tokio::net::TcpStream, base: String) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).await.unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        let mut authorized = false;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
                if name.eq_ignore_ascii_case("authorization") {
                    authorized = value.trim() == format!("Bearer {TOKEN}");
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await.unwrap();
        let mut words = request_line.split_whitespace();
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let response = match (method, path) {
            ("POST", "/mcp") => mcp(&body, authorized, &base),
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json_body(
                200,
                &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => json_body(
                200,
                &json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                }),
            ),
            ("POST", "/register") => {
                let mut registered: Value = serde_json::from_slice(&body).unwrap_or(json!({}));
                registered["client_id"] = json!("client-1");
                registered["token_endpoint_auth_method"] = json!("none");
                json_body(201, &registered)
            }
            ("GET", "/authorize") => {
                let param = |key: &str| {
                    query.split('&').find_map(|pair| {
                        let (k, v) = pair.split_once('=')?;
                        (k == key).then(|| v.to_owned())
                    })
                };
                let redirect = param("redirect_uri")
                    .unwrap_or_default()
                    .replace("%3A", ":");
                let redirect = redirect.replace("%2F", "/");
                let state = param("state").unwrap_or_default();
                let location = format!("location: {redirect}?code=granted&state={state}\r\n");
                status(302, &location, "")
            }
            ("POST", "/token") => json_body(
                200,
                &json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}),
            ),
            _ => status(404, "", ""),
        };
        let stream = reader.get_mut();
        if stream.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// The MCP endpoint: a call needs the token.
fn mcp(body: &[u8], authorized: bool, base: &str) -> String {
    let message: Value = serde_json::from_slice(body).unwrap();
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
        Some("tools/call") if authorized => json_answer(
            &id,
            json!({"content": [{"type": "text", "text": "signed in"}]}),
        ),
        Some("tools/call") => {
            let challenge = format!(
                "www-authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n"
            );
            status(401, &challenge, "")
        }
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
}

fn json_body(code: u16, value: &Value) -> String {
    status(
        code,
        "content-type: application/json\r\n",
        &value.to_string(),
    )
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

/// The gateway in front of [`revoking_upstream`] (no token stored, and the authorizer has
/// nobody to sign in), and a legacy client with `capabilities` on a pipe.
struct Setup {
    gateway: Gateway,
    extensions: ExtensionHost,
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    audit: std::path::PathBuf,
    _state: tempfile::TempDir,
}

impl Setup {
    async fn new(capabilities: Value) -> Setup {
        let url = revoking_upstream().await;
        let state = tempfile::tempdir().unwrap();
        let audit = state.path().join("audit.jsonl");
        let (extensions, _events) = ExtensionHost::boot(HostConfig::new(state.path(), "s-1", "."))
            .await
            .unwrap();
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
        let (read, write) = tokio::io::split(client);
        let mut setup = Setup {
            gateway,
            extensions,
            write,
            lines: BufReader::new(read).lines(),
            audit,
            _state: state,
        };
        setup
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "raw", "version": "1"}}}),
            )
            .await;
        setup.recv().await;
        setup
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        setup
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("a message within 60 s")
            .unwrap()
            .expect("the gateway is there");
        serde_json::from_str(&line).unwrap()
    }

    fn last_record(&self) -> Value {
        let records = std::fs::read_to_string(&self.audit).unwrap();
        serde_json::from_str(records.lines().last().unwrap()).unwrap()
    }

    async fn stop(self) {
        self.gateway.shutdown().await;
        self.extensions.shutdown().await;
    }
}

/// One GET of `url`: the status and the `location` header (the head only: the mock keeps
/// its connections open).
async fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").expect("a loopback http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let mut stream = BufReader::new(stream);
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream
        .get_mut()
        .write_all(request.as_bytes())
        .await
        .unwrap();
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(60), stream.read_line(&mut line));
        let n = read.await.expect("an answer within 60 s").unwrap();
        if n == 0 || line == "\r\n" {
            break;
        }
        head.push(line);
    }
    let status = head
        .first()
        .and_then(|line| line.split_whitespace().nth(1)?.parse().ok());
    let location = head.iter().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    (status.expect("a status line"), location)
}

fn call_revoked(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "work__revoked", "arguments": {}}})
}

#[tokio::test]
async fn a_client_that_takes_url_elicitation_is_sent_the_sign_in_and_the_call_goes_on() {
    let mut setup = Setup::new(json!({"elicitation": {"form": {}, "url": {}}})).await;
    setup.send(call_revoked(1)).await;
    let asked = setup.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["mode"], "url", "{asked}");
    let page = asked["params"]["url"].as_str().unwrap().to_owned();
    assert!(page.contains("/authorize?"), "{page}");
    assert!(
        asked["params"]["message"]
            .as_str()
            .unwrap()
            .contains("work")
    );
    setup
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}}))
        .await;
    // The person signs in: the authorization server redirects to the gateway's listener.
    let (status, location) = get(&page).await;
    assert_eq!(status, 302);
    let (status, _) = get(&location.expect("a redirect")).await;
    assert_eq!(status, 200, "the gateway's listener took the code");
    let answer = setup.recv().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "signed in",
        "{answer}"
    );
    assert_eq!(setup.last_record()["outcome"], "ok");
    setup.stop().await;
}

#[tokio::test]
async fn a_declined_sign_in_ends_the_call_at_once_naming_the_login_command() {
    let mut setup = Setup::new(json!({"elicitation": {"url": {}}})).await;
    setup.send(call_revoked(1)).await;
    let asked = setup.recv().await;
    assert_eq!(asked["params"]["mode"], "url", "{asked}");
    setup
        .send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}))
        .await;
    // Not after the callback timeout (5 minutes): recv's bound is 60 s.
    let answer = setup.recv().await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`sidewire mcp login work`"), "{text}");
    assert_eq!(setup.last_record()["outcome"], "login_required");
    setup.stop().await;
}

#[tokio::test]
async fn a_call_that_needs_a_sign_in_names_the_command_that_gives_it() {
    // A client without URL elicitation: nobody can sign in, and the call says how to.
    let mut setup = Setup::new(json!({"elicitation": {"form": {}}})).await;
    setup.send(call_revoked(1)).await;
    let called = setup.recv().await;
    assert_eq!(called["result"]["isError"], true, "{called}");
    let text = called["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`sidewire mcp login work`"), "{text}");
    assert_eq!(setup.last_record()["outcome"], "login_required");
    setup.stop().await;
}
