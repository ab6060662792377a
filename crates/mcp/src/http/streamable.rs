//! The transport driver, and Streamable HTTP (2025-11-25) exchanges.
//!
//! Each outgoing frame becomes one POST carrying the configured headers, `Mcp-Session-Id` once
//! the server gave one and `MCP-Protocol-Version` once initialize has answered. A request's
//! answer is a JSON body or an SSE stream; everything on that stream (server requests and
//! notifications too) goes to the protocol layer, and our answers to server requests go out as
//! separate POSTs through the same bounded queue as every other frame.
//!
//! # Session expiry
//!
//! A 404 to a request that carried a session id means the session is gone, whatever the body
//! says (servers disagree on it). The transport forgets the id, replays the protocol layer's
//! own `initialize` request (recorded on its way out, so the capabilities and client info are
//! the same) followed by `notifications/initialized`, and retries the request once. The
//! replayed handshake's answer is consumed here: the protocol layer keeps the negotiated facts
//! of its first handshake, and the transport sends the version the new session agreed. When
//! several requests see the same expiry, the first re-initializes and the others only retry
//! (a lock and a comparison of session ids). A second 404 for the retried request is an
//! ordinary status error.
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
use sidewire_jsonrpc::Request as _;
use tokio::sync::mpsc;

use crate::http::client::{
    BackgroundTask, ReadError, SseBody, ensure_success, is_event_stream, read_body,
};
use crate::http::{Ctx, HttpState, Mode, legacy, response_id};
use crate::protocol::methods::{INITIALIZED, Initialize};
use crate::sync::lock;
use crate::transport::{Cause, Message, Outbound, RequestId};

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

