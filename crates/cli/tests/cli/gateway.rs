//! `sidewire mcp serve`: the gateway as a client sees it (JSON-RPC on its stdin and stdout, or
//! HTTP), in front of this binary's built-in MCP server started as upstreams.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc;

use super::*;

/// A running `sidewire mcp serve`, spoken to over its stdin and stdout.
pub(super) struct Served {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
}

impl Served {
    fn start(home: &Path, args: &[&str]) -> Served {
        Served::start_with(home, args, &[])
    }

    /// [`Served::start`] with `env` set too.
    pub(super) fn start_with(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut child = Command::new(EXE)
            .args(["mcp", "serve"])
            .args(args)
            .envs(env.iter().copied())
            .env("SIDEWIRE_HOME", home)
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sidewire starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let stderr = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes);
            bytes
        });
        let stdin = child.stdin.take();
        let mut served = Served {
            child,
            stdin,
            lines,
            stderr,
        };
        let init = served.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "gateway-test", "version": "1.0"}}),
        );
        assert_eq!(
            init["result"]["serverInfo"]["name"], "sidewire-gateway",
            "{init}"
        );
        served.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        served
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .expect("the gateway reads");
        stdin.flush().expect("the gateway reads");
    }

    /// Sends a request and waits (60 s at most) for its answer.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within 60 s"));
            let message: Value = serde_json::from_str(&line).expect("stdout is JSON-RPC only");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    pub(super) fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request(90, "tools/list", json!({}));
        let tools = listed["result"]["tools"].as_array().expect("tools").clone();
        tools
            .iter()
            .map(|tool| tool["name"].as_str().expect("a name").to_owned())
            .collect()
    }

    pub(super) fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
    }

    /// Closes stdin (the client goes away) and waits (60 s at most) for the exit.
    pub(super) fn close(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin.take());
        let status = wait_exit(&mut self.child, Duration::from_secs(60));
        let stderr = self.stderr.join().expect("stderr is collected");
        (status, String::from_utf8_lossy(&stderr).into_owned())
    }
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the gateway did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A config of built-in servers by name; each writes its pid into `<dir>/<name>.pid` first.
pub(super) fn config(dir: &Path, names: &[&str]) -> PathBuf {
    let mut servers = serde_json::Map::new();
    for name in names {
        let pid = dir.join(format!("{name}.pid"));
        let script = format!("echo $$ > '{}'; exec '{EXE}' __mcp-server", pid.display());
        servers.insert(
            (*name).to_owned(),
            json!({"command": "/bin/sh", "args": ["-c", script]}),
        );
    }
    let path = dir.join("gateway.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    path
}

/// The pid an upstream wrote.
fn upstream_pid(dir: &Path, name: &str) -> i32 {
    let text = std::fs::read_to_string(dir.join(format!("{name}.pid"))).expect("the pid file");
    text.trim().parse().expect("a pid")
}

/// Whether `pid` runs (exists and is not a zombie).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits up to `within` for every pid to be gone.
fn gone_within(pids: &[i32], within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if pids.iter().all(|pid| !alive(*pid)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub(super) fn audit_records(home: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(home.join("mcp-serve-audit.jsonl")).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str(line).expect("an audit line is JSON"))
        .collect()
}

pub(super) fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
}

#[test]
fn serve_prefixes_names_runs_the_policy_and_audits_every_call() {
    let home = home();
    let config = config(home.path(), &["demo", "second.v2"]);
    let config = config.to_str().unwrap();
    let mut served = Served::start(
        home.path(),
        &["--config", config, "--allow-tool", "demo__echo"],
    );
    let names = served.tool_names();
    // Prefixed by each server's alias (the second's made from its config name).
    for name in [
        "demo__echo",
        "demo__add",
        "second-v2__echo",
        "second-v2__slow",
    ] {
        assert!(names.contains(&name.to_owned()), "{name} in {names:?}");
    }
    assert!(
        names
            .iter()
            .all(|name| name.len() <= 64 - "mcp__sidewire__".len())
    );

    // --allow-tool: allowed by the host; the rest of the read-only policy denies.
    let allowed = served.call(1, "demo__echo", json!({"text": "hi"}));
    assert_eq!(text_of(&allowed), "hi", "{allowed}");
    assert_ne!(allowed["result"]["isError"], true);
    let denied = served.call(2, "second-v2__echo", json!({"text": "hi"}));
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    let unknown = served.call(3, "demo__nope", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let (status, stderr) = served.close();
    assert!(status.success(), "{stderr}");
    let records = audit_records(home.path());
    assert_eq!(
        records.len(),
        2,
        "one record per call that reached the chain: {records:?}"
    );
    assert_eq!(records[0]["tool"], "demo__echo");
    assert_eq!(records[0]["server"], "demo");
    assert_eq!(records[0]["hostTool"], "mcp__demo__echo");
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(records[0]["verdict"], "allow");
    assert_eq!(records[0]["client"]["name"], "gateway-test");
    assert!(
        records[0].get("arguments").is_none(),
        "arguments only when asked for"
    );
    assert_eq!(records[1]["outcome"], "denied");
    assert_eq!(records[1]["hostDecision"]["decision"], "deny");
}

#[test]
fn a_hidden_tool_is_neither_listed_nor_callable() {
    let home = home();
    let config = config(home.path(), &["demo"]);
    let mut served = Served::start(
        home.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "--policy",
            "allow",
            "--deny-tool",
            "demo__add",
            "--audit-arguments",
        ],
    );
    let names = served.tool_names();
    assert!(!names.contains(&"demo__add".to_owned()), "{names:?}");
    assert!(names.contains(&"demo__echo".to_owned()), "{names:?}");
    let hidden = served.call(1, "demo__add", json!({"a": 1, "b": 2}));
    let unknown = served.call(2, "demo__nothing", json!({}));
    assert_eq!(
        hidden["error"]["code"], unknown["error"]["code"],
        "{hidden} {unknown}"
    );
    assert_eq!(hidden["error"]["code"], -32602);
    // The arguments are recorded when asked for, a credential redacted.
    let echoed = served.call(3, "demo__echo", json!({"text": "x", "api_key": "k-123"}));
    assert_eq!(text_of(&echoed), "x", "{echoed}");
    let (status, _) = served.close();
    assert!(status.success());
    let records = audit_records(home.path());
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["arguments"]["text"], "x");
    assert_ne!(records[0]["arguments"]["api_key"], "k-123");
}

