//! Streamable HTTP: one endpoint (`/mcp` by default) taking `POST`, `GET` and `DELETE`.
//!
//! - **Legacy sessions.** A `POST` of `initialize` without `Mcp-Session-Id` opens a session;
//!   its id comes back in `Mcp-Session-Id` and every later request carries it (an unknown one
//!   is `404`, a missing one `400`). The id is 128 random bits (hex), or, when the server has a
//!   [`SealingKey`](crate::SealingKey), what the client said at `initialize` sealed with it:
//!   then a replica with the same key that has not seen the session takes it over as the
//!   client left it after `initialize` (its log level, subscriptions and open streams stay on
//!   the replica that had them), so replicas run behind a balancer that keeps a session on one
//!   replica only loosely (nginx's `hash $http_mcp_session_id`, which sends `initialize`
//!   anywhere). A request is answered with
//!   JSON when its handler sends nothing before the response, else as an event stream
//!   (`text/event-stream`) carrying its progress, log messages and requests to the client,
//!   then the response. Every event has an id `{stream}-{n}`; a stream begins with a priming
//!   event (an id, `retry`, empty data; from 2025-11-25 on). A client that lost a stream (or
//!   whose stream the server closed, [`crate::HandlerContext::close_stream`]) sends `GET` with
//!   `Last-Event-ID` and gets what followed, the response included: a connection that drops
//!   does not cancel the request (`notifications/cancelled` does). A `GET` without it is the
//!   session's own stream (one at a time: `409`), for list changes and resource updates.
//!   `DELETE` ends the session and cancels its requests.
//! - **Modern requests** (2026-07-28) carry no session: each `POST` stands alone, its `_meta`
//!   naming the version and the client; `Mcp-Method` and `Mcp-Name`, when sent, must match the
//!   body (`400`, `-32020`). Its stream has no ids and a stream that closes cancels the request.
//! - **Every request** passes [`check::head`] first: `Host` and `Origin` against
//!   [`HttpConfig::allowed`] (loopback only by default: DNS rebinding protection, `403`),
//!   `Content-Type` (`415`), `Accept` (`406`), a known `MCP-Protocol-Version` (`400`).
//!
//! | bound | default | over it |
//! |---|---|---|
//! | body of a `POST` | 4 MiB ([`crate::Limits::max_message_bytes`]) | `413` |
//! | sessions | 1,024 ([`HttpConfig::max_sessions`]) | the longest idle without a stream open is closed, then one with; `503` if every one has a request running |
//! | a session's idle time | 1 h ([`HttpConfig::session_idle`]) without a request or an open stream | closed at the next new session |
//! | streams kept per session | 64 ([`HttpConfig::max_streams`]) | the oldest finished is let go |
//! | events kept per stream | 256 ([`HttpConfig::max_events`]) | the oldest is let go |
//! | a slow connection | 30 s per event ([`HttpConfig::write_stall`]) | the connection is let go; the stream resumes |
//! | connections | 1,024 ([`HttpConfig::max_connections`]) | accepting waits |

pub mod check;
pub(crate) mod sse;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited, StreamBody, combinators::BoxBody};
use hyper::body::{Body, Frame};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::time::Instant;

use self::check::{Allowed, Head, Refusal};
use self::sse::{AttachError, STANDALONE, Streams};
use crate::context::Out;
use crate::core::{SessionCore, Step};
use crate::era::{self, HEADER_MISMATCH};
use crate::server::{CallGuard, Server, Session, lock, stream as out_stream};
use crate::wire::{self, Inbound};
use crate::{Error, Handler};

/// A response body: JSON, an event stream, or nothing.
pub type ResponseBody = BoxBody<Bytes, Infallible>;

