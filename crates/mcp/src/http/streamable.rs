//! The transport driver, and Streamable HTTP (2025-11-25) exchanges.
//!
//! Each outgoing frame becomes one POST carrying the configured headers, `Mcp-Session-Id` once
//! the server gave one and `MCP-Protocol-Version` once initialize has answered. A request's
//! answer is a JSON body or an SSE stream; everything on that stream (server requests and
//! notifications too) goes to the protocol layer, and our answers to server requests go out as
//! separate POSTs through the same bounded queue as every other frame.
//!
//! # A request's answer
//!
//! The POST's own answer decides at once ([`answer`](crate::http::answer), sans-IO): the
//! response delivers; a non-empty 2xx body that is not the response (an HTML page, non-JSON,
//! truncated, a notification alone, another id) fails the request with
//! [`Cause::Unexpected`], after delivering whatever JSON-RPC messages it held; an empty body
//! or 202 leaves the response to the GET stream only while [`GetStream`] says one is open
//! (after waiting for a GET that has not answered yet), and fails the request otherwise. An SSE
//! answer delivers every event and ends at the response, or is resumed (below).
//!
//! # The handshake
//!
//! `notifications/initialized` is its own POST; requests (but initialize) queued after it wait
//! for its exchange to end, at most [`INITIALIZED_WAIT`] (see [`Handshake`]), so a server
//! that enforces the lifecycle never sees a request first. Initialize itself is sent again on
//! 502, 503, 504 and a refused connection ([`send_initialize`]).
//!
//! # Session expiry
//!
//! A 404 to a request that carried a session id means the session is gone, whatever the body
//! says (servers disagree on it); so does a 400 whose body names the session (case-insensitive
//! "session": server-everything's "No valid session ID", FastMCP's "Bad Request: no session").
//! The transport replays the protocol layer's
//! own `initialize` request (recorded on its way out, so the capabilities and client info are
//! the same) followed by `notifications/initialized`, and retries the request once. The
//! replayed handshake's answer is consumed here: the protocol layer keeps the negotiated facts
//! of its first handshake, and the transport sends the version the new session agreed. When
//! several requests see the same expiry, the first re-initializes and the others only retry
//! (a lock and a comparison of session ids; the expired id is kept until the new one arrives,
//! so a request sent meanwhile meets the same expiry and waits). A second expiry for the
//! retried request is an ordinary status error. Once the new session stands, the transport
//! sends [`Inbound::SessionRenewed`](crate::transport::Inbound::SessionRenewed) up the seam,
//! and the protocol core refreshes every list it caches.
//!
//! The new session gets its own GET stream, like the first one did: the expired session's
//! stream is ended (a newer generation supersedes it), a fresh GET goes out with the new
//! session id and no `Last-Event-ID`, and the retried request waits for its first answer, as
//! requests after the first initialize do.
//!
//! # Resumption
//!
//! When a POST's SSE stream ends before the response to its request, the transport waits the
//! server's `retry` (1 s when it sent none, growing 1.5x per further attempt up to 30 s) and
//! resumes with a GET carrying `Last-Event-ID` (the last event id seen on that stream), up to
//! [`MAX_RESUMES`] times; a stream that never sent an id cannot be resumed, and the request
//! fails.
//!
//! # The GET stream
//!
//! Its whole lifecycle is one [`GetStream`] value in a `watch`, which requests wait on and
//! streams check for being superseded.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use http::{Method, StatusCode};
use hyper::body::Incoming;
use sidewire_jsonrpc::{Request as _, lock};
use tokio::sync::mpsc;

use super::Cause;
use crate::CANCEL_FLUSH;
use crate::http::answer::{self, ContentType, Event, Unexpected, Verdict, Why};
use crate::http::client::{
    BackgroundTask, NetError, NetKind, ReadError, SseBody, ensure_success, error_body,
    is_event_stream, read_answer, read_body,
};
use crate::http::{
    Ctx, HttpState, Mode, SESSION_HEADER, SendError, VERSION_HEADER, legacy, modern, response_id,
};
use crate::protocol::era::Era;
use crate::protocol::methods::{INITIALIZED, Initialize};
use crate::transport::{Message, Outbound, RequestId};