#[test]
fn bridge_mode_serves_one_server_under_its_own_names() {
    let home = home();
    let config = config(home.path(), &["demo"]);
    let mut served = Served::start(
        home.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "--no-prefix",
            "--policy",
            "allow",
        ],
    );
    assert!(served.tool_names().contains(&"echo".to_owned()));
    let echoed = served.call(1, "echo", json!({"text": "plain"}));
    assert_eq!(text_of(&echoed), "plain", "{echoed}");
    served.close();
}

#[test]
fn serve_refuses_configurations_that_cannot_work() {
    let home = home();
    let two = config(home.path(), &["a", "b"]);
    let two = two.to_str().unwrap();
    let cases: &[&[&str]] = &[
        // Two servers under one alias: no name could be told apart.
        &["--config", two, "--alias", "a=same", "--alias", "b=same"],
        // Bridge mode needs exactly one server.
        &["--config", two, "--no-prefix"],
        // Not loopback, and no token.
        &["--config", two, "--listen", "0.0.0.0:0"],
        // stdout is the protocol in the stdio mode.
        &["--config", two, "--audit", "-"],
        // An alias that breaks the rule.
        &["--config", two, "--alias", "a=Not_Valid"],
    ];
    for args in cases {
        let mut full = vec!["mcp", "serve"];
        full.extend_from_slice(args);
        let out = run(home.path(), &full);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: nothing on stdout: {}",
            stdout(&out)
        );
        assert!(!stderr(&out).trim().is_empty(), "{args:?} says why");
    }
}

#[test]
fn no_upstream_outlives_the_client_going_away() {
    let home = home();
    let config = config(home.path(), &["one", "two"]);
    let mut served = Served::start(home.path(), &["--config", config.to_str().unwrap()]);
    served.tool_names();
    let pids = [
        upstream_pid(home.path(), "one"),
        upstream_pid(home.path(), "two"),
    ];
    assert!(pids.iter().all(|pid| alive(*pid)));
    let closed_at = Instant::now();
    let (status, stderr) = served.close();
    assert!(status.success(), "{stderr}");
    assert!(
        gone_within(
            &pids,
            Duration::from_secs(2).saturating_sub(closed_at.elapsed())
        ),
        "an upstream outlived the gateway by 2 s"
    );
}

