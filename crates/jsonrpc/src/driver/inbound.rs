//! The driver's read side: reading frames, classifying each once, and routing it: responses to
//! the pending table, notifications to their handlers in arrival order, requests to
//! [`Serving`](super::serve::Serving) (or an error answer at once), garbage per the policy.
//!
//! An inbound JSON array (a JSON-RPC batch) is garbage under both profiles: batches are not
//! supported.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use bytestring::ByteString;
use futures_core::Stream;
use serde_json::value::RawValue;

use super::{Driver, Phase};
use crate::config::LocalError;
use crate::envelope::{self, Garbage, Inbound, Outcome};
use crate::lock;
use crate::peer::Reply;
use crate::router::error_frame;
use crate::{CloseReason, GarbagePolicy, Id, Profile, RequestContext};

/// Frames read per round.
const READS_PER_ROUND: usize = 64;

impl<S, K, E> Driver<S, K>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<sidewire_framing::Error>,
{
    /// Reads and routes frames; `true` when it stopped with more possibly ready (a budget or
    /// the write high-water mark), `false` when the stream said `Pending` or ended.
    pub(super) fn poll_read(&mut self, cx: &mut Context<'_>) -> bool {
        for _ in 0..READS_PER_ROUND {
            if !self.phase.is_serving() {
                return false;
            }
            if self.writes.is_full() {
                return true;
            }
            match Pin::new(&mut self.stream).poll_next(cx) {
                Poll::Pending => return false,
                Poll::Ready(None) => {
                    let reason = match self.oversize_skipped {
                        Some(limit) => CloseReason::FrameTooLarge { limit },
                        None => CloseReason::Eof,
                    };
                    self.close(reason);
                    return false;
                }
                Poll::Ready(Some(Ok(frame))) => {
                    self.oversize_skipped = None;
                    self.on_frame(frame);
                }
                Poll::Ready(Some(Err(err))) => self.on_read_error(err.into()),
            }
        }
        true
    }
}

impl<S, K> Driver<S, K> {
    fn on_read_error(&mut self, err: sidewire_framing::Error) {
        match err {
            sidewire_framing::Error::TooLarge { limit, prefix }
                if self.peer.shared.config.profile == Profile::Lenient =>
            {
                // The framing skipped the line and goes on. Fail the request it answered, if
                // the line's first bytes name one of ours, or the only one pending.
                self.oversize_skipped = Some(limit);
                let mut pending = lock(&self.peer.shared.pending);
                match pending.complete_oversized(crate::scan::top_level_id(&prefix)) {
                    Some(reply) => {
                        let _ = reply.send(Reply::TooLarge { limit });
                    }
                    None => tracing::warn!(
                        limit,
                        pending = pending.len(),
                        "skipped an oversized inbound frame that names no pending request; \
                         the requests waiting will end by their timeouts"
                    ),
                }
            }
            sidewire_framing::Error::TooLarge { limit, .. } => {
                self.close(CloseReason::FrameTooLarge { limit });
            }
            other => self.close(CloseReason::Io(other.to_string().into())),
        }
    }

