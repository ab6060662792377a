//! The driver: one future that reads and routes frames, runs inbound handlers and is the
//! connection's one writer.
//! The library never spawns; the caller decides where this future runs.
//!
//! Each poll round does, in order: notice a shutdown request; read and route frames (unless the
//! write queue is over its high-water mark, which is the only thing that stops the reader);
//! collect finished handlers; pull frames the handles queued, then background frames while the
//! write queue is nearly empty; write everything queued and flush once. The order matters:
//! routing before writing lets one flush carry every response the round produced, and taking
//! the ordinary lane before the background lane is what lets a request overtake a flood of
//! background notifications.
//!
//! The parts: `inbound.rs` reads and routes, `serve.rs` runs the peer's requests under the
//! concurrency limit, `write.rs` holds the write queue and the handles' lanes; this file keeps
//! the round, the deadline timer and the lifecycle.
//!
//! # Lifecycle
//!
//! One `Phase` at a time:
//!
//! | Phase      | reads | new requests | writes                           | next                  |
//! |------------|-------|--------------|----------------------------------|-----------------------|
//! | `Open`     | yes   | served       | yes                              | `Draining`, `Closing` |
//! | `Draining` | yes   | `-32603`     | yes                              | `Closing`             |
//! | `Closing`  | no    | -            | what is queued, then sink closed | `Done`                |
//! | `Done`     | no    | -            | no                               | (final)               |
//!
//! - `Open` → `Draining`: a shutdown request (it arrives on the ordinary lane).
//! - `Open` or `Draining` → `Closing`: end of input, a read or write error, fatal garbage, an
//!   oversized frame under the strict profile; from `Draining` also nothing left in flight, or
//!   the grace timer. Entering `Closing` fails every pending outgoing request with the reason
//!   (the first reason wins), drops the requests being served and closes the lanes; after a
//!   fatal reason nothing more is written.
//! - `Closing` → `Done`: the sink closed, failed, or stalled past the write-stall bound.
//!   Polling a `Done` driver again returns the same result.

mod inbound;
mod serve;
mod write;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_core::Stream;
use futures_util::Sink;
use tokio::time::Sleep;

use self::serve::Serving;
pub(crate) use self::write::Lanes;
use self::write::WriteQueue;
use crate::config::LocalError;
use crate::router::{Router, error_frame};
use crate::{CloseReason, Peer};

/// Poll rounds per call before yielding to the executor, so a busy connection cannot starve
/// other tasks on the same thread.
const ROUNDS: usize = 16;

/// The future that runs a connection. Spawn it (or poll it) for the [`Peer`] to work.
///
/// It resolves when the connection ends: `Ok(())` after end of input or a shutdown, `Err`
/// with the reason otherwise. Dropping it closes the connection: pending requests fail with
/// [`CloseReason::ShutDown`].
#[must_use = "the connection does nothing unless its driver is polled"]
pub struct Driver<S, K> {
    peer: Peer,
    stream: S,
    /// The sink: only the driver writes (it closes when the driver is dropped).
    sink: K,
    router: Router,
    phase: Phase,
    lanes: Lanes,
    serving: Serving,
    writes: WriteQueue,
    /// The one timer for outgoing requests' deadlines, and the deadline it is set for.
    deadline_timer: Option<(u64, Pin<Box<Sleep>>)>,
    /// The last thing read was an oversized frame the framing skipped (its limit): end of
    /// input right after it means the frame was cut short.
    oversize_skipped: Option<usize>,
    garbage_warned: Option<Instant>,
}

/// Where the connection is in its life (the table in the module docs).
#[derive(Debug)]
enum Phase {
    /// Serving both ways.
    Open,
    /// A shutdown was asked for: new requests are refused; in-flight ones have until the
    /// grace timer fires.
    Draining(Pin<Box<Sleep>>),
    /// Over for this reason: what is queued is written (nothing after a fatal error), then
    /// the sink is closed.
    Closing(CloseReason),
    /// The driver resolved with this reason.
    Done(CloseReason),
}

impl Phase {
    /// Open or draining: reading, routing and serving go on.
    fn is_serving(&self) -> bool {
        matches!(self, Phase::Open | Phase::Draining(_))
    }

    /// Starts draining (a shutdown request): in-flight requests get `grace`. Only an open
    /// connection starts; a second request changes nothing.
    fn start_draining(&mut self, grace: Duration) {
        if let Phase::Open = self {
            *self = Phase::Draining(Box::pin(tokio::time::sleep(grace)));
        }
    }
}

/// What the driver resolves with when the connection ended for `reason`.
fn outcome(reason: &CloseReason) -> Result<(), CloseReason> {
    match reason {
        CloseReason::Eof | CloseReason::ShutDown => Ok(()),
        other => Err(other.clone()),
    }
}

