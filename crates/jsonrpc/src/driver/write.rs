//! The driver's write side: the queue of frames waiting for the writer, the two lanes the
//! handles feed it from (ordinary and background), and the stall bound on every write.
//!
//! The queue coalesces: everything queued is written, then flushed once. Its high-water mark
//! (in frames and in bytes) is what stops the reader and the ordinary lane, so a peer that does
//! not read its responses slows down instead of growing our memory. Background frames are taken
//! only below a low-water mark, which is what lets requests overtake a flood of them.
//!
//! The sink lives in a [`WriterCell`] that the handles share: a caller whose request finds the
//! writer idle writes its frame itself ([`DirectWrite`]), so the driver's task is not woken
//! just to pass a frame on (one task poll and one scheduler turn less per call). The driver
//! holds the cell's lock for the whole of its poll and says, when it lets go, whether the
//! writer is idle: everything it took from the lanes written and flushed, the connection open.
//! A caller writes only then, only with the cell's lock (`try_lock`: a caller never waits for
//! the driver), and only when the ordinary lane is empty; so a frame never overtakes one the
//! same task queued before it. Anything else, and the frame takes the ordinary lane as before.
//! One caller writes per poll of the driver: the others of a burst (32 calls issued at once)
//! take the lane, so the driver still writes them together, with one system call.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
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

    /// A caller handed the sink a frame it could not flush at once: the next write flushes.
    fn mark_unflushed(&mut self) {
        self.unflushed = true;
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

/// The sink, shared between the driver and the handles (see the module docs).
pub(crate) struct WriterCell<K>(Mutex<Writer<K>>);

/// What the cell guards.
pub(super) struct Writer<K> {
    /// `None` once the driver is dropped: the sink (a pipe, say) closes with the driver, not
    /// with the last handle.
    sink: Option<K>,
    /// Set by the driver when it lets go of the cell: a caller may write (one caller: the
    /// write clears it).
    idle: bool,
    /// The driver's waker, to finish a caller's write (a flush the sink held up) or to close
    /// on its error. Dropped with the sink, so it holds no task alive.
    waker: Option<Waker>,
    /// A caller's frame the sink took but did not flush yet.
    unflushed: bool,
    /// A caller's write failed: the driver closes with this.
    failed: Option<CloseReason>,
}

impl<K> WriterCell<K> {
    pub(crate) fn new(sink: K) -> Self {
        WriterCell(Mutex::new(Writer {
            sink: Some(sink),
            idle: false,
            waker: None,
            unflushed: false,
            failed: None,
        }))
    }

    /// The driver's hold on the cell, for one poll.
    pub(super) fn hold(&self) -> MutexGuard<'_, Writer<K>> {
        crate::lock(&self.0)
    }

    /// The driver is gone: the sink closes now, and nobody writes again.
    pub(super) fn release(&self) {
        let (sink, waker) = {
            let mut writer = self.hold();
            writer.idle = false;
            (writer.sink.take(), writer.waker.take())
        };
        drop((sink, waker));
    }
}

impl<K> Writer<K> {
    /// The start of a driver's poll: its waker is kept, and what callers did since the last
    /// poll is taken over (`Err`: a caller's write failed).
    pub(super) fn enter(
        &mut self,
        cx: &Context<'_>,
        writes: &mut WriteQueue,
    ) -> Result<(), CloseReason> {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.waker = Some(cx.waker().clone());
        }
        self.idle = false;
        if std::mem::take(&mut self.unflushed) {
            writes.mark_unflushed();
        }
        match self.failed.take() {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// The end of a driver's poll: whether a caller may write until the next one.
    pub(super) fn leave(&mut self, idle: bool) {
        self.idle = idle;
    }

    /// The sink, while the driver lives.
    pub(super) fn sink(&mut self) -> Option<&mut K> {
        self.sink.as_mut()
    }

    /// Records a caller's failed write and wakes the driver to close.
    fn fail(&mut self, err: sidewire_framing::Error) {
        self.failed = Some(io_reason(err));
        self.idle = false;
        if let Some(waker) = &self.waker {
            waker.wake_by_ref();
        }
    }
}

/// A caller's way to the sink, without the sink's type.
pub(crate) trait DirectWrite: Send + Sync {
    /// Writes `frame` now if the writer is idle and nothing waits on the ordinary lane `lane`;
    /// gives the frame back otherwise. Never waits.
    fn try_write(&self, frame: Bytes, lane: &mpsc::Sender<Outbound>) -> Result<(), Bytes>;
}

impl<K, F> DirectWrite for WriterCell<K>
where
    K: Sink<Bytes, Error = F> + Unpin + Send,
    F: Into<sidewire_framing::Error>,
{
    fn try_write(&self, frame: Bytes, lane: &mpsc::Sender<Outbound>) -> Result<(), Bytes> {
        // A poisoned cell: the driver panicked mid-poll; the lane path reports the close.
        let Ok(mut writer) = self.0.try_lock() else {
            return Err(frame);
        };
        let writer = &mut *writer;
        // Checked under the lock the driver holds while it moves frames from the lane to the
        // sink: an empty lane and an idle writer mean every frame queued before is written.
        if !writer.idle || lane.capacity() != lane.max_capacity() {
            return Err(frame);
        }
        let (Some(sink), Some(waker)) = (writer.sink.as_mut(), writer.waker.as_ref()) else {
            return Err(frame);
        };
        // The driver's waker: a sink that holds the write up wakes the driver, which finishes
        // it under its stall bound.
        let mut cx = Context::from_waker(waker);
        match Pin::new(&mut *sink).poll_ready(&mut cx) {
            Poll::Ready(Ok(())) => {}
            // Not ready, or failed: the driver sees to it when the lane wakes it.
            Poll::Ready(Err(_)) | Poll::Pending => return Err(frame),
        }
        if let Err(err) = Pin::new(&mut *sink).start_send(frame) {
            writer.fail(err.into());
            return Ok(());
        }
        // One frame per poll of the driver: the requests a burst of callers sends before the
        // driver runs again take the lane, and the driver writes them with one system call.
        writer.idle = false;
        match Pin::new(&mut *sink).poll_flush(&mut cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(err)) => writer.fail(err.into()),
            Poll::Pending => {
                writer.unflushed = true;
                waker.wake_by_ref();
            }
        }
        Ok(())
    }
}

