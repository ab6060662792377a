//! One connection of the kit to one sidecar process: frames out, messages in, and the kit's
//! host behaviour for what the sidecar asks (`host/content/read`, `host/ui/*`), with every
//! observation a statement needs recorded as a finding.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use base64::Engine as _;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sidewire_ext_protocol::ProtocolProfile;
use sidewire_ext_protocol::{
    CONTENT_CHUNK_BYTES, Capability, ContentReadParams, HookPoint, HostCapabilities,
    InitializeParams, InitializeResult, ManifestExpectation, Reason, SessionContext, UiHost,
    UiPublishParams, UiRequestParams, decode_initialize_result_in, decode_params, v2,
};
use tokio::time::Instant;

use super::RunOptions;
use super::report::{FRAMES_PER_FAILURE, Findings, Frame, FrameDirection, Outcome};
use super::target::Launch;
use super::wire::{ReadEnd, Wire};

/// The session id the kit sends.
pub(crate) const SESSION_ID: &str = "conformance-session";
/// The generation the kit sends.
pub(crate) const GENERATION: u64 = 1;
/// The unregistered method the kit uses to probe and to synchronise.
pub(crate) const UNKNOWN_METHOD: &str = "conformance/unknown";
/// How many recent frames are kept for evidence.
const RECENT: usize = 8;
/// At most this many notifications and unmatched responses are kept per connection.
const MAX_NOTES: usize = 4096;

/// What a whole run shares.
pub(crate) struct Ctx {
    pub(crate) launch: Launch,
    /// The profile every connection of the run speaks (`--protocol`, else the manifest's).
    pub(crate) profile: ProtocolProfile,
    pub(crate) options: RunOptions,
    /// The run's deadline.
    pub(crate) deadline: Instant,
}

impl Ctx {
    /// The deadline of one wait: the reply timeout from now, within the run's deadline.
    pub(crate) fn wait(&self) -> Instant {
        (Instant::now() + self.options.reply_timeout).min(self.deadline)
    }

    pub(crate) fn has(&self, capability: Capability) -> bool {
        self.launch.runtime.has(capability)
    }

    /// The standard `extension/initialize` params, in the run's profile.
    pub(crate) fn initialize_params(&self) -> Value {
        self.initialize_params_in(self.profile)
    }

    /// The v2 declarations of the manifest: the manifest's own, or (a v1 manifest checked
    /// against v2) its runtime lists in v2's shape.
    pub(crate) fn declared_v2(&self) -> v2::ManifestV2 {
        self.launch.v2.clone().unwrap_or_else(|| {
            let runtime = &self.launch.runtime;
            v2::ManifestV2 {
                replaces: runtime
                    .replaces
                    .iter()
                    .map(|s| s.as_str().to_owned())
                    .collect(),
                capabilities: (runtime.capabilities.iter())
                    .map(|c| c.as_str().to_owned())
                    .collect(),
                ..v2::ManifestV2::default()
            }
        })
    }

    /// The `extension/initialize` params a host of `profile` sends: for v2, what the reference
    /// host sends (spec delta §2.2, §5.3).
    pub(crate) fn initialize_params_in(&self, profile: ProtocolProfile) -> Value {
        if profile == ProtocolProfile::V2 {
            let session = v2::SessionContext {
                session_id: SESSION_ID.to_owned(),
                workspace_root: self.launch.spec.cwd.display().to_string(),
                generation: GENERATION,
                epoch: None,
            };
            let params = v2::InitializeParams::from_manifest(
                &self.launch.runtime,
                &self.declared_v2(),
                session,
                UiHost::Tui,
            );
            return serde_json::to_value(params).expect("v2 InitializeParams serializes");
        }
        let params = InitializeParams::new(
            ManifestExpectation::from_runtime(&self.launch.runtime),
            SessionContext {
                session_id: SESSION_ID.to_owned(),
                workspace_root: self.launch.spec.cwd.display().to_string(),
                generation: GENERATION,
            },
            HostCapabilities::new(UiHost::Tui),
        );
        serde_json::to_value(params).expect("InitializeParams serializes")
    }
}

