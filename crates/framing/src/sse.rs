//! Server-Sent Events decoding (WHATWG event-stream rules) with a cap per event.
//!
//! The decoder keeps the current event block in the buffer until the blank line that dispatches
//! it, and parses each line into the pending event as soon as its line end arrives. Between
//! calls it remembers how far it has searched for a line end (`scanned`, so every byte is searched
//! once however the stream is split into reads), whether the last line ended in a CR whose LF may
//! still come in the next read, and whether it is discarding an oversized block. Like
//! [`NdjsonCodec`](crate::NdjsonCodec) it manages the capacity of the buffer it is handed: never
//! more than `cap + READ_CHUNK`, and a large allocation is given back after a large event.

use bytes::{Buf, Bytes, BytesMut};
use memchr::{memchr, memchr2};
use tokio_util::codec::Decoder;

use crate::{Error, PREFIX_BYTES, READ_CHUNK, SHRINK_AFTER};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The spare room the decoder keeps in its buffer after a call that found no complete event, so
/// the next read is never a tiny one (unless the cap leaves no more room).
const MIN_SPARE: usize = 8 * 1024;

/// One dispatched Server-Sent Event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field, or `"message"` when the event had none (or an empty one).
    pub event: String,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// The last event id in effect when this event was dispatched: the latest `id` field of this
    /// block or an earlier one. `None` when no id was ever set or the latest one was empty.
    pub id: Option<String>,
    /// A `retry` value (milliseconds) set inside this event's block, if any.
    pub retry: Option<u64>,
}

/// A decoder for `text/event-stream` bodies with a mandatory cap per event.
///
/// It follows the WHATWG event-stream interpretation: lines end in CRLF, CR or LF (a CR at the
/// end of one read and an LF at the start of the next are one line end); a line starting with
/// `:` is a comment; a line without a colon is a field name with an empty value; one space after
/// the colon is removed; the fields are `event`, `data` (several lines joined with `\n`), `id`
/// (ignored when it holds U+0000) and `retry` (ASCII digits only, otherwise ignored; a value too
/// large for `u64` saturates); unknown fields are ignored. A blank line dispatches the block: it
/// yields an [`SseEvent`] only when the block had a `data` line, but its `id` and `retry` take
/// effect either way. A UTF-8 byte-order mark is stripped at the very start of the stream only.
/// Text is decoded as UTF-8 with invalid sequences replaced by U+FFFD, as WHATWG prescribes.
///
/// # The cap
///
/// The bytes of one event block — all its lines and line ends, up to and including the blank
/// line that dispatches it — may not exceed `cap`. The event is dispatched as soon as that blank
/// line's line end is seen, so when it is a CRLF only its CR is counted (the LF may not even have
/// arrived yet). A single line longer than the cap is simply the same case. An oversized block is
/// reported once as [`Error::TooLarge`], with the first bytes of the block as `prefix`, as soon
/// as `cap` bytes of it have arrived without its blank line; the rest of the block is then
/// discarded up to that blank line, holding no more than one read chunk, and decoding resumes
/// with the next block. An oversized block has no effect at all: its `id` and `retry` are dropped
/// with it. The cap also bounds the decoded text: invalid UTF-8 grows by up to three times when
/// replaced by U+FFFD, so a block whose decoded `data`, `event` and `id` together would exceed
/// `cap` bytes is reported as [`Error::TooLarge`] the same way (valid UTF-8 never gets there).
///
/// Resuming after [`Error::TooLarge`] needs a driver that calls `decode` again after an error:
/// tokio-util's `FramedRead` ends the stream after any decoder error.
///
/// # End of input
///
/// WHATWG drops an event the stream ends in the middle of, before its blank line, and so does
/// [`decode_eof`](Decoder::decode_eof): it returns `Ok(None)`, never [`Error::Truncated`], and a
/// partial last line is dropped with the block. The one thing an unfinished block keeps is a
/// complete `retry` line, because WHATWG sets the reconnection time as soon as it reads the field
/// and the caller is about to reconnect; its `id` does not take effect, as WHATWG only moves the
/// last event id at dispatch. After `decode_eof` has returned `Ok(None)` the codec is ready for a
/// new stream and still knows [`last_event_id`](Self::last_event_id) and
/// [`retry`](Self::retry), so one codec can follow a stream across reconnections.
///
/// # Buffer
///
/// After any call that returns no event the buffer has spare room for a read, and its capacity
/// never exceeds [`buffer_bound`](Self::buffer_bound); after a block larger than 1 MiB the large
/// allocation is dropped. Drivers that read into the buffer's spare capacity (tokio-util's
/// `FramedRead`) therefore keep the bound; a driver that appends arbitrary amounts itself does
/// not. Field values are copied out of the buffer as their lines complete, while the block's raw
/// bytes stay in the buffer until dispatch, so at worst the codec holds about twice the cap.
#[derive(Debug, Clone)]
pub struct SseCodec {
    cap: usize,
    state: State,
    /// No byte of the stream has been looked at yet, so a BOM may still be stripped.
    stream_start: bool,
    /// The last line ended in a CR, so an LF right after it belongs to that line end. It stays
    /// set across calls when the CR was the last byte of a read.
    skip_lf: bool,
    /// Where the current line starts in the buffer; the current block starts at index 0.
    line_start: usize,
    /// Bytes at the front of the buffer already searched for a line end; the next search starts
    /// there. Without it a block arriving in N reads is searched N times (quadratic).
    scanned: usize,
    /// The fields of the current block so far, still as raw bytes.
    block: Block,
    last_event_id: Option<String>,
    retry: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the lines of a block.
    Lines,
    /// Throwing bytes away until the blank line that ends an oversized block. `line_nonempty`
    /// says that the current line already had bytes in an earlier read, so a line end at the
    /// start of the next read does not make a blank line.
    Discarding { line_nonempty: bool },
}

