//! The driver's write side: the queue of frames waiting for the writer, the two lanes the
//! handles feed it from (ordinary and background), and the stall bound on every write.
//!
//! The queue coalesces: everything queued is written, then flushed once. Its high-water mark
//! (in frames and in bytes) is what stops the reader and the ordinary lane, so a peer that does
//! not read its responses slows down instead of growing our memory. Background frames are taken
//! only below a low-water mark, which is what lets requests overtake a flood of them.
//!
//! The driver is the only writer: every frame the handles send reaches the sink through one of
//! the two lanes, and a send wakes the driver through tokio's `mpsc` (its documented contract:
//! a receive that returns `Pending` registers the task's waker, and a send wakes it).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Sink;
use tokio::sync::mpsc;
use tokio::time::Sleep;

use super::Phase;
use crate::CloseReason;
use crate::peer::{Background, Outbound};

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

/// Frames waiting for the sink, and the state of the write under way.
pub(super) struct WriteQueue {
    frames: VecDeque<Bytes>,
    /// The bytes in `frames`.
    bytes: usize,
    /// Frames were handed to the sink since its last flush.
    unflushed: bool,
    /// Runs from the last progress while the sink holds a write up.
    stall: Option<Pin<Box<Sleep>>>,
    bound: Duration,
}

impl WriteQueue {
    pub(super) fn new(stall_bound: Duration) -> Self {
        WriteQueue {
            frames: VecDeque::new(),
            bytes: 0,
            unflushed: false,
            stall: None,
            bound: stall_bound,
        }
    }

    pub(super) fn push(&mut self, frame: Bytes) {
        self.bytes += frame.len();
        self.frames.push_back(frame);
    }

    pub(super) fn len(&self) -> usize {
        self.frames.len()
    }

    /// Over the high-water mark: the reader and the ordinary lane wait.
    pub(super) fn is_full(&self) -> bool {
        self.frames.len() >= WRITE_HIGH_WATER || self.bytes >= WRITE_HIGH_WATER_BYTES
    }

    /// Below the background lane's low-water mark.
    fn takes_background(&self) -> bool {
        self.bytes < BACKGROUND_LOW_WATER_BYTES && !self.is_full()
    }

    /// Everything queued is written and flushed.
    pub(super) fn is_idle(&self) -> bool {
        self.frames.is_empty() && !self.unflushed
    }

    /// Drops everything not written yet (after a fatal error nothing more is written).
    pub(super) fn clear(&mut self) {
        self.frames.clear();
        self.bytes = 0;
        self.unflushed = false;
    }

    /// Writes everything queued, then flushes once. `Err` when the sink failed or stalled.
    pub(super) fn poll_write<K, F>(
        &mut self,
        sink: &mut K,
        cx: &mut Context<'_>,
    ) -> Result<(), CloseReason>
    where
        K: Sink<Bytes, Error = F> + Unpin,
        F: Into<sidewire_framing::Error>,
    {
        let mut progress = false;
        while !self.frames.is_empty() {
            match Pin::new(&mut *sink).poll_ready(cx) {
                Poll::Ready(Ok(())) => {
                    let frame = self.frames.pop_front().expect("checked non-empty");
                    self.bytes -= frame.len();
                    Pin::new(&mut *sink)
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
            match Pin::new(&mut *sink).poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    self.unflushed = false;
                    progress = true;
                }
                Poll::Ready(Err(err)) => return Err(io_reason(err.into())),
                Poll::Pending => {}
            }
        }
        if progress || self.is_idle() {
            self.stall = None;
        }
        if self.is_idle() {
            return Ok(());
        }
        // The sink still holds us up: the stall bound runs from the last progress.
        if self.stall_fired(cx) {
            return Err(CloseReason::WriteStall(self.bound));
        }
        Ok(())
    }

    /// Closes the sink (for a pipe: the peer sees end of input), bounded by the stall timer
    /// like any write. Ready when the sink closed (or failed to) or the bound ran out.
    pub(super) fn poll_close<K: Sink<Bytes> + Unpin>(
        &mut self,
        sink: &mut K,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        match Pin::new(sink).poll_close(cx) {
            Poll::Ready(_) => Poll::Ready(()),
            Poll::Pending if self.stall_fired(cx) => Poll::Ready(()),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Arms the stall timer if needed and says whether it ran out.
    fn stall_fired(&mut self, cx: &mut Context<'_>) -> bool {
        let bound = self.bound;
        let timer = self
            .stall
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(bound)));
        timer.as_mut().poll(cx).is_ready()
    }
}