/// The optional GET stream's lifecycle: whether it is due, which one is current (its
/// generation: a re-initialized session opens its own, which ends the expired session's
/// stream, whose events and `Last-Event-ID` belong to a session the server no longer knows),
/// and whether requests wait for its first answer, so a server that sends server-initiated
/// messages on it (an elicitation for a tool call) has it before it needs it.
///
/// | State | Meaning | A request | Next |
/// |---|---|---|---|
/// | `Off` | Not due: initialize has not succeeded over Streamable HTTP (or the transport is legacy). | goes | `Due` when initialize answers over Streamable HTTP (before the answer reaches the protocol layer, so every later request sees it) |
/// | `Due` | Due, not sent: it goes after the next exchange that succeeds. | waits | `Opening(0)` after a successful exchange; `Overdue` when a request waited [`GET_READY_WAIT`] |
/// | `Overdue` | Due, not sent, and a request already waited for it in vain. | goes | `Ready(0)` after a successful exchange |
/// | `Opening(g)` | GET `g` sent, no answer yet. | waits | `Ready(g)` at GET `g`'s first answer (or failure), or when a request waited [`GET_READY_WAIT`] |
/// | `Ready(g)` | GET `g` answered (or failed, or was waited for long enough). | goes | — |
///
/// From every state but `Off`, re-initializing after a session expiry goes to `Opening(g + 1)`
/// (`g` is 0 before any GET was sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GetStream {
    Off,
    Due,
    Overdue,
    Opening(u64),
    Ready(u64),
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

    /// The current stream's generation (0 before any).
    pub(crate) fn generation(self) -> u64 {
        match self {
            GetStream::Opening(g) | GetStream::Ready(g) => g,
            GetStream::Off | GetStream::Due | GetStream::Overdue => 0,
        }
    }

    /// A request waited long enough: a GET that never answers delays one request, not every
    /// one.
    pub(crate) fn stop_waiting(&mut self) -> bool {
        let next = match *self {
            GetStream::Due => GetStream::Overdue,
            GetStream::Opening(g) => GetStream::Ready(g),
            _ => return false,
        };
        *self = next;
        true
    }

    /// An exchange succeeded: the generation of the stream to start, when one is due.
    pub(crate) fn start(&mut self) -> Option<u64> {
        *self = match *self {
            GetStream::Due => GetStream::Opening(0),
            GetStream::Overdue => GetStream::Ready(0),
            _ => return None,
        };
        Some(0)
    }

    /// Stream `generation` got its first answer (or failed).
    pub(crate) fn answered(&mut self, generation: u64) -> bool {
        let opening = *self == GetStream::Opening(generation);
        if opening {
            *self = GetStream::Ready(generation);
        }
        opening
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
/// either way everything in flight is dropped, which closes the inbound queue.
pub(crate) async fn run(
    ctx: Arc<Ctx>,
    mut outbound: mpsc::Receiver<Outbound>,
    mut hyper_tasks: mpsc::UnboundedReceiver<BackgroundTask>,
    mut tasks: mpsc::UnboundedReceiver<BackgroundTask>,
) {
    let mut exchanges = FuturesUnordered::<BackgroundTask>::new();
    let mut connections = FuturesUnordered::<BackgroundTask>::new();
    let mut ended = ctx.end.subscribe();
    if ctx.state.mode() == Mode::Legacy {
        ctx.run(Box::pin(legacy::stream(Arc::clone(&ctx))));
    }
    loop {
        // Branch order: hyper's connections first (they carry every exchange), then finished
        // work, then new frames, so a busy writer cannot starve the readers.
        tokio::select! {
            biased;
            Some(task) = hyper_tasks.recv() => connections.push(task),
            Some(()) = connections.next(), if !connections.is_empty() => {}
            Some(task) = tasks.recv() => exchanges.push(task),
            Some(()) = exchanges.next(), if !exchanges.is_empty() => {}
            _ = ended.wait_for(|end| *end) => break,
            frame = outbound.recv(), if exchanges.len() < MAX_IN_FLIGHT => match frame {
                Some(frame) => exchanges.push(Box::pin(exchange(Arc::clone(&ctx), frame))),
                None => break,
            },
        }
    }
    tracing::debug!(server = %ctx.state.server, "the HTTP transport ended");
}

/// One outgoing frame's exchange, bounded by the call budget.
async fn exchange(ctx: Arc<Ctx>, outbound: Outbound) {
    let Outbound { frame, message } = outbound;
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
    let (_, mut response) = state
        .client
        .send(Method::POST, &state.url, &headers, frame.clone())
        .await?;
    state.capture_session(response.headers());
    let status = response.status();
    if status == StatusCode::NOT_FOUND
        && recover
        && let Some(expired) = sent_session
    {
        tracing::info!(server = %state.server, "the HTTP session expired; initializing a new one");
        drop(response);
        reinitialize(ctx, &expired).await?;
        return Box::pin(post(ctx, frame, message, false)).await;
    }
    let is_initialize = is_initialize(message);
    if is_initialize && state.mode() == Mode::Auto && matches!(status.as_u16(), 400 | 404 | 405) {
        tracing::info!(server = %state.server, %status, "no Streamable HTTP here; trying the legacy HTTP+SSE transport");
        drop(response);
        return legacy::fall_back(ctx, frame).await;
    }
    ensure_success(&mut response).await?;
    let Message::Request { id, .. } = message else {
        // Notifications and responses: 202 expected, any 2xx accepted, the body drained.
        read_body(response.body_mut(), state.cap).await?;
        return Ok(());
    };
    if is_event_stream(&response) {
        let body = response.into_body();
        return match read_stream(ctx, body, id, is_initialize).await? {
            Answer::Delivered => Ok(()),
            Answer::UseLegacy => {
                tracing::info!(server = %state.server, "the server announced a legacy endpoint; switching to HTTP+SSE");
                legacy::fall_back(ctx, frame).await
            }
        };
    }
    let body = read_body(response.body_mut(), state.cap).await?;
    if !body.is_empty() {
        ctx.deliver(body).await;
    }
    // A 202 (or empty body) for a request: the response may come on the GET stream, and the
    // call's timeout covers the case where it never does.
    Ok(())
}

/// How a POST's SSE stream ended well.
enum Answer {
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
                    if event.data.trim().is_empty() {
                        continue; // A priming event: it only sets the id.
                    }
                    let frame = Bytes::from(event.data);
                    let answered = response_id(&frame).as_ref() == Some(want);
                    ctx.deliver(frame).await;
                    if answered {
                        return Ok(Answer::Delivered);
                    }
                }
                Ok(None) => break,
                Err(ReadError::TooLarge(cap)) => too_large = Some(cap),
                Err(ReadError::Net(_)) => break,
            }
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
            .client
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
    state.forget_session();
    let Some((init_id, init)) = lock(&state.initialize).clone() else {
        return Err(Cause::Unanswered(
            "the session expired before initialize was sent".to_owned(),
        ));
    };
    let headers = state.post_headers(None);
    let (_, mut response) = state
        .client
        .send(Method::POST, &state.url, &headers, init)
        .await?;
    state.capture_session(response.headers());
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
        .client
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
        () = get_stream_of_session(&ctx, generation) => {}
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
            .client
            .send(Method::GET, &state.url, &headers, Bytes::new())
            .await;
        state.get.send_if_modified(|get| get.answered(generation));
        let Ok((_, response)) = response else {
            return;
        };
        state.capture_session(response.headers());
        if !response.status().is_success() || !is_event_stream(&response) {
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
