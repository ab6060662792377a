//! MCP over HTTP: Streamable HTTP (2025-11-25) and the legacy HTTP+SSE transport (2024-11-05).
//!
//! The transport is a frame stream and sink like every other: each frame the jsonrpc driver
//! writes becomes one POST, and every JSON-RPC message that comes back (a JSON body, an SSE
//! event on a POST's stream, the optional GET stream, the legacy `message` events) is fed into
//! the stream. The HTTP work runs in one transport driver future ([`streamable::run`]) that the
//! connection's driver polls, as its background work: in-flight POSTs and streams sit in a
//! `FuturesUnordered`, and even hyper's connection futures are handed to it (through
//! [`client::DriverExecutor`]) instead of being spawned, so the crate still never spawns.
//!
//! The transport needs to know a little of the protocol, and keeps it here rather than in the
//! protocol core: it recognises the protocol layer's `initialize` request on its way out (to
//! replay it when the session expires) and its response on the way in (to send
//! `MCP-Protocol-Version` afterwards and to settle the automatic choice of transport). See
//! [`streamable`] for the session-expiry rule.
//!
//! A failure of the HTTP exchange that carried a request (a non-2xx status, a network error,
//! a body over the cap, a stream that ended without the response) is reported to that
//! request's caller as a typed error: the transport answers the request itself with a JSON-RPC
//! error whose `data` names an entry in [`Failures`], and the protocol core turns the entry
//! back into the typed [`Error`] (`Error::is_http`, `Error::http_status`). Entries are only
//! created here and each is claimed once, at once; an error object from the server that
//! imitates the shape names no entry and stays an ordinary remote error.

pub(crate) mod client;
pub(crate) mod legacy;
pub(crate) mod streamable;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sidewire_jsonrpc::{ErrorObject, Peer};
use tokio::sync::{mpsc, watch};
use url::Url;

use crate::error::Kind;
use crate::protocol::session::lock;
use crate::transport::{Backend, Opened};
use crate::{Error, ServerSpec, Transport};

use self::client::{BackgroundTask, HttpClient};

/// The session header (any case on the wire; http normalises to lower case).
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// The negotiated-version header sent after initialize.
pub(crate) const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// The resumption header.
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// What a POST accepts.
const ACCEPT_POST: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
/// What a GET accepts.
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
/// How long closing waits for the session DELETE, and then for the driver to wind down.
const CLOSE_BUDGET: Duration = Duration::from_secs(2);
/// The inbound queue between the transport driver and the jsonrpc driver, in frames. Full, it
/// slows the HTTP readers down rather than growing.
const INBOUND_QUEUE: usize = 64;

/// Which HTTP transport a connection runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Streamable HTTP, not confirmed yet: the initialize POST may still send us to legacy.
    Auto,
    /// Streamable HTTP, confirmed by a successful initialize.
    Streamable,
    /// Legacy HTTP+SSE.
    Legacy,
}

/// What the transport driver and the connection's backend share.
pub(crate) struct HttpState {
    pub(crate) server: Arc<str>,
    pub(crate) url: Url,
    pub(crate) client: HttpClient,
    /// The configured headers; they override the defaults.
    static_headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    pub(crate) mode: Mutex<Mode>,
    /// The protocol layer's initialize request, replayed when the session expires.
    pub(crate) initialize: Mutex<Option<(String, Bytes)>>,
    /// The optional GET stream is due: initialize succeeded over Streamable HTTP. Set before
    /// the initialize response reaches the protocol layer, so every later request sees it.
    pub(crate) get_planned: AtomicBool,
    /// The optional GET stream was started (once per transport, then once per re-initialized
    /// session).
    pub(crate) get_started: AtomicBool,
    /// Which GET stream is current: bumped when a re-initialized session opens its own, which
    /// ends the expired session's stream (its events, and its `Last-Event-ID`, belong to a
    /// session the server no longer knows).
    pub(crate) get_generation: watch::Sender<u64>,
    /// The GET stream's first answer arrived (or it failed): requests wait for it, so a
    /// server that sends server-initiated messages on it (an elicitation for a tool call) has
    /// it before it needs it.
    pub(crate) get_ready: watch::Sender<bool>,
    /// Serialises re-initialization after a session expiry.
    pub(crate) reinit: tokio::sync::Mutex<()>,
    /// The legacy endpoint, once announced (or why there will be none).
    pub(crate) endpoint: watch::Sender<Option<Result<Url, String>>>,
    /// The cap on one body or SSE event.
    pub(crate) cap: usize,
    /// The longest one request's exchange may take (the call's absolute cap).
    pub(crate) request_budget: Duration,
    /// The longest any other exchange may take (the call timeout).
    pub(crate) message_budget: Duration,
    pub(crate) failures: Arc<Failures>,
}

