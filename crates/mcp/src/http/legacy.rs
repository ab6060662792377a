//! The legacy HTTP+SSE transport (2024-11-05), and the reconnection of its event stream.
//!
//! A GET opens the event stream; its first meaningful event is `endpoint`, whose data is the
//! URL to POST messages to, resolved against the stream's final URL and refused when it is on
//! another origin (the configured headers, credentials included, go with every POST). Every
//! server message, responses included, then arrives as a `message` event on the stream; a
//! POST's own answer (202 and a short body) is only checked for its status.
//!
//! The automatic mode lands here from Streamable HTTP ([`fall_back`]) when the initialize POST
//! gets 400, 404 or 405, or its stream announces an `endpoint`.
//!
//! # Reconnecting
//!
//! When the stream ends or fails after it had announced an endpoint, the transport opens a new
//! one under the spec's [`Restart`] policy (`ServerSpec::restart`, the policy the host restarts
//! servers under): attempt n of a run waits [`RestartPolicy::delay`]`(n)`, and at most
//! [`RestartPolicy::max_restarts`] attempts start within any [`RestartPolicy::within`] window
//! (a stream that stays up longer than the window earns its attempts back). Under
//! `Restart::Never`, or once the attempts are spent, the transport ends as it always did: the
//! calls still pending fail as closed, and the log says why.
//!
//! The protocol ties a session to the GET, and the servers that issue a fresh session per GET
//! (the TypeScript and Python SDKs do) need the handshake again: on the new stream's endpoint
//! the transport replays the protocol layer's recorded `initialize` request, consumes its
//! answer (the protocol layer keeps the facts of its first handshake) and sends
//! `notifications/initialized`; each attempt (GET, endpoint, handshake) is bounded by the
//! spec's startup timeout. Until then POSTs wait, within their own budgets; the stream's
//! lifecycle is one [`Lifecycle`] value in a `watch` they wait on.
//!
//! Requests whose answers were due on a stream that dropped fail at once with
//! `Error::is_http` (no status) instead of at their timeouts: the transport keeps the ids of
//! the requests it posted that are not answered yet, at most [`MAX_UNANSWERED`] of them
//! (a few dozen bytes each: our own ids and method names); past it the oldest is forgotten,
//! not failed, and waits for its own timeout as every request did before.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use sidewire_jsonrpc::{Request as _, lock};
use tokio::sync::watch;
use tokio::time::Instant;
use url::Url;

use super::Cause;
use crate::http::client::{self, ReadError, SseBody, ensure_success, error_body, is_event_stream};
use crate::http::{Ctx, Mode, response_id};
use crate::protocol::methods::{INITIALIZED, Initialize};
use crate::spec::AttemptWindow;
use crate::transport::{Message, RequestId};
use crate::{Restart, RestartPolicy, ServerSpec};

/// The most requests tracked as posted and unanswered, to fail at once when their stream
/// drops; past it the oldest is forgotten (it then waits for its own timeout).
pub(crate) const MAX_UNANSWERED: usize = 1024;

/// The event stream's lifecycle.
///
/// | State | Meaning | A POST | Next |
/// |---|---|---|---|
/// | `Connecting` | The first GET is out; no endpoint yet. | waits | `Open` at a valid `endpoint`; `GaveUp` when the GET fails, the endpoint is refused, or the stream ends first (the transport stays: the waiting POST reports why) |
/// | `Open(url)` | A stream is up, with its session initialized when it is not the first. | goes to `url` | `Reconnecting(1)` when the stream ends and the policy has an attempt left (the unanswered requests fail at once); `GaveUp` otherwise (the transport ends) |
/// | `Reconnecting(n)` | Attempt `n` of a run: its backoff, its GET, or the handshake on its endpoint. | waits | `Open` when the handshake succeeds; `Reconnecting(n + 1)` when it fails and the policy has an attempt left; `GaveUp` otherwise (the transport ends) |
/// | `GaveUp(why)` | No stream, and there will be none. | fails with `why` | — |
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    Connecting,
    Open(Url),
    Reconnecting(u32),
    GaveUp(String),
}

