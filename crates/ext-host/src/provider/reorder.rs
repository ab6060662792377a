//! The consumer's state machine of one provider stream (spec §14.5), sans IO: it is fed the
//! chunks and ends a sidecar sent, in arrival order, plus the clock, and says what the
//! application reads next. Nothing here touches a connection, a timer or a task, so every rule is
//! unit-tested without processes (`provider/tests.rs`); [`super::stream`] drives it.
//!
//! # States
//!
//! | State | Input | Next state |
//! | --- | --- | --- |
//! | `Open` | chunk `seq` = next | delivers it and every held chunk that follows: `Open` (or `Finished` on an `error` chunk) |
//! | `Open` | chunk `next < seq < next + window` | held (out of order): `Open` |
//! | `Open`, `Ending` | chunk `seq ≥ next + window` | `Finished(stream_gap)` (window exceeded) |
//! | `Open`, `Ending` | chunk already delivered or held | ignored (duplicate) |
//! | `Open` | end, nothing ≤ `lastSeq` missing, nothing held beyond it | `Finished` (the end's outcome; an interrupted end after a cancel: `stream_cancelled`, or `idle`) |
//! | `Open` | end, a chunk ≤ `lastSeq` missing | `Ending` (deadline = now + gap timeout) |
//! | `Open` | end with `lastSeq` below a chunk delivered or held | `Finished(stream_gap)` |
//! | `Ending` | chunk `seq > lastSeq` | `Finished(stream_gap)` |
//! | `Ending` | the missing chunks arrive | `Finished` (the end's outcome) |
//! | `Ending` | the same end again | ignored |
//! | `Ending` | a different end | `Finished(provider_interrupted)` (conflicting end) |
//! | `Ending` | the clock passes the deadline | `Finished(stream_gap)` |
//! | `Open`, not cancelled | nothing arrived for the idle bound (since the open's answer or the last new chunk) | `Open`, cancelled as idle (the host sends the cancel) |
//! | `Open`, `Ending` | a chunk whose params do not decode, naming a `seq` not delivered or held | `Finished(protocol_error)`, naming the chunk, its type and why |
//! | any but `Finished` | a local failure (crash) | `Finished(that failure)` |
//! | any but `Finished` | the cancel is over (answered, or its wait) | `Finished(stream_cancelled)`, or `Finished(idle)` when cancelled as idle |
//! | `Finished` | anything | ignored (a finished stream's notifications are dropped) |
//!
//! `Finished` still hands out the chunks delivered before the outcome, then the outcome once.
//! A failure discards held (out-of-order) chunks: they can never be delivered in order.
//!
//! The idle bound is the host's own (the spec sets none): without it, a provider that sends one
//! chunk and then nothing keeps its reader waiting for ever. When it passes, the stream is
//! cancelled as an ordinary cancel is, and ends when that cancel is over, with the idle outcome
//! instead of `stream_cancelled` (so the sidecar has been told before the reader moves on). The
//! gap deadline governs `Ending`; a stream the host cancelled has no idle bound left.
//! A chunk that does not decode is dropped (§4), and since it can then never be delivered, the
//! stream would end as a gap later, naming neither the chunk nor why: it ends at once instead,
//! saying both.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use sidewire_ext_protocol::{ChunkType, ProviderChunk, Reason};
use tokio::time::Instant;

/// How a stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A clean `stream/end`.
    Clean,
    /// Any other end: the reason, and what happened in words (the peer's text unredacted:
    /// the caller names the plugin and redacts).
    Failed { reason: Reason, detail: String },
    /// Nothing arrived for the idle bound, `after`.
    Idle { after: Duration },
}

impl Outcome {
    fn failed(reason: Reason, detail: impl Into<String>) -> Self {
        Outcome::Failed {
            reason,
            detail: detail.into(),
        }
    }
}

