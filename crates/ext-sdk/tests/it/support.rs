//! Shared scaffolding: the SDK serving over in-memory pipes with the host's end scripted by the
//! test, the built example binaries as real processes, and waits that always have a deadline.

use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use sidewire_ext_protocol::Reason;
use sidewire_ext_sdk::{Error, Extension, Options, serve_io};
use sidewire_framing::{FrameReader, NdjsonCodec, Oversize};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, DuplexStream};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

/// How long any single wait may take before the test fails with a message.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// Every wait in these tests goes through this, so a hang fails with a message.
pub(crate) async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    sidewire_test_support::within(WAIT, what, fut).await
}

/// The host's end of a connection: writes the SDK's input, reads its output line by line.
pub(crate) struct HostEnd<R, W> {
    lines: FrameReader<R>,
    input: Option<W>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> HostEnd<R, W> {
    fn new(output: R, input: W) -> Self {
        // Larger than the protocol's cap, so an oversized frame from the SDK would show.
        let codec = NdjsonCodec::new(16 * 1024 * 1024, Oversize::Terminate);
        HostEnd {
            lines: FrameReader::new(output, codec),
            input: Some(input),
        }
    }

    /// Writes raw bytes to the SDK's input.
    pub(crate) async fn send_bytes(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input still open");
        within("writing to the sidecar", async {
            input.write_all(bytes).await?;
            input.flush().await
        })
        .await
        .expect("the sidecar's input accepts writes");
    }

    /// Writes raw bytes, tolerating a peer that stops reading (it may exit mid-write).
    pub(crate) async fn try_send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let input = self.input.as_mut().expect("input still open");
        within("writing to the sidecar", async {
            input.write_all(bytes).await?;
            input.flush().await
        })
        .await
    }