/// The legacy transport's share of the connection's state.
pub(crate) struct Legacy {
    /// The stream's lifecycle; POSTs wait on it.
    lifecycle: watch::Sender<Lifecycle>,
    /// Requests posted on the current stream and not answered yet, oldest first.
    unanswered: Mutex<Unanswered>,
    restart: Restart,
    /// The bound on one reconnection attempt (the spec's startup timeout).
    attempt_budget: Duration,
}

impl Legacy {
    pub(crate) fn new(spec: &ServerSpec) -> Self {
        Legacy {
            lifecycle: watch::channel(Lifecycle::Connecting).0,
            unanswered: Mutex::new(Unanswered::default()),
            restart: spec.restart,
            attempt_budget: spec.startup_timeout,
        }
    }

    fn set(&self, lifecycle: Lifecycle) {
        self.lifecycle.send_replace(lifecycle);
    }

    /// Whether POSTs still go to `url`.
    fn is_open_at(&self, url: &Url) -> bool {
        matches!(&*self.lifecycle.borrow(), Lifecycle::Open(open) if open == url)
    }

    /// The request `id` was answered (or is no longer waited for here); whether it was tracked.
    fn answered(&self, id: &RequestId) -> bool {
        lock(&self.unanswered).remove(id)
    }
}

/// The ids (and methods) of requests posted and not answered, at most [`MAX_UNANSWERED`].
#[derive(Debug, Default)]
struct Unanswered(VecDeque<(RequestId, String)>);

impl Unanswered {
    /// Tracks a request, forgetting the oldest one when full.
    fn insert(&mut self, id: RequestId, method: String) {
        if self.0.len() >= MAX_UNANSWERED {
            self.0.pop_front();
        }
        self.0.push_back((id, method));
    }

    fn remove(&mut self, id: &RequestId) -> bool {
        match self.0.iter().position(|(tracked, _)| tracked == id) {
            Some(at) => {
                self.0.remove(at);
                true
            }
            None => false,
        }
    }
}

/// A request tracked while its POST is out: untracked again when the POST fails or is
/// dropped, kept when it succeeds (then its answer, or its stream's loss, untracks it).
struct Tracked<'a> {
    legacy: &'a Legacy,
    id: Option<RequestId>,
}

impl<'a> Tracked<'a> {
    fn new(legacy: &'a Legacy, message: &Message) -> Self {
        let id = match message {
            Message::Request { id, method } => {
                lock(&legacy.unanswered).insert(id.clone(), method.clone());
                Some(id.clone())
            }
            _ => None,
        };
        Tracked { legacy, id }
    }

    fn keep(mut self) {
        self.id = None;
    }

    /// Untracks the request; false when its stream's loss already failed it.
    fn forget(mut self) -> bool {
        self.id.take().is_none_or(|id| self.legacy.answered(&id))
    }
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.legacy.answered(&id);
        }
    }
}

/// Switches a connection to the legacy transport and sends `frame` (the initialize request,
/// recorded in the state) that way.
pub(crate) async fn fall_back(ctx: &Arc<Ctx>, frame: &Bytes) -> Result<(), Cause> {
    *lock(&ctx.state.mode) = Mode::Legacy;
    ctx.run(Box::pin(stream(Arc::clone(ctx))));
    let message = match lock(&ctx.state.initialize).as_ref() {
        Some((id, _)) => Message::Request {
            id: id.clone(),
            method: Initialize::METHOD.to_owned(),
        },
        None => Message::Notification {
            method: Initialize::METHOD.to_owned(),
        },
    };
    post(ctx, frame, &message).await
}

/// POSTs one message to the current endpoint, waiting for one (see [`Lifecycle`]); a request
/// is tracked until its answer arrives on the stream.
pub(crate) async fn post(ctx: &Arc<Ctx>, frame: &Bytes, message: &Message) -> Result<(), Cause> {
    let legacy = &ctx.state.legacy;
    let (endpoint, tracked) = loop {
        let endpoint = endpoint(legacy).await?;
        let tracked = Tracked::new(legacy, message);
        // Tracked first, then checked: a stream that drops after the check fails it with the
        // others; one that dropped before is waited out.
        if legacy.is_open_at(&endpoint) {
            break (endpoint, tracked);
        }
    };
    match send(ctx, &endpoint, frame.clone()).await {
        Ok(()) => {
            tracked.keep();
            Ok(())
        }
        // Already failed when its stream dropped: reported once.
        Err(_) if !tracked.forget() => Ok(()),
        Err(cause) => Err(cause),
    }
}

