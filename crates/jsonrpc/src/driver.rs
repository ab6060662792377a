//! The driver: one future that reads and routes frames, runs inbound handlers and owns the
//! writer. The library never spawns; the caller decides where this future runs.
//!
//! Each poll round does, in order: notice a shutdown request; read and route frames (unless the
//! write queue is over its high-water mark, which is the only thing that stops the reader);
//! collect finished handlers; pull frames the handles queued, then background frames while the
//! write queue is nearly empty; write everything queued and flush once. The order matters:
//! routing before writing lets one flush carry every response the round produced, and taking
//! the ordinary lane before the background lane is what lets a request overtake a flood of
//! background notifications.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_core::Stream;
use futures_util::Sink;
use futures_util::stream::FuturesUnordered;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::time::Sleep;

use crate::config::LocalError;
use crate::envelope::{self, Garbage, Inbound, Outcome, pending_key};
use crate::peer::{Background, Outbound, Reply, lock};
use crate::router::{ResponseFuture, Router, error_frame};
use crate::{CloseReason, GarbagePolicy, Id, Peer, Profile, RequestContext};

/// Poll rounds per call before yielding to the executor, so a busy connection cannot starve
/// other tasks on the same thread.
const ROUNDS: usize = 16;
/// Frames read per round.
const READS_PER_ROUND: usize = 64;
/// Queued outgoing frames beyond which the driver stops reading: a peer that sends requests
/// but does not read its responses is slowed down instead of growing our memory.
const WRITE_HIGH_WATER: usize = 1024;
/// The same mark in bytes. Past either, the driver stops taking frames from the handles'
/// queue too, so callers feel the bounded queue's backpressure instead of frames piling up
/// here.
const WRITE_HIGH_WATER_BYTES: usize = 1024 * 1024;
/// Background frames are taken only while fewer bytes than this wait for the writer: enough to
/// keep a fast peer's pipe busy, small enough that a request queued behind them waits for
/// little more than one frame.
const BACKGROUND_LOW_WATER_BYTES: usize = 64 * 1024;

/// The future that runs a connection. Spawn it (or poll it) for the [`Peer`] to work.
///
/// It resolves when the connection ends: `Ok(())` after end of input or a shutdown, `Err`
/// with the reason otherwise. Dropping it closes the connection: pending requests fail with
/// [`CloseReason::ShutDown`].
#[must_use = "the connection does nothing unless its driver is polled"]
pub struct Driver<S, K> {
    peer: Peer,
    stream: S,
    sink: K,
    outbound: mpsc::Receiver<Outbound>,
    background: mpsc::Receiver<Background>,
    /// The background lane was left alone this round because the write queue was above its
    /// low-water mark; a write that drains it below the mark asks for another round.
    background_waiting: bool,
    router: Router,
    running: FuturesUnordered<InFlight>,
    /// Requests started this round, polled once in place before they join `running`: most
    /// handlers finish on their first poll, and skipping the `FuturesUnordered` bookkeeping
    /// for them is a measurable share of a round trip.
    fresh: Vec<InFlight>,
    queued: VecDeque<InFlight>,
    /// The frame bytes of the requests in `queued`.
    queued_bytes: usize,
    inbound_ids: HashSet<Id>,
    writes: VecDeque<Bytes>,
    /// The bytes in `writes`.
    writes_bytes: usize,
    unflushed: bool,
    stall: Option<Pin<Box<Sleep>>>,
    /// The one timer for outgoing requests' deadlines, and the deadline it is set for.
    deadline_timer: Option<(u64, Pin<Box<Sleep>>)>,
    read_done: bool,
    oversize_skipped: Option<usize>,
    draining: Option<Pin<Box<Sleep>>>,
    closing: Option<CloseReason>,
    sink_closed: bool,
    finished: bool,
    garbage_warned: Option<Instant>,
}

impl<S, K> std::fmt::Debug for Driver<S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("running", &(self.running.len() + self.fresh.len()))
            .field("queued", &self.queued.len())
            .field("writes", &self.writes.len())
            .field("closing", &self.closing)
            .finish_non_exhaustive()
    }
}