#[test]
fn no_upstream_outlives_a_sigterm_or_a_sighup() {
    for signal in ["-TERM", "-HUP"] {
        let home = home();
        let config = config(home.path(), &["one"]);
        let mut served = Served::start(home.path(), &["--config", config.to_str().unwrap()]);
        served.tool_names();
        let pid = upstream_pid(home.path(), "one");
        let signalled = Command::new("kill")
            .args([signal, &served.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(signalled.success());
        let started = Instant::now();
        wait_exit(&mut served.child, Duration::from_secs(60));
        assert!(
            gone_within(
                &[pid],
                Duration::from_secs(2).saturating_sub(started.elapsed())
            ),
            "the upstream outlived a {signal} by 2 s"
        );
    }
}

#[test]
fn no_upstream_outlives_the_gateway_killed() {
    // SIGKILL leaves the gateway no time: the upstreams' parent-death signal ends them, even
    // upstreams that ignore their stdin's end and every signal but SIGKILL.
    let home = home();
    let mut servers = serde_json::Map::new();
    for name in ["one", "two"] {
        let pid = home.path().join(format!("{name}.pid"));
        let script = format!(
            "echo $$ > '{}'; exec '{EXE}' __mcp-server --stubborn",
            pid.display()
        );
        servers.insert(
            name.to_owned(),
            json!({"command": "/bin/sh", "args": ["-c", script]}),
        );
    }
    let config = home.path().join("stubborn.json");
    std::fs::write(&config, json!({ "mcpServers": servers }).to_string()).unwrap();
    let mut served = Served::start(home.path(), &["--config", config.to_str().unwrap()]);
    served.tool_names();
    let pids = [
        upstream_pid(home.path(), "one"),
        upstream_pid(home.path(), "two"),
    ];
    // Whatever the outcome, nothing stubborn is left behind.
    struct KillAfter([i32; 2]);
    impl Drop for KillAfter {
        fn drop(&mut self) {
            for pid in self.0 {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
    let _cleanup = KillAfter(pids);
    served.child.kill().expect("SIGKILL");
    let killed_at = Instant::now();
    wait_exit(&mut served.child, Duration::from_secs(60));
    assert!(
        gone_within(
            &pids,
            Duration::from_secs(2).saturating_sub(killed_at.elapsed())
        ),
        "an upstream outlived the gateway's SIGKILL by 2 s"
    );
}

/// One HTTP/1.1 POST of `body` to `addr`'s /mcp, with `authorization` when given; the status.
fn post_status(addr: &str, authorization: Option<&str>, body: &Value) -> u16 {
    let mut stream = std::net::TcpStream::connect(addr).expect("the gateway listens");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = body.to_string();
    let auth = authorization.map_or(String::new(), |value| format!("Authorization: {value}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = String::new();
    BufReader::new(stream).read_line(&mut head).unwrap();
    head.split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"))
}

#[test]
fn http_with_a_token_refuses_requests_without_it() {
    let home = home();
    let config = config(home.path(), &["demo"]);
    let mut child = Command::new(EXE)
        .args(["mcp", "serve", "--config", config.to_str().unwrap()])
        .args(["--allow-tool", "demo__echo"])
        .args([
            "--listen",
            "127.0.0.1:0",
            "--token-env",
            "GATEWAY_TEST_TOKEN",
        ])
        .env("SIDEWIRE_HOME", home.path())
        .env("GATEWAY_TEST_TOKEN", "s3cret-token")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sidewire starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let addr = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no listening line"
        );
        if let Some(rest) = line.trim().strip_prefix("listening on http://") {
            break rest.trim_end_matches("/mcp").to_owned();
        }
    };
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(post_status(&addr, None, &ping), 401);
    assert_eq!(post_status(&addr, Some("Bearer wrong-token"), &ping), 401);
    assert_eq!(post_status(&addr, Some("Bearer s3cret-token"), &ping), 200);
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    wait_exit(&mut child, Duration::from_secs(60));
    let mut rest = String::new();
    let _ = stderr.read_to_string(&mut rest);
    assert!(!rest.contains("s3cret-token"), "the token is never printed");
}

#[test]
fn over_a_socket_pair_as_node_starts_it_serve_works_and_puts_the_flags_back() {
    use std::os::fd::{AsFd, OwnedFd};
    let home = home();
    let config = config(home.path(), &["demo"]);
    // Node's child processes get one end of a Unix socket pair as stdin and another as
    // stdout; a copy of the serve's ends is kept here to read their flags afterwards.
    let (ours_in, theirs_in) = std::os::unix::net::UnixStream::pair().unwrap();
    let (ours_out, theirs_out) = std::os::unix::net::UnixStream::pair().unwrap();
    let kept_in = theirs_in.as_fd().try_clone_to_owned().unwrap();
    let kept_out = theirs_out.as_fd().try_clone_to_owned().unwrap();
    let mut child = Command::new(EXE)
        .args(["mcp", "serve", "--config", config.to_str().unwrap()])
        .args(["--allow-tool", "demo__echo"])
        .env("SIDEWIRE_HOME", home.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::from(OwnedFd::from(theirs_in)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .stderr(Stdio::null())
        .spawn()
        .expect("sidewire starts");
    let mut lines = BufReader::new(&ours_out).lines();
    let mut ask = |message: Value| -> Value {
        writeln!(&ours_in, "{message}").unwrap();
        let line = lines.next().expect("an answer").expect("a line");
        serde_json::from_str(&line).expect("JSON-RPC")
    };
    let init = ask(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "socket-test", "version": "1.0"}}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "sidewire-gateway");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    writeln!(&ours_in, "{initialized}").unwrap();
    let called = ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "demo__echo", "arguments": {"text": "over a socket"}}}));
    assert_eq!(text_of(&called), "over a socket", "{called}");
    // The client goes away: the serve ends, and the descriptions it shares with its parent
    // are blocking again.
    ours_in.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(wait_exit(&mut child, Duration::from_secs(60)).success());
    for kept in [&kept_in, &kept_out] {
        let flags = rustix::fs::fcntl_getfl(kept).unwrap();
        assert!(!flags.contains(rustix::fs::OFlags::NONBLOCK), "{flags:?}");
    }
}

#[test]
fn an_upstream_that_needs_a_sign_in_is_named_with_the_command_that_gives_it() {
    let Some(fixture) = super::OAuthFixture::start(
        "an_upstream_that_needs_a_sign_in_is_named_with_the_command_that_gives_it",
    ) else {
        return;
    };
    let home = home();
    let config = home.path().join("gateway.json");
    let url = format!("{}/mcp", fixture.base);
    std::fs::write(
        &config,
        json!({"mcpServers": {"fixture": {"url": url}}}).to_string(),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let served = Served::start(home.path(), &["--config", config]);
    let (status, stderr) = served.close();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "run `sidewire mcp login fixture --config {config}`"
        )),
        "{stderr}"
    );
}