impl HttpState {
    /// The session id, when the server gave one.
    pub(crate) fn session(&self) -> Option<HeaderValue> {
        lock(&self.session).clone()
    }

    /// Takes `Mcp-Session-Id` from any response that carries one.
    pub(crate) fn capture_session(&self, headers: &HeaderMap) {
        if let Some(id) = headers.get(SESSION_HEADER) {
            let visible = id.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b));
            if visible && !id.is_empty() {
                *lock(&self.session) = Some(id.clone());
            }
        }
    }

    /// Forgets an expired session (and the version negotiated in it).
    pub(crate) fn forget_session(&self) {
        *lock(&self.session) = None;
        *lock(&self.version) = None;
    }

    pub(crate) fn set_version(&self, version: &str) {
        if let Ok(value) = HeaderValue::from_str(version) {
            *lock(&self.version) = Some(value);
        }
    }

    pub(crate) fn mode(&self) -> Mode {
        *lock(&self.mode)
    }

    /// The headers of a POST carrying one message.
    pub(crate) fn post_headers(&self, session: Option<&HeaderValue>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, ACCEPT_POST);
        self.finish(headers, session)
    }

    /// The headers of a GET for an SSE stream.
    pub(crate) fn get_headers(&self, last_event_id: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, ACCEPT_SSE);
        if let Some(id) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(LAST_EVENT_ID, id);
        }
        let session = self.session();
        self.finish(headers, session.as_ref())
    }

    /// Static headers over the defaults, then the session and version headers.
    fn finish(&self, mut headers: HeaderMap, session: Option<&HeaderValue>) -> HeaderMap {
        for (name, value) in &self.static_headers {
            headers.insert(name.clone(), value.clone());
        }
        if let Some(session) = session {
            headers.insert(SESSION_HEADER, session.clone());
        }
        if self.mode() != Mode::Legacy
            && let Some(version) = lock(&self.version).clone()
        {
            headers.insert(VERSION_HEADER, version);
        }
        headers
    }
}

/// Failures of HTTP exchanges waiting to be turned into typed errors; see the module docs.
#[derive(Default)]
pub(crate) struct Failures {
    next: AtomicU64,
    table: Mutex<HashMap<u64, Kind>>,
}

/// The `data` member that names a [`Failures`] entry.
const FAILURE_KEY: &str = "sidewireTransportFailure";
/// The most failures kept unclaimed (a caller that gave up never claims its entry).
const MAX_FAILURES: usize = 256;

impl Failures {
    /// Records `kind` and returns the JSON-RPC error response that answers request `id`.
    fn answer(&self, id: &str, kind: Kind) -> Bytes {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let message = kind.to_string();
        {
            let mut table = lock(&self.table);
            if table.len() >= MAX_FAILURES {
                table.clear();
            }
            table.insert(key, kind);
        }
        let id: Box<RawValue> = RawValue::from_string(id.to_owned()).unwrap_or_else(|_| raw_null());
        let frame = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": -32000, "message": message, "data": { FAILURE_KEY: key } },
        });
        Bytes::from(frame.to_string())
    }

    /// The typed failure an error object stands for, when this transport made it.
    pub(crate) fn take(&self, error: &ErrorObject) -> Option<Error> {
        let key = error.data.as_ref()?.get(FAILURE_KEY)?.as_u64()?;
        lock(&self.table).remove(&key).map(Error::new)
    }
}

fn raw_null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// Why an HTTP exchange failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No status: connecting, TLS, or the connection broke.
    Net(String),
    /// A non-2xx status, with the start of the body.
    Status { status: u16, body: String },
    /// A body or event over the cap.
    TooLarge(usize),
    /// Anything else, in words.
    Other(String),
    /// The initialize stream announced a legacy endpoint: switch transports.
    UseLegacy,
}

impl Failure {
    fn into_kind(self, method: &str, url: &Url) -> Kind {
        match self {
            Failure::UseLegacy => Kind::Http {
                method: method.to_owned(),
                url: url.to_string(),
                status: None,
                detail: "the server switched to the legacy HTTP+SSE transport".to_owned(),
            },
            Failure::Net(detail) | Failure::Other(detail) => Kind::Http {
                method: method.to_owned(),
                url: url.to_string(),
                status: None,
                detail,
            },
            Failure::Status { status, body } => Kind::Http {
                method: method.to_owned(),
                url: url.to_string(),
                status: Some(status),
                detail: body,
            },
            Failure::TooLarge(cap) => Kind::TooLarge(format!(
                "{method}: a response body or SSE event from {url} exceeded the {cap}-byte limit"
            )),
        }
    }
}

