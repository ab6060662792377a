//! The streams of one connection: the table the connection's notification handlers feed (on the
//! jsonrpc driver, in arrival order) and its [`ProviderStream`]s read, the inbound queue bound of
//! §2.4/§14.5 (count and bytes, over all of the connection's streams), and cancellation.
//!
//! One mutex guards the whole table: a chunk takes it once on the driver, a read takes it once
//! on the application's task; neither waits for anything while holding it.
//!
//! Cancels go through a channel the connection owns, served by one task per connection (started
//! with the connection, on the caller's runtime), rather than through
//! `tokio::runtime::Handle::try_current()`: a [`ProviderStream`] may be dropped on any thread,
//! inside a runtime or not, and must still cancel. A stream sends at most one cancel and a
//! connection holds at most [`MAX_STREAMS`] streams, so the channel (twice that) is not found
//! full in practice; when it is, or when the connection is gone, the cancel's wait is over at
//! once (it is best-effort).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::value::RawValue;
use sidewire_ext_protocol::{
    Method, ProtocolProfile, ProviderChunk, Reason, STREAM_REORDER_WINDOW, StreamCancelParams,
    StreamChunkParams, StreamEndParams, decode_params, v2,
};
use sidewire_jsonrpc::{CallOptions, Peer};
use tokio::sync::{OwnedRwLockReadGuard, mpsc};
use tokio::time::{Instant, Sleep};

use super::reorder::{EndInfo, Fed, Next, Outcome, Reorder};
use crate::conn::Connection;
use crate::error::{Error, ProviderFailure};
use crate::text::{escape_cut, quote_cut};
use crate::util::lock;

/// At most this many stream chunks wait per connection: delivered to a stream and not read by
/// the application yet, plus out-of-order ones; one more fails the connection (§14.5: ordered
/// data is never dropped for lack of space).
///
/// The spec's inbound queue of 256 (§2.4) holds notifications read but not yet *handled*; this
/// host handles each one on the jsonrpc driver as it is read (decoded and routed into its
/// stream's buffer), so that queue never holds more than the frame in hand. What can pile up is
/// what a stream holds for an application that reads more slowly than a local provider writes
/// (a word-by-word echo of a long prompt is a burst of thousands of small chunks), and a bound
/// of 256 there failed such connections in ordinary use; hence a count large enough for bursts,
/// with [`QUEUE_BYTES`] as the memory bound.
pub(crate) const QUEUE_FRAMES: usize = 65_536;
/// At most this many bytes of stream chunks wait per connection (each counted as its params'
/// size as received plus [`CHUNK_OVERHEAD`], the memory a decoded chunk takes beyond its text);
/// more fail the connection. The count alone would allow 65,536 frames of 8 MiB.
pub(crate) const QUEUE_BYTES: usize = 32 * 1024 * 1024;
/// What one buffered chunk costs beyond its params' text: the decoded [`ProviderChunk`] and its
/// place in the queue.
pub(crate) const CHUNK_OVERHEAD: usize = std::mem::size_of::<ProviderChunk>() + 32;
/// At most this many streams are open per connection (until read to the end, or dropped and
/// their cancel's wait over); one more open fails locally with `provider_failed`.
pub(crate) const MAX_STREAMS: usize = 64;

/// Why a connection must fail: its inbound stream queue overflowed.
#[derive(Debug)]
pub(crate) struct Overflow(pub(crate) String);

struct Entry {
    reorder: Reorder,
    waker: Option<Waker>,
    /// The application dropped its stream before the end: nothing is kept for it any more, and
    /// the entry goes once the stream ends or its cancel's wait is over.
    abandoned: bool,
    cancel_sent: bool,
}

impl Entry {
    fn wake(&mut self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
}

#[derive(Default)]
struct Table {
    entries: HashMap<String, Entry>,
    /// The sum of the entries' buffered chunks and bytes.
    buffered: usize,
    bytes: usize,
    minted: u64,
    /// The connection is gone: no new stream is registered.
    closed: bool,
}

impl Table {
    /// Runs `f` on the entry of `id`, keeping the connection's totals in step.
    fn with<R>(&mut self, id: &str, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
        let entry = self.entries.get_mut(id)?;
        let (count, bytes) = (entry.reorder.buffered(), entry.reorder.buffered_bytes());
        let result = f(entry);
        self.buffered = self.buffered + entry.reorder.buffered() - count;
        self.bytes = self.bytes + entry.reorder.buffered_bytes() - bytes;
        Some(result)
    }