/// The token a client must present (`Authorization: Bearer <token>`). Its `Debug` never shows
/// it.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    /// A token; `None` when it is empty or not visible ASCII (it could not be sent in a
    /// header).
    pub fn new(token: impl Into<String>) -> Option<Self> {
        let token = token.into();
        let visible = !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic());
        visible.then_some(BearerToken(token))
    }

    /// Whether `headers` carry exactly one `Authorization: Bearer` with this token.
    fn admits(&self, headers: &http::HeaderMap) -> bool {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return false;
        };
        let value = value.as_bytes();
        let Some(scheme) = value.get(..7) else {
            return false;
        };
        scheme.eq_ignore_ascii_case(b"bearer ") && same(&value[7..], self.0.as_bytes())
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

/// `a == b` in time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// How the HTTP transport runs: its path, who may call it, and its bounds (the module docs).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The endpoint's path (default `/mcp`).
    pub path: String,
    /// Which `Host` and `Origin` values are answered (default: loopback only).
    pub allowed: Allowed,
    /// Open legacy sessions at most.
    pub max_sessions: usize,
    /// A session idle this long is closed when room is needed.
    pub session_idle: Duration,
    /// Streams kept per session for resumption.
    pub max_streams: usize,
    /// Events kept per stream for resumption.
    pub max_events: usize,
    /// The `retry` a priming event asks clients to wait before reconnecting.
    pub retry: Duration,
    /// How long one event may wait on a slow connection.
    pub write_stall: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// When set, every request must carry `Authorization: Bearer <token>` (compared in
    /// constant time); any other is answered `401` with `WWW-Authenticate: Bearer`, before
    /// anything else is looked at. Default: none (loopback listeners).
    pub bearer: Option<BearerToken>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".to_owned(),
            allowed: Allowed::loopback(),
            max_sessions: 1024,
            session_idle: Duration::from_secs(3600),
            max_streams: 64,
            max_events: 256,
            retry: Duration::from_millis(1000),
            write_stall: Duration::from_secs(30),
            max_connections: 1024,
            bearer: None,
        }
    }
}

/// One legacy session over HTTP.
struct HttpSession {
    session: Arc<Session>,
    streams: Mutex<Streams>,
    last_used: Mutex<Instant>,
}

impl HttpSession {
    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    fn primes(&self) -> bool {
        lock(&self.session.core)
            .legacy_version()
            .is_some_and(|version| version >= "2025-11-25")
    }
}

/// A [`Server`] served as Streamable HTTP. Cheap to clone.
pub struct HttpServer<H> {
    server: Server<H>,
    config: Arc<HttpConfig>,
    sessions: Arc<Mutex<HashMap<String, Arc<HttpSession>>>>,
}

impl<H> Clone for HttpServer<H> {
    fn clone(&self) -> Self {
        HttpServer {
            server: self.server.clone(),
            config: Arc::clone(&self.config),
            sessions: Arc::clone(&self.sessions),
        }
    }
}

impl<H: Handler> std::fmt::Debug for HttpServer<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("config", &self.config)
            .field("sessions", &lock(&self.sessions).len())
            .finish_non_exhaustive()
    }
}

/// Serves `server` on `listener` until the future is dropped (which closes every connection).
///
/// # Errors
///
/// Accepting a connection failed.
///
/// # Cancel safety
///
/// Dropping the future stops accepting and closes every connection it accepted.
pub async fn serve<H: Handler>(
    server: Server<H>,
    listener: TcpListener,
    config: HttpConfig,
) -> Result<(), Error> {
    HttpServer::new(server, config).serve(listener).await
}

fn json_response(status: StatusCode, body: &Value) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn refusal(refusal: &Refusal) -> Response<ResponseBody> {
    json_response(
        refusal.status,
        &json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": refusal.code, "message": refusal.message },
        }),
    )
}

fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
}

fn sse_response(body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// An event-stream body fed by `rx`, holding `guard` (a modern request cancelled when the
/// client goes).
fn channel_body(rx: mpsc::Receiver<Bytes>, guard: Option<CallGuard>) -> ResponseBody {
    let frames = stream::unfold((rx, guard), |(mut rx, guard)| async move {
        let bytes = rx.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(bytes)), (rx, guard)))
    });
    StreamBody::new(frames).boxed()
}