/// POSTs in flight at once; past it the driver stops taking frames, and the jsonrpc writer
/// feels the bounded queue.
const MAX_IN_FLIGHT: usize = 32;
/// Resumptions of one POST stream.
pub(crate) const MAX_RESUMES: u32 = 3;
/// Reconnections of the GET stream in a row without an event in between.
const MAX_GET_RECONNECTS: u32 = 5;
/// The wait before a resumption when the server never sent `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The longest wait before a resumption.
const MAX_RETRY: Duration = Duration::from_secs(30);
/// How long a request waits for the GET stream's first answer.
const GET_READY_WAIT: Duration = Duration::from_secs(2);
/// How long a request waits for `notifications/initialized`'s exchange (its 202) to end.
pub(crate) const INITIALIZED_WAIT: Duration = Duration::from_secs(5);
/// Attempts at the initialize POST while the server answers 502/503/504 or refuses the
/// connection (all within the startup budget).
pub(crate) const MAX_INIT_ATTEMPTS: u32 = 5;
/// The wait before the second initialize attempt when the server gave no `Retry-After`;
/// doubled for each later one, up to [`MAX_INIT_RETRY`].
const INIT_RETRY: Duration = Duration::from_millis(250);
/// The longest wait between initialize attempts without `Retry-After`.
const MAX_INIT_RETRY: Duration = Duration::from_secs(4);

/// The optional GET stream's lifecycle: whether it is due, which one is current (its
/// generation: a re-initialized session opens its own, which ends the expired session's
/// stream, whose events and `Last-Event-ID` belong to a session the server no longer knows),
/// whether requests wait for its first answer (so a server that sends server-initiated
/// messages on it, an elicitation for a tool call, has it before it needs it), and whether it
/// is open: only an open stream can carry the response to a request whose POST got an empty
/// answer or a 202.
///
/// | State | Meaning | A request | A 202 to a request | Next |
/// |---|---|---|---|---|
/// | `Off` | Not due: initialize has not succeeded over Streamable HTTP (or the transport is legacy). | goes | fails | `Due` when initialize answers over Streamable HTTP (before the answer reaches the protocol layer, so every later request sees it) |
/// | `Due` | Due, not sent: it goes after the next exchange that succeeds. | waits | fails | `Opening(0)` after a successful exchange; `Overdue` when a request waited [`GET_READY_WAIT`] |
/// | `Overdue` | Due, not sent, and a request already waited for it in vain. | goes | fails | `Pending(0)` after a successful exchange |
/// | `Opening(g)` | GET `g` sent, no answer yet. | waits | waits for the answer | `Open(g)` or `None(g)` at GET `g`'s first answer; `Pending(g)` when a request waited [`GET_READY_WAIT`] |
/// | `Pending(g)` | GET `g` sent, no answer yet, and a request already waited for it in vain. | goes | waits for the answer | `Open(g)` or `None(g)` at GET `g`'s first answer |
/// | `Open(g)` | GET `g` is an event stream (or reconnecting). | goes | waits on it | `None(g)` when it ends for good |
/// | `None(g)` | GET `g` failed (404, 405, 406, any error, not an event stream) or ended for good. | goes | fails | — |
///
/// From every state but `Off`, re-initializing after a session expiry goes to `Opening(g + 1)`
/// (`g` is 0 before any GET was sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GetStream {
    Off,
    Due,
    Overdue,
    Opening(u64),
    Pending(u64),
    Open(u64),
    None(u64),
}

/// Whether a GET stream can carry a response, for a request whose POST got nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carrier {
    /// A stream is open: the response may come on it.
    Open,
    /// No stream is open, or none will be: nothing can carry the response.
    None,
    /// A GET is out and has not answered yet.
    Unsettled,
}

impl GetStream {
    /// Initialize answered over Streamable HTTP.
    pub(crate) fn plan(&mut self) -> bool {
        let due = *self == GetStream::Off;
        if due {
            *self = GetStream::Due;
        }
        due
    }

    /// Whether a request waits for the stream's first answer.
    pub(crate) fn waits(self) -> bool {
        matches!(self, GetStream::Due | GetStream::Opening(_))
    }

    /// Whether a stream is there to carry a response.
    pub(crate) fn carrier(self) -> Carrier {
        match self {
            GetStream::Open(_) => Carrier::Open,
            GetStream::Opening(_) | GetStream::Pending(_) => Carrier::Unsettled,
            GetStream::Off | GetStream::Due | GetStream::Overdue | GetStream::None(_) => {
                Carrier::None
            }
        }
    }

    /// The current stream's generation (0 before any).
    pub(crate) fn generation(self) -> u64 {
        match self {
            GetStream::Opening(g)
            | GetStream::Pending(g)
            | GetStream::Open(g)
            | GetStream::None(g) => g,
            GetStream::Off | GetStream::Due | GetStream::Overdue => 0,
        }
    }