    fn on_frame(&mut self, frame: Bytes) {
        let Ok(text) = std::str::from_utf8(&frame) else {
            self.garbage(&frame, "the frame is not UTF-8".to_owned());
            return;
        };
        let first = text.as_bytes().iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'[') {
            // Batches are not supported under either profile.
            self.garbage(&frame, "batches are not accepted".to_owned());
            return;
        }
        match envelope::classify(text, self.peer.shared.config.profile) {
            Ok(inbound) => {
                if let Some(answer) = self.route(&frame, inbound) {
                    self.writes.push(answer);
                }
            }
            Err(Garbage::NotAnObject(detail)) => self.garbage(&frame, detail),
            Err(Garbage::DuplicateMember) => {
                self.garbage(&frame, "a top-level member appears twice".to_owned())
            }
        }
    }

    /// A frame that is not a JSON-RPC message: fatal, or skipped and counted. A skipped frame
    /// whose bytes name one of our pending requests as its top-level `"id"` (and have no
    /// `"method"`) was that request's response: the request fails at once with the reason,
    /// as an oversized response does, instead of waiting for its timeout.
    fn garbage(&mut self, frame: &[u8], detail: String) {
        match self.peer.shared.config.garbage {
            GarbagePolicy::Fatal => self.close(CloseReason::Garbage(detail.into())),
            GarbagePolicy::Skip => {
                if let Some(id) = crate::scan::response_id(frame) {
                    let reply = lock(&self.peer.shared.pending).complete_named(id);
                    if let Some(reply) = reply {
                        let reason = format!("the response does not decode: {detail}");
                        let _ = reply.send(Reply::Invalid(reason.into()));
                    }
                }
                let count = self
                    .peer
                    .shared
                    .stats
                    .garbage_frames
                    .fetch_add(1, Ordering::Relaxed)
                    + 1;
                let now = Instant::now();
                if self
                    .garbage_warned
                    .is_none_or(|at| now.duration_since(at) >= Duration::from_secs(1))
                {
                    self.garbage_warned = Some(now);
                    // Info, not a warning: a peer that prints a banner or a log line on its
                    // protocol stream is common and harmless (it is skipped, and counted).
                    tracing::info!(count, %detail, "skipped a frame that is not a JSON-RPC message");
                }
            }
        }
    }

    /// Routes one classified message. A request either starts (or queues) and returns nothing,
    /// or is answered at once with the returned frame.
    fn route(&mut self, frame: &Bytes, inbound: Inbound<'_>) -> Option<Bytes> {
        let config = &self.peer.shared.config;
        match inbound {
            Inbound::Request { id, method, params } => {
                self.on_request(id, &method, params, frame.len())
            }
            Inbound::Notification { method, params } => {
                let ran = catch_unwind(AssertUnwindSafe(|| self.router.notify(&method, params)));
                match ran {
                    Ok(true) => {}
                    Ok(false) => {
                        self.peer
                            .shared
                            .stats
                            .dropped_notifications
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => tracing::error!(method = %method, "a notification handler panicked"),
                }
                None
            }
            Inbound::Response { id, outcome } => {
                let reply = match outcome {
                    Outcome::Result(result) => Reply::Result(result_text(frame, result.get())),
                    Outcome::Error(error) => Reply::Error(error),
                };
                self.complete(id, reply);
                None
            }
            Inbound::BadResponse { id, reason } => {
                self.complete(id, Reply::Invalid(reason.into()));
                None
            }
            Inbound::Reject { id, mut error } => {
                error.data = config.hooks.error_data(LocalError::InvalidRequest);
                Some(error_frame(config, id.as_ref(), &error))
            }
            Inbound::Drop { reason } => {
                tracing::debug!(reason, "dropped a malformed message without an id");
                self.peer
                    .shared
                    .stats
                    .dropped_notifications
                    .fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Starts (or queues) a request, or returns the frame that answers it at once.
    fn on_request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<&RawValue>,
        bytes: usize,
    ) -> Option<Bytes> {
        let config = &self.peer.shared.config;
        if let Phase::Draining(_) = self.phase {
            return Some(error_frame(
                config,
                Some(&id),
                &config.local_error(LocalError::ShuttingDown),
            ));
        }
        if let Err(refusal) = self.serving.admit(&id, bytes, config) {
            return Some(error_frame(config, Some(&id), &refusal.error(config)));
        }
        let ctx = RequestContext {
            id: id.clone(),
            peer: self.peer.clone(),
        };
        let router = &self.router;
        let started = catch_unwind(AssertUnwindSafe(|| router.start(method, params, ctx)));
        let work = match started {
            Ok(Some(work)) => work,
            Ok(None) => {
                return Some(error_frame(
                    config,
                    Some(&id),
                    &config.local_error(LocalError::MethodNotFound),
                ));
            }
            Err(_) => {
                tracing::error!(method, "a request handler panicked");
                return Some(error_frame(
                    config,
                    Some(&id),
                    &config.local_error(LocalError::Internal),
                ));
            }
        };
        self.serving.start(id, work, bytes, config);
        None
    }

    /// Hands a response to the request it answers; one that answers nothing pending (or whose
    /// caller is gone) is late and counted.
    fn complete(&mut self, id_token: &str, reply: Reply) {
        let shared = &self.peer.shared;
        let waiting = lock(&shared.pending).complete(id_token);
        let delivered = waiting.is_some_and(|waiting| waiting.send(reply).is_ok());
        if !delivered {
            shared.stats.late_responses.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A result's text, `result` (a slice of `frame`, which is UTF-8), sharing the frame's buffer
/// and known to be UTF-8, so that reading it (`RawResult::get`, which MCP's client does twice
/// a call) checks nothing. The check here is the slice's alone, and an ASCII one (the usual
/// kind) is checked a word at a time.
fn result_text(frame: &Bytes, result: &str) -> ByteString {
    ByteString::try_from(frame.slice_ref(result.as_bytes()))
        .unwrap_or_else(|_| ByteString::from_static("null"))
}