/// The fields of a block not yet dispatched. Values are kept as bytes and decoded once at
/// dispatch, so a block's memory never exceeds its raw size while it is being read.
#[derive(Debug, Clone, Default)]
struct Block {
    event: Vec<u8>,
    /// Every `data` value followed by `\n`, as WHATWG builds its data buffer.
    data: Vec<u8>,
    id: Option<Vec<u8>>,
    retry: Option<u64>,
}

impl Block {
    /// Applies one non-blank line.
    fn field(&mut self, line: &[u8]) {
        if line[0] == b':' {
            return;
        }
        let (name, value) = match memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            b"data" => {
                // Reserving the exact size keeps a one-line event to a single allocation.
                self.data.reserve(value.len() + 1);
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"id" if memchr(0, value).is_none() => self.id = Some(value.to_vec()),
            b"retry" => {
                if let Some(millis) = parse_retry(value) {
                    self.retry = Some(millis);
                }
            }
            _ => {}
        }
    }
}

/// The value of a `retry` field: one or more ASCII digits, saturating at `u64::MAX`.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(value.iter().fold(0u64, |millis, digit| {
        millis
            .saturating_mul(10)
            .saturating_add(u64::from(digit - b'0'))
    }))
}

/// Decodes UTF-8 with replacement, without a copy when the bytes are valid.
fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

impl SseCodec {
    /// A decoder whose event blocks are at most `cap` bytes, counting their line ends and the
    /// blank line that dispatches them.
    ///
    /// # Panics
    ///
    /// When `cap` is 0: not even the blank line that dispatches an event would fit.
    pub fn new(cap: usize) -> Self {
        assert!(
            cap > 0,
            "an SSE event cap must leave room for the blank line"
        );
        SseCodec {
            cap,
            state: State::Lines,
            stream_start: true,
            skip_lf: false,
            line_start: 0,
            scanned: 0,
            block: Block::default(),
            last_event_id: None,
            retry: None,
        }
    }

    /// The cap on one event block, in bytes.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// The most capacity the decoder lets its buffer have.
    pub fn buffer_bound(&self) -> usize {
        self.cap.saturating_add(READ_CHUNK)
    }

