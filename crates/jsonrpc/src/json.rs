//! JSON text written straight into a frame buffer: `write_json` (serde_json under a byte
//! limit). The frame encoders of this crate build on it.

use std::io;

use bytes::{Bytes, BytesMut};
use serde::Serialize;
use sidewire_framing::{Error, PREFIX_BYTES};

/// Serializes `value` as compact JSON onto the end of `dst`, never letting `dst.len()` pass
/// `limit`; the building block for frames assembled from pieces (a JSON-RPC envelope around a
/// handler's result, say).
///
/// Serialization stops as soon as the limit would be crossed, so an oversized value costs at
/// most `limit` bytes of work and memory.
///
/// # Errors
///
/// [`Error::TooLarge`] (with `limit` as given) when the output would pass `limit`,
/// [`Error::EmbeddedNewline`] when a raw JSON value inside carried a newline (compact JSON never
/// has one otherwise), [`Error::Serialize`] when `value` cannot be serialized. In every case
/// `dst` is restored to its length before the call.
pub(crate) fn write_json<T: Serialize + ?Sized>(
    value: &T,
    dst: &mut BytesMut,
    limit: usize,
) -> Result<(), Error> {
    let start = dst.len();
    // The writer by value, not `&mut`: serde_json's pieces then reach `write_all` without
    // the forwarding impl for `&mut W`, which kept them from being inlined.
    let mut serializer = serde_json::Serializer::new(CappedWriter {
        dst,
        limit,
        over: false,
    });
    let written = value.serialize(&mut serializer);
    let CappedWriter { dst, over, .. } = serializer.into_inner();
    let err = match written {
        Ok(()) => match memchr::memchr(b'\n', &dst[start..]) {
            None => return Ok(()),
            Some(at) => Error::EmbeddedNewline { at },
        },
        Err(_) if over => Error::TooLarge {
            limit,
            prefix: Bytes::copy_from_slice(&dst[start..][..(dst.len() - start).min(PREFIX_BYTES)]),
        },
        Err(err) => Error::Serialize(err),
    };
    dst.truncate(start);
    Err(err)
}

/// An `io::Write` into a `BytesMut` that refuses to pass `limit` bytes of total length.
struct CappedWriter<'a> {
    dst: &'a mut BytesMut,
    limit: usize,
    over: bool,
}

impl CappedWriter<'_> {
    /// Out of line, so that `write_all` stays small enough to inline. `write_json` reads
    /// `over`, not the error, which carries no text and allocates nothing.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self) -> io::Error {
        self.over = true;
        io::Error::from(io::ErrorKind::Other)
    }
}

// Inlined: serde_json writes a frame in many small pieces (a brace, a quote, a key), most of
// constant length; inlined into its serializer, each is a bounds check and a store instead of a
// call into this crate and one into `memcpy`.
impl io::Write for CappedWriter<'_> {
    #[inline]
    fn write(&mut self, chunk: &[u8]) -> io::Result<usize> {
        self.write_all(chunk)?;
        Ok(chunk.len())
    }

    #[inline]
    fn write_all(&mut self, chunk: &[u8]) -> io::Result<()> {
        if self.dst.len() + chunk.len() > self.limit {
            return Err(self.refuse());
        }
        self.dst.extend_from_slice(chunk);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