/// One message read from the sidecar.
#[derive(Debug, Clone)]
pub(crate) struct Msg {
    pub(crate) value: Value,
    /// The `id` member's raw text, as written (`None`: no id member).
    pub(crate) id: Option<String>,
}

impl Msg {
    pub(crate) fn method(&self) -> Option<&str> {
        self.value.get("method").and_then(Value::as_str)
    }

    pub(crate) fn params(&self) -> Option<&Value> {
        self.value.get("params")
    }

    pub(crate) fn result(&self) -> Option<&Value> {
        self.value.get("result")
    }

    pub(crate) fn error_code(&self) -> Option<i64> {
        self.value.get("error")?.get("code")?.as_i64()
    }

    pub(crate) fn reason(&self) -> Option<&str> {
        self.value
            .get("error")?
            .get("data")?
            .get("reason")?
            .as_str()
    }

    /// `code` and, when the sidecar sent one, a `data.reason` of the same reason (item 15
    /// checks that every error has one).
    pub(crate) fn is_error(&self, reason: Reason) -> bool {
        self.error_code() == Some(reason.code())
            && self.reason().is_none_or(|r| r == reason.as_str())
    }

    /// A short description for a failure's detail.
    pub(crate) fn describe(&self) -> String {
        match (self.result(), self.value.get("error")) {
            (Some(result), _) => format!("a result {}", short(result)),
            (None, Some(_)) => format!(
                "an error (code {}, reason {})",
                self.error_code()
                    .map_or_else(|| "none".to_owned(), |c| c.to_string()),
                self.reason().unwrap_or("none")
            ),
            _ => format!("the frame {}", short(&self.value)),
        }
    }
}

/// A value's compact JSON, cut for a detail.
pub(crate) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(120).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// What one step of a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Checked {
    Pass,
    Fail(String),
    NotApplicable(String),
}

impl From<Option<String>> for Checked {
    /// `None` passes, `Some` fails with it.
    fn from(failure: Option<String>) -> Checked {
        failure.map_or(Checked::Pass, Checked::Fail)
    }
}

/// How a stored content object answers its reads (item 59 tampers with it).
#[derive(Debug, Clone)]
pub(crate) struct Content {
    pub(crate) data: Vec<u8>,
    /// The `totalBytes` each page echoes.
    pub(crate) echo_total: u64,
    /// The `sha256` each page echoes.
    pub(crate) echo_sha: String,
    /// Where the next read must start.
    next_offset: u64,
}

/// A held `host/content/read`.
pub(crate) struct Held {
    pub(crate) id: String,
    pub(crate) params: ContentReadParams,
}

/// One sidecar connection of the kit.
pub(crate) struct Session<'c> {
    pub(crate) ctx: &'c Ctx,
    wire: Wire,
    next_id: u64,
    pub(crate) findings: Findings,
    recent: VecDeque<Frame>,
    content: HashMap<String, Content>,
    /// Whether content reads are held rather than answered.
    pub(crate) hold_reads: bool,
    pub(crate) held: Vec<Held>,
    /// Notifications from the sidecar (provider streams), in order.
    pub(crate) notes: VecDeque<Msg>,
    /// Responses that matched no wait, in order.
    pub(crate) strays: Vec<Msg>,
    /// The handshake's result once decoded (its profile-agnostic view).
    pub(crate) handshake: Option<InitializeResult>,
    /// The tools the handshake says the sidecar serves (v2 only; empty on v1).
    pub(crate) tools: Vec<String>,
    /// Whether `extension/initialized` was sent.
    ready: bool,
    frames_failed: bool,
    oversize_seen: bool,
    content_reads: usize,
}