    /// The last event id set by a dispatched block, to send as `Last-Event-ID` when resuming.
    ///
    /// `None` when no block set one, or the latest one set it to the empty string.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection time in milliseconds the server asked for with its latest `retry`
    /// field, or `None` when it never sent one (the client then picks its own default).
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Forgets the current stream's partial state, keeping the last event id and retry.
    fn reset_stream(&mut self) {
        self.state = State::Lines;
        self.stream_start = true;
        self.skip_lf = false;
        self.line_start = 0;
        self.scanned = 0;
        self.block = Block::default();
    }

    /// Ends the block whose bytes (through its blank line's line end) are `raw`: commits its
    /// `id` and `retry` and builds its event, if it had data.
    fn dispatch(&mut self, raw: &[u8]) -> Option<Result<SseEvent, Error>> {
        let block = std::mem::take(&mut self.block);
        let mut data = text(block.data);
        let event = text(block.event);
        let id = block.id.map(text);
        let decoded = data.len() + event.len() + id.as_ref().map_or(0, String::len);
        if decoded > self.cap {
            return Some(Err(self.too_large_error(raw)));
        }
        if let Some(id) = id {
            self.last_event_id = Some(id).filter(|id| !id.is_empty());
        }
        if block.retry.is_some() {
            self.retry = block.retry;
        }
        // The data buffer ends in the `\n` appended after its last line; empty means no `data`
        // line at all, which WHATWG does not dispatch.
        data.pop()?;
        let event = if event.is_empty() {
            "message".to_owned()
        } else {
            event
        };
        Some(Ok(SseEvent {
            event,
            data,
            id: self.last_event_id.clone(),
            retry: block.retry,
        }))
    }

    fn too_large_error(&self, block: &[u8]) -> Error {
        Error::TooLarge {
            limit: self.cap,
            prefix: Bytes::copy_from_slice(&block[..block.len().min(PREFIX_BYTES)]),
        }
    }

    /// Handles a block that reached the cap without its blank line; `buf` holds at least `cap`
    /// bytes, all of them searched.
    fn too_large(&mut self, buf: &mut BytesMut) -> Error {
        let err = self.too_large_error(&buf[..self.cap]);
        // Discarding resumes where the search stopped. The line in progress there may already
        // have bytes, which keeps a line end right at that point from counting as a blank line.
        let resume = self.cap.max(self.line_start);
        self.state = State::Discarding {
            line_nonempty: self.line_start < resume,
        };
        self.line_start = 0;
        self.scanned = 0;
        self.block = Block::default();
        // Copy what follows into a small buffer: advancing would keep the cap-sized allocation
        // alive for the whole discard.
        let rest = &buf[resume..];
        let mut fresh = BytesMut::with_capacity(
            (rest.len() + MIN_SPARE)
                .min(self.buffer_bound())
                .max(rest.len()),
        );
        fresh.extend_from_slice(rest);
        *buf = fresh;
        err
    }

    /// Keeps spare room in `buf` for the next read without letting capacity pass the bound.
    fn make_room(&self, buf: &mut BytesMut) {
        let len = buf.len();
        let bound = self.buffer_bound();
        let wanted_spare = MIN_SPARE.min(bound.saturating_sub(len)).max(1);
        if buf.capacity() - len >= wanted_spare {
            return;
        }
        // Grow geometrically (so a block arriving in many small reads is copied O(1) times per
        // byte) but never past the bound; `BytesMut::reserve` would double past it.
        let target = len
            .saturating_mul(2)
            .max(len + READ_CHUNK)
            .min(bound)
            .max(len + 1);
        let mut fresh = BytesMut::with_capacity(target);
        fresh.extend_from_slice(buf);
        *buf = fresh;
    }
}

/// Drops the large allocation behind `buf` after a large block, keeping its contents.
fn release(buf: &mut BytesMut) {
    // `capacity()` only counts the room after the consumed block, so it cannot tell whether the
    // allocation is large; the caller knows it is.
    let mut fresh = BytesMut::with_capacity(buf.len().max(READ_CHUNK));
    fresh.extend_from_slice(buf);
    *buf = fresh;
}

