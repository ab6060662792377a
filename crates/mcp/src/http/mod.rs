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
//! Each outgoing frame arrives as an [`Outbound`] that says whether it is a request (and its id
//! and method), a notification or a response; the transport parses no outgoing JSON. A failure
//! of the HTTP exchange that carried a request (a non-2xx status, a network error, a body over
//! the cap, a stream that ended without the response) goes up the inbound stream as
//! [`Inbound::Failed`] with the request's id and a typed [`Cause`], for the protocol core to fail that request with a typed error
//! (`Error::is_http`, `Error::http_status`). A failure of anything else is logged: nobody
//! waits for it.
//!
//! Every request to the server, whichever transport and era, goes through `HttpState::send`, which
//! applies the connection's authorization and, after a 401 or a 403 `insufficient_scope`, sends
//! it again with new credentials within the session's per-request budget.

pub(crate) mod answer;
pub(crate) mod authorize;
mod cause;
pub(crate) mod client;
pub(crate) mod legacy;
pub(crate) mod modern;
pub(crate) mod streamable;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use sidewire_jsonrpc::{Peer, lock};
use tokio::sync::{mpsc, watch};
use url::Url;

use crate::error::Kind;
use crate::error::auth::AuthFailure;
use crate::redact::UrlSecrets;
use crate::transport::{
    Backend, Inbound, Message, Opened, Outbound, Outlet, RequestFailed, RequestId,
};
use crate::{Error, ServerSpec, Transport};

#[cfg_attr(not(feature = "auth"), allow(unused_imports))]
pub(crate) use self::authorize::{AuthFuture, Authorize, Budget, Decision};
pub(crate) use self::cause::Cause;
use self::client::{BackgroundTask, HttpClient, NetError};
use self::streamable::{GetStream, Handshake};

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
    /// The secrets of `url` (its own and what a config expanded into it): every error and log
    /// line shows a URL and any text that may quote it through them.
    pub(crate) secrets: UrlSecrets,
    pub(crate) client: HttpClient,
    /// The configured headers; they override the defaults.
    static_headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    pub(crate) mode: Mutex<Mode>,
    /// The protocol layer's initialize request, replayed when the session expires.
    pub(crate) initialize: Mutex<Option<(RequestId, Bytes)>>,
    /// The optional GET stream: whether it is due, which one is current, and whether requests
    /// still wait for its first answer (see [`GetStream`]).
    pub(crate) get: watch::Sender<GetStream>,
    /// Whether requests wait for `notifications/initialized` (see [`Handshake`]).
    pub(crate) handshake: watch::Sender<Handshake>,
    /// The spec's startup budget: initialize retries stay within it.
    pub(crate) startup_budget: Duration,
    /// Serialises re-initialization after a session expiry.
    pub(crate) reinit: tokio::sync::Mutex<()>,
    /// The legacy event stream's lifecycle and the requests waiting for answers on it.
    pub(crate) legacy: legacy::Legacy,
    /// The cap on one body or SSE event.
    pub(crate) cap: usize,
    /// The longest one request's exchange may take (the call's absolute cap).
    pub(crate) request_budget: Duration,
    /// The longest any other exchange may take (the call timeout).
    pub(crate) message_budget: Duration,
    /// OAuth, when the server's spec has an authorizer (see [`crate::auth`]).
    pub(crate) auth: Option<Arc<dyn Authorize>>,
}

/// Why a request got no answer: the network, or an authorization that failed.
#[derive(Debug)]
pub(crate) enum SendError {
    Net(NetError),
    Auth(AuthFailure),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Net(err) => f.write_str(&err.0),
            SendError::Auth(failure) => write!(f, "{failure}"),
        }
    }
}

impl From<SendError> for Cause {
    fn from(err: SendError) -> Cause {
        match err {
            SendError::Net(err) => err.into(),
            SendError::Auth(failure) => Cause::Auth(failure),
        }
    }
}