    /// Writes one line (a newline is added).
    pub(crate) async fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_bytes(&bytes).await;
    }

    pub(crate) async fn send_json(&mut self, value: &Value) {
        self.send(&value.to_string()).await;
    }

    /// Sends a request and returns the next frame, which must answer it.
    pub(crate) async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.answer_to(id).await
    }

    /// The next frame, which must answer request `id`.
    async fn answer_to(&mut self, id: u64) -> Value {
        let answer = self.recv().await;
        assert_eq!(
            answer["id"], id,
            "expected the answer to {id}, got {answer}"
        );
        answer
    }

    /// Like [`call`](Self::call), with the members in the order a host writes them
    /// (`jsonrpc`, `id`, `method`, `params`), which `call`'s (sorted members) never is.
    pub(crate) async fn call_as_a_host_writes(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
    ) -> Value {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":{},"params":{params}}}"#,
            Value::from(method)
        ))
        .await;
        self.answer_to(id).await
    }

    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.send_json(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Answers a request of the SDK's with a result.
    pub(crate) async fn reply(&mut self, request: &Value, result: Value) {
        self.send_json(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            .await;
    }

    /// The next frame as text.
    pub(crate) async fn recv_text(&mut self) -> String {
        let frame = within("a frame from the sidecar", self.lines.next())
            .await
            .expect("the sidecar closed its output")
            .expect("a well-formed frame");
        String::from_utf8(frame.to_vec()).expect("frames are UTF-8")
    }

    /// The next frame, parsed, waiting up to `limit` (for tests on a paused clock, where the
    /// usual deadline would fire first).
    pub(crate) async fn recv_within(&mut self, limit: Duration) -> Value {
        let frame = tokio::time::timeout(limit, self.lines.next())
            .await
            .expect("a frame in time")
            .expect("the sidecar closed its output")
            .expect("a well-formed frame");
        serde_json::from_slice(&frame).expect("the sidecar writes JSON")
    }

    /// The next frame, parsed.
    pub(crate) async fn recv(&mut self) -> Value {
        let text = self.recv_text().await;
        serde_json::from_str(&text).expect("the sidecar writes JSON")
    }

    /// Asserts that nothing arrives for a short while.
    pub(crate) async fn silent(&mut self) {
        let got = tokio::time::timeout(Duration::from_millis(200), self.lines.next()).await;
        assert!(got.is_err(), "expected silence, got {got:?}");
    }

    /// Asserts that the sidecar's output ends without another frame.
    pub(crate) async fn output_ends(&mut self) {
        let next = within("the end of the sidecar's output", self.lines.next()).await;
        assert!(next.is_none(), "expected the end of output, got {next:?}");
    }

    /// Closes the SDK's input (end of file).
    pub(crate) fn close_input(&mut self) {
        self.input = None;
    }

    /// `extension/initialize` with these manifest lists; returns the answer.
    pub(crate) async fn initialize(&mut self, intercepts: &[&str], capabilities: &[&str]) -> Value {
        self.call(
            1,
            "extension/initialize",
            init_params(intercepts, capabilities),
        )
        .await
    }

    /// The whole handshake; returns the initialize result.
    pub(crate) async fn handshake(&mut self, intercepts: &[&str], capabilities: &[&str]) -> Value {
        let answer = self.initialize(intercepts, capabilities).await;
        assert!(answer.get("result").is_some(), "handshake failed: {answer}");
        self.notify("extension/initialized", json!({})).await;
        answer["result"].clone()
    }
}

/// `InitializeParams` for session `s-1`, generation 1, a TUI host.
pub(crate) fn init_params(intercepts: &[&str], capabilities: &[&str]) -> Value {
    let mut manifest = serde_json::Map::new();
    if !intercepts.is_empty() {
        manifest.insert("intercepts".into(), json!(intercepts));
    }
    if !capabilities.is_empty() {
        manifest.insert("capabilities".into(), json!(capabilities));
    }
    json!({
        "protocolId": "reasonix.extension.v1",
        "protocolVersion": "1",
        "manifest": manifest,
        "session": {"sessionId": "s-1", "workspaceRoot": "/work", "generation": 1},
        "capabilities": {"contentRefs": true, "uiHost": "tui"}
    })
}

/// Intercept params with an inline payload.
pub(crate) fn intercept(point: &str, seq: u64, payload: Value, timeout_millis: u64) -> Value {
    json!({"event": point, "seq": seq, "payload": payload, "timeoutMillis": timeout_millis})
}

/// Asserts that `frame` is an error answer to `id` with `reason`, the reason's code and its
/// `retryable` flag (checklist 15).
#[track_caller]
pub(crate) fn assert_error(frame: &Value, id: &Value, reason: Reason) {
    assert_eq!(&frame["id"], id, "{frame}");
    let error = &frame["error"];
    assert_eq!(error["code"], reason.code(), "{frame}");
    assert_eq!(error["data"]["reason"], reason.as_str(), "{frame}");
    assert_eq!(error["data"]["retryable"], reason.retryable(), "{frame}");
    assert!(frame.get("result").is_none(), "{frame}");
}

/// The SDK serving in-process over pipes, with its diagnostics captured.
pub(crate) struct Sidecar {
    pub(crate) host: HostEnd<DuplexStream, DuplexStream>,
    task: JoinHandle<Result<(), Error>>,
    logs: Arc<Mutex<Vec<String>>>,
}

impl Sidecar {
    pub(crate) fn start(extension: Extension) -> Self {
        Sidecar::start_with(extension, Options::new())
    }

    pub(crate) fn start_with(extension: Extension, options: Options) -> Self {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&logs);
        let options = options.logger(move |line| sink.lock().unwrap().push(line.to_owned()));
        let (sdk_in, host_in) = tokio::io::duplex(64 * 1024);
        let (sdk_out, host_out) = tokio::io::duplex(64 * 1024);
        let task = tokio::spawn(serve_io(extension, options, sdk_in, sdk_out));
        Sidecar {
            host: HostEnd::new(host_out, host_in),
            task,
            logs,
        }
    }

    /// The diagnostics logged so far.
    pub(crate) fn logs(&self) -> Vec<String> {
        self.logs.lock().unwrap().clone()
    }

    /// How `serve_io` ended.
    pub(crate) async fn outcome(self) -> Result<(), Error> {
        within("serve to end", self.task)
            .await
            .expect("serve does not panic")
    }

    /// Closes the input and expects an orderly end.
    pub(crate) async fn finish(mut self) {
        self.host.close_input();
        self.outcome().await.expect("an orderly end");
    }
}

/// The path of a built example binary: examples land next to the test binary's `deps/`
/// directory (`<target>/<profile>/examples/<name>`), and `cargo test` builds them.
pub(crate) fn example_path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in <target>/<profile>/deps");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} does not exist: run the tests with `cargo test -p sidewire-ext-sdk`, which builds \
         the examples first",
        path.display()
    );
    path
}

/// A built example running as a real process.
pub(crate) struct Process {
    pub(crate) host: HostEnd<ChildStdout, ChildStdin>,
    child: Child,
    stderr: ChildStderr,
}

impl Process {
    pub(crate) fn spawn(name: &str) -> Self {
        Process::spawn_with_env(name, &[])
    }

    pub(crate) fn spawn_with_env(name: &str, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(example_path(name));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("the example starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        Process {
            host: HostEnd::new(stdout, stdin),
            child,
            stderr,
        }
    }

    /// Waits for the process to exit; returns its exit code and its whole stderr.
    pub(crate) async fn exit(mut self) -> (i32, String) {
        let status = within("the example to exit", self.child.wait())
            .await
            .expect("the example can be waited for");
        let mut stderr = String::new();
        within(
            "the example's stderr",
            self.stderr.read_to_string(&mut stderr),
        )
        .await
        .expect("stderr is UTF-8");
        (status.code().expect("the example exited by itself"), stderr)
    }
}