impl<H: Handler> HttpServer<H> {
    /// `server` over HTTP with this configuration.
    pub fn new(server: Server<H>, config: HttpConfig) -> Self {
        HttpServer {
            server,
            config: Arc::new(config),
            sessions: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The server it serves.
    pub fn server(&self) -> &Server<H> {
        &self.server
    }

    /// Open legacy sessions now.
    pub fn sessions(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// Accepts and serves connections until the future is dropped.
    ///
    /// # Errors
    ///
    /// Accepting a connection failed.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops accepting and closes every connection it accepted.
    pub async fn serve(&self, listener: TcpListener) -> Result<(), Error> {
        let slots = Arc::new(tokio::sync::Semaphore::new(
            self.config.max_connections.max(1),
        ));
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let permit = Arc::clone(&slots)
                .acquire_owned()
                .await
                .map_err(|_| Error::Closed)?;
            let (socket, _) = tokio::select! {
                accepted = listener.accept() => accepted?,
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            };
            // An event stream is many small writes: Nagle's algorithm would hold each one back
            // until the previous is acknowledged.
            let _ = socket.set_nodelay(true);
            let this = self.clone();
            connections.spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let this = this.clone();
                    async move { Ok::<_, Infallible>(this.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                    .await;
                drop(permit);
            });
        }
    }

    /// Answers one HTTP request (for embedding in another hyper or axum service).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes drops the request: a legacy request already
    /// dispatched goes on (its answer waits for a `GET` with `Last-Event-ID`), a modern one is
    /// cancelled.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Some(token) = &self.config.bearer
            && !token.admits(request.headers())
        {
            let mut response = refusal(&Refusal::new(
                StatusCode::UNAUTHORIZED,
                -32001,
                "Unauthorized: a bearer token is required",
            ));
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
        if request.uri().path() != self.config.path {
            return empty(StatusCode::NOT_FOUND);
        }
        // The version header is judged later: a legacy session refuses an unknown one, a
        // modern request answers it `-32022` after the checks that come first.
        let head = match check::head(
            request.method(),
            request.headers(),
            &self.config.allowed,
            |_| true,
        ) {
            Ok(head) => head,
            Err(refused) => return refusal(&refused),
        };
        match *request.method() {
            Method::POST => self.post(head, request).await,
            Method::GET => self.get(&head),
            Method::DELETE => self.delete(&head),
            _ => {
                let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                response
            }
        }
    }

    fn session(&self, head: &Head) -> Result<Arc<HttpSession>, Box<Response<ResponseBody>>> {
        let Some(id) = &head.session else {
            return Err(Box::new(refusal(&Refusal::new(
                StatusCode::BAD_REQUEST,
                -32000,
                "Bad Request: Mcp-Session-Id header is required",
            ))));
        };
        let found = lock(&self.sessions).get(id).cloned();
        let session = found.or_else(|| self.adopt(id)).ok_or_else(|| {
            Box::new(refusal(&Refusal::new(
                StatusCode::NOT_FOUND,
                -32001,
                "Session not found",
            )))
        })?;
        session.touch();
        Ok(session)
    }

    async fn post<B>(&self, head: Head, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = request.into_parts();
        let limit = self.server.limits().max_message_bytes;
        let bytes = match Limited::new(body, limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => {
                return refusal(&Refusal::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    -32000,
                    format!("the body is over {limit} bytes or broke off"),
                ));
            }
        };
        let message = match wire::parse(&bytes) {
            Ok(message) => message,
            Err(rejection) => {
                return json_response(StatusCode::BAD_REQUEST, &rejection.to_response());
            }
        };
        let legacy_header = head
            .version
            .as_deref()
            .is_some_and(|v| era::legacy_versions().contains(&v));
        let modern_header = head.version.is_some() && !legacy_header;
        if head.session.is_some() {
            if modern_header {
                return refusal(&Refusal::new(
                    StatusCode::BAD_REQUEST,
                    -32000,
                    "Bad Request: unsupported MCP-Protocol-Version for a session",
                ));
            }
            let session = match self.session(&head) {
                Ok(session) => session,
                Err(response) => return *response,
            };
            return self.in_session(&session, &head, message).await;
        }
        let initialize =
            matches!(&message, Inbound::Request { method, .. } if method == "initialize");
        if initialize && !modern_header {
            return self.initialize(message);
        }
        if legacy_header {
            return refusal(&Refusal::new(
                StatusCode::BAD_REQUEST,
                -32000,
                "Bad Request: Mcp-Session-Id header is required",
            ));
        }
        self.stateless(&head, &parts.headers, message).await
    }

    fn initialize(&self, message: Inbound) -> Response<ResponseBody> {
        let Some(random) = self.make_room() else {
            return refusal(&Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                -32000,
                "too many sessions",
            ));
        };
        let sealed = match &message {
            Inbound::Request { params, .. } => self.server.sealed_session_id(params),
            _ => None,
        };
        let session = self.server.open_session();
        let step = self.server.step(&session, message);
        let Step::Answer(answer) = step else {
            return empty(StatusCode::INTERNAL_SERVER_ERROR);
        };
        if answer.get("error").is_some() {
            session.close();
            return json_response(StatusCode::OK, &answer);
        }
        let id = sealed.unwrap_or(random);
        self.keep(&id, session);
        let mut response = json_response(StatusCode::OK, &answer);
        if let Ok(value) = HeaderValue::from_str(&id) {
            response.headers_mut().insert(check::SESSION_ID, value);
        }
        response
    }