/// The current endpoint, waiting while there is none yet.
async fn endpoint(legacy: &Legacy) -> Result<Url, Cause> {
    let mut lifecycle = legacy.lifecycle.subscribe();
    let now = lifecycle
        .wait_for(|now| matches!(now, Lifecycle::Open(_) | Lifecycle::GaveUp(_)))
        .await
        .map_err(|_| Cause::Unanswered("the transport ended".to_owned()))?;
    match &*now {
        Lifecycle::Open(url) => Ok(url.clone()),
        Lifecycle::GaveUp(why) => Err(Cause::Unanswered(why.clone())),
        Lifecycle::Connecting | Lifecycle::Reconnecting(_) => unreachable!("waited for another"),
    }
}

/// One POST to `endpoint`; its body is at most an acknowledgement.
async fn send(ctx: &Ctx, endpoint: &Url, frame: Bytes) -> Result<(), Cause> {
    let state = &ctx.state;
    let headers = state.post_headers(None);
    let (_, mut response) = state.send(Method::POST, endpoint, &headers, frame).await?;
    ensure_success(&mut response).await?;
    drop(error_body(response.body_mut()).await);
    Ok(())
}

/// The event stream, reconnected under the spec's policy: see the module docs and
/// [`Lifecycle`].
pub(crate) async fn stream(ctx: Arc<Ctx>) {
    let legacy = &ctx.state.legacy;
    let (mut endpoint, mut events) = match open(&ctx).await {
        Ok(open) => open,
        Err(why) => {
            let why = ctx.state.secrets.scrub(&why).into_owned();
            return legacy.set(Lifecycle::GaveUp(why));
        }
    };
    legacy.set(Lifecycle::Open(endpoint.clone()));
    let mut attempts = Attempts::new(legacy.restart);
    loop {
        read(&ctx, &mut events).await;
        tracing::debug!(server = %ctx.state.server, "the legacy SSE stream ended");
        let mut attempt = 1;
        if let Err(why) = attempts.start() {
            return give_up(&ctx, why);
        }
        legacy.set(Lifecycle::Reconnecting(attempt));
        fail_unanswered(&ctx, &endpoint).await;
        (endpoint, events) = loop {
            let policy = attempts.policy;
            tracing::warn!(server = %ctx.state.server, attempt, "reconnecting the legacy SSE stream");
            tokio::time::sleep(policy.delay(attempt)).await;
            let why = match tokio::time::timeout(legacy.attempt_budget, reconnect(&ctx)).await {
                Ok(Ok(open)) => break open,
                Ok(Err(why)) => why,
                Err(_) => format!(
                    "no endpoint and handshake within {} ms",
                    legacy.attempt_budget.as_millis()
                ),
            };
            let reason = ctx.state.secrets.scrub(&why).into_owned();
            tracing::warn!(server = %ctx.state.server, attempt, %reason, "reconnecting the legacy SSE stream failed");
            if let Err(spent) = attempts.start() {
                return give_up(&ctx, format!("{spent}; the last attempt failed: {why}"));
            }
            attempt += 1;
            legacy.set(Lifecycle::Reconnecting(attempt));
        };
        tracing::info!(server = %ctx.state.server, attempt, "reconnected the legacy SSE stream");
        legacy.set(Lifecycle::Open(endpoint.clone()));
        // A new session: what the old one listed may have changed.
        ctx.renewed().await;
    }
}

/// The attempts started within the policy's window.
struct Attempts {
    policy: RestartPolicy,
    /// Whether reconnecting is allowed at all.
    enabled: bool,
    started: AttemptWindow,
}