/// An inbound request being served: its id and the future of its response frame.
struct InFlight {
    id: Id,
    work: ResponseFuture,
    /// The request frame's length, counted against the queue's byte bound while it waits.
    bytes: usize,
}

impl Future for InFlight {
    /// The id, and the response frame (`None` when the handler panicked).
    type Output = (Id, Option<Bytes>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        match catch_unwind(AssertUnwindSafe(|| this.work.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(frame)) => Poll::Ready((this.id.clone(), Some(frame))),
            Err(_) => Poll::Ready((this.id.clone(), None)),
        }
    }
}

impl<S, K, E, F> Driver<S, K>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<sidewire_framing::Error>,
    K: Sink<Bytes, Error = F> + Unpin,
    F: Into<sidewire_framing::Error>,
{
    pub(crate) fn new(
        peer: Peer,
        stream: S,
        sink: K,
        outbound: mpsc::Receiver<Outbound>,
        background: mpsc::Receiver<Background>,
        router: Router,
    ) -> Self {
        Driver {
            peer,
            stream,
            sink,
            outbound,
            background,
            background_waiting: false,
            router,
            running: FuturesUnordered::new(),
            fresh: Vec::new(),
            queued: VecDeque::new(),
            queued_bytes: 0,
            inbound_ids: HashSet::new(),
            writes: VecDeque::new(),
            writes_bytes: 0,
            unflushed: false,
            stall: None,
            deadline_timer: None,
            read_done: false,
            oversize_skipped: None,
            draining: None,
            closing: None,
            sink_closed: false,
            finished: false,
            garbage_warned: None,
        }
    }

    fn poll_round(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CloseReason>> {
        for _ in 0..ROUNDS {
            // Every source is polled until it is `Pending` (which registers the waker) unless a
            // budget or the write high-water mark stopped it first; only then is another round
            // needed. Re-polling sources that just said `Pending` would cost a waker clone each.
            let mut again = false;
            if self.closing.is_none() {
                again |= self.poll_read(cx);
                self.poll_handlers(cx);
                again |= self.poll_outbound(cx);
                // After the ordinary lane, so that requests and responses queued by now are
                // ahead of any background frame taken this round.
                self.poll_background(cx);
                // After the outbound queue, which carries the frames of requests whose deadlines
                // may be earlier than the timer.
                self.poll_deadlines(cx);
                // After the outbound queue, which is where a shutdown request arrives.
                self.poll_shutdown(cx);
                if self.draining.is_some()
                    && self.running.is_empty()
                    && self.fresh.is_empty()
                    && self.queued.is_empty()
                {
                    self.close(CloseReason::ShutDown);
                }
            }
            if let Err(reason) = self.poll_write(cx) {
                self.close(reason);
                return Poll::Ready(self.finish());
            }
            if self.background_waiting
                && self.writes_bytes < BACKGROUND_LOW_WATER_BYTES
                && !self.writes_full()
            {
                // The write drained the queue below the mark: the background lane may go on.
                again = true;
            }
            if self.closing.is_some() && self.writes.is_empty() && !self.unflushed {
                // Close the sink (for a pipe: the peer sees end of input), bounded by the
                // stall timer like any write.
                match Pin::new(&mut self.sink).poll_close(cx) {
                    Poll::Ready(_) => {
                        self.sink_closed = true;
                        return Poll::Ready(self.finish());
                    }
                    Poll::Pending => {
                        if self.stall_fired(cx) {
                            return Poll::Ready(self.finish());
                        }
                        return Poll::Pending;
                    }
                }
            }
            if !again {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Ends a shutdown's grace period when its deadline passes.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>) {
        if let Some(deadline) = self.draining.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
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
            self.sweep_deadlines();
        }
    }

    /// Fails every request past its deadline and records the next deadline.
    fn sweep_deadlines(&mut self) {
        let shared = &self.peer.shared;
        let now = u64::try_from(shared.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut table = lock(&shared.pending);
        let expired: Vec<u64> = table
            .iter()
            .filter(|(_, entry)| entry.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            if let Some(entry) = table.remove(&id) {
                let _ = entry.reply.send(Reply::TimedOut);
            }
        }
        // Stored under the lock, so a caller inserting a new entry either is seen here or
        // lowers the value after this store.
        let next = table
            .values()
            .map(|entry| entry.deadline)
            .min()
            .unwrap_or(u64::MAX);
        shared.wake_at.store(next, Ordering::Release);
    }

    /// Starts draining: new requests are refused, in-flight ones get `grace`.
    fn start_shutdown(&mut self, grace: Duration) {
        if self.draining.is_none() {
            self.draining = Some(Box::pin(tokio::time::sleep(grace)));
        }
    }

    /// Reads and routes frames; `true` when it stopped with more possibly ready (a budget or
    /// the write high-water mark), `false` when the stream said `Pending` or ended.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> bool {
        for _ in 0..READS_PER_ROUND {
            if self.read_done || self.closing.is_some() {
                return false;
            }
            if self.writes_full() {
                return true;
            }
            match Pin::new(&mut self.stream).poll_next(cx) {
                Poll::Pending => return false,
                Poll::Ready(None) => {
                    self.read_done = true;
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

    fn on_read_error(&mut self, err: sidewire_framing::Error) {
        match err {
            sidewire_framing::Error::TooLarge { limit, prefix }
                if self.peer.shared.config.profile == Profile::Lenient =>
            {
                // The framing skipped the line and goes on. Fail the request it answered, if
                // the line's first bytes name one of ours, or the only one pending.
                self.oversize_skipped = Some(limit);
                let mut pending = lock(&self.peer.shared.pending);
                let key = crate::scan::top_level_id(&prefix)
                    .filter(|id| pending.contains_key(id))
                    .or_else(|| {
                        (pending.len() == 1).then(|| *pending.keys().next().expect("one entry"))
                    });
                match key.and_then(|key| pending.remove(&key)) {
                    Some(entry) => {
                        let _ = entry.reply.send(Reply::TooLarge { limit });
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
            self.garbage("the frame is not UTF-8".to_owned());
            return;
        };
        let profile = self.peer.shared.config.profile;
        let first = text.as_bytes().iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'[') {
            if profile == Profile::Lenient && self.peer.shared.config.batches {
                self.on_batch(&frame, text);
            } else {
                self.garbage("batches are not accepted".to_owned());
            }
            return;
        }
        match envelope::classify(text, profile) {
            Ok(inbound) => {
                if let Some(frame_out) = self.route(&frame, text, inbound, None) {
                    self.push_write(frame_out);
                }
            }
            Err(Garbage::NotAnObject(detail)) => self.garbage(detail),
            Err(Garbage::DuplicateMember) => {
                self.garbage("a top-level member appears twice".to_owned())
            }
        }
    }

    fn garbage(&mut self, detail: String) {
        match self.peer.shared.config.garbage {
            GarbagePolicy::Fatal => self.close(CloseReason::Garbage(detail.into())),
            GarbagePolicy::Skip => {
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
                    tracing::warn!(count, %detail, "skipped a frame that is not a JSON-RPC message");
                }
            }
        }
    }

    /// Routes one classified message. A request either starts (or queues) and returns nothing,
    /// or is answered at once with the returned frame. `batch` collects requests of a batch.
    fn route(
        &mut self,
        frame: &Bytes,
        text: &str,
        inbound: Inbound<'_>,
        batch: Option<&mut Vec<ResponseFuture>>,
    ) -> Option<Bytes> {
        let config = &self.peer.shared.config;
        match inbound {
            Inbound::Request { id, method, params } => {
                self.on_request(id, &method, params, frame.len(), batch)
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
                    Outcome::Result(result) => {
                        let start = result.get().as_ptr() as usize - text.as_ptr() as usize;
                        Reply::Result {
                            frame: frame.clone(),
                            start,
                            end: start + result.get().len(),
                        }
                    }
                    Outcome::Error(error) => Reply::Error(error),
                };
                self.complete(id, reply);
                None
            }
            Inbound::BadResponse { id, reason } => {
                self.complete(id, Reply::Invalid(reason));
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

    fn on_request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<&RawValue>,
        bytes: usize,
        batch: Option<&mut Vec<ResponseFuture>>,
    ) -> Option<Bytes> {
        let config = &self.peer.shared.config;
        if self.draining.is_some() {
            return Some(error_frame(
                config,
                Some(&id),
                &config.local_error(LocalError::ShuttingDown),
            ));
        }
        if batch.is_none() {
            if self.inbound_ids.contains(&id) {
                let error = config.error_with(
                    LocalError::InvalidRequest,
                    crate::ErrorObject::new(
                        crate::ErrorObject::INVALID_REQUEST,
                        "invalid request: the id is already in use by a pending request",
                    ),
                );
                return Some(error_frame(config, Some(&id), &error));
            }
            let full = self.running.len() + self.fresh.len() >= config.max_concurrent_requests;
            // Bounded in count and in bytes: a queued request's handler has decoded its params
            // already, so its frame's length is what it pins while it waits.
            if full
                && (self.queued.len() >= config.max_queued_requests
                    || self.queued_bytes.saturating_add(bytes) > config.max_queued_request_bytes)
            {
                return Some(error_frame(
                    config,
                    Some(&id),
                    &config.local_error(LocalError::Overloaded),
                ));
            }
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
        if let Some(batch) = batch {
            batch.push(catch_panics(work, self.peer.clone(), id));
            return None;
        }
        self.inbound_ids.insert(id.clone());
        let in_flight = InFlight { id, work, bytes };
        if self.running.len() + self.fresh.len() < config.max_concurrent_requests {
            self.fresh.push(in_flight);
        } else {
            self.queued_bytes += bytes;
            self.queued.push_back(in_flight);
        }
        None
    }

    fn on_batch(&mut self, frame: &Bytes, text: &str) {
        let config = self.peer.shared.config.clone();
        let entries: Vec<&RawValue> = match serde_json::from_str(text) {
            Ok(entries) => entries,
            Err(err) => {
                self.garbage(err.to_string());
                return;
            }
        };
        if entries.is_empty() {
            let error = config.error_with(
                LocalError::InvalidRequest,
                crate::ErrorObject::new(
                    crate::ErrorObject::INVALID_REQUEST,
                    "invalid request: empty batch",
                ),
            );
            self.push_write(error_frame(&config, None, &error));
            return;
        }
        let mut answers: Vec<ResponseFuture> = Vec::new();
        for entry in entries {
            let inbound = match serde_json::from_str::<envelope::Envelope<'_>>(entry.get()) {
                Ok(env) => envelope::classify_envelope(env, Profile::Lenient),
                Err(_) => Inbound::Reject {
                    id: None,
                    error: crate::ErrorObject::new(
                        crate::ErrorObject::INVALID_REQUEST,
                        "invalid request: a batch entry is not an object",
                    ),
                },
            };
            if let Some(immediate) = self.route(frame, text, inbound, Some(&mut answers)) {
                answers.push(Box::pin(std::future::ready(immediate)));
            }
        }
        if answers.is_empty() {
            return;
        }
        let peer = self.peer.clone();
        let work: ResponseFuture = Box::pin(async move {
            let parts = futures_util::future::join_all(answers).await;
            batch_frame(&peer, &parts)
        });
        // A batch holds one slot and is answered under a fresh internal id of its own; the
        // id is never written (the batch's answers carry their own ids).
        self.running.push(InFlight {
            id: Id::string("\u{0}batch"),
            work,
            bytes: 0,
        });
    }

    fn complete(&mut self, id_token: &str, reply: Reply) {
        let shared = &self.peer.shared;
        let entry = pending_key(id_token).and_then(|key| lock(&shared.pending).remove(&key));
        match entry {
            Some(entry) => {
                if entry.reply.send(reply).is_err() {
                    shared.stats.late_responses.fetch_add(1, Ordering::Relaxed);
                }
            }
            None => {
                shared.stats.late_responses.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Polls the requests started this round once, then collects finished handlers until none
    /// is ready.
    fn poll_handlers(&mut self, cx: &mut Context<'_>) {
        if !self.fresh.is_empty() {
            let mut fresh = std::mem::take(&mut self.fresh);
            for mut in_flight in fresh.drain(..) {
                match Pin::new(&mut in_flight).poll(cx) {
                    Poll::Ready((id, frame)) => self.finished_handler(id, frame),
                    Poll::Pending => self.running.push(in_flight),
                }
            }
            // Give the allocation back for the next round.
            self.fresh = fresh;
        }
        while let Poll::Ready(Some((id, frame))) = Pin::new(&mut self.running).poll_next(cx) {
            self.finished_handler(id, frame);
        }
    }

    fn finished_handler(&mut self, id: Id, frame: Option<Bytes>) {
        self.inbound_ids.remove(&id);
        // Whatever the handler sent before finishing (progress notifications, say) is already
        // in the handles' queue: write it before the response, so the peer sees them in the
        // order the handler produced them.
        self.drain_outbound();
        let frame = frame.unwrap_or_else(|| {
            tracing::error!(%id, "a request handler panicked");
            let config = &self.peer.shared.config;
            error_frame(config, Some(&id), &config.local_error(LocalError::Internal))
        });
        self.push_write(frame);
        if let Some(next) = self.queued.pop_front() {
            self.queued_bytes -= next.bytes;
            self.running.push(next);
        }
    }

    fn push_write(&mut self, frame: Bytes) {
        self.writes_bytes += frame.len();
        self.writes.push_back(frame);
    }

    fn writes_full(&self) -> bool {
        self.writes.len() >= WRITE_HIGH_WATER || self.writes_bytes >= WRITE_HIGH_WATER_BYTES
    }

    /// Takes everything the handles have queued, without waiting.
    fn drain_outbound(&mut self) {
        while let Ok(message) = self.outbound.try_recv() {
            match message {
                Outbound::Frame(frame) => self.push_write(frame),
                Outbound::Shutdown(grace) => self.start_shutdown(grace),
            }
        }
    }

    /// Takes what the handles queued; `true` when it stopped at the write high-water mark.
    fn poll_outbound(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            if self.writes_full() {
                return true;
            }
            match self.outbound.poll_recv(cx) {
                Poll::Ready(Some(Outbound::Frame(frame))) => self.push_write(frame),
                Poll::Ready(Some(Outbound::Shutdown(grace))) => self.start_shutdown(grace),
                Poll::Ready(None) | Poll::Pending => return false,
            }
        }
    }

    /// Takes background frames while the write queue is below its low-water mark, signalling
    /// the markers it reaches. Nothing it takes can be ready again before a write drains the
    /// queue, so it never asks for another round itself (`poll_round` does, after a write).
    fn poll_background(&mut self, cx: &mut Context<'_>) {
        self.background_waiting = false;
        loop {
            if self.writes_bytes >= BACKGROUND_LOW_WATER_BYTES || self.writes_full() {
                self.background_waiting = true;
                return;
            }
            match self.background.poll_recv(cx) {
                Poll::Ready(Some(Background::Frame(frame))) => self.push_write(frame),
                Poll::Ready(Some(Background::Marker(reached))) => {
                    // The waiter may have given up; then nobody needs the signal.
                    let _ = reached.send(());
                }
                Poll::Ready(None) | Poll::Pending => return,
            }
        }
    }

    /// Writes everything queued, then flushes once. `Err` when the sink failed or stalled.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Result<bool, CloseReason> {
        if self.sink_closed {
            return Ok(false);
        }
        let mut progress = false;
        while !self.writes.is_empty() {
            match Pin::new(&mut self.sink).poll_ready(cx) {
                Poll::Ready(Ok(())) => {
                    let frame = self.writes.pop_front().expect("checked non-empty");
                    self.writes_bytes -= frame.len();
                    Pin::new(&mut self.sink)
                        .start_send(frame)
                        .map_err(|err| io_reason(err.into()))?;
                    self.unflushed = true;
                    progress = true;
                }
                Poll::Ready(Err(err)) => return Err(io_reason(err.into())),
                Poll::Pending => break,
            }
        }
        if self.unflushed {
            match Pin::new(&mut self.sink).poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    self.unflushed = false;
                    progress = true;
                }
                Poll::Ready(Err(err)) => return Err(io_reason(err.into())),
                Poll::Pending => {}
            }
        }
        if progress {
            self.stall = None;
        }
        if self.writes.is_empty() && !self.unflushed {
            self.stall = None;
            return Ok(progress);
        }
        // The sink still holds us up: the stall bound runs from the last progress.
        if self.stall_fired(cx) {
            return Err(CloseReason::WriteStall(self.peer.shared.config.write_stall));
        }
        Ok(progress)
    }

    /// Arms the stall timer if needed and says whether it ran out.
    fn stall_fired(&mut self, cx: &mut Context<'_>) -> bool {
        let bound = self.peer.shared.config.write_stall;
        let timer = self
            .stall
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(bound)));
        timer.as_mut().poll(cx).is_ready()
    }

    /// Marks the connection closed (first reason wins) and fails every pending request.
    fn close(&mut self, reason: CloseReason) {
        if self.closing.is_some() {
            return;
        }
        let reason = self.peer.shared.close(reason);
        // In-flight inbound work is dropped (cancelled); a graceful shutdown already waited
        // for it within its grace period.
        self.running = FuturesUnordered::new();
        self.fresh.clear();
        self.queued.clear();
        self.queued_bytes = 0;
        self.inbound_ids.clear();
        self.outbound.close();
        // Background frames not taken yet are dropped with the lane; a waiting marker's
        // sender is dropped too, which tells its waiter the connection closed.
        self.background.close();
        while self.background.try_recv().is_ok() {}
        self.background_waiting = false;
        if !matches!(reason, CloseReason::Eof | CloseReason::ShutDown) {
            // A fatal error: nothing more is written.
            self.writes.clear();
            self.writes_bytes = 0;
            self.unflushed = false;
        }
        self.closing = Some(reason);
    }

    fn finish(&mut self) -> Result<(), CloseReason> {
        self.finished = true;
        self.peer.shared.finished.send_replace(true);
        match self.closing.clone().unwrap_or(CloseReason::ShutDown) {
            CloseReason::Eof | CloseReason::ShutDown => Ok(()),
            other => Err(other),
        }
    }
}

fn io_reason(err: sidewire_framing::Error) -> CloseReason {
    CloseReason::Io(err.to_string().into())
}

/// Guards one batch entry against a panicking handler.
fn catch_panics(work: ResponseFuture, peer: Peer, id: Id) -> ResponseFuture {
    Box::pin(async move {
        let (_, frame) = InFlight {
            id: id.clone(),
            work,
            bytes: 0,
        }
        .await;
        frame.unwrap_or_else(|| {
            let config = peer.config();
            error_frame(config, Some(&id), &config.local_error(LocalError::Internal))
        })
    })
}

/// Joins a batch's answers into one array frame; one too large is replaced by a single error.
fn batch_frame(peer: &Peer, parts: &[Bytes]) -> Bytes {
    let config = peer.config();
    let len = parts.iter().map(|p| p.len() + 1).sum::<usize>() + 1;
    if len > config.max_body() {
        return error_frame(
            config,
            None,
            &config.local_error(LocalError::ResponseTooLarge),
        );
    }
    let mut out = bytes::BytesMut::with_capacity(len);
    out.extend_from_slice(b"[");
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",");
        }
        out.extend_from_slice(part);
    }
    out.extend_from_slice(b"]");
    out.freeze()
}

impl<S, K, E, F> Future for Driver<S, K>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<sidewire_framing::Error>,
    K: Sink<Bytes, Error = F> + Unpin,
    F: Into<sidewire_framing::Error>,
{
    type Output = Result<(), CloseReason>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.finished {
            return Poll::Ready(match this.closing.clone() {
                Some(CloseReason::Eof | CloseReason::ShutDown) | None => Ok(()),
                Some(other) => Err(other),
            });
        }
        this.poll_round(cx)
    }
}

impl<S, K> Drop for Driver<S, K> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.peer.shared.close(CloseReason::ShutDown);
        self.peer.shared.finished.send_replace(true);
    }
}