impl<'c> Session<'c> {
    /// Starts a fresh sidecar process.
    pub(crate) fn start(ctx: &'c Ctx) -> Result<Session<'c>, String> {
        Ok(Session {
            ctx,
            wire: Wire::spawn(&ctx.launch)?,
            next_id: 1,
            findings: Findings::default(),
            recent: VecDeque::new(),
            content: HashMap::new(),
            hold_reads: false,
            held: Vec::new(),
            notes: VecDeque::new(),
            strays: Vec::new(),
            handshake: None,
            tools: Vec::new(),
            ready: false,
            frames_failed: false,
            oversize_seen: false,
            content_reads: 0,
        })
    }

    /// Forgets the evidence so far: the next failure shows only frames from here on.
    pub(crate) fn mark(&mut self) {
        self.recent.clear();
    }

    fn remember(&mut self, frame: Frame) {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(frame);
    }

    /// The last few frames; when they are all the kit's own, the sidecar's last frame (what
    /// it answered, often the point of the failure) takes the first place.
    fn evidence(&self) -> Vec<Frame> {
        let skip = self.recent.len().saturating_sub(FRAMES_PER_FAILURE);
        let mut frames: Vec<Frame> = self.recent.iter().skip(skip).cloned().collect();
        let received = |f: &Frame| f.direction == FrameDirection::Received;
        if !frames.iter().any(received)
            && let Some(last) = self.recent.iter().rev().find(|f| received(f))
        {
            frames.remove(0);
            frames.insert(0, last.clone());
        }
        frames
    }

    pub(crate) fn pass(&mut self, id: &'static str) {
        self.findings.add(id, Outcome::Pass);
    }

    pub(crate) fn fail(&mut self, id: &'static str, detail: impl Into<String>) {
        let frames = self.evidence();
        self.findings.add(
            id,
            Outcome::Fail {
                detail: detail.into(),
                frames,
            },
        );
    }

    pub(crate) fn not_applicable(&mut self, id: &'static str, why: impl Into<String>) {
        self.findings.add(id, Outcome::NotApplicable(why.into()));
    }

    /// Passes `id` when `failure` is `None`, else fails it with the failure.
    pub(crate) fn verdict(&mut self, id: &'static str, failure: Option<String>) {
        match failure {
            None => self.pass(id),
            Some(detail) => self.fail(id, detail),
        }
    }

    /// Records what a step found about `id`.
    pub(crate) fn record(&mut self, id: &'static str, checked: Checked) {
        match checked {
            Checked::Pass => self.pass(id),
            Checked::Fail(detail) => self.fail(id, detail),
            Checked::NotApplicable(why) => self.not_applicable(id, why),
        }
    }

    /// Writes exact bytes (a frame's LF included, or not).
    pub(crate) async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        let timeout = self.ctx.options.reply_timeout;
        self.send_raw_within(bytes, timeout).await
    }

    /// Writes exact bytes within `timeout` (a frame of megabytes takes the sidecar longer to
    /// read).
    pub(crate) async fn send_raw_within(
        &mut self,
        bytes: &[u8],
        timeout: Duration,
    ) -> Result<(), String> {
        let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        self.remember(Frame::new(FrameDirection::Sent, line));
        self.wire.write(bytes, timeout).await
    }

    /// Writes one frame (`value` as compact JSON plus LF).
    pub(crate) async fn send(&mut self, value: &Value) -> Result<(), String> {
        let mut bytes = serde_json::to_vec(value).expect("a JSON value serializes");
        bytes.push(b'\n');
        self.send_raw(&bytes).await
    }