impl Attempts {
    fn new(restart: Restart) -> Self {
        let (policy, enabled) = match restart {
            Restart::OnCrash(policy) => (policy, true),
            Restart::Never => (RestartPolicy::default(), false),
        };
        Attempts {
            policy,
            enabled,
            started: AttemptWindow::default(),
        }
    }

    /// Counts an attempt starting now, or says why there is none.
    fn start(&mut self) -> Result<(), String> {
        if !self.enabled {
            return Err("the legacy SSE stream ended (reconnecting is off)".to_owned());
        }
        let now = Instant::now();
        if !self.started.allows(&self.policy, now) {
            return Err(format!(
                "the legacy SSE stream ended and its {} reconnect(s) within {} ms were spent",
                self.policy.max_restarts,
                self.policy.within.as_millis()
            ));
        }
        self.started.record(now);
        Ok(())
    }
}

/// Ends the transport: the calls still pending fail as closed.
fn give_up(ctx: &Ctx, why: String) {
    let why = ctx.state.secrets.scrub(&why).into_owned();
    tracing::warn!(server = %ctx.state.server, reason = %why, "the legacy HTTP+SSE connection is over");
    ctx.state.legacy.set(Lifecycle::GaveUp(why));
    let _ = ctx.end.send(true);
}

/// Fails the requests whose answers were due on the stream that dropped.
async fn fail_unanswered(ctx: &Ctx, endpoint: &Url) {
    let lost = std::mem::take(&mut lock(&ctx.state.legacy.unanswered).0);
    for (id, method) in lost {
        let cause = Cause::Unanswered(
            "the legacy SSE event stream was lost before the answer arrived".to_owned(),
        );
        ctx.fail(&Message::Request { id, method }, endpoint, cause)
            .await;
    }
}

/// Opens a stream and reads it up to its endpoint.
async fn open(ctx: &Ctx) -> Result<(Url, SseBody), String> {
    let state = &ctx.state;
    let headers = state.get_headers(None);
    let (final_url, mut response) = state
        .send(Method::GET, &state.url, &headers, Bytes::new())
        .await
        .map_err(|err| match err {
            super::SendError::Net(err) => format!("opening the SSE stream failed: {}", err.0),
            super::SendError::Auth(failure) => format!("opening the SSE stream failed: {failure}"),
        })?;
    if client::is_failure(response.status()) || !is_event_stream(&response) {
        let status = response.status();
        let body = error_body(response.body_mut()).await;
        return Err(format!(
            "the SSE endpoint answered {status} without an event stream: {body}"
        ));
    }
    let mut events = SseBody::new(response.into_body(), state.cap);
    loop {
        match events.next().await {
            Ok(Some(event)) if event.event == "endpoint" => {
                return match final_url.join(event.data.trim()) {
                    Ok(url) if client::same_origin(&url, &final_url) => Ok((url, events)),
                    Ok(url) => Err(format!(
                        "the server announced a cross-origin endpoint ({}); refused",
                        url.origin().ascii_serialization()
                    )),
                    Err(err) => Err(format!("the server announced an invalid endpoint: {err}")),
                };
            }
            Ok(Some(event)) => arrived(ctx, event.data).await,
            Ok(None) | Err(ReadError::Net(_)) => {
                return Err("the SSE stream ended before announcing an endpoint".to_owned());
            }
            Err(ReadError::TooLarge(cap)) => {
                tracing::warn!(server = %state.server, cap, "skipped an oversized SSE event");
            }
        }
    }
}

/// Reads the stream's messages until it ends.
async fn read(ctx: &Ctx, events: &mut SseBody) {
    loop {
        match events.next().await {
            Ok(Some(event)) if event.event == "endpoint" => {
                tracing::debug!(server = %ctx.state.server, "ignored a second endpoint event");
            }
            Ok(Some(event)) => arrived(ctx, event.data).await,
            Ok(None) | Err(ReadError::Net(_)) => return,
            Err(ReadError::TooLarge(cap)) => {
                tracing::warn!(server = %ctx.state.server, cap, "skipped an oversized SSE event");
            }
        }
    }
}