    fn remove(&mut self, id: &str) {
        if let Some(entry) = self.entries.remove(id) {
            self.buffered -= entry.reorder.buffered();
            self.bytes -= entry.reorder.buffered_bytes();
        }
    }
}

/// What a read found.
#[allow(clippy::large_enum_variant)] // Moved once per chunk, never stored: boxing adds an allocation.
pub(crate) enum Polled {
    Item(Next),
    /// Nothing yet; wake at the deadline, if any, to fail a gap.
    Pending(Option<Instant>),
    /// The entry is gone.
    Gone,
}

/// The streams of one connection.
pub(crate) struct Streams {
    table: Mutex<Table>,
    cancels: mpsc::Sender<String>,
    gap_timeout: Duration,
    /// The connection's profile: which `stream/chunk` member set is decoded (spec delta
    /// §2.11).
    profile: ProtocolProfile,
    /// The generation the sidecar was told at its handshake. On a v2 connection a chunk
    /// naming an older one names a superseded generation and is dropped.
    generation: u64,
}

impl std::fmt::Debug for Streams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let table = lock(&self.table);
        f.debug_struct("Streams")
            .field("open", &table.entries.len())
            .field("buffered", &table.buffered)
            .finish_non_exhaustive()
    }
}

/// At most this many characters of why a chunk was refused are quoted in the failure.
const MAX_REFUSAL_CHARS: usize = 240;
/// At most this many characters of a refused chunk's `type` are quoted.
const MAX_TYPE_CHARS: usize = 40;

/// What can still be read of a `stream/chunk` whose params do not decode: the stream and the
/// `seq` it names, and its chunk's `type` as sent (quoted, escaped and cut to
/// [`MAX_TYPE_CHARS`]). Members are read leniently (others ignored); a repeated one, a missing
/// `streamId` or `seq`, or one of the wrong type names nothing.
struct NamedChunk {
    stream_id: String,
    seq: u64,
    kind: String,
}

impl NamedChunk {
    fn read(text: &str) -> Option<NamedChunk> {
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            #[serde(rename = "streamId")]
            stream_id: String,
            seq: u64,
            #[serde(borrow, default)]
            chunk: Option<&'a RawValue>,
        }
        #[derive(serde::Deserialize)]
        struct Chunk<'a> {
            #[serde(rename = "type", borrow, default)]
            kind: Option<&'a RawValue>,
        }
        let params: Params<'_> = serde_json::from_str(text).ok()?;
        let kind = params
            .chunk
            .and_then(|chunk| serde_json::from_str::<Chunk<'_>>(chunk.get()).ok())
            .and_then(|chunk| chunk.kind)
            .map_or_else(
                || "absent".to_owned(),
                |kind| match serde_json::from_str::<String>(kind.get()) {
                    Ok(name) => quote_cut(&name, MAX_TYPE_CHARS),
                    // Not a string: the JSON as sent.
                    Err(_) => quote_cut(kind.get(), MAX_TYPE_CHARS),
                },
            );
        Some(NamedChunk {
            stream_id: params.stream_id,
            seq: params.seq,
            kind,
        })
    }
}

/// The receiving end of a connection's cancels, for [`run_cancels`].
pub(crate) type Cancels = mpsc::Receiver<String>;

impl Streams {
    pub(crate) fn new(
        gap_timeout: Duration,
        profile: ProtocolProfile,
        generation: u64,
    ) -> (Arc<Streams>, Cancels) {
        // Twice the streams: a finished stream's cancel may still wait in the channel while a
        // new stream takes its place.
        let (cancels, rx) = mpsc::channel(2 * MAX_STREAMS);
        let streams = Streams {
            table: Mutex::new(Table::default()),
            cancels,
            gap_timeout,
            profile,
            generation,
        };
        (Arc::new(streams), rx)
    }

    /// How many streams have an entry (for tests and diagnostics).
    pub(crate) fn open(&self) -> usize {
        lock(&self.table).entries.len()
    }