    /// A request waited long enough: a GET that never answers delays one request, not every
    /// one.
    pub(crate) fn stop_waiting(&mut self) -> bool {
        let next = match *self {
            GetStream::Due => GetStream::Overdue,
            GetStream::Opening(g) => GetStream::Pending(g),
            _ => return false,
        };
        *self = next;
        true
    }

    /// An exchange succeeded: the generation of the stream to start, when one is due.
    pub(crate) fn start(&mut self) -> Option<u64> {
        *self = match *self {
            GetStream::Due => GetStream::Opening(0),
            GetStream::Overdue => GetStream::Pending(0),
            _ => return None,
        };
        Some(0)
    }

    /// Stream `generation` got its first answer: an event stream (`open`) or not.
    pub(crate) fn answered(&mut self, generation: u64, open: bool) -> bool {
        let unanswered =
            matches!(*self, GetStream::Opening(g) | GetStream::Pending(g) if g == generation);
        if unanswered {
            *self = if open {
                GetStream::Open(generation)
            } else {
                GetStream::None(generation)
            };
        }
        unanswered
    }

    /// Stream `generation` ended for good (or never opened).
    pub(crate) fn closed(&mut self, generation: u64) -> bool {
        let current = matches!(*self, GetStream::Opening(g) | GetStream::Pending(g) | GetStream::Open(g) if g == generation);
        if current {
            *self = GetStream::None(generation);
        }
        current
    }

    /// A re-initialized session: the generation of its own stream, when the transport runs
    /// one at all.
    pub(crate) fn reopen(&mut self) -> Option<u64> {
        if *self == GetStream::Off {
            return None;
        }
        let generation = self.generation() + 1;
        *self = GetStream::Opening(generation);
        Some(generation)
    }
}

/// The lifecycle handshake as the transport sees it, so no request overtakes
/// `notifications/initialized` (they travel as separate, concurrent POSTs, and a server that
/// enforces the lifecycle rejects a request that arrives first).
///
/// | State | Meaning | A request (not initialize) | Next |
/// |---|---|---|---|
/// | `Initializing` | `notifications/initialized` not sent yet (only initialize goes before it). | goes | `Confirming` when the notification is taken from the queue (on the driver, before any later frame) |
/// | `Confirming` | The notification's POST is out. | waits (at most [`INITIALIZED_WAIT`]) | `Confirmed` when its exchange ends (202, any answer, or failure, logged), or when a request waited [`INITIALIZED_WAIT`] (logged) |
/// | `Confirmed` | The server has the notification (or we stopped waiting for it). | goes | — |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handshake {
    Initializing,
    Confirming,
    Confirmed,
}

/// Waits (at most [`INITIALIZED_WAIT`]) until `notifications/initialized` has been answered.
async fn wait_for_handshake(state: &HttpState) {
    let mut handshake = state.handshake.subscribe();
    let confirmed = handshake.wait_for(|h| *h != Handshake::Confirming);
    if tokio::time::timeout(INITIALIZED_WAIT, confirmed)
        .await
        .is_err()
    {
        tracing::warn!(server = %state.server, wait_ms = INITIALIZED_WAIT.as_millis() as u64, "notifications/initialized got no answer in time; releasing the requests");
        state.handshake.send_replace(Handshake::Confirmed);
    }
}

/// Waits (at most [`GET_READY_WAIT`]) until requests need not wait for the GET stream.
async fn wait_for_get_stream(state: &HttpState) {
    let mut get = state.get.subscribe();
    if tokio::time::timeout(GET_READY_WAIT, get.wait_for(|get| !get.waits()))
        .await
        .is_err()
    {
        state.get.send_if_modified(GetStream::stop_waiting);
    }
}

/// The wait before resumption `attempt` (1-based).
pub(crate) fn retry_delay(retry_ms: Option<u64>, attempt: u32) -> Duration {
    let base = retry_ms.map_or(DEFAULT_RETRY, Duration::from_millis);
    let factor = 1.5f64.powi(attempt.saturating_sub(1).min(16) as i32);
    base.min(MAX_RETRY).mul_f64(factor).min(MAX_RETRY)
}