/// What the application reads next.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // Moved once per chunk, never stored: boxing adds an allocation.
pub(crate) enum Next {
    /// The next chunk in `seq` order.
    Chunk(ProviderChunk),
    /// The outcome, given once, after every chunk delivered before it.
    End(Outcome),
}

/// What became of one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fed {
    /// In order: it (and any held chunks that follow) can be read now.
    Delivered,
    /// Out of order, kept until the chunks before it arrive.
    Held,
    /// A chunk already delivered or held, or the same end again.
    Duplicate,
    /// The stream had already finished.
    Dropped,
    /// An end that leaves chunks missing: the gap deadline is armed.
    Waiting,
    /// The stream finished with this input (cleanly or not).
    Finished,
}

/// What a `stream/end` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EndInfo {
    pub(crate) last_seq: u64,
    pub(crate) error: String,
    pub(crate) interrupted: bool,
}

#[derive(Debug)]
enum Phase {
    Open,
    Ending { end: EndInfo, deadline: Instant },
    Finished(Option<Outcome>),
}

/// How long a stream may stay open with nothing new, and since when it counts.
#[derive(Debug, Clone, Copy)]
struct IdleBound {
    timeout: Duration,
    /// When the open was answered or the last new chunk arrived.
    heard_at: Instant,
}

/// One stream's consumer state.
#[derive(Debug)]
pub(crate) struct Reorder {
    /// The next `seq` to deliver.
    next: u64,
    window: u64,
    gap_timeout: Duration,
    /// Out-of-order chunks with their sizes.
    held: BTreeMap<u64, (ProviderChunk, usize)>,
    /// In order, not read yet, with their sizes.
    ready: VecDeque<(ProviderChunk, usize)>,
    bytes: usize,
    phase: Phase,
    /// The host asked the sidecar to stop: an interrupted end is `stream_cancelled`.
    cancelled: bool,
    /// The idle bound and when it counts from; `None`: no bound (unit tests of the other
    /// rules).
    idle: Option<IdleBound>,
    /// The idle bound passed (this long) and the host cancelled: the cancel's end is the idle
    /// outcome.
    idled: Option<Duration>,
}

impl Reorder {
    /// A stream whose chunks are numbered from `seq_base + 1`.
    pub(crate) fn new(seq_base: u64, window: u64, gap_timeout: Duration) -> Self {
        Reorder {
            next: seq_base + 1,
            window,
            gap_timeout,
            held: BTreeMap::new(),
            ready: VecDeque::new(),
            bytes: 0,
            phase: Phase::Open,
            cancelled: false,
            idle: None,
            idled: None,
        }
    }

    /// With an idle bound of `timeout`, counted from `now`.
    pub(crate) fn with_idle_timeout(mut self, timeout: Duration, now: Instant) -> Self {
        self.idle = Some(IdleBound {
            timeout,
            heard_at: now,
        });
        self
    }

    /// The sidecar was heard from at `now` (the open's answer, a new chunk): the idle bound
    /// counts from here.
    pub(crate) fn heard(&mut self, now: Instant) {
        if let Some(idle) = &mut self.idle {
            idle.heard_at = now;
        }
    }

    /// Chunks kept (in order and out of order) and not read yet.
    pub(crate) fn buffered(&self) -> usize {
        self.ready.len() + self.held.len()
    }