    /// Mints a stream id and registers its state, before the open is written (chunks may
    /// arrive before the open's answer), with `idle_timeout` as its idle bound. `Err` when the
    /// connection is gone or at its cap.
    pub(crate) fn register(&self, idle_timeout: Duration) -> Result<String, Reason> {
        let mut table = lock(&self.table);
        if table.closed {
            return Err(Reason::ProviderInterrupted);
        }
        if table.entries.len() >= MAX_STREAMS {
            return Err(Reason::ProviderFailed);
        }
        table.minted += 1;
        let id = format!("s{}", table.minted);
        let entry = Entry {
            reorder: Reorder::new(0, STREAM_REORDER_WINDOW, self.gap_timeout)
                .with_idle_timeout(idle_timeout, Instant::now()),
            waker: None,
            abandoned: false,
            cancel_sent: false,
        };
        table.entries.insert(id.clone(), entry);
        Ok(id)
    }

    /// The open of `id` was accepted: its idle bound counts from now (the open's own deadline
    /// covered the wait for its answer).
    pub(crate) fn opened(&self, id: &str) {
        lock(&self.table).with(id, |entry| entry.reorder.heard(Instant::now()));
    }

    /// Forgets a stream whose open failed.
    pub(crate) fn forget(&self, id: &str) {
        lock(&self.table).remove(id);
    }

    /// `extension/provider/stream/chunk`, on the driver. Params that do not decode drop the
    /// notification (§4); when they still name a stream and a `seq`, that stream fails with
    /// `protocol_error` saying which chunk, its type and why (it could only have ended as a
    /// gap later, naming neither). `Err` when the connection's queue overflowed.
    pub(crate) fn on_chunk(&self, params: Option<&RawValue>) -> Result<(), Overflow> {
        let text = params.map_or("{}", RawValue::get);
        let decoded = match self.profile {
            ProtocolProfile::V2 => decode_params::<v2::StreamChunkParams>(Some(text)).map(|v2| {
                let generation = v2.generation();
                (v2.common(), generation)
            }),
            _ => decode_params::<StreamChunkParams>(Some(text)).map(|v1| (v1, None)),
        };
        let chunk = match decoded {
            Ok((chunk, None)) => chunk,
            Ok((chunk, Some(generation))) if generation >= self.generation => chunk,
            Ok((chunk, Some(generation))) => {
                // Spec delta §2.11: a chunk of a superseded generation is dropped (a missing
                // seq then fails the stream as a gap).
                tracing::debug!(
                    stream = chunk.stream_id,
                    seq = chunk.seq,
                    generation,
                    "dropped a chunk of a superseded generation"
                );
                return Ok(());
            }
            Err(err) => {
                self.on_invalid_chunk(text, &err);
                return Ok(());
            }
        };
        let mut table = lock(&self.table);
        let fed = table.with(&chunk.stream_id, |entry| {
            if entry.abandoned {
                return Fed::Dropped;
            }
            let fed = entry
                .reorder
                .chunk(chunk.seq, chunk.chunk, text.len() + CHUNK_OVERHEAD);
            if matches!(fed, Fed::Delivered | Fed::Held) {
                // Something new arrived: the idle bound counts from here.
                entry.reorder.heard(Instant::now());
            }
            if matches!(fed, Fed::Delivered | Fed::Finished) {
                entry.wake();
            }
            fed
        });
        if fed.is_none() {
            tracing::debug!(
                stream = chunk.stream_id,
                "dropped a chunk of an unknown stream"
            );
        }
        if table.buffered > QUEUE_FRAMES {
            return Err(Overflow(format!(
                "its provider streams overflowed the inbound queue ({QUEUE_FRAMES} \
                 chunks not yet read)"
            )));
        }
        if table.bytes > QUEUE_BYTES {
            return Err(Overflow(format!(
                "its provider streams overflowed the inbound queue ({} MiB not yet read)",
                QUEUE_BYTES >> 20
            )));
        }
        Ok(())
    }