/// The transport driver: turns frames into exchanges, runs them and the streams, and hyper's
/// connection futures. Ends when the jsonrpc side drops the sink, or the legacy stream ends;
/// either way everything in flight is dropped, which closes the inbound queue. One exception:
/// when the sink closes, the notifications' POSTs under way (a `notifications/cancelled` the
/// connection wrote on its way out) get [`CANCEL_FLUSH`] to finish, so the server learns of a
/// cancel; requests' exchanges are not waited for.
pub(crate) async fn run(
    ctx: Arc<Ctx>,
    mut outbound: mpsc::Receiver<Outbound>,
    mut hyper_tasks: mpsc::UnboundedReceiver<BackgroundTask>,
    mut tasks: mpsc::UnboundedReceiver<BackgroundTask>,
) {
    let mut exchanges = FuturesUnordered::<BackgroundTask>::new();
    // Notifications' exchanges, apart from the others, so the end can wait for them alone.
    let mut notices = FuturesUnordered::<BackgroundTask>::new();
    let mut connections = FuturesUnordered::<BackgroundTask>::new();
    let mut ended = ctx.end.subscribe();
    if ctx.state.mode() == Mode::Legacy {
        ctx.run(Box::pin(legacy::stream(Arc::clone(&ctx))));
    }
    let sink_closed = loop {
        // Branch order: hyper's connections first (they carry every exchange), then finished
        // work, then new frames, so a busy writer cannot starve the readers.
        tokio::select! {
            biased;
            Some(task) = hyper_tasks.recv() => connections.push(task),
            Some(()) = connections.next(), if !connections.is_empty() => {}
            Some(task) = tasks.recv() => exchanges.push(task),
            Some(()) = exchanges.next(), if !exchanges.is_empty() => {}
            Some(()) = notices.next(), if !notices.is_empty() => {}
            _ = ended.wait_for(|end| *end) => break false,
            frame = outbound.recv(), if exchanges.len() + notices.len() < MAX_IN_FLIGHT => match frame {
                Some(frame) => match modern::route(&ctx, frame) {
                    Ok(Some(task)) => exchanges.push(task),
                    Ok(None) => {}
                    Err(frame) => {
                        // Here, in queue order, so every request queued after the notification
                        // sees that it is on its way (see `Handshake`).
                        if is_initialized(&frame.message) {
                            ctx.state.handshake.send_replace(Handshake::Confirming);
                        }
                        let notice = matches!(frame.message, Message::Notification { .. });
                        let task: BackgroundTask = Box::pin(exchange(Arc::clone(&ctx), frame));
                        if notice {
                            notices.push(task);
                        } else {
                            exchanges.push(task);
                        }
                    }
                },
                None => break true,
            },
        }
    };
    if sink_closed && !notices.is_empty() {
        // hyper's connections still run: they carry the POSTs.
        let drain = async {
            loop {
                tokio::select! {
                    biased;
                    Some(task) = hyper_tasks.recv() => connections.push(task),
                    Some(()) = connections.next(), if !connections.is_empty() => {}
                    next = notices.next() => if next.is_none() {
                        break;
                    },
                }
            }
        };
        if tokio::time::timeout(CANCEL_FLUSH, drain).await.is_err() {
            tracing::debug!(server = %ctx.state.server, "a notification's POST did not finish before the transport ended");
        }
    }
    tracing::debug!(server = %ctx.state.server, "the HTTP transport ended");
}

/// One outgoing frame's exchange, bounded by the call budget.
async fn exchange(ctx: Arc<Ctx>, outbound: Outbound) {
    let Outbound { frame, message, .. } = outbound;
    let is_initialize = is_initialize(&message);
    if is_initialize && let Message::Request { id, .. } = &message {
        *lock(&ctx.state.initialize) = Some((id.clone(), frame.clone()));
    }
    let budget = match message {
        Message::Request { .. } => ctx.state.request_budget,
        _ => ctx.state.message_budget,
    };
    let work = async {
        if matches!(message, Message::Request { .. }) && !is_initialize {
            wait_for_handshake(&ctx.state).await;
            wait_for_get_stream(&ctx.state).await;
        }
        if ctx.state.mode() == Mode::Legacy {
            legacy::post(&ctx, &frame, &message).await
        } else {
            post(&ctx, &frame, &message, true).await
        }
    };
    let url = ctx.state.url.clone();
    let result = match tokio::time::timeout(budget, work).await {
        Ok(result) => result,
        Err(_) => Err(Cause::Unanswered(format!(
            "no answer within {} ms",
            budget.as_millis()
        ))),
    };
    if is_initialized(&message) {
        // Answered or failed (a failure is logged below): either way, nothing to wait for.
        ctx.state.handshake.send_replace(Handshake::Confirmed);
    }
    match result {
        Ok(()) => {
            // The GET stream opens as soon as initialize has succeeded: the requests that
            // follow wait for its first answer (see `GetStream`).
            if let Some(generation) = update(&ctx.state, GetStream::start) {
                ctx.run(Box::pin(get_stream(Arc::clone(&ctx), generation)));
            }
        }
        Err(cause) => ctx.fail(&message, &url, cause).await,
    }
}

