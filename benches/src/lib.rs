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
    use tokio::io::AsyncBufReadExt as _;
    let mut child = tokio::process::Command::new(std::env::current_exe().expect("this binary"))
        .env(role_var, role)
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
pub mod scale;
pub mod sidecars;