    /// A `stream/chunk` whose params failed strict decoding with `err`: dropped (§4), and the
    /// stream it names, if it can still be read, fails naming the chunk.
    fn on_invalid_chunk(&self, text: &str, err: &sidewire_ext_protocol::Error) {
        let Some(named) = NamedChunk::read(text) else {
            tracing::debug!(%err, "dropped a stream/chunk whose params do not decode");
            return;
        };
        let detail = format!(
            "chunk {} (type {}) was refused: {}",
            named.seq,
            named.kind,
            escape_cut(&err.to_string(), MAX_REFUSAL_CHARS)
        );
        let mut table = lock(&self.table);
        let fed = table.with(&named.stream_id, |entry| {
            if entry.abandoned {
                return Fed::Dropped;
            }
            let fed = entry.reorder.refuse(named.seq, detail);
            if fed == Fed::Finished {
                entry.wake();
            }
            fed
        });
        if fed != Some(Fed::Finished) {
            tracing::debug!(%err, "dropped a stream/chunk whose params do not decode");
        }
    }

    /// `extension/provider/stream/end`, on the driver.
    pub(crate) fn on_end(&self, params: Option<&RawValue>) {
        let end = match decode_params::<StreamEndParams>(params.map(RawValue::get)) {
            Ok(end) => end,
            Err(err) => {
                tracing::debug!(%err, "dropped a stream/end whose params do not decode");
                return;
            }
        };
        let info = EndInfo {
            last_seq: end.last_seq,
            error: end.error,
            interrupted: end.interrupted.unwrap_or(false),
        };
        let mut table = lock(&self.table);
        let abandoned = table.with(&end.stream_id, |entry| {
            if entry.abandoned {
                return true;
            }
            if entry.reorder.end(info, Instant::now()) != Fed::Duplicate {
                entry.wake();
            }
            false
        });
        if abandoned == Some(true) {
            table.remove(&end.stream_id);
        }
    }

    /// Fails every stream (the connection crashed or is shutting down) and refuses new ones.
    pub(crate) fn fail_all(&self, reason: Reason, detail: &str) {
        let mut table = lock(&self.table);
        table.closed = true;
        let ids: Vec<String> = table.entries.keys().cloned().collect();
        for id in ids {
            let abandoned = table.with(&id, |entry| {
                entry.reorder.fail(reason, detail);
                entry.wake();
                entry.abandoned
            });
            if abandoned == Some(true) {
                table.remove(&id);
            }
        }
    }

    /// The cancel of `id` was answered, or its wait is over.
    fn cancel_done(&self, id: &str) {
        let mut table = lock(&self.table);
        let abandoned = table.with(id, |entry| {
            entry.reorder.cancel_over(
                "the stream was cancelled (the sidecar did not end it within the cancel wait)",
            );
            entry.wake();
            entry.abandoned
        });
        if abandoned == Some(true) {
            table.remove(id);
        }
    }

    /// Asks for a cancel of `id` unless the stream finished or one was asked already.
    fn cancel(&self, id: &str) {
        let mut table = lock(&self.table);
        let send = table.with(id, |entry| {
            if entry.reorder.is_finished() || entry.cancel_sent {
                return false;
            }
            entry.cancel_sent = true;
            entry.reorder.cancel();
            true
        });
        if send == Some(true) && self.cancels.try_send(id.to_owned()).is_err() {
            // The connection is gone (nobody can cancel, and nothing more will come), or the
            // channel is full, which its capacity makes all but impossible: the cancel is
            // best-effort, so its wait is over at once.
            table.with(id, |entry| {
                entry.reorder.cancel_over("the stream was cancelled");
                entry.wake();
            });
        }
    }

    /// The application dropped its stream.
    fn abandon(&self, id: &str) {
        let mut table = lock(&self.table);
        let Some(entry) = table.entries.get(id) else {
            return;
        };
        if entry.reorder.is_finished() {
            table.remove(id);
            return;
        }
        let send = table
            .with(id, |entry| {
                entry.reorder.discard();
                entry.abandoned = true;
                entry.waker = None;
                !std::mem::replace(&mut entry.cancel_sent, true)
            })
            .unwrap_or(false);
        if send && self.cancels.try_send(id.to_owned()).is_err() {
            table.remove(id);
        }
    }