/// Why a failed write ended the connection: the peer's closed input is a hangup, not an I/O
/// failure on this side.
fn io_reason(err: sidewire_framing::Error) -> CloseReason {
    use std::io::ErrorKind;
    match &err {
        sidewire_framing::Error::Io(io)
            if matches!(
                io.kind(),
                ErrorKind::BrokenPipe | ErrorKind::ConnectionReset
            ) =>
        {
            CloseReason::Hangup
        }
        _ => CloseReason::Io(err.to_string().into()),
    }
}

/// The two queues the handles feed the writer from.
pub(crate) struct Lanes {
    outbound: mpsc::Receiver<Outbound>,
    background: mpsc::Receiver<Background>,
    /// The background lane was left alone this round because the write queue was above its
    /// low-water mark; a write that drains it below the mark asks for another round.
    background_waiting: bool,
}

impl Lanes {
    pub(crate) fn new(
        outbound: mpsc::Receiver<Outbound>,
        background: mpsc::Receiver<Background>,
    ) -> Self {
        Lanes {
            outbound,
            background,
            background_waiting: false,
        }
    }

    /// Takes everything the handles have queued on the ordinary lane, without waiting. A
    /// shutdown request found there starts draining.
    pub(super) fn drain_outbound(&mut self, writes: &mut WriteQueue, phase: &mut Phase) {
        while let Ok(message) = self.outbound.try_recv() {
            take(message, writes, phase);
        }
    }

    /// Takes what the handles queued on the ordinary lane; `true` when it stopped at the write
    /// high-water mark (more may be ready), `false` when the lane said `Pending` or closed.
    pub(super) fn poll_outbound(
        &mut self,
        cx: &mut Context<'_>,
        writes: &mut WriteQueue,
        phase: &mut Phase,
    ) -> bool {
        loop {
            if writes.is_full() {
                return true;
            }
            match self.outbound.poll_recv(cx) {
                Poll::Ready(Some(message)) => take(message, writes, phase),
                Poll::Ready(None) | Poll::Pending => return false,
            }
        }
    }

    /// Takes background frames while the write queue is below its low-water mark, signalling
    /// the markers it reaches. Nothing it takes can be ready again before a write drains the
    /// queue, so it never asks for another round itself ([`background_ready`] does, after a
    /// write).
    ///
    /// [`background_ready`]: Lanes::background_ready
    pub(super) fn poll_background(&mut self, cx: &mut Context<'_>, writes: &mut WriteQueue) {
        self.background_waiting = false;
        loop {
            if !writes.takes_background() {
                self.background_waiting = true;
                return;
            }
            match self.background.poll_recv(cx) {
                Poll::Ready(Some(Background::Frame(frame))) => writes.push(frame),
                Poll::Ready(Some(Background::Marker(reached))) => {
                    // The waiter may have given up; then nobody needs the signal.
                    let _ = reached.send(());
                }
                Poll::Ready(None) | Poll::Pending => return,
            }
        }
    }

    /// The background lane waited for the write queue, and a write has drained it below the
    /// mark since: the lane may go on, in another round.
    pub(super) fn background_ready(&self, writes: &WriteQueue) -> bool {
        self.background_waiting && writes.takes_background()
    }

    /// Closes both lanes. Background frames not taken yet are dropped with the lane; a waiting
    /// marker's sender is dropped too, which tells its waiter the connection closed.
    pub(super) fn close(&mut self) {
        self.outbound.close();
        self.background.close();
        while self.background.try_recv().is_ok() {}
        self.background_waiting = false;
    }
}

/// One message from the ordinary lane.
fn take(message: Outbound, writes: &mut WriteQueue, phase: &mut Phase) {
    match message {
        Outbound::Frame(frame) => writes.push(frame),
        Outbound::Shutdown(grace) => phase.start_draining(grace),
    }
}