/// Whether `message` is the protocol layer's `notifications/initialized`.
fn is_initialized(message: &Message) -> bool {
    matches!(message, Message::Notification { method } if method == INITIALIZED)
}

/// Whether `message` is the protocol layer's `initialize` request.
fn is_initialize(message: &Message) -> bool {
    matches!(message, Message::Request { method, .. } if method == Initialize::METHOD)
}

/// Applies a transition of the GET stream's state, telling the waiters when it changed.
fn update<T>(state: &HttpState, transition: impl FnOnce(&mut GetStream) -> Option<T>) -> Option<T> {
    let mut out = None;
    state.get.send_if_modified(|get| {
        out = transition(get);
        out.is_some()
    });
    out
}

/// One Streamable HTTP POST and its answer; `recover` allows the one re-initialization.
async fn post(
    ctx: &Arc<Ctx>,
    frame: &Bytes,
    message: &Message,
    recover: bool,
) -> Result<(), Cause> {
    let state = &ctx.state;
    let sent_session = state.session();
    let headers = state.post_headers(sent_session.as_ref());
    let is_initialize = is_initialize(message);
    let mut response = if is_initialize {
        send_initialize(state, &headers, frame).await?
    } else {
        state
            .send(Method::POST, &state.url, &headers, frame.clone())
            .await?
            .1
    };
    state.capture_session(response.headers());
    let status = response.status();
    if recover
        && let Some(expired) = sent_session
        && matches!(status, StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST)
    {
        let body = error_body(response.body_mut()).await;
        if !is_expiry(status, &body) {
            return Err(Cause::Status {
                status: status.as_u16(),
                body,
            });
        }
        tracing::info!(server = %state.server, %status, "the HTTP session expired; initializing a new one");
        drop(response);
        reinitialize(ctx, &expired).await?;
        return Box::pin(post(ctx, frame, message, false)).await;
    }
    if is_initialize && state.mode() == Mode::Auto && matches!(status.as_u16(), 400 | 404 | 405) {
        tracing::info!(server = %state.server, %status, "no Streamable HTTP here; trying the legacy HTTP+SSE transport");
        drop(response);
        // When the fallback fails too, the POST's status is the one to report (a wrong path
        // is a 404 to both), with both attempts said: not the legacy stream's failure alone.
        let status = status.as_u16();
        return legacy::fall_back(ctx, frame)
            .await
            .map_err(|cause| match cause {
                Cause::Unanswered(detail) => Cause::Status {
                    status,
                    body: format!(
                        "the initialize POST was answered {status}, and the legacy HTTP+SSE fallback failed: {detail}"
                    ),
                },
                other => other,
            });
    }
    ensure_success(&mut response).await?;
    let Message::Request { id, .. } = message else {
        // Notifications and responses: 202 expected, any 2xx accepted, the body drained.
        read_body(response.body_mut(), state.cap).await?;
        return Ok(());
    };
    match read_response(ctx, response, id, is_initialize, Era::Legacy).await? {
        Answer::Delivered => Ok(()),
        Answer::UseLegacy => {
            tracing::info!(server = %state.server, "the server announced a legacy endpoint; switching to HTTP+SSE");
            legacy::fall_back(ctx, frame).await
        }
    }
}