    /// Reads the next item of `id`.
    fn poll(&self, id: &str, cx: &mut Context<'_>) -> Polled {
        let mut table = lock(&self.table);
        loop {
            let Some(step) = table.with(id, |entry| match entry.reorder.next() {
                Some(next) => Ok(next),
                None => Err(entry.reorder.deadline()),
            }) else {
                return Polled::Gone;
            };
            match step {
                Ok(next) => {
                    if matches!(next, Next::End(_)) {
                        table.remove(id);
                    }
                    return Polled::Item(next);
                }
                Err(deadline) => {
                    let expired = deadline.is_some()
                        && table.with(id, |entry| entry.reorder.expire(Instant::now()))
                            == Some(true);
                    if expired {
                        // A stream that went idle is cancelled as an ordinary cancel is, and
                        // ends idle once that cancel is over: the sidecar is told before the
                        // reader moves on (and, say, shuts the host down).
                        let cancel = table.with(id, |entry| {
                            entry.reorder.went_idle()
                                && !std::mem::replace(&mut entry.cancel_sent, true)
                        });
                        if cancel == Some(true) && self.cancels.try_send(id.to_owned()).is_err() {
                            // As in `cancel`: best-effort, so the wait is over at once.
                            table.with(id, |entry| {
                                entry.reorder.cancel_over("the stream was cancelled");
                            });
                        }
                        continue;
                    }
                    table.with(id, |entry| entry.waker = Some(cx.waker().clone()));
                    return Polled::Pending(deadline);
                }
            }
        }
    }
}

/// Serves a connection's cancels until the connection is gone: each one is
/// `extension/provider/stream/cancel`, best-effort, with `timeout`; when it is answered or its
/// wait is over, a stream that has not ended ends with `stream_cancelled`, and a dropped one is
/// forgotten. Cancels run concurrently (at most [`MAX_STREAMS`] at once).
pub(crate) async fn run_cancels(
    streams: Weak<Streams>,
    peer: Peer,
    mut cancels: Cancels,
    timeout: Duration,
) {
    let mut pending = FuturesUnordered::new();
    loop {
        tokio::select! {
            id = cancels.recv() => {
                let Some(id) = id else { break };
                let peer = peer.clone();
                pending.push(async move {
                    let params = StreamCancelParams { stream_id: id.clone() };
                    let answer = peer
                        .call(
                            Method::StreamCancel.as_str(),
                            Some(&params),
                            CallOptions::timeout(timeout),
                        )
                        .await;
                    if let Err(err) = answer {
                        tracing::debug!(stream = id, %err, "stream/cancel not answered");
                    }
                    id
                });
            }
            Some(id) = pending.next(), if !pending.is_empty() => {
                match streams.upgrade() {
                    Some(streams) => streams.cancel_done(&id),
                    None => break,
                }
            }
        }
    }
}

/// A provider stream (§14.3) as the application reads it: a
/// [`Stream`](futures_core::Stream) of `Result<ProviderChunk, Error>`.
///
/// Chunks come in `seq` order, never an `error` chunk. A clean `stream/end` ends the stream
/// (`None`); any other outcome is exactly one `Err` and then `None`: its
/// [`Error::reason`] is `provider_failed` (an `end.error`, a refused open, an `error` chunk of
/// that code), `provider_interrupted` (an interrupted end, a crash, a conflicting second end),
/// `stream_cancelled` (after [`cancel`](Self::cancel)), `stream_gap` (a missing chunk),
/// `protocol_error` (a chunk whose params do not decode: the message names its `seq`, its type
/// and why) or `intercept_timeout` with [`Error::is_stream_idle`] (nothing new arrived within
/// the idle bound, [`StreamRequest::idle_timeout`](crate::StreamRequest::idle_timeout) or the
/// host's: the host cancelled it as [`cancel`](Self::cancel) does, and it ends when that cancel
/// is over).
///
/// Dropping it before the end cancels it (best-effort `extension/provider/stream/cancel`, 2 s);
/// dropping never needs a runtime. It keeps its turn's generation pinned while it lives.
pub struct ProviderStream {
    conn: Arc<Connection>,
    id: String,
    provider_ref: String,
    sleep: Option<Pin<Box<Sleep>>>,
    /// `sleep` fired and has not been re-armed since.
    fired: bool,
    done: bool,
    _turn: Arc<OwnedRwLockReadGuard<()>>,
}