    /// Their sizes as received.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.bytes
    }

    /// The outcome is decided (it may not have been read yet).
    pub(crate) fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished(_))
    }

    /// When the stream fails unless something arrives: while `Open` and not cancelled, the
    /// idle bound from the last thing heard; while `Ending`, the gap deadline.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::Open if self.cancelled => None,
            Phase::Open => self.idle.map(|idle| idle.heard_at + idle.timeout),
            Phase::Ending { deadline, .. } => Some(deadline),
            Phase::Finished(_) => None,
        }
    }

    /// The idle bound passed: the host is to cancel the stream, which then ends idle.
    pub(crate) fn went_idle(&self) -> bool {
        self.idled.is_some()
    }

    /// The host's cancel is over (answered, or its wait is over; or it could not be sent): the
    /// stream ends `stream_cancelled` with `detail`, or idle when it was cancelled as idle;
    /// nothing happens if it already finished.
    pub(crate) fn cancel_over(&mut self, detail: &str) {
        match self.idled {
            Some(after) if !self.is_finished() => self.finish(Outcome::Idle { after }),
            _ => self.fail(Reason::StreamCancelled, detail),
        }
    }

    /// The host cancelled: an interrupted end now means `stream_cancelled`.
    pub(crate) fn cancel(&mut self) {
        self.cancelled = true;
    }

    /// Feeds chunk `seq` of `bytes` bytes (its params as received).
    pub(crate) fn chunk(&mut self, seq: u64, chunk: ProviderChunk, bytes: usize) -> Fed {
        let last_seq = match &self.phase {
            Phase::Finished(_) => return Fed::Dropped,
            Phase::Ending { end, .. } => Some(end.last_seq),
            Phase::Open => None,
        };
        if seq < self.next || self.held.contains_key(&seq) {
            return Fed::Duplicate;
        }
        if let Some(last) = last_seq
            && seq > last
        {
            self.finish(Outcome::failed(
                Reason::StreamGap,
                format!("chunk {seq} came after the end, whose lastSeq is {last}"),
            ));
            return Fed::Finished;
        }
        if seq - self.next >= self.window {
            self.finish(Outcome::failed(
                Reason::StreamGap,
                format!(
                    "chunk {seq} is beyond the {}-chunk reorder window (chunk {} is missing)",
                    self.window, self.next
                ),
            ));
            return Fed::Finished;
        }
        if seq != self.next {
            self.bytes += bytes;
            self.held.insert(seq, (chunk, bytes));
            return Fed::Held;
        }
        self.deliver(chunk, bytes);
        while !self.is_finished() {
            let Some((chunk, bytes)) = self.held.remove(&self.next) else {
                break;
            };
            self.bytes -= bytes;
            self.deliver(chunk, bytes);
        }
        if self.is_finished() {
            return Fed::Finished;
        }
        if self.settle() {
            return Fed::Finished;
        }
        Fed::Delivered
    }

    /// Feeds chunk `seq`, which was sent but whose params do not decode (dropped, §4): unless
    /// it is a duplicate or the stream finished, the stream fails with `protocol_error` and
    /// `detail` (which names the chunk, its type and why).
    pub(crate) fn refuse(&mut self, seq: u64, detail: String) -> Fed {
        if self.is_finished() {
            return Fed::Dropped;
        }
        if seq < self.next || self.held.contains_key(&seq) {
            return Fed::Duplicate;
        }
        self.finish(Outcome::failed(Reason::ProtocolError, detail));
        Fed::Finished
    }

    /// Appends one in-order chunk, or finishes on an `error` chunk (which is never read).
    fn deliver(&mut self, chunk: ProviderChunk, bytes: usize) {
        self.next += 1;
        if chunk.kind == ChunkType::Error {
            let (reason, detail) = match chunk.error {
                Some(error) => (error.code.reason(), error.message),
                None => (Reason::ProviderFailed, String::new()),
            };
            self.finish(Outcome::failed(reason, detail));
            return;
        }
        self.bytes += bytes;
        self.ready.push_back((chunk, bytes));
    }

    /// Feeds a `stream/end` received at `now`.
    pub(crate) fn end(&mut self, end: EndInfo, now: Instant) -> Fed {
        match &self.phase {
            Phase::Finished(_) => return Fed::Dropped,
            Phase::Ending { end: first, .. } => {
                if *first == end {
                    return Fed::Duplicate;
                }
                let detail = format!(
                    "a second stream/end (lastSeq {}) conflicts with the first (lastSeq {})",
                    end.last_seq, first.last_seq
                );
                self.finish(Outcome::failed(Reason::ProviderInterrupted, detail));
                return Fed::Finished;
            }
            Phase::Open => {}
        }
        let highest = self
            .held
            .last_key_value()
            .map_or(self.next - 1, |(seq, _)| *seq);
        if highest > end.last_seq {
            self.finish(Outcome::failed(
                Reason::StreamGap,
                format!(
                    "chunk {highest} came before the end, whose lastSeq is {}",
                    end.last_seq
                ),
            ));
            return Fed::Finished;
        }
        self.phase = Phase::Ending {
            end,
            deadline: now + self.gap_timeout,
        };
        if self.settle() {
            Fed::Finished
        } else {
            Fed::Waiting
        }
    }

    /// Finishes with the end's outcome once every chunk up to its `lastSeq` is in.
    fn settle(&mut self) -> bool {
        let Phase::Ending { end, .. } = &self.phase else {
            return false;
        };
        if self.next <= end.last_seq {
            return false;
        }
        let outcome = if !end.error.is_empty() {
            Outcome::failed(Reason::ProviderFailed, end.error.clone())
        } else if let (true, Some(after)) = (end.interrupted, self.idled) {
            Outcome::Idle { after }
        } else if end.interrupted && self.cancelled {
            Outcome::failed(Reason::StreamCancelled, "the stream was cancelled")
        } else if end.interrupted {
            Outcome::failed(
                Reason::ProviderInterrupted,
                "the provider interrupted the stream",
            )
        } else {
            Outcome::Clean
        };
        self.finish(outcome);
        true
    }

    /// The clock: fails the stream with `stream_gap` when the end's deadline has passed with a
    /// chunk still missing; or, when nothing arrived for the idle bound while it was open (and
    /// not cancelled), marks it cancelled as idle ([`went_idle`](Self::went_idle): the caller
    /// sends the cancel). `true` when either happened.
    pub(crate) fn expire(&mut self, now: Instant) -> bool {
        let (end, deadline) = match &self.phase {
            Phase::Ending { end, deadline } => (end, *deadline),
            Phase::Open => {
                let Some(idle) = self.idle.filter(|_| !self.cancelled) else {
                    return false;
                };
                if now < idle.heard_at + idle.timeout {
                    return false;
                }
                self.idled = Some(idle.timeout);
                self.cancelled = true;
                return true;
            }
            Phase::Finished(_) => return false,
        };
        if now < deadline {
            return false;
        }
        let detail = format!(
            "chunk {} of {} was still missing {} ms after the end",
            self.next,
            end.last_seq,
            self.gap_timeout.as_millis()
        );
        self.finish(Outcome::failed(Reason::StreamGap, detail));
        true
    }

    /// Fails the stream from the host's side (a crash, a cancel whose wait is over); nothing
    /// happens if it already finished.
    pub(crate) fn fail(&mut self, reason: Reason, detail: impl Into<String>) {
        if !self.is_finished() {
            self.finish(Outcome::failed(reason, detail));
        }
    }

    fn finish(&mut self, outcome: Outcome) {
        for (_, (_, bytes)) in std::mem::take(&mut self.held) {
            self.bytes -= bytes;
        }
        self.phase = Phase::Finished(Some(outcome));
    }

    /// Forgets everything buffered (the application will read nothing more).
    pub(crate) fn discard(&mut self) {
        self.held.clear();
        self.ready.clear();
        self.bytes = 0;
    }

    /// The next thing to read, or `None` while there is none yet (or after the outcome).
    pub(crate) fn next(&mut self) -> Option<Next> {
        if let Some((chunk, bytes)) = self.ready.pop_front() {
            self.bytes -= bytes;
            return Some(Next::Chunk(chunk));
        }
        match &mut self.phase {
            Phase::Finished(outcome) => outcome.take().map(Next::End),
            _ => None,
        }
    }
}