impl Decoder for SseCodec {
    type Item = SseEvent;
    type Error = Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, Error> {
        if self.stream_start {
            if buf.len() < BOM.len() && BOM.starts_with(buf) {
                // Too few bytes to tell a BOM from text that merely starts like one.
                self.make_room(buf);
                return Ok(None);
            }
            if buf.starts_with(BOM) {
                buf.advance(BOM.len());
            }
            self.stream_start = false;
        }
        loop {
            if self.skip_lf && buf.len() > self.line_start {
                self.skip_lf = false;
                if buf[self.line_start] == b'\n' {
                    if self.line_start == 0 {
                        // The CR ended the previous block (or the discard), which is gone
                        // already: the LF belongs to no block.
                        buf.advance(1);
                    } else {
                        self.line_start += 1;
                    }
                }
            }
            match self.state {
                State::Discarding { line_nonempty } => match memchr2(b'\r', b'\n', buf) {
                    Some(at) => {
                        let blank = at == 0 && !line_nonempty;
                        self.skip_lf = buf[at] == b'\r';
                        buf.advance(at + 1);
                        self.state = if blank {
                            State::Lines
                        } else {
                            State::Discarding {
                                line_nonempty: false,
                            }
                        };
                    }
                    None => {
                        self.state = State::Discarding {
                            line_nonempty: line_nonempty || !buf.is_empty(),
                        };
                        buf.clear();
                        self.make_room(buf);
                        return Ok(None);
                    }
                },
                State::Lines => {
                    // A line end at index `cap - 1` still fits in the block; anything later
                    // cannot, so the search never looks past the cap.
                    let window = buf.len().min(self.cap);
                    let from = self.scanned.max(self.line_start).min(window);
                    match memchr2(b'\r', b'\n', &buf[from..window]) {
                        Some(offset) => {
                            let end = from + offset;
                            let line_start = self.line_start;
                            self.skip_lf = buf[end] == b'\r';
                            if end > line_start {
                                self.block.field(&buf[line_start..end]);
                                self.line_start = end + 1;
                                self.scanned = end + 1;
                                continue;
                            }
                            let block_len = end + 1;
                            let dispatched = self.dispatch(&buf[..block_len]);
                            buf.advance(block_len);
                            self.line_start = 0;
                            self.scanned = 0;
                            if block_len > SHRINK_AFTER {
                                release(buf);
                            }
                            if let Some(result) = dispatched {
                                return result.map(Some);
                            }
                        }
                        None if buf.len() >= self.cap => return Err(self.too_large(buf)),
                        None => {
                            self.scanned = window;
                            self.make_room(buf);
                            return Ok(None);
                        }
                    }
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, Error> {
        if let Some(event) = self.decode(buf)? {
            return Ok(Some(event));
        }
        // What is left is an unfinished block (or the tail of an oversized one), which WHATWG
        // drops. Only a complete `retry` line of an unfinished block keeps its effect.
        if self.state == State::Lines
            && let Some(millis) = self.block.retry
        {
            self.retry = Some(millis);
        }
        buf.clear();
        self.reset_stream();
        Ok(None)
    }
}

/// One decode outcome, comparable across runs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SseStep {
    Event(SseEvent),
    TooLarge { limit: usize, prefix: Bytes },
}

/// What feeding a whole input to a fresh codec produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SseRun {
    pub(crate) steps: Vec<SseStep>,
    pub(crate) last_event_id: Option<String>,
    pub(crate) retry: Option<u64>,
    /// The largest buffer capacity seen (not compared between runs).
    pub(crate) peak: usize,
}

/// Feeds `input` to a fresh codec in reads of the given sizes (cycled) the way tokio-util's
/// `FramedRead` does, into the buffer's spare capacity only, then signals end of input. With no
/// read sizes the whole input is put in the buffer at once, past the buffer bound.
pub(crate) fn feed_sse(cap: usize, input: &[u8], reads: &[usize]) -> SseRun {
    let mut codec = SseCodec::new(cap);
    let mut buf = BytesMut::new();
    let mut steps = Vec::new();
    let mut peak = 0;
    if reads.is_empty() {
        buf.extend_from_slice(input);
    }
    let mut pos = if reads.is_empty() { input.len() } else { 0 };
    let mut reads = reads.iter().copied().cycle();
    loop {
        // Decode until the codec wants more, exactly like `FramedRead` before each read.
        loop {
            let result = codec.decode(&mut buf);
            peak = peak.max(buf.capacity());
            if !record(result, &mut steps) {
                break;
            }
        }
        let Some(want) = reads.next().filter(|_| pos < input.len()) else {
            break;
        };
        if buf.capacity() == buf.len() {
            buf.reserve(1);
        }
        let n = want
            .max(1)
            .min(buf.capacity() - buf.len())
            .min(input.len() - pos);
        buf.extend_from_slice(&input[pos..pos + n]);
        pos += n;
        peak = peak.max(buf.capacity());
    }
    loop {
        let result = codec.decode_eof(&mut buf);
        peak = peak.max(buf.capacity());
        if !record(result, &mut steps) {
            break;
        }
    }
    SseRun {
        steps,
        last_event_id: codec.last_event_id,
        retry: codec.retry,
        peak,
    }
}

/// Appends a decode result to `steps`; false when the codec asked for more input.
fn record(result: Result<Option<SseEvent>, Error>, steps: &mut Vec<SseStep>) -> bool {
    match result {
        Ok(Some(event)) => steps.push(SseStep::Event(event)),
        Ok(None) => return false,
        Err(Error::TooLarge { limit, prefix }) => steps.push(SseStep::TooLarge { limit, prefix }),
        Err(other) => panic!("decoding produced an unexpected error: {other:?}"),
    }
    true
}

/// The SSE decoder's invariants for arbitrary bytes.
///
/// `data[0]` picks the cap and `data[1..4]` seed the read sizes; the rest is the input. Checks:
/// no panic, no event's text over the cap, the buffer within its bound, and the same events,
/// errors, last event id and retry however the input is split into reads.
pub(crate) fn fuzz_check(data: &[u8]) {
    let Some((head, input)) = data.split_first_chunk::<4>() else {
        return;
    };
    const CAPS: [usize; 16] = [
        1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 24, 32, 64, 256, 1024, 70_000,
    ];
    let cap = CAPS[usize::from(head[0] & 0x0f)];
    // A small xorshift generator turns the seed into read sizes between 1 and `longest`.
    let longest = 1 + usize::from(head[0] >> 4) * 4;
    let mut state = u32::from_le_bytes([head[1], head[2], head[3], 0x5a]);
    let reads: Vec<usize> = (0..64)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            1 + state as usize % longest
        })
        .collect();

    let whole = feed_sse(cap, input, &[]);
    let split = feed_sse(cap, input, &reads);
    assert!(
        split.peak <= cap + READ_CHUNK,
        "buffer capacity {} over the bound",
        split.peak
    );
    for step in &split.steps {
        match step {
            SseStep::Event(event) => {
                // The id may come from an earlier block, so each field is bounded on its own.
                let id = event.id.as_ref().map_or(0, String::len);
                assert!(event.data.len() <= cap, "an event's data is over the cap");
                assert!(id <= cap, "an event's id is over the cap");
                // The default type "message" is not from the input, so it may pass a tiny cap.
                assert!(event.event.len() <= cap.max("message".len()));
            }
            SseStep::TooLarge { limit, prefix } => {
                assert_eq!(*limit, cap);
                assert!(prefix.len() <= PREFIX_BYTES.min(cap));
            }
        }
    }
    let SseRun {
        steps,
        last_event_id,
        retry,
        peak: _,
    } = split;
    assert_eq!(
        whole.steps, steps,
        "the split into reads changed the result"
    );
    assert_eq!(whole.last_event_id, last_event_id);
    assert_eq!(whole.retry, retry);
}

#[cfg(test)]
mod tests;