/// A message from the stream: an answer untracks its request; all go to the protocol layer.
async fn arrived(ctx: &Ctx, data: String) {
    if data.trim().is_empty() {
        return;
    }
    let frame = Bytes::from(data);
    if let Some(id) = response_id(&frame) {
        ctx.state.legacy.answered(&id);
    }
    ctx.deliver(frame).await;
}

/// One reconnection attempt: a new stream, and the handshake on its endpoint.
async fn reconnect(ctx: &Ctx) -> Result<(Url, SseBody), String> {
    let (endpoint, mut events) = open(ctx).await?;
    let recorded = lock(&ctx.state.initialize).clone();
    if let Some((id, initialize)) = recorded {
        handshake(ctx, &endpoint, &mut events, &id, initialize).await?;
    }
    Ok((endpoint, events))
}

/// Replays the recorded `initialize` on a new stream's endpoint, consumes its answer, and
/// sends `notifications/initialized`.
async fn handshake(
    ctx: &Ctx,
    endpoint: &Url,
    events: &mut SseBody,
    id: &RequestId,
    initialize: Bytes,
) -> Result<(), String> {
    let posted = async {
        send(ctx, endpoint, initialize).await.map_err(|cause| {
            cause
                .into_error(Initialize::METHOD, endpoint, &ctx.state.secrets)
                .to_string()
        })
    };
    let answer = async {
        loop {
            match events.next().await {
                Ok(Some(event)) if event.event == "endpoint" => {}
                Ok(Some(event)) => {
                    let frame = Bytes::from(event.data);
                    if response_id(&frame).as_ref() == Some(id) {
                        return Ok(frame);
                    }
                    if !frame.trim_ascii().is_empty() {
                        ctx.deliver(frame).await;
                    }
                }
                Ok(None) | Err(ReadError::Net(_)) => {
                    return Err("the new SSE stream ended before re-initialize answered".to_owned());
                }
                Err(ReadError::TooLarge(cap)) => {
                    tracing::warn!(server = %ctx.state.server, cap, "skipped an oversized SSE event");
                }
            }
        }
    };
    let ((), answer) = tokio::try_join!(posted, answer)?;
    let value: serde_json::Value = serde_json::from_slice(&answer)
        .map_err(|err| format!("re-initialize answered garbage: {err}"))?;
    if let Some(error) = value.get("error") {
        return Err(format!(
            "re-initialize failed: {}",
            crate::text::peer(&error.to_string())
        ));
    }
    let initialized = serde_json::json!({ "jsonrpc": "2.0", "method": INITIALIZED });
    send(ctx, endpoint, Bytes::from(initialized.to_string()))
        .await
        .map_err(|cause| {
            cause
                .into_error(INITIALIZED, endpoint, &ctx.state.secrets)
                .to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unanswered_forgets_the_oldest_past_its_cap() {
        let mut unanswered = Unanswered::default();
        for n in 0..=MAX_UNANSWERED {
            unanswered.insert(
                RequestId::from_json(&n.to_string()),
                "tools/call".to_owned(),
            );
        }
        assert_eq!(unanswered.0.len(), MAX_UNANSWERED);
        assert!(!unanswered.remove(&RequestId::from_json("0")));
        assert!(unanswered.remove(&RequestId::from_json("1")));
        let last = MAX_UNANSWERED.to_string();
        assert!(unanswered.remove(&RequestId::from_json(&last)));
        assert_eq!(unanswered.0.len(), MAX_UNANSWERED - 2);
    }

    #[test]
    fn attempts_follow_the_window() {
        let policy = RestartPolicy::default()
            .max_restarts(2)
            .within(Duration::from_secs(3600));
        let mut attempts = Attempts::new(Restart::OnCrash(policy));
        assert!(attempts.start().is_ok());
        assert!(attempts.start().is_ok());
        assert!(attempts.start().is_err());
        assert!(Attempts::new(Restart::Never).start().is_err());
        let forgetful = policy.within(Duration::ZERO);
        let mut attempts = Attempts::new(Restart::OnCrash(forgetful));
        for _ in 0..5 {
            assert!(attempts.start().is_ok());
        }
    }
}
