//! A frame stream over any `AsyncRead`, driving [`NdjsonCodec`].

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use tokio::io::AsyncRead;
use tokio_util::codec::Decoder;
use tokio_util::io::poll_read_buf;

use crate::{Error, NdjsonCodec, Oversize};

/// Reads NDJSON frames from `R`.
///
/// It differs from tokio-util's `FramedRead` in the two places a hostile peer pushes on:
/// - In [`Oversize::Skip`] mode an [`Error::TooLarge`] is one item of the stream and the next
///   poll goes on with the next frame (`FramedRead` yields `None` once after any decoder error,
///   which a caller would take for end of input).
/// - Every other error is final: the stream yields it once and then `None` for ever.
///
/// Reads go into the buffer's spare capacity only, so the buffer never exceeds the codec's
/// [`buffer_bound`](NdjsonCodec::buffer_bound).
///
/// # Cancel safety
///
/// Polling is cancel safe: a partial frame stays in the reader's buffer, never on a stack.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    codec: NdjsonCodec,
    buf: BytesMut,
    eof: bool,
    done: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Reads frames from `inner` with `codec`.
    pub fn new(inner: R, codec: NdjsonCodec) -> Self {
        FrameReader {
            inner,
            codec,
            buf: BytesMut::with_capacity(8 * 1024),
            eof: false,
            done: false,
        }
    }

    /// The codec, to inspect its cap or mode.
    pub fn codec(&self) -> &NdjsonCodec {
        &self.codec
    }

    /// The capacity of the read buffer right now (for tests of the memory bound).
    pub fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn finish(&mut self, result: Result<Option<Bytes>, Error>) -> Option<Result<Bytes, Error>> {
        match result {
            Ok(Some(frame)) => Some(Ok(frame)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(err) => {
                let keeps_going = err.is_too_large() && self.codec.oversize() == Oversize::Skip;
                if !keeps_going {
                    self.done = true;
                }
                Some(Err(err))
            }
        }
    }
}

impl<R: AsyncRead + Unpin> Stream for FrameReader<R> {
    type Item = Result<Bytes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if this.eof {
                let result = this.codec.decode_eof(&mut this.buf);
                return Poll::Ready(this.finish(result));
            }
            match this.codec.decode(&mut this.buf) {
                Ok(Some(frame)) => return Poll::Ready(Some(Ok(frame))),
                Ok(None) if this.codec.is_finished() => return Poll::Ready(this.finish(Ok(None))),
                Ok(None) => {}
                Err(err) => return Poll::Ready(this.finish(Err(err))),
            }
            // The codec left spare room; read into it and nowhere else.
            match ready!(poll_read_buf(Pin::new(&mut this.inner), cx, &mut this.buf)) {
                Ok(0) => this.eof = true,
                Ok(_) => {}
                Err(err) => return Poll::Ready(this.finish(Err(Error::Io(err)))),
            }
        }
    }
}

#[cfg(test)]
mod tests;
