//! Shared inputs and drivers for sidewire's criterion benchmarks (`benches/*.rs`).
//!
//! Not a library for users: it exists so every bench feeds its codecs the same bytes the same
//! way, which is what makes the ratios in BENCHMARKS.md meaningful.

use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::codec::Decoder;

/// About `total` bytes of realistic ~200-byte JSON-RPC `tools/call` lines.
pub fn jsonrpc_lines(total: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(total + 256);
    let mut id = 0u64;
    while out.len() < total {
        id += 1;
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"read_file\",\"arguments\":{{\"path\":\"/home/user/project/src/module_{}.rs\",\"offset\":{},\"limit\":200}}}}}}\n",
            id % 97,
            id * 13
        );
        out.extend_from_slice(line.as_bytes());
    }
    out
}

/// Counts the lines in `input`.
pub fn count_lines(input: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', input).count() as u64
}

/// Drives `codec` over `input` the way tokio-util's `FramedRead` does: each read fills at most
/// `read_size` bytes of the buffer's spare capacity (reserving one byte when it has none), then
/// the decoder runs until it wants more. Returns the number of frames and errors produced.
pub fn drive<D: Decoder>(
    codec: &mut D,
    buf: &mut BytesMut,
    input: &[u8],
    read_size: usize,
) -> usize {
    let mut items = 0;
    let mut pos = 0;
    while pos < input.len() {
        if buf.capacity() == buf.len() {
            buf.reserve(1);
        }
        let n = read_size
            .min(buf.capacity() - buf.len())
            .min(input.len() - pos);
        buf.put_slice(&input[pos..pos + n]);
        pos += n;
        loop {
            match codec.decode(buf) {
                Ok(Some(item)) => {
                    std::hint::black_box(item);
                    items += 1;
                }
                Ok(None) => break,
                Err(_) => items += 1,
            }
        }
    }
    items
}

/// The least a decoder that hands out each line as its own `Bytes` can do: find the newline from
/// where the last search stopped, `split_to`, `freeze`. No cap, no options. It is a floor to read
/// the real codecs against, not something to use: it has no limit.
#[derive(Debug, Default)]
pub struct ZeroCopyFloor {
    scanned: usize,
}

impl Decoder for ZeroCopyFloor {
    type Item = Bytes;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, std::io::Error> {
        match memchr::memchr(b'\n', &buf[self.scanned..]) {
            Some(at) => {
                let end = self.scanned + at;
                self.scanned = 0;
                let mut frame = buf.split_to(end + 1);
                frame.truncate(end);
                Ok(Some(frame.freeze()))
            }
            None => {
                self.scanned = buf.len();
                Ok(None)
            }
        }
    }
}