    /// Takes over a session another replica with the server's key opened (its id is sealed),
    /// as its client left it after `initialize`; `None` when the id is not such a session or
    /// there is no room.
    fn adopt(&self, id: &str) -> Option<Arc<HttpSession>> {
        let params = self.server.open_session_id(id)?;
        self.make_room()?;
        let session = self.server.open_session();
        let initialize = Inbound::Request {
            id: json!(0),
            method: "initialize".to_owned(),
            params,
        };
        let answered = self.server.step(&session, initialize);
        if !matches!(&answered, Step::Answer(answer) if answer.get("error").is_none()) {
            session.close();
            return None;
        }
        let initialized = Inbound::Notification {
            method: "notifications/initialized".to_owned(),
            params: serde_json::Map::new(),
        };
        let _ = self.server.step(&session, initialized);
        Some(self.keep(id, session))
    }

    /// Keeps `session` under `id`, with its own stream for what no request owns; a session
    /// already kept under `id` (two requests took it over at once) stays, and `session` ends.
    fn keep(&self, id: &str, session: Arc<Session>) -> Arc<HttpSession> {
        let mut sessions = lock(&self.sessions);
        if let Some(kept) = sessions.get(id) {
            session.close();
            return Arc::clone(kept);
        }
        let http_session = Arc::new(HttpSession {
            session: Arc::clone(&session),
            streams: Mutex::new(Streams::default()),
            last_used: Mutex::new(Instant::now()),
        });
        // The session's own stream: messages no request owns, kept for the GET stream.
        let (out, rx) = out_stream(self.server.limits());
        *lock(&session.unsolicited) = Some(out);
        tokio::spawn(pump(
            Arc::clone(&http_session),
            STANDALONE,
            rx,
            Arc::clone(&self.config),
        ));
        sessions.insert(id.to_owned(), Arc::clone(&http_session));
        http_session
    }