impl std::fmt::Debug for ProviderStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderStream")
            .field("plugin", &self.conn.plugin.id)
            .field("stream_id", &self.id)
            .field("provider_ref", &self.provider_ref)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl ProviderStream {
    pub(crate) fn new(
        conn: Arc<Connection>,
        id: String,
        provider_ref: String,
        turn: Arc<OwnedRwLockReadGuard<()>>,
    ) -> Self {
        ProviderStream {
            conn,
            id,
            provider_ref,
            sleep: None,
            fired: false,
            done: false,
            _turn: turn,
        }
    }

    /// The host-minted stream id (unique per connection).
    pub fn stream_id(&self) -> &str {
        &self.id
    }

    /// The plugin serving it.
    pub fn plugin(&self) -> &str {
        &self.conn.plugin.id
    }

    /// The provider ref it was opened for.
    pub fn provider_ref(&self) -> &str {
        &self.provider_ref
    }

    /// Asks the sidecar to stop (best-effort `extension/provider/stream/cancel`, 2 s). The
    /// stream then ends with an `Err` whose reason is `stream_cancelled`, at the latest when
    /// the cancel's wait is over, or completes normally if its end was already in. Chunks
    /// delivered before the cancel may still be read first.
    pub fn cancel(&self) {
        if !self.done {
            self.conn.streams.cancel(&self.id);
        }
    }

    /// The open failed: forget the stream without cancelling it.
    pub(crate) fn opened_not(mut self) {
        self.conn.streams.forget(&self.id);
        self.done = true;
    }

    fn failure(&self, reason: Reason, detail: &str) -> Error {
        self.failed(reason, detail, None)
    }

    /// The failure of a stream that went idle: nothing arrived for `after`.
    fn idle_failure(&self, after: Duration) -> Error {
        let detail = format!(
            "nothing arrived for {} ms (its idle bound), so it was cancelled",
            after.as_millis()
        );
        self.failed(Reason::InterceptTimeout, &detail, Some(after))
    }

    fn failed(&self, reason: Reason, detail: &str, idle_timeout: Option<Duration>) -> Error {
        let plugin = &self.conn.plugin.id;
        let what = match reason {
            _ if idle_timeout.is_some() => "went idle",
            Reason::ProviderFailed => "failed",
            Reason::ProviderInterrupted => "was interrupted",
            Reason::StreamCancelled => "was cancelled",
            Reason::StreamGap => "has a gap",
            Reason::ProtocolError => "broke the protocol",
            _ => "failed",
        };
        let mut message = format!(
            "extension {plugin}: stream {} of provider {} {what}",
            self.id, self.provider_ref
        );
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(detail);
        }
        Error::Provider(Box::new(ProviderFailure {
            plugin: Some(plugin.clone()),
            provider_ref: self.provider_ref.clone(),
            reason,
            message: self.conn.shared.redact(&message),
            idle_timeout,
        }))
    }
}

impl futures_core::Stream for ProviderStream {
    type Item = Result<ProviderChunk, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match this.conn.streams.poll(&this.id, cx) {
                Polled::Item(Next::Chunk(chunk)) => return Poll::Ready(Some(Ok(chunk))),
                Polled::Item(Next::End(Outcome::Clean)) => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Polled::Item(Next::End(Outcome::Failed { reason, detail })) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(this.failure(reason, &detail))));
                }
                Polled::Item(Next::End(Outcome::Idle { after })) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(this.idle_failure(after))));
                }
                Polled::Gone => {
                    this.done = true;
                    return Poll::Ready(Some(Err(
                        this.failure(Reason::ProviderInterrupted, "the stream is gone")
                    )));
                }
                Polled::Pending(None) => {
                    this.sleep = None;
                    this.fired = false;
                    return Poll::Pending;
                }
                Polled::Pending(Some(deadline)) => {
                    let sleep = this
                        .sleep
                        .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                    // Each new chunk moves the idle deadline later. A later deadline is taken
                    // up only once the armed one has fired (reading again then finds it not
                    // due yet), so a busy stream re-arms its timer about once per idle bound,
                    // not once per chunk; an earlier one (the gap's) is armed at once.
                    if deadline < sleep.deadline() || (this.fired && deadline != sleep.deadline()) {
                        sleep.as_mut().reset(deadline);
                        this.fired = false;
                    }
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.fired = true;
                    // The deadline passed: read again, which fails the gap or the idle stream
                    // if its deadline is really due.
                }
            }
        }
    }
}

impl Drop for ProviderStream {
    fn drop(&mut self) {
        if !self.done {
            self.conn.streams.abandon(&self.id);
        }
    }
}