/// A lane's receiver, and the waker it is known to hold.
///
/// The driver polls both lanes on each of its polls (twice a request), and they are nearly
/// always empty: a caller that finds the writer idle writes its own frame. A receive on an
/// empty channel still spends the task's budget, registers the waker and looks twice (about
/// 200 instructions). `registered` is `Some` only while the channel holds a clone of the waker
/// it names, for certain: the last receive returned `Pending` with budget left (tokio's
/// receive returns `Pending` without registering when the budget is spent) and nothing was
/// taken since. A send wakes that waker after making the lane non-empty, so while the lane is
/// empty, open, and polled with the same waker, `Pending` is the answer without the receive.
struct Lane<T> {
    rx: mpsc::Receiver<T>,
    registered: Option<Registered>,
}

/// The waker a receive registered: the one the poll was given, by identity (its data and
/// vtable), since a clone may carry another vtable (tokio's `block_on` waker does, so
/// `Waker::will_wake` never holds between it and its clone), and a clone of it, which keeps
/// its data alive so that the identity cannot pass to another waker (a clone shares its
/// original's data for every `Arc`-based waker: tokio's, `futures`', std's `Wake`).
struct Registered {
    data: usize,
    vtable: usize,
    _alive: Waker,
}

impl Registered {
    fn new(waker: &Waker) -> Self {
        let (data, vtable) = Self::identity(waker);
        Registered {
            data,
            vtable,
            _alive: waker.clone(),
        }
    }

    fn identity(waker: &Waker) -> (usize, usize) {
        (
            waker.data() as usize,
            std::ptr::from_ref(waker.vtable()) as usize,
        )
    }

    fn is(&self, waker: &Waker) -> bool {
        Self::identity(waker) == (self.data, self.vtable)
    }
}

impl<T> Lane<T> {
    fn new(rx: mpsc::Receiver<T>) -> Self {
        Lane {
            rx,
            registered: None,
        }
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(registered) = &self.registered
            && registered.is(cx.waker())
            && self.rx.is_empty()
            && !self.rx.is_closed()
        {
            return Poll::Pending;
        }
        let budget = tokio::task::coop::has_budget_remaining();
        let poll = self.rx.poll_recv(cx);
        match poll {
            Poll::Pending if budget => {
                if !self
                    .registered
                    .as_ref()
                    .is_some_and(|registered| registered.is(cx.waker()))
                {
                    self.registered = Some(Registered::new(cx.waker()));
                }
            }
            _ => self.registered = None,
        }
        poll
    }

    fn try_recv(&mut self) -> Result<T, mpsc::error::TryRecvError> {
        let taken = self.rx.try_recv();
        if taken.is_ok() {
            self.registered = None;
        }
        taken
    }

    fn close(&mut self) {
        self.rx.close();
        self.registered = None;
    }
}

/// The two queues the handles feed the writer from.
pub(crate) struct Lanes {
    outbound: Lane<Outbound>,
    background: Lane<Background>,
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
            outbound: Lane::new(outbound),
            background: Lane::new(background),
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

#[cfg(test)]
mod tests;