    /// A fresh session id, after closing idle sessions and, when still full, the longest
    /// idle one; `None` when every session is busy.
    fn make_room(&self) -> Option<String> {
        let mut sessions = lock(&self.sessions);
        let idle = self.config.session_idle;
        // A session whose client holds a stream open (its GET stream, to hear of changes) is
        // not idle, however long ago its last request was.
        sessions.retain(|_, session| {
            let keep =
                lock(&session.last_used).elapsed() < idle || lock(&session.streams).listening();
            if !keep {
                session.session.close();
            }
            keep
        });
        if sessions.len() >= self.config.max_sessions.max(1) {
            let victim = sessions
                .iter()
                .filter(|(_, session)| session.session.in_flight() == 0)
                .min_by_key(|(_, session)| {
                    (
                        lock(&session.streams).listening(),
                        *lock(&session.last_used),
                    )
                })
                .map(|(id, _)| id.clone())?;
            if let Some(session) = sessions.remove(&victim) {
                session.session.close();
            }
        }
        let mut bytes = [0u8; 16];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).ok()?;
        Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    async fn in_session(
        &self,
        session: &Arc<HttpSession>,
        head: &Head,
        message: Inbound,
    ) -> Response<ResponseBody> {
        let step = self.server.step(&session.session, message);
        match self.server.settle(&session.session, step) {
            None => empty(StatusCode::ACCEPTED),
            Some(Step::Answer(answer)) => json_response(StatusCode::OK, &answer),
            Some(Step::Dispatch(call)) => {
                let (out, mut rx) = out_stream(self.server.limits());
                self.server.spawn_call(&session.session, call, out).detach();
                let first = if head.accepts_json {
                    rx.recv().await
                } else {
                    None
                };
                if let Some(Out::Final(answer)) = &first {
                    return json_response(StatusCode::OK, answer);
                }
                let stream = lock(&session.streams).open(self.config.max_streams);
                let conn = lock(&session.streams)
                    .attach(stream, None, self.server.limits().stream_queue, false)
                    .unwrap_or_else(|_| mpsc::channel(1).1);
                let config = Arc::clone(&self.config);
                let owner = Arc::clone(session);
                tokio::spawn(async move {
                    if owner.primes() {
                        forward(&owner, stream, "", Some(config.retry), &config).await;
                    }
                    let (tx, rest) = mpsc::channel(1);
                    if let Some(first) = first {
                        let _ = tx.send(first).await;
                    }
                    drop(tx);
                    pump_two(owner, stream, rest, rx, config).await;
                });
                sse_response(channel_body(conn, None))
            }
            Some(_) => empty(StatusCode::ACCEPTED),
        }
    }

    /// A modern request: the checks in the order the protocol gives them (module docs), then
    /// the request on its own.
    async fn stateless(
        &self,
        head: &Head,
        headers: &http::HeaderMap,
        message: Inbound,
    ) -> Response<ResponseBody> {
        let Inbound::Request { id, params, .. } = &message else {
            // A notification or a response outside any session: nothing to do.
            return empty(StatusCode::ACCEPTED);
        };
        let id = id.clone();
        let mismatch = |message: &str| {
            let error = json!({ "code": HEADER_MISMATCH, "message": message });
            json_response(StatusCode::BAD_REQUEST, &wire::error(&id, error))
        };
        if head.version.is_some()
            && let Err(why) = headers_match(headers, &message)
        {
            return mismatch(&why);
        }
        let meta_version = params
            .get("_meta")
            .and_then(|meta| meta.get(era::META_VERSION))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let has_capabilities = params
            .get("_meta")
            .and_then(|meta| meta.get(era::META_CAPABILITIES))
            .is_some();
        if let (Some(header), Some(meta), true) =
            (head.version.as_deref(), &meta_version, has_capabilities)
            && header != meta
        {
            return mismatch("MCP-Protocol-Version does not match _meta");
        }
        let mut core = SessionCore::stateless();
        let mut call = match core.step(message, &self.server.inner.offer) {
            Step::Dispatch(call) => call,
            Step::Answer(answer) => return json_response(status_before_dispatch(&answer), &answer),
            _ => return empty(StatusCode::ACCEPTED),
        };
        if head.version.is_some() {
            call.param_headers = Some(param_headers(headers));
        }
        let session = Arc::new(Session::new());
        let (out, mut rx) = out_stream(self.server.limits());
        let guard = self.server.spawn_call(&session, call, out);
        let first = if head.accepts_json {
            rx.recv().await
        } else {
            None
        };
        if let Some(Out::Final(answer)) = &first {
            return json_response(status_of(answer), answer);
        }
        let (tx, conn) = mpsc::channel(self.server.limits().stream_queue.max(1));
        let stall = self.config.write_stall;
        tokio::spawn(async move {
            let mut next = first;
            loop {
                let out = match next.take() {
                    Some(out) => out,
                    None => match rx.recv().await {
                        Some(out) => out,
                        None => break,
                    },
                };
                let (Out::Message(message) | Out::Final(message)) = &out else {
                    continue;
                };
                let mut text = String::from("event: message\ndata: ");
                text.push_str(&message.to_string());
                text.push_str("\n\n");
                let sent = tokio::time::timeout(stall, tx.send(Bytes::from(text))).await;
                if !matches!(sent, Ok(Ok(()))) || matches!(out, Out::Final(_)) {
                    break;
                }
            }
            // The request's session lives until its stream is done.
            drop(session);
        });
        sse_response(channel_body(conn, Some(guard)))
    }