/// A serve that is killed when dropped (also when the test fails), its upstream with it.
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `sidewire mcp serve ARGS --listen 127.0.0.1:0` in front of the built-in server `demo`: the
/// child and the address it listens on.
fn listening(home: &Path, args: &[&str]) -> (Serving, String) {
    listening_to(home, &config(home, &["demo"]), args)
}

/// [`listening`], in front of the servers of `config`.
fn listening_to(home: &Path, config: &Path, args: &[&str]) -> (Serving, String) {
    let mut child = Command::new(EXE)
        .args(["mcp", "serve", "--config", config.to_str().unwrap()])
        .args(["--allow-tool", "demo__echo", "--listen", "127.0.0.1:0"])
        .args(args)
        .env("SIDEWIRE_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sidewire starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let addr = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no listening line"
        );
        if let Some(rest) = line.trim().strip_prefix("listening on http://") {
            break rest.trim_end_matches("/mcp").to_owned();
        }
    };
    // The rest of stderr is drained, so the serve never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (Serving(child), addr)
}

/// One POST (`Connection: close`): the status, the head and the body.
fn post(addr: &str, headers: &[(&str, &str)], body: &Value) -> (u16, String, String) {
    let mut stream = std::net::TcpStream::connect(addr).expect("the gateway listens");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = body.to_string();
    let extra: String = (headers.iter())
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = (head.split_whitespace().nth(1))
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    (status, head.to_owned(), body.to_owned())
}

