//! Standard input and output for [`serve`](crate::serve): as non-blocking pipes on the
//! runtime's reactor when they are pipes (the host's case), else standard input read by a
//! plain thread rather than the runtime's blocking pool.
//!
//! `tokio::io::stdin` reads on the blocking pool, and a runtime waits for its blocking tasks
//! when it shuts down; a read that never returns (the host keeps stdin open after a fatal
//! error) would then keep the sidecar from exiting. A detached thread does not hold the
//! runtime: when `main` returns, the process ends and the thread with it. This is not a
//! general-purpose adapter; it exists for [`serve`](crate::serve) only.

use std::io::{self, Read as _};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// How much one read of the pipe takes at most.
const CHUNK: usize = 64 * 1024;

/// Chunks read but not yet consumed; bounds memory when the protocol side is slow.
const QUEUED_CHUNKS: usize = 4;

/// The reading end of the stdin thread.
#[derive(Debug)]
pub(crate) struct Stdin {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    at: usize,
}

/// Starts the thread that reads stdin.
pub(crate) fn stdin() -> io::Result<Stdin> {
    let (tx, rx) = mpsc::channel(QUEUED_CHUNKS);
    std::thread::Builder::new()
        .name("sidewire-ext-sdk-stdin".to_owned())
        .spawn(move || read_loop(&tx))?;
    Ok(Stdin {
        chunks: rx,
        current: Vec::new(),
        at: 0,
    })
}

fn read_loop(tx: &mpsc::Sender<io::Result<Vec<u8>>>) {
    let mut stdin = io::stdin().lock();
    loop {
        let mut chunk = vec![0; CHUNK];
        let item = match stdin.read(&mut chunk) {
            // End of input: dropping the sender tells the reader.
            Ok(0) => return,
            Ok(n) => {
                chunk.truncate(n);
                Ok(chunk)
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => Err(err),
        };
        let failed = item.is_err();
        // A closed receiver means serve() has returned; nobody wants more input.
        if tx.blocking_send(item).is_err() || failed {
            return;
        }
    }
}

impl AsyncRead for Stdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at == this.current.len() {
            match this.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // End of input: a read of zero bytes.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Err(err)),
                Poll::Ready(Some(Ok(chunk))) => {
                    this.current = chunk;
                    this.at = 0;
                }
            }
        }
        let n = buf.remaining().min(this.current.len() - this.at);
        buf.put_slice(&this.current[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// Standard input as a non-blocking pipe, when it is one.
pub(crate) fn pipe_in() -> Option<tokio::net::unix::pipe::Receiver> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()
}

/// Standard output as a non-blocking pipe, when it is one.
pub(crate) fn pipe_out() -> Option<tokio::net::unix::pipe::Sender> {
    use std::os::fd::AsFd;
    let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()
}