    fn get(&self, head: &Head) -> Response<ResponseBody> {
        if head.session.is_none()
            && head
                .version
                .as_deref()
                .is_some_and(|v| era::modern_versions().contains(&v))
        {
            let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            return response;
        }
        let session = match self.session(head) {
            Ok(session) => session,
            Err(response) => return *response,
        };
        let queue = self.server.limits().stream_queue;
        let resumed = head
            .last_event_id
            .as_deref()
            .and_then(sse::parse_id)
            .filter(|(stream, _)| lock(&session.streams).has(*stream));
        let attached = match resumed {
            Some((stream, seq)) => lock(&session.streams).attach(stream, Some(seq), queue, false),
            None => lock(&session.streams).attach(STANDALONE, None, queue, true),
        };
        match attached {
            Ok(rx) => {
                if resumed.is_none() && session.primes() {
                    let config = Arc::clone(&self.config);
                    let owner = Arc::clone(&session);
                    tokio::spawn(async move {
                        forward(&owner, STANDALONE, "", Some(config.retry), &config).await;
                    });
                }
                sse_response(channel_body(rx, None))
            }
            Err(AttachError::Busy) => refusal(&Refusal::new(
                StatusCode::CONFLICT,
                -32000,
                "Conflict: the session's stream is already open",
            )),
            Err(AttachError::Unknown) => empty(StatusCode::NOT_FOUND),
        }
    }

    fn delete(&self, head: &Head) -> Response<ResponseBody> {
        let session = match self.session(head) {
            Ok(session) => session,
            Err(response) => return *response,
        };
        if let Some(id) = &head.session {
            lock(&self.sessions).remove(id);
        }
        session.session.close();
        empty(StatusCode::OK)
    }
}