/// Reads the 2xx answer to request `id` and delivers what it holds: a JSON body, or an SSE
/// stream up to the response. In the legacy era a stream that ends early is resumed, and an
/// empty answer may leave the response to the GET stream; in the modern era neither exists,
/// and both fail the request.
pub(crate) async fn read_response(
    ctx: &Arc<Ctx>,
    mut response: http::Response<Incoming>,
    id: &RequestId,
    is_initialize: bool,
    era: Era,
) -> Result<Answer, Cause> {
    let state = &ctx.state;
    let status = response.status();
    let content_type = ContentType::parse(
        response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map(http::HeaderValue::as_bytes),
    );
    if content_type == ContentType::EventStream {
        let body = response.into_body();
        return read_stream(ctx, body, id, is_initialize, era).await;
    }
    let (body, complete) = read_answer(response.body_mut(), state.cap).await?;
    let decoded = answer::decode_body(&content_type, &body, complete, id);
    for frame in decoded.frames {
        ctx.deliver(frame).await;
    }
    let unexpected = |answer| Cause::Unexpected {
        status: status.as_u16(),
        answer,
    };
    match decoded.verdict {
        Verdict::Answered => Ok(Answer::Delivered),
        Verdict::Unexpected(answer) => Err(unexpected(answer)),
        // A 202 (or empty body) for a request: the response may come on the GET stream, and
        // the call's timeout covers the case where it never does; with no stream open (and
        // never in the modern era), nothing can bring it.
        Verdict::Empty => match (era, get_stream_carrier(state).await) {
            (Era::Legacy, Carrier::Open) => Ok(Answer::Delivered),
            _ => Err(unexpected(Unexpected::new(
                Why::EmptyWithoutStream,
                &content_type,
                &body,
            ))),
        },
    }
}

/// Whether a 404 or 400 to a request that carried a session id means the session is gone:
/// any 404 (servers disagree on its body), and a 400 whose body names the session, as real
/// servers answer after a restart ("No valid session ID", "Bad Request: no session").
pub(crate) fn is_expiry(status: StatusCode, body: &str) -> bool {
    status == StatusCode::NOT_FOUND
        || (status == StatusCode::BAD_REQUEST && body.to_ascii_lowercase().contains("session"))
}

/// Whether a GET stream can carry a response, once the GET that is out (if any) answered; the
/// exchange's own budget bounds the wait.
async fn get_stream_carrier(state: &HttpState) -> Carrier {
    let mut get = state.get.subscribe();
    match get
        .wait_for(|get| get.carrier() != Carrier::Unsettled)
        .await
    {
        Ok(get) => get.carrier(),
        Err(_) => Carrier::None,
    }
}

