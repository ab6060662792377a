//! The peer's requests being served: the concurrency limit, the bounded FIFO of requests
//! waiting for a slot, the handlers' futures (a panic in one becomes a `-32603`), and the
//! duplicate-id rule ([`InFlightIds`]).
//!
//! Requests started in a round are polled once in place before they join the
//! `FuturesUnordered`: most handlers finish on their first poll.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use futures_util::stream::FuturesUnordered;

use crate::config::LocalError;
use crate::pending::InFlightIds;
use crate::router::ResponseFuture;
use crate::{Config, Id};

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

/// The requests started (`running`, `fresh`) and waiting (`queued`).
#[derive(Default)]
pub(super) struct Serving {
    running: FuturesUnordered<InFlight>,
    /// Requests started this round, polled once in place before they join `running`: most
    /// handlers finish on their first poll, and skipping the `FuturesUnordered` bookkeeping
    /// for them is a measurable share of a round trip.
    fresh: Vec<InFlight>,
    queued: VecDeque<InFlight>,
    /// The frame bytes of the requests in `queued`.
    queued_bytes: usize,
    ids: InFlightIds,
}

impl Serving {
    /// How many requests run (started, not finished).
    pub(super) fn running(&self) -> usize {
        self.running.len() + self.fresh.len()
    }

    /// How many requests wait for a slot.
    pub(super) fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Nothing is running or waiting.
    pub(super) fn is_idle(&self) -> bool {
        self.running() == 0 && self.queued.is_empty()
    }

    /// Whether a request with `id` and a frame of `bytes` may start or queue: not with an id
    /// in use (`-32600`), not past the queue's bounds (`-32603`).
    pub(super) fn admit(&self, id: &Id, bytes: usize, config: &Config) -> Result<(), Refusal> {
        self.ids.check(id).map_err(|_| Refusal::IdInUse)?;
        let full = self.running() >= config.max_concurrent_requests;
        // Bounded in count and in bytes: a queued request's handler has decoded its params
        // already, so its frame's length is what it pins while it waits.
        if full
            && (self.queued.len() >= config.max_queued_requests
                || self.queued_bytes.saturating_add(bytes) > config.max_queued_request_bytes)
        {
            return Err(Refusal::Overloaded);
        }
        Ok(())
    }

    /// Starts an admitted request's handler, or queues it behind the concurrency limit.
    pub(super) fn start(&mut self, id: Id, work: ResponseFuture, bytes: usize, config: &Config) {
        self.ids.start(id.clone());
        let in_flight = InFlight { id, work, bytes };
        if self.running() < config.max_concurrent_requests {
            self.fresh.push(in_flight);
        } else {
            self.queued_bytes += bytes;
            self.queued.push_back(in_flight);
        }
    }

    /// Polls the requests started this round once, then collects finished handlers until none
    /// is ready. `done` gets each finished request's id and response frame (`None`: the
    /// handler panicked); its id is free again and the next queued request starts.
    pub(super) fn poll_finished(
        &mut self,
        cx: &mut Context<'_>,
        mut done: impl FnMut(&Id, Option<Bytes>),
    ) {
        if !self.fresh.is_empty() {
            let mut fresh = std::mem::take(&mut self.fresh);
            for mut in_flight in fresh.drain(..) {
                match Pin::new(&mut in_flight).poll(cx) {
                    Poll::Ready((id, frame)) => self.finished(&id, frame, &mut done),
                    Poll::Pending => self.running.push(in_flight),
                }
            }
            // Give the allocation back for the next round.
            self.fresh = fresh;
        }
        while let Poll::Ready(Some((id, frame))) = Pin::new(&mut self.running).poll_next(cx) {
            self.finished(&id, frame, &mut done);
        }
    }

    fn finished(
        &mut self,
        id: &Id,
        frame: Option<Bytes>,
        done: &mut impl FnMut(&Id, Option<Bytes>),
    ) {
        self.ids.finish(id);
        done(id, frame);
        if let Some(next) = self.queued.pop_front() {
            self.queued_bytes -= next.bytes;
            self.running.push(next);
        }
    }

    /// Drops (cancels) every request, running or waiting; a graceful shutdown already waited
    /// for them within its grace period.
    pub(super) fn clear(&mut self) {
        self.running = FuturesUnordered::new();
        self.fresh.clear();
        self.queued.clear();
        self.queued_bytes = 0;
        self.ids.clear();
    }
}

/// Why an inbound request was answered without running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Its id is in use by a request still being served.
    IdInUse,
    /// The queue behind the concurrency limit is full, in count or in bytes.
    Overloaded,
}

impl Refusal {
    /// The error object it is answered with.
    pub(super) fn error(self, config: &Config) -> crate::ErrorObject {
        match self {
            Refusal::IdInUse => config.error_with(
                LocalError::InvalidRequest,
                crate::ErrorObject::new(
                    crate::ErrorObject::INVALID_REQUEST,
                    "invalid request: the id is already in use by a pending request",
                ),
            ),
            Refusal::Overloaded => config.local_error(LocalError::Overloaded),
        }
    }
}
