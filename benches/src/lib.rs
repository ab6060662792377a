//! Shared inputs and drivers for sidewire's criterion benchmarks (`benches/*.rs`).
//!
//! Not a library for users: it exists so every bench feeds its codecs the same bytes the same
//! way, which is what makes the ratios in BENCHMARKS.md meaningful.

use std::future::Future;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::stream::{FuturesUnordered, StreamExt};
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

/// This bench binary re-executed as a child with `role_var` set to `role` (the benches' floor
/// children and sidecars are the binary itself), on piped stdin and stdout, killed when
/// dropped: the child, its stdin and its stdout's lines. Call it inside a tokio runtime.
pub fn spawn_self(
    role_var: &str,
    role: &str,
) -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) {
    spawn_self_with(&[(role_var, role)])
}

/// [`spawn_self`] with every variable of `env` set.
pub fn spawn_self_with(
    env: &[(&str, &str)],
) -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = tokio::process::Command::new(std::env::current_exe().expect("this binary"))
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("a child of this binary");
    let stdin = child.stdin.take().expect("piped stdin");
    let lines = tokio::io::BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    (child, stdin, lines)
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
    drive_from(codec, buf, input, read_size)
}

/// Where a driven decoder's reads copy their bytes from.
pub trait ReadSource {
    /// How many bytes the peer sends in all.
    fn len(&self) -> usize;
    /// Whether the peer sends nothing.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The bytes at `pos..pos + n` of what the peer sends, as one read copies them.
    fn window(&self, pos: usize, n: usize) -> &[u8];
}

impl ReadSource for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    fn window(&self, pos: usize, n: usize) -> &[u8] {
        &self[pos..pos + n]
    }
}

/// One frame of `len` bytes, `a` repeated and then `}` and the newline, read from a pipe: every
/// read copies from the same 64 KiB block, as a read from a real pipe copies from the kernel's
/// pipe buffer (16 pages by default, just written by the peer, so in cache), not from an array
/// the size of the frame. Read from one 8 MiB array instead, every read copies bytes last
/// touched 8 MiB of traffic ago, and the cost of a 4 KiB copy from memory against a 64 KiB one
/// (how far the prefetchers get) decides a comparison of read sizes, whatever the decoder does.
#[derive(Debug)]
pub struct PipedFrame {
    len: usize,
    /// `PIPE_BLOCK` bytes, the last two `}` and the newline.
    block: Vec<u8>,
}

/// The block a [`PipedFrame`] copies from: a pipe buffer's 64 KiB and the frame's last two bytes.
const PIPE_BLOCK: usize = 64 * 1024 + 2;

impl PipedFrame {
    /// A frame of `len` bytes counting its newline; reads of it must be at most 64 KiB.
    ///
    /// # Panics
    ///
    /// When `len` is under 2.
    pub fn new(len: usize) -> Self {
        assert!(len >= 2, "a frame of at least `}}` and its newline");
        let mut block = vec![b'a'; PIPE_BLOCK];
        block[PIPE_BLOCK - 2] = b'}';
        block[PIPE_BLOCK - 1] = b'\n';
        PipedFrame { len, block }
    }
}

impl ReadSource for PipedFrame {
    fn len(&self) -> usize {
        self.len
    }

    fn window(&self, pos: usize, n: usize) -> &[u8] {
        let end = pos + n;
        assert!(
            end <= self.len && n <= PIPE_BLOCK - 2,
            "a read of at most 64 KiB within the frame"
        );
        if end <= self.len - 2 {
            &self.block[..n]
        } else {
            &self.block[PIPE_BLOCK - (self.len - pos)..PIPE_BLOCK - (self.len - end)]
        }
    }
}

/// [`drive`] with the reads copying from `input`.
pub fn drive_from<D: Decoder, S: ReadSource + ?Sized>(
    codec: &mut D,
    buf: &mut BytesMut,
    input: &S,
    read_size: usize,
) -> usize {
    let mut items = 0;
    let mut pos = 0;
    let len = input.len();
    while pos < len {
        if buf.capacity() == buf.len() {
            buf.reserve(1);
        }
        let n = read_size.min(buf.capacity() - buf.len()).min(len - pos);
        buf.put_slice(input.window(pos, n));
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

/// Runs `iters` calls with `depth` in flight and returns the elapsed time; with `depth == 1`
/// the calls run one after another with no harness in between.
pub async fn pipelined<F, Fut>(iters: u64, depth: usize, call: F) -> Duration
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    let start = Instant::now();
    if depth == 1 {
        for _ in 0..iters {
            call().await;
        }
        return start.elapsed();
    }
    let mut in_flight = FuturesUnordered::new();
    let mut issued = 0;
    while issued < iters && in_flight.len() < depth {
        in_flight.push(call());
        issued += 1;
    }
    while in_flight.next().await.is_some() {
        if issued < iters {
            in_flight.push(call());
            issued += 1;
        }
    }
    start.elapsed()
}

/// This process's stdin and stdout as non-blocking pipes on the runtime's reactor, for the
/// benches' child processes. `tokio::io::stdin`/`stdout` would add a blocking-pool hand-off
/// per message and make a floor no floor.
///
/// # Panics
///
/// When stdin or stdout is not a pipe, or outside a Tokio runtime.
pub fn stdio_pipes() -> (
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
) {
    use std::os::fd::AsFd;
    let stdin = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .expect("stdin");
    let stdout = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .expect("stdout");
    (
        tokio::net::unix::pipe::Receiver::from_owned_fd(stdin).expect("stdin is a pipe"),
        tokio::net::unix::pipe::Sender::from_owned_fd(stdout).expect("stdout is a pipe"),
    )
}

pub mod noop_mcp;
pub mod replay;
pub mod scale;
pub mod sidecars;

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame a `PipedFrame` stands for, written out.
    fn written(len: usize) -> Vec<u8> {
        let mut frame = vec![b'a'; len];
        frame[len - 2] = b'}';
        frame[len - 1] = b'\n';
        frame
    }

    #[test]
    fn a_piped_frame_reads_as_the_frame_whatever_the_read_sizes() {
        for len in [
            2,
            3,
            100,
            64 * 1024 + 1,
            64 * 1024 + 2,
            64 * 1024 + 3,
            300_001,
        ] {
            let frame = PipedFrame::new(len);
            let want = written(len);
            for read in [1, 2, 3, 4096, 65_535, 64 * 1024] {
                let mut got = Vec::with_capacity(len);
                let mut pos = 0;
                while pos < len {
                    let n = read.min(len - pos);
                    got.extend_from_slice(frame.window(pos, n));
                    pos += n;
                }
                assert!(got == want, "len {len}, reads of {read}");
            }
        }
    }

    #[test]
    fn a_driven_decoder_gets_the_piped_frame_whole() {
        let len = 1024 * 1024 + 7;
        for read in [4096, 64 * 1024] {
            let mut codec = tokio_util::codec::LinesCodec::new();
            let mut buf = BytesMut::new();
            let mut lines = 0;
            let mut pos = 0;
            let frame = PipedFrame::new(len);
            while pos < len {
                let n = read.min(len - pos);
                buf.put_slice(frame.window(pos, n));
                pos += n;
                while let Some(line) = codec.decode(&mut buf).expect("a line") {
                    assert_eq!(line.as_bytes(), &written(len)[..len - 1]);
                    lines += 1;
                }
            }
            assert_eq!(lines, 1);
            assert_eq!(
                drive_from(
                    &mut ZeroCopyFloor::default(),
                    &mut BytesMut::new(),
                    &frame,
                    read
                ),
                1
            );
        }
    }
}