/// Sends the initialize POST, again while the server is not up yet: a 502, 503 or 504 (after
/// its `Retry-After`, in seconds or as an HTTP date) or a refused connection (after a backoff
/// from [`INIT_RETRY`], doubling up to [`MAX_INIT_RETRY`]), at most [`MAX_INIT_ATTEMPTS`]
/// times and never past the startup budget; then the last answer or failure stands, a refused
/// connection saying how many attempts it made over how long (the retries are otherwise
/// logged at info only).
pub(crate) async fn send_initialize(
    state: &HttpState,
    headers: &http::HeaderMap,
    frame: &Bytes,
) -> Result<http::Response<Incoming>, Cause> {
    let started = tokio::time::Instant::now();
    let deadline = started + state.startup_budget;
    let mut attempt = 1;
    loop {
        let sent = state
            .send(Method::POST, &state.url, headers, frame.clone())
            .await;
        let backoff = INIT_RETRY
            .saturating_mul(1 << (attempt - 1).min(8))
            .min(MAX_INIT_RETRY);
        let wait = match &sent {
            Ok((_, response)) if matches!(response.status().as_u16(), 502..=504) => response
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| retry_after(value, std::time::SystemTime::now()))
                .unwrap_or(backoff),
            Err(SendError::Net(NetError(_, NetKind::Refused))) => backoff,
            _ => return Ok(sent?.1),
        };
        let in_budget = tokio::time::Instant::now() + wait <= deadline;
        if attempt == MAX_INIT_ATTEMPTS || !in_budget {
            return match sent {
                Err(SendError::Net(NetError(message, kind))) if attempt > 1 => {
                    let over = started.elapsed().as_secs_f64();
                    let message = format!("{message} ({attempt} attempts over {over:.1} s)");
                    Err(SendError::Net(NetError(message, kind)).into())
                }
                sent => Ok(sent?.1),
            };
        }
        match &sent {
            Ok((_, response)) => {
                tracing::info!(server = %state.server, status = %response.status(), attempt, wait_ms = wait.as_millis() as u64, "the server is not ready; retrying initialize");
            }
            Err(err) => {
                let error = state.secrets.scrub(&err.to_string()).into_owned();
                tracing::info!(server = %state.server, %error, attempt, wait_ms = wait.as_millis() as u64, "the server refused the connection; retrying initialize");
            }
        }
        drop(sent);
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// A `Retry-After` value as a wait from `now`: delay-seconds, or an HTTP date (any of the
/// three forms RFC 9110 allows, parsed by `httpdate`; e.g. the IMF-fixdate
/// `Sun, 06 Nov 1994 08:49:37 GMT`; a date in the past is no wait).
pub(crate) fn retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// How a POST's SSE stream ended well.
pub(crate) enum Answer {
    /// The response to the request was delivered.
    Delivered,
    /// The initialize stream announced a legacy endpoint: switch transports.
    UseLegacy,
}

/// Reads a POST's SSE stream until the response to `want`, resuming when it ends early.
async fn read_stream(
    ctx: &Arc<Ctx>,
    body: Incoming,
    want: &RequestId,
    is_initialize: bool,
    era: Era,
) -> Result<Answer, Cause> {
    let state = &ctx.state;
    let mut events = SseBody::new(body, state.cap);
    let mut resumes = 0;
    let mut too_large = None;
    loop {
        loop {
            match events.next().await {
                Ok(Some(event)) => {
                    if event.event == "endpoint" && is_initialize && state.mode() == Mode::Auto {
                        return Ok(Answer::UseLegacy);
                    }
                    // A priming event (no data) only sets the id.
                    if let Event::Deliver { frame, answered } =
                        answer::event_frame(event.data, want)
                    {
                        ctx.deliver(frame).await;
                        if answered {
                            return Ok(Answer::Delivered);
                        }
                    }
                }
                Ok(None) => break,
                Err(ReadError::TooLarge(cap)) => too_large = Some(cap),
                Err(ReadError::Net(_)) => break,
            }
        }
        if era == Era::Modern {
            // No resumption in the modern era: the protocol layer sends an idempotent
            // request again with a new id.
            return Err(too_large.map_or_else(
                || {
                    Cause::Unanswered(
                        "the SSE stream ended before the response (the modern protocol does not resume streams)"
                            .to_owned(),
                    )
                },
                Cause::TooLarge,
            ));
        }
        let Some(last) = events.last_event_id().map(str::to_owned) else {
            return Err(too_large.map_or_else(
                || Cause::Unanswered("the SSE stream ended without a response".to_owned()),
                Cause::TooLarge,
            ));
        };
        if resumes == MAX_RESUMES {
            return Err(Cause::Unanswered(format!(
                "the SSE stream ended without a response, {MAX_RESUMES} resumptions failed"
            )));
        }
        resumes += 1;
        tokio::time::sleep(retry_delay(events.retry(), resumes)).await;
        let headers = state.get_headers(Some(&last));
        let (_, mut response) = state
            .send(Method::GET, &state.url, &headers, Bytes::new())
            .await?;
        state.capture_session(response.headers());
        ensure_success(&mut response).await?;
        if !is_event_stream(&response) {
            return Err(Cause::Unanswered(
                "resuming the SSE stream did not return an event stream".to_owned(),
            ));
        }
        tracing::debug!(server = %state.server, last_event_id = %last, "resumed an SSE stream");
        events.resume(response.into_body());
    }
}

/// Starts a new session after a 404: see the module docs.
async fn reinitialize(ctx: &Arc<Ctx>, expired: &http::HeaderValue) -> Result<(), Cause> {
    let state = &ctx.state;
    let _one_at_a_time = state.reinit.lock().await;
    if state.session().as_ref() != Some(expired) {
        return Ok(()); // Someone else already did it (or the server moved us on).
    }
    let Some((init_id, init)) = lock(&state.initialize).clone() else {
        return Err(Cause::Unanswered(
            "the session expired before initialize was sent".to_owned(),
        ));
    };
    // The expired id stays until the new one arrives, so a request sent meanwhile carries it,
    // meets the same expiry, and waits on the lock above instead of going out with no session.
    let mut headers = state.post_headers(None);
    headers.remove(VERSION_HEADER);
    let (_, mut response) = state.send(Method::POST, &state.url, &headers, init).await?;
    if response.headers().contains_key(SESSION_HEADER) {
        state.capture_session(response.headers());
    } else {
        state.forget_session();
    }
    ensure_success(&mut response)
        .await
        .map_err(|cause| match cause {
            Cause::Status { status, body } => Cause::Status {
                status,
                body: format!("re-initializing after the session expired: {body}"),
            },
            other => other,
        })?;
    let answer = if is_event_stream(&response) {
        let mut events = SseBody::new(response.into_body(), state.cap);
        let mut answer = None;
        while let Some(event) = events.next().await? {
            let frame = Bytes::from(event.data);
            if response_id(&frame).as_ref() == Some(&init_id) {
                answer = Some(frame);
                break;
            }
        }
        answer.ok_or_else(|| Cause::Unanswered("re-initialize got no answer".to_owned()))?
    } else {
        read_body(response.body_mut(), state.cap).await?
    };
    let value: serde_json::Value = serde_json::from_slice(&answer)
        .map_err(|err| Cause::Unanswered(format!("re-initialize answered garbage: {err}")))?;
    if let Some(error) = value.get("error") {
        return Err(Cause::Unanswered(format!("re-initialize failed: {error}")));
    }
    ctx.initialized(&answer);
    let initialized = serde_json::json!({ "jsonrpc": "2.0", "method": INITIALIZED });
    let session = state.session();
    let headers = state.post_headers(session.as_ref());
    let (_, mut response) = state
        .send(
            Method::POST,
            &state.url,
            &headers,
            Bytes::from(initialized.to_string()),
        )
        .await?;
    ensure_success(&mut response).await?;
    let _ = read_body(response.body_mut(), state.cap).await;
    reopen_get_stream(ctx).await;
    // The lists the protocol layer cached belong to the old session: they are refreshed.
    ctx.renewed().await;
    Ok(())
}

/// Gives a re-initialized session its own GET stream (when the transport runs one at all) and
/// waits, like the requests after the first initialize, for its first answer. Runs under the
/// re-initialization lock, so the requests that saw the same expiry wait for it too.
async fn reopen_get_stream(ctx: &Arc<Ctx>) {
    // Whatever happened to the old stream (still open, reconnecting, given up, or never
    // started), it is superseded: one transition names the new generation and makes requests
    // wait, and a stream checks for a newer generation before anything else, so no old stream
    // can mark the new one ready.
    let Some(generation) = update(&ctx.state, GetStream::reopen) else {
        return;
    };
    ctx.run(Box::pin(get_stream(Arc::clone(ctx), generation)));
    wait_for_get_stream(&ctx.state).await;
}

/// The GET stream of `generation`, until it ends or a newer generation supersedes it.
async fn get_stream(ctx: Arc<Ctx>, generation: u64) {
    let mut current = ctx.state.get.subscribe();
    tokio::select! {
        // Superseded first, so a stale stream never delivers or marks anything ready once a
        // new session has its own. The sender lives in the state this task holds, so the
        // wait only ends on a change.
        biased;
        _ = current.wait_for(|get| get.generation() != generation) => {
            tracing::debug!(server = %ctx.state.server, "the expired session's GET stream ended");
        }
        () = get_stream_of_session(&ctx, generation) => {
            // Over for good (or never opened): a 202 to a request can no longer wait for it.
            ctx.state.get.send_if_modified(|get| get.closed(generation));
        }
    }
}

/// The optional GET stream for server-initiated messages: none when the server answers
/// 404/405/406 (or any other error); reconnects (with `Last-Event-ID`) a bounded number of
/// times in a row.
async fn get_stream_of_session(ctx: &Arc<Ctx>, generation: u64) {
    let state = &ctx.state;
    let mut events: Option<SseBody> = None;
    let mut reconnects = 0;
    loop {
        let last = events
            .as_ref()
            .and_then(|e| e.last_event_id().map(str::to_owned));
        let headers = state.get_headers(last.as_deref());
        let response = state
            .send(Method::GET, &state.url, &headers, Bytes::new())
            .await;
        let open = response
            .as_ref()
            .is_ok_and(|(_, response)| response.status().is_success() && is_event_stream(response));
        state
            .get
            .send_if_modified(|get| get.answered(generation, open));
        let Ok((_, response)) = response else {
            return;
        };
        state.capture_session(response.headers());
        if !open {
            tracing::debug!(server = %state.server, status = %response.status(), "no GET stream");
            return;
        }
        match &mut events {
            Some(events) => events.resume(response.into_body()),
            None => events = Some(SseBody::new(response.into_body(), state.cap)),
        }
        let stream = events.as_mut().expect("set above");
        loop {
            match stream.next().await {
                Ok(Some(event)) => {
                    reconnects = 0;
                    if !event.data.trim().is_empty() {
                        ctx.deliver(Bytes::from(event.data)).await;
                    }
                }
                Ok(None) | Err(ReadError::Net(_)) => break,
                Err(ReadError::TooLarge(cap)) => {
                    tracing::warn!(server = %state.server, cap, "skipped an oversized SSE event");
                }
            }
        }
        reconnects += 1;
        if reconnects > MAX_GET_RECONNECTS {
            return;
        }
        tokio::time::sleep(retry_delay(stream.retry(), reconnects)).await;
    }
}