impl HttpState {
    /// Sends a request to the server (see [`HttpClient::send`]), with its credentials when it
    /// authorizes: a 401, or a 403 `insufficient_scope`, gets new credentials from the
    /// authorizer ([`Authorize`]) and the request is sent again, within the session's per-request budget.
    /// Any other answer, and a 403 for another reason, is returned as it is.
    pub(crate) async fn send(
        &self,
        method: http::Method,
        url: &Url,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<(Url, http::Response<hyper::body::Incoming>), SendError> {
        let Some(auth) = &self.auth else {
            return self
                .client
                .send(method, url, headers, body)
                .await
                .map_err(SendError::Net);
        };
        let mut budget = Budget::default();
        loop {
            let mut headers = headers.clone();
            let generation = auth
                .apply(&method, url, &mut headers)
                .await
                .map_err(SendError::Auth)?;
            let (at, response) = self
                .client
                .send(method.clone(), url, &headers, body.clone())
                .await
                .map_err(SendError::Net)?;
            let status = response.status();
            if !auth.is_refusal(status, response.headers()) {
                return Ok((at, response));
            }
            let answer = response.headers().clone();
            // The refused answer's connection is not held while authorizing.
            drop(response);
            match auth.refused(status, &answer, generation, &mut budget).await {
                Ok(Decision::Retry) => {}
                Ok(Decision::Stand) => {
                    return Err(SendError::Auth(AuthFailure::new(
                        crate::error::auth::AuthErrorKind::StillRefused,
                        format!(
                            "{} answered HTTP {}",
                            self.secrets.show(url),
                            status.as_u16()
                        ),
                    )));
                }
                Err(failure) => return Err(SendError::Auth(failure)),
            }
        }
    }

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

/// The id of an inbound response (a message with an id and no method).
pub(crate) fn response_id(frame: &[u8]) -> Option<RequestId> {
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
        }) => Some(RequestId::from_json(id.get())),
        _ => None,
    }
}

/// What the transport driver and its tasks hold; the backend does not, so when the driver
/// ends the inbound queue closes and the jsonrpc driver sees end of input.
pub(crate) struct Ctx {
    pub(crate) state: Arc<HttpState>,
    inbound: mpsc::Sender<Inbound>,
    /// Long-lived work (streams) for the driver to poll.
    tasks: mpsc::UnboundedSender<BackgroundTask>,
    /// Tells the driver to end (the legacy stream is gone).
    pub(crate) end: watch::Sender<bool>,
    /// The modern exchanges in flight, for a cancel to close.
    pub(crate) aborts: modern::Aborts,
}

impl Ctx {
    /// Hands an inbound message to the protocol layer, noticing the initialize response.
    pub(crate) async fn deliver(&self, frame: Bytes) {
        if let Some(id) = response_id(&frame) {
            let init_id = lock(&self.state.initialize)
                .as_ref()
                .map(|(id, _)| id.clone());
            if init_id.as_ref() == Some(&id) {
                self.initialized(&frame);
            }
        }
        // A closed queue means the connection is going away; the frame has no one to go to.
        let _ = self.inbound.send(Inbound::Frame(frame)).await;
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
                self.state.get.send_if_modified(GetStream::plan);
            }
        }
    }

    /// Reports a failed exchange: a request's caller gets a typed error; anything else is
    /// logged (nobody waits for it).
    pub(crate) async fn fail(&self, message: &Message, url: &Url, cause: Cause) {
        let error = cause.into_error(message.method(), url, &self.state.secrets);
        match message {
            Message::Request { id, method } => {
                let failed = RequestFailed {
                    id: id.clone(),
                    method: method.clone(),
                    error,
                };
                let _ = self.inbound.send(Inbound::Failed(failed)).await;
            }
            _ => {
                tracing::warn!(server = %self.state.server, %error, "an HTTP exchange failed");
            }
        }
    }

    /// Tells the protocol layer a new session replaced an expired one.
    pub(crate) async fn renewed(&self) {
        let _ = self.inbound.send(Inbound::SessionRenewed).await;
    }

    /// Runs `task` on the driver.
    pub(crate) fn run(&self, task: BackgroundTask) {
        let _ = self.tasks.send(task);
    }
}

/// The inbound half handed to the protocol layer.
struct InboundQueue(mpsc::Receiver<Inbound>);