#[test]
fn replicas_with_one_state_key_serve_each_others_sessions() {
    let home = home();
    let key = home.path().join("state.key");
    std::fs::write(&key, "a shared secret of at least thirty-two bytes\n").unwrap();
    let key = key.to_str().unwrap();
    let (_a, at_a) = listening(home.path(), &["--state-key-file", key]);
    let (_b, at_b) = listening(home.path(), &["--state-key-file", key]);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "behind-a-balancer", "version": "1"}}});
    let (status, head, _) = post(&at_a, &[], &initialize);
    assert_eq!(status, 200, "{head}");
    let session = (head.lines())
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    // The session's next request goes to the other replica, as a round-robin balancer sends it.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "demo__echo", "arguments": {"text": "on b"}}});
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, head, body) = post(&at_b, &headers, &call);
    assert_eq!(status, 200, "{head}\n{body}");
    assert!(body.contains(r#""text":"on b""#), "{body}");
}

#[test]
fn a_state_key_shorter_than_32_bytes_fails_the_start() {
    let home = home();
    let key = home.path().join("state.key");
    std::fs::write(&key, "too short\n").unwrap();
    let config = config(home.path(), &["demo"]);
    let out = run(
        home.path(),
        &[
            "mcp",
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--state-key-file",
            key.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(text.contains("shorter than 32 bytes"), "{text}");
    assert!(
        !text.contains("too short"),
        "the key is never printed: {text}"
    );
}

/// The pids the built-in server `demo` wrote, one line per start, in order.
fn started_pids(dir: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(dir.join("demo.pids")).unwrap_or_default();
    text.lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// A legacy session of the gateway at `addr`: its id, after one call of `demo__echo`.
fn session_with_a_call(addr: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "stateful", "version": "1"}}});
    let (status, head, _) = post(addr, &[], &initialize);
    assert_eq!(status, 200, "{head}");
    let session = (head.lines())
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "demo__echo", "arguments": {"text": "mine"}}});
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, head, body) = post(addr, &headers, &call);
    assert_eq!(status, 200, "{head}\n{body}");
    assert!(body.contains(r#""text":"mine""#), "{body}");
    session
}

#[test]
fn a_stateful_server_runs_once_per_session_and_no_instance_outlives_its_session() {
    let home = home();
    let pids = home.path().join("demo.pids");
    let script = format!("echo $$ >> '{}'; exec '{EXE}' __mcp-server", pids.display());
    let config = home.path().join("stateful.json");
    let servers = json!({"mcpServers": {"demo": {"command": "/bin/sh", "args": ["-c", script]}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let (mut served, addr) = listening_to(home.path(), &config, &["--stateful", "demo"]);
    // The shared instance (the lists) runs from the start; each session starts its own.
    assert_eq!(started_pids(home.path()).len(), 1);
    let a = session_with_a_call(&addr);
    let _b = session_with_a_call(&addr);
    let started = started_pids(home.path());
    assert_eq!(started.len(), 3, "one instance per session: {started:?}");
    assert!(started.iter().all(|pid| alive(*pid)));

    // a's end (its DELETE) closes a's instance, and only it.
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {a}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(delete.as_bytes()).unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let deleted_at = Instant::now();
    assert!(
        gone_within(
            &started[1..2],
            Duration::from_secs(2).saturating_sub(deleted_at.elapsed())
        ),
        "a's instance outlived its session by 2 s"
    );
    assert!(alive(started[0]) && alive(started[2]), "the others run on");

    // SIGTERM: every instance goes with the gateway.
    let signalled = Command::new("kill")
        .args(["-TERM", &served.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(signalled.success());
    let stopped_at = Instant::now();
    wait_exit(&mut served.0, Duration::from_secs(60));
    assert!(
        gone_within(
            &started,
            Duration::from_secs(2).saturating_sub(stopped_at.elapsed())
        ),
        "an instance outlived a SIGTERM by 2 s"
    );
}