/// What an outgoing frame is, as far as the transport cares.
#[derive(Debug, Clone)]
pub(crate) enum Outgoing {
    /// A request: its id (raw JSON) and method.
    Request {
        id: String,
        method: String,
    },
    Notification {
        method: String,
    },
    Response,
}

impl Outgoing {
    pub(crate) fn of(frame: &[u8]) -> Outgoing {
        #[derive(Deserialize)]
        struct Peek<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
            method: Option<String>,
        }
        match serde_json::from_slice::<Peek<'_>>(frame) {
            Ok(Peek {
                id: Some(id),
                method: Some(method),
            }) => Outgoing::Request {
                id: id.get().to_owned(),
                method,
            },
            Ok(Peek {
                id: None,
                method: Some(method),
            }) => Outgoing::Notification { method },
            _ => Outgoing::Response,
        }
    }

    pub(crate) fn method(&self) -> &str {
        match self {
            Outgoing::Request { method, .. } | Outgoing::Notification { method } => method,
            Outgoing::Response => "a response",
        }
    }
}

/// The id of an inbound response (a message with an id and no method), as raw JSON.
pub(crate) fn response_id(frame: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<&'a RawValue>,
    }
    match serde_json::from_slice::<Peek<'_>>(frame) {
        Ok(Peek {
            id: Some(id),
            method: None,
        }) => Some(id.get().to_owned()),
        _ => None,
    }
}

/// What the transport driver and its tasks hold; the backend does not, so when the driver
/// ends the inbound queue closes and the jsonrpc driver sees end of input.
pub(crate) struct Ctx {
    pub(crate) state: Arc<HttpState>,
    inbound: mpsc::Sender<Bytes>,
    /// Long-lived work (streams) for the driver to poll.
    tasks: mpsc::UnboundedSender<BackgroundTask>,
    /// Tells the driver to end (the legacy stream is gone).
    pub(crate) end: watch::Sender<bool>,
}

impl Ctx {
    /// Hands an inbound message to the protocol layer, noticing the initialize response.
    pub(crate) async fn deliver(&self, frame: Bytes) {
        if let Some(id) = response_id(&frame) {
            let init_id = lock(&self.state.initialize)
                .as_ref()
                .map(|(id, _)| id.clone());
            if init_id.as_deref() == Some(id.as_str()) {
                self.initialized(&frame);
            }
        }
        // A closed queue means the connection is going away; the frame has no one to go to.
        let _ = self.inbound.send(frame).await;
    }

    /// The initialize response went by: remember the version, and settle an automatic choice.
    pub(crate) fn initialized(&self, frame: &[u8]) {
        let version = serde_json::from_slice::<Value>(frame).ok().and_then(|v| {
            v.pointer("/result/protocolVersion")?
                .as_str()
                .map(str::to_owned)
        });
        if let Some(version) = version {
            self.state.set_version(&version);
            let mut mode = lock(&self.state.mode);
            if *mode == Mode::Auto {
                *mode = Mode::Streamable;
            }
            if *mode == Mode::Streamable {
                self.state.get_planned.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Reports a failed exchange: a request's caller gets a typed error; anything else is
    /// logged (nobody waits for it).
    pub(crate) async fn fail(&self, outgoing: &Outgoing, url: &Url, failure: Failure) {
        match outgoing {
            Outgoing::Request { id, method } => {
                let kind = failure.into_kind(method, url);
                let frame = self.state.failures.answer(id, kind);
                let _ = self.inbound.send(frame).await;
            }
            other => {
                let kind = failure.into_kind(other.method(), url);
                tracing::warn!(server = %self.state.server, error = %kind, "an HTTP exchange failed");
            }
        }
    }

    /// Runs `task` on the driver.
    pub(crate) fn run(&self, task: BackgroundTask) {
        let _ = self.tasks.send(task);
    }
}

/// The inbound half handed to the jsonrpc driver.
struct Inbound(mpsc::Receiver<Bytes>);

impl Stream for Inbound {
    type Item = Result<Bytes, sidewire_framing::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|frame| frame.map(Ok))
    }
}

/// The lifecycle side of an HTTP connection.
pub(crate) struct HttpBackend {
    state: Arc<HttpState>,
}

impl std::fmt::Debug for HttpBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBackend")
            .field("url", &self.state.url.as_str())
            .field("mode", &self.state.mode())
            .finish_non_exhaustive()
    }
}

