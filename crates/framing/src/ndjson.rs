//! Newline-delimited frames (NDJSON) with a hard cap.
//!
//! The decoder keeps three facts between calls: how far it has already searched the buffer for a
//! newline (`scanned`, so every byte is searched once however the frame is split into reads),
//! whether it is in the middle of discarding an oversized line, and whether an oversized line has
//! finished the stream. It also manages the capacity of the buffer it is handed, so the buffer
//! never exceeds `cap + READ_CHUNK` bytes of capacity and is given back after a large frame.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::{Error, PREFIX_BYTES, READ_CHUNK, SHRINK_AFTER};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The spare room the decoder keeps in its buffer after a call that found no complete frame, so
/// the next read is never a tiny one (unless the cap leaves no more room).
const MIN_SPARE: usize = 8 * 1024;

/// What the decoder does with a line that reaches the cap before its newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oversize {
    /// Report [`Error::TooLarge`] and finish the stream: every later call yields nothing and the
    /// buffer is released. The extension protocol's choice (spec §2.3: fatal `frame_too_large`).
    Terminate,
    /// Report [`Error::TooLarge`] once with the line's first 1 KiB, discard up to the next
    /// newline holding no more than one read chunk, then go on with the next frame. MCP stdio's
    /// choice: one oversized result should fail one request, not the whole server.
    Skip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Looking for the next frame.
    Frames,
    /// Throwing bytes away until the newline that ends an oversized line.
    Discarding,
    /// An oversized line ended the stream (`Oversize::Terminate`).
    Finished,
}

/// A codec for newline-delimited frames with a mandatory cap.
///
/// Decoding yields each line as [`Bytes`] without copying it (the buffer is split and frozen),
/// minus its `\n` and one trailing `\r`. The cap counts the newline: a frame of `cap - 1` bytes
/// plus its newline is accepted, one byte more is not, and `cap` bytes without a newline are
/// already too large. Blank lines and a leading UTF-8 BOM are handed up as frames unless
/// [`skip_blank_lines`](Self::skip_blank_lines) or [`strip_bom`](Self::strip_bom) is set: the
/// extension protocol wants them rejected by its JSON layer, MCP stdio wants them tolerated.
///
/// End of input inside a frame is [`Error::Truncated`], never a silent frame or a silent drop.
///
/// Encoding writes a frame and its newline, and refuses — before writing a byte — a frame that
/// would exceed the cap or that holds a raw newline.
///
/// The decoder manages its buffer's capacity: after any call that returns no frame the buffer has
/// spare room for a read, and its capacity never exceeds `cap + READ_CHUNK`; after a frame larger
/// than 1 MiB the large allocation is dropped. Drivers that read into the buffer's spare capacity
/// (tokio-util's `FramedRead`, or this crate's [`FrameReader`](crate::FrameReader)) therefore keep
/// the bound; a driver that appends arbitrary amounts itself does not.
#[derive(Debug, Clone)]
pub struct NdjsonCodec {
    cap: usize,
    oversize: Oversize,
    skip_blank_lines: bool,
    strip_bom: bool,
    /// Bytes at the front of the buffer already searched for a newline; the next search starts
    /// there. Without it a frame arriving in N reads is searched N times (quadratic).
    scanned: usize,
    state: State,
}

impl NdjsonCodec {
    /// A codec whose frames are at most `cap` bytes, counting the newline.
    ///
    /// # Panics
    ///
    /// When `cap` is 0: no frame, not even an empty one, would fit.
    pub fn new(cap: usize, oversize: Oversize) -> Self {
        assert!(
            cap > 0,
            "an NDJSON frame cap must leave room for the newline"
        );
        NdjsonCodec {
            cap,
            oversize,
            skip_blank_lines: false,
            strip_bom: false,
            scanned: 0,
            state: State::Frames,
        }
    }

    /// Skip lines that are empty or hold only ASCII whitespace instead of handing them up.
    pub fn skip_blank_lines(mut self, on: bool) -> Self {
        self.skip_blank_lines = on;
        self
    }

    /// Remove a UTF-8 byte-order mark at the start of a line instead of handing it up.
    pub fn strip_bom(mut self, on: bool) -> Self {
        self.strip_bom = on;
        self
    }

    /// The cap in bytes, counting the newline.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// What happens to an oversized line.
    pub fn oversize(&self) -> Oversize {
        self.oversize
    }

    /// An oversized line ended the stream (only in [`Oversize::Terminate`] mode).
    pub fn is_finished(&self) -> bool {
        self.state == State::Finished
    }

    /// The most capacity the decoder lets its buffer have.
    pub fn buffer_bound(&self) -> usize {
        self.cap.saturating_add(READ_CHUNK)
    }

    /// Appends `frame` and a newline to `dst`.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] when `frame.len() + 1` exceeds the cap and [`Error::EmbeddedNewline`]
    /// when the frame holds a `\n`; in both cases `dst` is left untouched.
    pub fn encode_frame(&self, frame: &[u8], dst: &mut BytesMut) -> Result<(), Error> {
        if frame.len() >= self.cap {
            return Err(self.too_large_outgoing(frame));
        }
        if let Some(at) = memchr::memchr(b'\n', frame) {
            return Err(Error::EmbeddedNewline { at });
        }
        dst.reserve(frame.len() + 1);
        dst.put_slice(frame);
        dst.put_u8(b'\n');
        Ok(())
    }