    /// A fresh numeric request id.
    pub(crate) fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        // Far from the small ids checks write by hand.
        1000 + self.next_id
    }

    /// Sends a request and returns its id's text.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Result<String, String> {
        let id = self.fresh_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        Ok(id.to_string())
    }

    /// Sends a request and waits for its answer.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Result<Msg, String> {
        let id = self.request(method, params).await?;
        self.response(&id).await
    }

    /// Sends a request and waits for its answer within `start_timeout`: for the first request
    /// to a sidecar that may still be starting.
    pub(crate) async fn call_starting(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Msg, String> {
        let id = self.request(method, params).await?;
        let deadline = (Instant::now() + self.ctx.options.start_timeout).min(self.ctx.deadline);
        self.response_until(&id, deadline).await
    }

    /// Waits for the response whose id is written `id`, within the reply timeout.
    pub(crate) async fn response(&mut self, id: &str) -> Result<Msg, String> {
        let deadline = self.ctx.wait();
        self.response_until(id, deadline).await
    }

    /// Waits for the response whose id is written `id`, until `deadline`; other responses are
    /// kept as strays.
    pub(crate) async fn response_until(
        &mut self,
        id: &str,
        deadline: Instant,
    ) -> Result<Msg, String> {
        loop {
            match self.next(deadline).await {
                Ok(Some(msg)) if msg.id.as_deref() == Some(id) => return Ok(msg),
                Ok(Some(msg)) => self.push_stray(msg),
                Ok(None) => {}
                Err(end) => return Err(no_answer(end, id)),
            }
        }
    }

    /// Keeps a response that matched no wait (bounded: a flood is cut).
    pub(crate) fn push_stray(&mut self, msg: Msg) {
        if self.strays.len() < MAX_NOTES {
            self.strays.push(msg);
        }
    }

    /// Sends a request for an unregistered method and waits for its answer: everything the
    /// sidecar wrote before it has been read. Returns the responses that came before it.
    pub(crate) async fn sync(&mut self) -> Result<Vec<Msg>, String> {
        let id = self.request(UNKNOWN_METHOD, json!({})).await?;
        self.response(&id).await?;
        Ok(std::mem::take(&mut self.strays))
    }

    /// The next response from the sidecar, answering or holding its requests and queueing its
    /// notifications on the way, and recording what `S-frames`, `15`, `S-barrier`, `S-ui`,
    /// `69` and `S-content` need.
    ///
    /// Returns `None` after serving a request or queueing a notification, so that a caller
    /// waiting for one (a held read, a stream chunk) sees it at once.
    pub(crate) async fn next(&mut self, deadline: Instant) -> Result<Option<Msg>, ReadEnd> {
        loop {
            let line = match self.wire.read_line(deadline).await {
                Ok(line) => line,
                Err(ReadEnd::Oversize) if !self.oversize_seen => {
                    self.oversize_seen = true;
                    self.frames_fail(
                        "a line longer than the frame limit (the kit stopped reading)",
                    );
                    return Err(ReadEnd::Oversize);
                }
                Err(end) => return Err(end),
            };
            self.remember(Frame::new(FrameDirection::Received, &line));
            let Some(msg) = self.parse(&line) else {
                continue;
            };
            match (msg.method().is_some(), msg.id.is_some()) {
                (true, true) => {
                    if !self.ready {
                        self.fail(
                            "S-barrier",
                            "the sidecar sent a request before extension/initialized",
                        );
                        continue;
                    }
                    self.serve(msg).await;
                    return Ok(None);
                }
                (true, false) => {
                    if !self.ready {
                        self.fail(
                            "S-barrier",
                            "the sidecar sent a notification before extension/initialized",
                        );
                        continue;
                    }
                    if self.notes.len() < MAX_NOTES {
                        self.notes.push_back(msg);
                    }
                    return Ok(None);
                }
                (false, _) => {
                    self.check_response(&msg);
                    return Ok(Some(msg));
                }
            }
        }
    }

    /// Parses one line; a line that is not a JSON-RPC 2.0 object fails `S-frames` and is
    /// skipped (a host would end the connection; the kit goes on to check the rest).
    fn parse(&mut self, line: &[u8]) -> Option<Msg> {
        let value: Value = match serde_json::from_slice(line) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) => {
                self.frames_fail("a line that is a JSON value but not an object");
                return None;
            }
            Err(_) => {
                let what = if line.iter().all(u8::is_ascii_whitespace) {
                    "a blank line"
                } else if line.starts_with("\u{feff}".as_bytes()) {
                    "a line beginning with a BOM"
                } else {
                    "a line that is not JSON"
                };
                self.frames_fail(what);
                return None;
            }
        };
        #[derive(serde::Deserialize)]
        struct IdOnly<'a> {
            // `null` is an id too (the answer to a request whose id was invalid).
            #[serde(borrow, default, deserialize_with = "present")]
            id: Option<&'a RawValue>,
        }
        let id = match serde_json::from_slice::<IdOnly<'_>>(line) {
            Ok(IdOnly { id }) => id.map(|raw| raw.get().to_owned()),
            Err(_) => {
                self.frames_fail("a frame that repeats a member name");
                value.get("id").map(Value::to_string)
            }
        };
        if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            self.frames_fail("a frame without \"jsonrpc\":\"2.0\"");
        }
        let msg = Msg { value, id };
        if msg.method().is_none() {
            let has_result = msg.value.get("result").is_some();
            let error = msg.value.get("error");
            if has_result == error.is_some() {
                self.frames_fail("a response with neither or both of result and error");
            } else if let Some(error) = error
                && (!error.get("code").is_some_and(Value::is_i64)
                    || !error.get("message").is_some_and(Value::is_string))
            {
                self.frames_fail("an error without an integer code and a string message");
            }
            if msg.id.is_none() {
                self.frames_fail("a response without an id");
            }
        }
        Some(msg)
    }

    fn frames_fail(&mut self, what: &str) {
        self.frames_failed = true;
        self.fail("S-frames", format!("the sidecar wrote {what} on stdout"));
    }

    /// Item 15 (v1) or D25 (v2) on every error response. On v2 an error without `data` is a
    /// failed call without a reason, as the delta's §3.1 says of the reference SDK's
    /// transport-local errors (`-32099`, `-32700`, `-32603` past the frame limit); one with
    /// `data` must carry a reason of the v2 table with its `retryable` and code.
    fn check_response(&mut self, msg: &Msg) {
        let Some(error) = msg.value.get("error") else {
            return;
        };
        let data = error.get("data");
        let id = match self.ctx.profile {
            ProtocolProfile::V2 if data.is_none() => return self.verdict("D25", None),
            ProtocolProfile::V2 => "D25",
            _ => "15",
        };
        let reason = data
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .and_then(|wire| Reason::parse_in(wire, self.ctx.profile));
        let failure = match reason {
            None => Some("an error response without a valid data.reason".to_owned()),
            Some(reason) => {
                let retryable = data
                    .and_then(|d| d.get("retryable"))
                    .and_then(Value::as_bool);
                if retryable != Some(reason.retryable()) {
                    Some(format!(
                        "an error with reason {} has data.retryable {} (the §3 table says {})",
                        reason.as_str(),
                        retryable.map_or_else(|| "missing".to_owned(), |r| r.to_string()),
                        reason.retryable()
                    ))
                } else if error.get("code").and_then(Value::as_i64) != Some(reason.code()) {
                    Some(format!(
                        "an error with reason {} has code {} (the §3 table says {})",
                        reason.as_str(),
                        error
                            .get("code")
                            .map_or_else(|| "none".to_owned(), Value::to_string),
                        reason.code()
                    ))
                } else {
                    None
                }
            }
        };
        self.verdict(id, failure);
    }

    /// Answers (or holds) a request from the sidecar, as a host would.
    async fn serve(&mut self, msg: Msg) {
        let id = msg.id.clone().unwrap_or_default();
        let params = msg.params().map(Value::to_string);
        let answer = match msg.method().unwrap_or_default() {
            "host/content/read" => self.content_read(&id, params.as_deref()),
            method @ ("host/ui/publish" | "host/ui/request") => {
                self.ui_call(method, params.as_deref())
            }
            _ => Some(Err(Reason::UnknownMethod)),
        };
        if let Some(answer) = answer {
            let _ = self.send_answer(&id, answer).await;
        }
    }

    /// Writes the answer to the sidecar's request `id` (its raw text, echoed as it came).
    async fn send_answer(&mut self, id: &str, answer: Result<Value, Reason>) -> Result<(), String> {
        let body = match answer {
            Ok(result) => format!("\"result\":{result}"),
            Err(reason) => format!(
                "\"error\":{}",
                serde_json::to_string(&reason.error_object()).expect("an error object serializes")
            ),
        };
        let text = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{body}}}\n");
        self.send_raw(text.as_bytes()).await
    }

    fn content_read(&mut self, id: &str, params: Option<&str>) -> Option<Result<Value, Reason>> {
        self.content_reads += 1;
        let params: ContentReadParams = match decode_params(params) {
            Ok(params) => params,
            Err(err) => {
                self.fail(
                    "S-content",
                    format!("host/content/read params fail decoding: {err}"),
                );
                return Some(Err(Reason::InvalidParams));
            }
        };
        let Some(content) = self.content.get_mut(&params.content_ref) else {
            self.fail(
                "S-content",
                "host/content/read names a ref the kit never sent",
            );
            return Some(Err(Reason::ContentRefExpired));
        };
        if params.offset != content.next_offset {
            let expected = content.next_offset;
            self.fail(
                "S-content",
                format!(
                    "host/content/read at offset {} where {expected} was next",
                    params.offset
                ),
            );
        } else {
            self.pass("S-content");
        }
        if self.hold_reads {
            self.held.push(Held {
                id: id.to_owned(),
                params,
            });
            return None;
        }
        Some(self.page(&params))
    }

    /// The page answering `params`, advancing the object's next offset.
    fn page(&mut self, params: &ContentReadParams) -> Result<Value, Reason> {
        let Some(content) = self.content.get_mut(&params.content_ref) else {
            return Err(Reason::ContentRefExpired);
        };
        let total = content.data.len() as u64;
        if params.offset > total {
            return Err(Reason::ContentRefExpired);
        }
        let start = params.offset as usize;
        let end = (start + CONTENT_CHUNK_BYTES).min(content.data.len());
        let data = base64::engine::general_purpose::STANDARD.encode(&content.data[start..end]);
        content.next_offset = end as u64;
        let mut result = json!({
            "contentRef": params.content_ref,
            "offset": params.offset,
            "dataBase64": data,
            "totalBytes": content.echo_total,
            "sha256": content.echo_sha,
            "encoding": "utf8",
        });
        if (end as u64) < total {
            result["nextOffset"] = json!(end);
        }
        Ok(result)
    }

    /// Answers every held read now.
    pub(crate) async fn release(&mut self) {
        for held in std::mem::take(&mut self.held) {
            let answer = self.page(&held.params);
            let _ = self.send_answer(&held.id, answer).await;
        }
    }

    /// Reads until `count` reads are held (or the wait ends); returns how many are.
    pub(crate) async fn await_held(&mut self, count: usize) -> usize {
        let deadline = self.ctx.wait();
        while self.held.len() < count {
            match self.next(deadline).await {
                Ok(Some(msg)) => self.push_stray(msg),
                Ok(None) => {}
                Err(_) => break,
            }
        }
        self.held.len()
    }

    fn ui_call(&mut self, method: &str, params: Option<&str>) -> Option<Result<Value, Reason>> {
        if !self.ctx.has(Capability::Ui) {
            self.fail(
                "S-ui",
                format!("{method} from a sidecar whose manifest lacks capability ui"),
            );
            return Some(Err(Reason::CapabilityNotDeclared));
        }
        let (session, generation) = if method == "host/ui/publish" {
            match decode_params::<UiPublishParams>(params) {
                Ok(p) => {
                    let declared = self
                        .handshake
                        .as_ref()
                        .map(|h| h.ui_actions.clone())
                        .unwrap_or_default();
                    if let Err(err) = p.check_card_actions(&declared) {
                        self.fail("S-ui", format!("host/ui/publish: {err}"));
                        return Some(Err(Reason::InvalidParams));
                    }
                    (p.session_id, p.generation)
                }
                Err(err) => {
                    self.fail(
                        "S-ui",
                        format!("host/ui/publish params fail decoding: {err}"),
                    );
                    return Some(Err(Reason::InvalidParams));
                }
            }
        } else {
            match decode_params::<UiRequestParams>(params) {
                Ok(p) => {
                    self.pass("69");
                    (p.session_id, p.generation)
                }
                Err(err) => {
                    self.fail("69", format!("host/ui/request params fail decoding: {err}"));
                    self.fail(
                        "S-ui",
                        format!("host/ui/request params fail decoding: {err}"),
                    );
                    return Some(Err(Reason::InvalidParams));
                }
            }
        };
        if session != SESSION_ID || generation != GENERATION {
            self.fail(
                "S-ui",
                format!("{method} for session/generation other than the host's ({SESSION_ID}, {GENERATION})"),
            );
        } else {
            self.pass("S-ui");
        }
        Some(Ok(if method == "host/ui/publish" {
            json!({"accepted": true})
        } else {
            json!({"cancelled": true})
        }))
    }

    /// Stores `data` as a content object and returns its descriptor for `/payload`, whose
    /// `totalBytes` and `sha256` are the data's unless `tamper` changes them.
    pub(crate) fn externalize(
        &mut self,
        data: Vec<u8>,
        tamper: impl FnOnce(&mut Value, &mut Content),
    ) -> Value {
        let mut random = [0u8; 12];
        let _ = getrandom::fill(&mut random);
        let reference = format!(
            "content_{}",
            random
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let sha = hex(&Sha256::digest(&data));
        let total = data.len() as u64;
        let mut descriptor = json!({
            "jsonPointer": "/payload",
            "contentRef": reference,
            "totalBytes": total,
            "sha256": sha,
        });
        let mut content = Content {
            data,
            echo_total: total,
            echo_sha: sha,
            next_offset: 0,
        };
        tamper(&mut descriptor, &mut content);
        self.content.insert(reference, content);
        descriptor
    }

    /// Sends `extension/initialize` with `params` and waits for its answer.
    pub(crate) async fn initialize(&mut self, params: Value) -> Result<Msg, String> {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "extension/initialize", "params": params}),
        )
        .await?;
        // The sidecar may still be starting (an interpreter, on a busy machine).
        let deadline = (Instant::now() + self.ctx.options.start_timeout).min(self.ctx.deadline);
        self.response_until("1", deadline).await
    }

    /// The standard handshake (records `S-handshake` and `S-barrier`), then
    /// `extension/initialized` and a synchronising round trip.
    pub(crate) async fn handshake(&mut self) -> Result<(), String> {
        let params = self.ctx.initialize_params();
        let answer = self.initialize(params).await?;
        let Some(result) = answer.result() else {
            let detail = format!(
                "extension/initialize was answered with {}",
                answer.describe()
            );
            self.fail("S-handshake", detail.clone());
            return Err(detail);
        };
        let decoded = self.decode_initialize_result(result);
        match decoded {
            Ok(decoded) => {
                self.pass("S-handshake");
                self.tools = decoded.tools.clone();
                self.handshake = Some(decoded.common());
            }
            Err(err) => {
                self.fail("S-handshake", format!("the initialize result: {err}"));
                return Err(format!("the initialize result: {err}"));
            }
        }
        self.pass("S-barrier");
        self.ready = true;
        self.send(&json!({"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}))
            .await?;
        self.sync().await?;
        self.strays.clear();
        Ok(())
    }

    /// Decodes and checks an initialize result as a host of the run's profile does (v1 §6.3;
    /// for v2 the delta's §2.2.1 checks too).
    pub(crate) fn decode_initialize_result(
        &self,
        result: &Value,
    ) -> Result<v2::InitializeResult, sidewire_ext_protocol::Error> {
        let launch = &self.ctx.launch;
        let decoded = decode_initialize_result_in(&result.to_string(), self.ctx.profile)?;
        match self.ctx.profile {
            ProtocolProfile::V2 => decoded.check_against_manifest(
                &launch.plugin_id,
                &launch.runtime,
                &self.ctx.declared_v2(),
            )?,
            _ => decoded
                .common()
                .check_against_manifest(&launch.plugin_id, &launch.runtime)?,
        }
        Ok(decoded)
    }

    /// The subscribed points (handshake ∩ manifest).
    pub(crate) fn subscribed(&self) -> Vec<HookPoint> {
        self.handshake
            .as_ref()
            .map(|h| {
                h.subscriptions
                    .iter()
                    .copied()
                    .filter(|p| self.ctx.launch.runtime.intercepts.contains(p))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the sidecar owns an active slot at `point` (calls there are strategy calls).
    pub(crate) fn owns_slot_at(&self, point: HookPoint) -> bool {
        let Some(slot) = point.slot() else {
            return false;
        };
        self.ctx.launch.runtime.replaces.contains(&slot)
            && self
                .handshake
                .as_ref()
                .is_some_and(|h| h.replaces.contains(&slot))
    }

    /// Marks the connection ready without a handshake (the states check drives it by hand).
    pub(crate) fn set_ready(&mut self) {
        self.ready = true;
    }

    /// Closes stdin.
    pub(crate) fn close_stdin(&mut self) {
        self.wire.close_stdin();
    }

    /// Waits for the exit, at most `timeout`.
    pub(crate) async fn exit_within(&self, timeout: Duration) -> Option<sidewire_process::Exit> {
        self.wire.wait_exit(timeout).await
    }

    /// Waits for the exit and the end of stderr, at most `timeout`; returns the exit and the
    /// stderr tail.
    pub(crate) async fn finish_within(
        &self,
        timeout: Duration,
    ) -> (Option<sidewire_process::Exit>, String) {
        let exit = self.wire.wait_finished(timeout).await;
        (exit, self.wire.stderr_tail())
    }

    /// Reads what arrives until `deadline`, answering requests; returns the responses.
    pub(crate) async fn drain_until(&mut self, deadline: Instant) -> Vec<Msg> {
        let mut out = std::mem::take(&mut self.strays);
        while let Ok(msg) = self.next(deadline).await {
            if out.len() < MAX_NOTES {
                out.extend(msg);
            }
        }
        out
    }

    /// Ends the session: records a pass of `S-frames` when nothing broke it, kills the process,
    /// and returns the findings.
    pub(crate) fn finish(mut self) -> Findings {
        if !self.frames_failed {
            self.pass("S-frames");
        }
        self.wire.kill();
        std::mem::take(&mut self.findings)
    }

    /// How many content reads arrived so far.
    pub(crate) fn content_reads(&self) -> usize {
        self.content_reads
    }
}

/// Deserializes a member that is present, `null` included, as `Some`.
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue as serde::Deserialize>::deserialize(deserializer).map(Some)
}

fn no_answer(end: ReadEnd, id: &str) -> String {
    match end {
        ReadEnd::Timeout => format!("no answer to request {id} in time"),
        ReadEnd::Eof => {
            format!("the sidecar closed stdout (exited?) before answering request {id}")
        }
        ReadEnd::Oversize => {
            format!("the sidecar wrote a line over the frame limit before answering request {id}")
        }
        ReadEnd::Failed => {
            format!("reading the sidecar's stdout failed before answering request {id}")
        }
    }
}

/// Lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