impl<S, K> std::fmt::Debug for Driver<S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("running", &self.serving.running())
            .field("queued", &self.serving.queued())
            .field("writes", &self.writes.len())
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl<S, K> Driver<S, K> {
    pub(crate) fn new(peer: Peer, stream: S, sink: K, lanes: Lanes, router: Router) -> Self {
        let writes = WriteQueue::new(peer.shared.config.write_stall);
        Driver {
            peer,
            stream,
            sink,
            router,
            phase: Phase::Open,
            lanes,
            serving: Serving::default(),
            writes,
            deadline_timer: None,
            oversize_skipped: None,
            garbage_warned: None,
        }
    }

    /// Collects finished handlers and queues their responses.
    fn poll_handlers(&mut self, cx: &mut Context<'_>) {
        let Driver {
            peer,
            lanes,
            writes,
            phase,
            serving,
            ..
        } = self;
        serving.poll_finished(cx, |id, frame| {
            // A handler that chose to answer nothing (`Router::request_or_silence`).
            if frame.as_ref().is_some_and(Bytes::is_empty) {
                return;
            }
            // Whatever the handler sent before finishing (progress notifications, say) is
            // already in the handles' queue: write it before the response, so the peer sees
            // them in the order the handler produced them.
            lanes.drain_outbound(writes, phase);
            let frame = frame.unwrap_or_else(|| {
                tracing::error!(%id, "a request handler panicked");
                let config = &peer.shared.config;
                error_frame(config, Some(id), &config.local_error(LocalError::Internal))
            });
            writes.push(frame);
        });
    }

    /// Ends a shutdown's grace period when its deadline passes or nothing is left in flight.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>) {
        if let Phase::Draining(grace) = &mut self.phase
            && (grace.as_mut().poll(cx).is_ready() || self.serving.is_idle())
        {
            self.close(CloseReason::ShutDown);
        }
    }

    /// Keeps the deadline timer set for the earliest pending deadline, and times out the
    /// requests whose deadline passed.
    fn poll_deadlines(&mut self, cx: &mut Context<'_>) {
        let shared = Arc::clone(&self.peer.shared);
        loop {
            let want = shared.wake_at.load(Ordering::Acquire);
            if want == u64::MAX {
                self.deadline_timer = None;
                return;
            }
            let at = shared.epoch + Duration::from_nanos(want);
            let timer = match &mut self.deadline_timer {
                Some((armed, timer)) => {
                    if *armed != want {
                        timer.as_mut().reset(at);
                        *armed = want;
                    }
                    timer
                }
                None => {
                    &mut self
                        .deadline_timer
                        .insert((want, Box::pin(tokio::time::sleep_until(at))))
                        .1
                }
            };
            if timer.as_mut().poll(cx).is_pending() {
                return;
            }
            shared.expire_overdue();
        }
    }

    /// Enters `Closing` (the first reason wins) and fails every pending request.
    fn close(&mut self, reason: CloseReason) {
        if !self.phase.is_serving() {
            return;
        }
        let reason = self.peer.shared.close(reason);
        // In-flight inbound work is dropped (cancelled); a graceful shutdown already waited
        // for it within its grace period.
        self.serving.clear();
        self.lanes.close();
        if !matches!(reason, CloseReason::Eof | CloseReason::ShutDown) {
            // A fatal error: nothing more is written.
            self.writes.clear();
        }
        self.phase = Phase::Closing(reason);
    }

    /// Enters `Done` and tells the handles the driver finished.
    fn finish(&mut self) -> Result<(), CloseReason> {
        let reason = match &self.phase {
            Phase::Closing(reason) | Phase::Done(reason) => reason.clone(),
            Phase::Open | Phase::Draining(_) => CloseReason::ShutDown,
        };
        let result = outcome(&reason);
        self.phase = Phase::Done(reason);
        self.peer.shared.finished.send_replace(true);
        result
    }
}

impl<S, K, E, F> Future for Driver<S, K>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<sidewire_framing::Error>,
    K: Sink<Bytes, Error = F> + Unpin,
    F: Into<sidewire_framing::Error>,
{
    type Output = Result<(), CloseReason>;

    // Runs up to `ROUNDS` rounds (the module docs list what one does).
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Phase::Done(reason) = &this.phase {
            return Poll::Ready(outcome(reason));
        }
        this.poll_rounds(cx)
    }
}

impl<S, K, E, F> Driver<S, K>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<sidewire_framing::Error>,
    K: Sink<Bytes, Error = F> + Unpin,
    F: Into<sidewire_framing::Error>,
{
    fn poll_rounds(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CloseReason>> {
        let this = self;
        for _ in 0..ROUNDS {
            // Every source is polled until it is `Pending` (which registers the waker) unless a
            // budget or the write high-water mark stopped it first; only then is another round
            // needed. Re-polling sources that just said `Pending` would cost a waker clone each.
            let mut again = false;
            if this.phase.is_serving() {
                again |= this.poll_read(cx);
                this.poll_handlers(cx);
                again |= this
                    .lanes
                    .poll_outbound(cx, &mut this.writes, &mut this.phase);
                // After the ordinary lane, so that requests and responses queued by now are
                // ahead of any background frame taken this round.
                this.lanes.poll_background(cx, &mut this.writes);
                // After the outbound queue, which carries the frames of requests whose deadlines
                // may be earlier than the timer.
                this.poll_deadlines(cx);
                // After the outbound queue, which is where a shutdown request arrives.
                this.poll_shutdown(cx);
            }
            if let Err(reason) = this.writes.poll_write(&mut this.sink, cx) {
                this.close(reason);
                return Poll::Ready(this.finish());
            }
            if this.lanes.background_ready(&this.writes) {
                // The write drained the queue below the mark: the background lane may go on.
                again = true;
            }
            if let Phase::Closing(_) = this.phase
                && this.writes.is_idle()
            {
                return match this.writes.poll_close(&mut this.sink, cx) {
                    Poll::Ready(()) => Poll::Ready(this.finish()),
                    Poll::Pending => Poll::Pending,
                };
            }
            if !again {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<S, K> Drop for Driver<S, K> {
    fn drop(&mut self) {
        // The sink closes with the driver (it is a field), not with the last handle.
        if let Phase::Done(_) = self.phase {
            return;
        }
        self.peer.shared.close(CloseReason::ShutDown);
        self.peer.shared.finished.send_replace(true);
    }
}