/// The HTTP status of a modern request's JSON answer: `404` for a method the server does not
/// have, `400` for a request the client got wrong (a malformed envelope, a mismatched header, a
/// missing capability, an unsupported version), `200` otherwise (a JSON-RPC error about the
/// request's subject, such as an unknown resource, is still an answer).
fn status_of(answer: &Value) -> StatusCode {
    let Some(code) = answer["error"]["code"].as_i64() else {
        return StatusCode::OK;
    };
    match code {
        crate::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        crate::PARSE_ERROR | crate::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        era::HEADER_MISMATCH
        | era::MISSING_REQUIRED_CLIENT_CAPABILITY
        | era::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// The HTTP status of an answer the core gave before any handler ran: the request itself is
/// wrong (`400`), or names a method the server does not have (`404`).
fn status_before_dispatch(answer: &Value) -> StatusCode {
    match answer["error"]["code"].as_i64() {
        None => StatusCode::OK,
        Some(crate::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(_) => StatusCode::BAD_REQUEST,
    }
}

/// A header's value with the optional whitespace around it trimmed (RFC 9110 §5.5); `Err` when
/// it is not visible ASCII.
fn header_text<'a>(headers: &'a http::HeaderMap, name: &str) -> Option<Result<&'a str, ()>> {
    headers.get(name).map(|value| {
        value
            .to_str()
            .map(|text| text.trim_matches([' ', '\t']))
            .map_err(|_| ())
    })
}

/// Checks a modern request's `Mcp-Method` (always) and `Mcp-Name` (`tools/call`,
/// `prompts/get`, `resources/read`) against its body: present and equal, case-sensitively.
fn headers_match(headers: &http::HeaderMap, message: &Inbound) -> Result<(), String> {
    let Inbound::Request { method, params, .. } = message else {
        return Ok(());
    };
    match header_text(headers, check::MCP_METHOD) {
        Some(Ok(header)) if header == method => {}
        Some(_) => return Err("Mcp-Method does not match the body's method".to_owned()),
        None => return Err("Mcp-Method is missing".to_owned()),
    }
    let named = match method.as_str() {
        "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
        "resources/read" => params.get("uri").and_then(Value::as_str),
        _ => return Ok(()),
    };
    match header_text(headers, check::MCP_NAME) {
        Some(Ok(header)) if Some(header) == named => Ok(()),
        Some(_) => Err("Mcp-Name does not match the body".to_owned()),
        None => Err("Mcp-Name is missing".to_owned()),
    }
}

/// The `Mcp-Param-*` headers: the suffix in lower case, and the value as sent.
fn param_headers(headers: &http::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|(name, value)| {
            let suffix = name.as_str().strip_prefix("mcp-param-")?;
            Some((
                suffix.to_owned(),
                value.to_str().unwrap_or("\u{0}").to_owned(),
            ))
        })
        .take(64)
        .collect()
}

/// Records one event of `stream` and sends it to the attached connection, if any.
async fn forward(
    session: &HttpSession,
    stream: u64,
    data: &str,
    retry: Option<Duration>,
    config: &HttpConfig,
) {
    let target = lock(&session.streams).record(stream, data, retry, config.max_events);
    if let Some((sender, bytes)) = target {
        let sent = tokio::time::timeout(config.write_stall, sender.send(bytes)).await;
        if !matches!(sent, Ok(Ok(()))) {
            lock(&session.streams).detach(stream);
        }
    }
}

/// Feeds the session's own stream from its outbox until the session ends.
async fn pump(
    session: Arc<HttpSession>,
    stream: u64,
    mut rx: mpsc::Receiver<Out>,
    config: Arc<HttpConfig>,
) {
    while let Some(out) = rx.recv().await {
        if let Out::Message(message) | Out::Final(message) = out {
            forward(&session, stream, &message.to_string(), None, &config).await;
        }
    }
}

/// Feeds a request's stream: `first` (at most one message), then the rest, until its
/// response.
async fn pump_two(
    session: Arc<HttpSession>,
    stream: u64,
    mut first: mpsc::Receiver<Out>,
    mut rest: mpsc::Receiver<Out>,
    config: Arc<HttpConfig>,
) {
    loop {
        let out = match first.recv().await {
            Some(out) => out,
            None => match rest.recv().await {
                Some(out) => out,
                None => break,
            },
        };
        match out {
            Out::Message(message) => {
                forward(&session, stream, &message.to_string(), None, &config).await;
            }
            Out::Final(message) => {
                forward(&session, stream, &message.to_string(), None, &config).await;
                lock(&session.streams).finish(stream);
                return;
            }
            Out::CloseStream => lock(&session.streams).detach(stream),
        }
    }
    lock(&session.streams).finish(stream);
}