impl HttpBackend {
    /// Ends the session (DELETE, where the server keeps one; 405 is fine), then the connection;
    /// bounded. The DELETE goes first, while the driver (which runs hyper's connections) is
    /// still there to carry it.
    pub(crate) async fn close(&self, peer: &Peer) {
        let state = &self.state;
        if state.mode() != Mode::Legacy
            && let Some(session) = state.session()
        {
            let mut headers = state.get_headers(None);
            headers.remove(ACCEPT);
            headers.insert(SESSION_HEADER, session);
            let delete =
                state
                    .client
                    .send(http::Method::DELETE, &state.url, &headers, Bytes::new());
            match tokio::time::timeout(CLOSE_BUDGET, delete).await {
                Ok(Ok((_, response))) => {
                    tracing::debug!(server = %state.server, status = %response.status(), "ended the HTTP session");
                }
                Ok(Err(err)) => {
                    tracing::debug!(server = %state.server, error = %err.0, "ending the HTTP session failed");
                }
                Err(_) => {
                    tracing::debug!(server = %state.server, "ending the HTTP session timed out");
                }
            }
            state.forget_session();
        }
        let _ = tokio::time::timeout(CLOSE_BUDGET, peer.shutdown(Duration::ZERO)).await;
    }

    /// The failures table, for the protocol core.
    pub(crate) fn failures(&self) -> Arc<Failures> {
        Arc::clone(&self.state.failures)
    }
}

/// Opens an HTTP transport: nothing goes on the wire until the first frame (the initialize
/// request), and all of it happens in the returned background future.
pub(crate) fn open(spec: &ServerSpec) -> Result<Opened, Error> {
    let url = Url::parse(spec.url.trim())
        .map_err(|err| Error::config(format!("server `{}`: invalid url: {err}", spec.name)))?;
    let mut static_headers = HeaderMap::new();
    for (name, value) in &spec.headers {
        let (name, value) = client::header_pair(name, value)
            .map_err(|err| Error::config(format!("server `{}`: {err}", spec.name)))?;
        static_headers.insert(name, value);
    }
    let (client, hyper_tasks) =
        HttpClient::new().map_err(|err| Error::new(Kind::Spawn { message: err }))?;
    let mode = match spec.transport {
        Transport::Sse => Mode::Legacy,
        _ => Mode::Auto,
    };
    let state = Arc::new(HttpState {
        server: Arc::clone(&spec.name),
        url,
        client,
        static_headers,
        session: Mutex::new(None),
        version: Mutex::new(None),
        mode: Mutex::new(mode),
        initialize: Mutex::new(None),
        get_planned: AtomicBool::new(false),
        get_started: AtomicBool::new(false),
        get_generation: watch::channel(0).0,
        get_ready: watch::channel(false).0,
        reinit: tokio::sync::Mutex::new(()),
        endpoint: watch::channel(None).0,
        cap: spec.max_message_bytes,
        request_budget: spec.max_call_duration.max(spec.call_timeout),
        message_budget: spec.call_timeout,
        failures: Arc::new(Failures::default()),
    });
    let (inbound_tx, inbound_rx) = mpsc::channel(INBOUND_QUEUE);
    let (outbound_tx, outbound_rx) = mpsc::channel::<Bytes>(INBOUND_QUEUE);
    let (tasks_tx, tasks_rx) = mpsc::unbounded_channel();
    let ctx = Arc::new(Ctx {
        state: Arc::clone(&state),
        inbound: inbound_tx,
        tasks: tasks_tx,
        end: watch::channel(false).0,
    });
    let sink = futures_util::sink::unfold(outbound_tx, |tx, frame: Bytes| async move {
        tx.send(frame).await.map_err(|_| {
            sidewire_framing::Error::Io(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the HTTP transport has ended",
            ))
        })?;
        Ok::<_, sidewire_framing::Error>(tx)
    });
    let driver = streamable::run(ctx, outbound_rx, hyper_tasks, tasks_rx);
    Ok(Opened {
        stream: Box::pin(Inbound(inbound_rx)),
        sink: Box::pin(sink),
        backend: Backend::Http(HttpBackend { state }),
        background: Some(Box::pin(driver)),
    })
}

#[cfg(test)]
mod tests;