impl Stream for InboundQueue {
    type Item = Result<Inbound, sidewire_framing::Error>;

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
            .field("url", &self.state.secrets.show(&self.state.url))
            .field("mode", &self.state.mode())
            .finish_non_exhaustive()
    }
}

impl crate::transport::Remote for HttpBackend {
    fn close<'a>(&'a self, peer: &'a Peer) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(self.end(peer))
    }
}

impl HttpBackend {
    /// Ends the session (DELETE, where the server keeps one; 405 is fine), then the connection;
    /// bounded. The DELETE goes first, while the driver (which runs hyper's connections) is
    /// still there to carry it.
    async fn end(&self, peer: &Peer) {
        let state = &self.state;
        if state.mode() != Mode::Legacy
            && let Some(session) = state.session()
        {
            let mut headers = state.get_headers(None);
            headers.remove(ACCEPT);
            headers.insert(SESSION_HEADER, session);
            let delete = state.send(http::Method::DELETE, &state.url, &headers, Bytes::new());
            match tokio::time::timeout(CLOSE_BUDGET, delete).await {
                Ok(Ok((_, response))) => {
                    tracing::debug!(server = %state.server, status = %response.status(), "ended the HTTP session");
                }
                Ok(Err(err)) => {
                    let error = state.secrets.scrub(&err.to_string()).into_owned();
                    tracing::debug!(server = %state.server, %error, "ending the HTTP session failed");
                }
                Err(_) => {
                    tracing::debug!(server = %state.server, "ending the HTTP session timed out");
                }
            }
            state.forget_session();
        }
        let _ = tokio::time::timeout(CLOSE_BUDGET, peer.shutdown(Duration::ZERO)).await;
    }
}

/// Opens an HTTP transport: nothing goes on the wire until the first frame (the initialize
/// request), and all of it happens in the returned background future. `authorizer` makes the
/// connection's authorizer, if it has one, from the transport's client and the server's URL.
pub(crate) fn open(
    spec: &ServerSpec,
    authorizer: impl FnOnce(&HttpClient, &Url) -> Option<Arc<dyn Authorize>>,
) -> Result<Opened, Error> {
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
    let client_for_auth = client.clone();
    let url_for_auth = url.clone();
    let mode = match spec.transport {
        Transport::Sse => Mode::Legacy,
        _ => Mode::Auto,
    };
    let state = Arc::new(HttpState {
        server: Arc::clone(&spec.name),
        secrets: spec.url_secrets.with_url(&url),
        url,
        client,
        static_headers,
        session: Mutex::new(None),
        version: Mutex::new(None),
        mode: Mutex::new(mode),
        initialize: Mutex::new(None),
        get: watch::channel(GetStream::Off).0,
        handshake: watch::channel(Handshake::Initializing).0,
        startup_budget: spec.startup_timeout,
        reinit: tokio::sync::Mutex::new(()),
        legacy: legacy::Legacy::new(spec),
        cap: spec.max_message_bytes,
        request_budget: spec.max_call_duration.max(spec.call_timeout),
        message_budget: spec.call_timeout,
        auth: authorizer(&client_for_auth, &url_for_auth),
    });
    let (inbound_tx, inbound_rx) = mpsc::channel(INBOUND_QUEUE);
    let (outbound_tx, outbound_rx) = mpsc::channel::<Outbound>(INBOUND_QUEUE);
    let (tasks_tx, tasks_rx) = mpsc::unbounded_channel();
    let ctx = Arc::new(Ctx {
        state: Arc::clone(&state),
        inbound: inbound_tx,
        tasks: tasks_tx,
        end: watch::channel(false).0,
        aborts: modern::Aborts::default(),
    });
    let sink = futures_util::sink::unfold(outbound_tx, |tx, frame: Outbound| async move {
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
        stream: Box::pin(InboundQueue(inbound_rx)),
        sink: Outlet::Messages(Box::pin(sink)),
        backend: Backend::Remote(Box::new(HttpBackend { state })),
        background: Some(Box::pin(driver)),
    })
}

#[cfg(test)]
mod tests;