    fn too_large_outgoing(&self, frame: &[u8]) -> Error {
        Error::TooLarge {
            limit: self.cap,
            prefix: prefix_of(frame),
        }
    }

    /// Handles a line that reached the cap without a newline; `buf` holds at least `cap` bytes.
    fn too_large(&mut self, buf: &mut BytesMut) -> Error {
        let err = Error::TooLarge {
            limit: self.cap,
            prefix: prefix_of(&buf[..self.cap]),
        };
        self.scanned = 0;
        match self.oversize {
            Oversize::Terminate => {
                self.state = State::Finished;
                *buf = BytesMut::new();
            }
            Oversize::Skip => {
                // The bytes past the cap may already hold the end of the line and more frames.
                match memchr::memchr(b'\n', &buf[self.cap..]) {
                    Some(at) => buf.advance(self.cap + at + 1),
                    None => {
                        buf.clear();
                        self.state = State::Discarding;
                    }
                }
                release(buf);
            }
        }
        err
    }

    /// Keeps spare room in `buf` for the next read without letting capacity pass the bound.
    fn make_room(&self, buf: &mut BytesMut) {
        let len = buf.len();
        if buf.capacity() - len >= MIN_SPARE {
            return;
        }
        // The next capacity is the smallest `bound >> k` that holds the pending bytes and one
        // read chunk. Capacities on that ladder double into each other, so when the buffer is a
        // plain vector `reserve` grows it by `realloc` (no copy of a large frame, no fresh page
        // faults) and the last step lands exactly on the bound instead of doubling past it.
        let bound = self.buffer_bound();
        let mut target = bound;
        while target / 2 >= len + READ_CHUNK {
            target /= 2;
        }
        buf.reserve(target - len);
        if buf.capacity() > bound {
            // `reserve` doubled a buffer that was not on the ladder; move to an exact one.
            let mut fresh = BytesMut::with_capacity(target);
            fresh.extend_from_slice(buf);
            *buf = fresh;
        }
    }
}

/// Moves what is left in `buf` into a small fresh buffer, so the large allocation behind it (a
/// big frame's, or one filled while looking for a line end) is freed as soon as the frames cut
/// from it are dropped. `capacity()` cannot tell: after `split_to` it counts only the room left
/// in the view, not the allocation the view keeps alive.
fn release(buf: &mut BytesMut) {
    let mut fresh = BytesMut::with_capacity(buf.len().max(MIN_SPARE));
    fresh.extend_from_slice(buf);
    *buf = fresh;
}

fn prefix_of(bytes: &[u8]) -> Bytes {
    Bytes::copy_from_slice(&bytes[..bytes.len().min(PREFIX_BYTES)])
}

impl Decoder for NdjsonCodec {
    type Item = Bytes;
    type Error = Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, Error> {
        loop {
            match self.state {
                State::Finished => {
                    buf.clear();
                    return Ok(None);
                }
                State::Discarding => match memchr::memchr(b'\n', buf) {
                    Some(at) => {
                        buf.advance(at + 1);
                        self.state = State::Frames;
                    }
                    None => {
                        buf.clear();
                        self.make_room(buf);
                        return Ok(None);
                    }
                },
                State::Frames => {
                    // A newline at index `cap - 1` still fits; anything later cannot.
                    let window = buf.len().min(self.cap);
                    let from = self.scanned.min(window);
                    match memchr::memchr(b'\n', &buf[from..window]) {
                        Some(offset) => {
                            self.scanned = 0;
                            let end = from + offset;
                            let mut frame = buf.split_to(end + 1);
                            if end >= SHRINK_AFTER {
                                release(buf);
                            }
                            let mut len = end;
                            if len > 0 && frame[len - 1] == b'\r' {
                                len -= 1;
                            }
                            frame.truncate(len);
                            if self.strip_bom && frame.starts_with(BOM) {
                                frame.advance(BOM.len());
                            }
                            if self.skip_blank_lines && frame.iter().all(u8::is_ascii_whitespace) {
                                continue;
                            }
                            return Ok(Some(frame.freeze()));
                        }
                        None if buf.len() >= self.cap => return Err(self.too_large(buf)),
                        None => {
                            self.scanned = buf.len();
                            self.make_room(buf);
                            return Ok(None);
                        }
                    }
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, Error> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if self.state != State::Frames || buf.is_empty() {
            return Ok(None);
        }
        let pending = buf.len();
        let blank = self.skip_blank_lines && buf.iter().all(u8::is_ascii_whitespace);
        buf.clear();
        self.scanned = 0;
        if blank {
            Ok(None)
        } else {
            Err(Error::Truncated { pending })
        }
    }
}

impl Encoder<Bytes> for NdjsonCodec {
    type Error = Error;

    fn encode(&mut self, frame: Bytes, dst: &mut BytesMut) -> Result<(), Error> {
        self.encode_frame(&frame, dst)
    }
}

impl Encoder<&[u8]> for NdjsonCodec {
    type Error = Error;

    fn encode(&mut self, frame: &[u8], dst: &mut BytesMut) -> Result<(), Error> {
        self.encode_frame(frame, dst)
    }
}

#[cfg(test)]
mod tests;
