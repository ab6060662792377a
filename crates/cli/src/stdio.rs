//! stdin and stdout as an MCP server on them reads and writes them (`sidewire mcp serve`, the
//! built-in `__mcp-server`).
//!
//! MCP clients start a stdio server with pipes (or, from Node, a socket pair) as its stdin and
//! stdout. Those are read and written non-blocking on the runtime's own reactor. Anything else
//! (a terminal, a file) goes through tokio's `stdin()`/`stdout()`, which hand every read and
//! write to a blocking thread: that hop costs about 25 µs a request (BENCHMARKS.md, "a call
//! through the gateway").
//!
//! Making a descriptor non-blocking changes its open file description, which the process that
//! started this one may share; [`Restore`] puts the flags back as they were when it is dropped
//! (after the serve's end).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{FileType, OFlags};
use tokio::io::{AsyncRead, AsyncWrite};

/// What a stdio descriptor is, for the choice of how to read or write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
    /// A terminal, a file, a character device: read and written through tokio's thread.
    Other,
}

fn kind(fd: BorrowedFd<'_>) -> Kind {
    match rustix::fs::fstat(fd).map(|stat| FileType::from_raw_mode(stat.st_mode)) {
        Ok(FileType::Fifo) => Kind::Pipe,
        Ok(FileType::Socket) => Kind::Socket,
        _ => Kind::Other,
    }
}

/// The reader and writer of a serve on stdin and stdout.
pub(crate) type Streams = (
    Box<dyn AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
);

/// Puts back, when dropped, the flags of each descriptor made non-blocking.
#[derive(Debug, Default)]
pub(crate) struct Restore(Vec<(OwnedFd, OFlags)>);

impl Drop for Restore {
    fn drop(&mut self) {
        for (fd, flags) in &self.0 {
            let _ = rustix::fs::fcntl_setfl(fd, *flags);
        }
    }
}

/// stdin and stdout, each non-blocking on the reactor when it is a pipe or a Unix stream
/// socket, and the guard that restores their flags. Must be called inside the runtime.
pub(crate) fn open() -> (Streams, Restore) {
    let mut restore = Restore::default();
    let reader: Box<dyn AsyncRead + Unpin + Send> =
        match nonblocking(std::io::stdin().as_fd(), &mut restore) {
            Some((Kind::Pipe, fd)) => match tokio::net::unix::pipe::Receiver::from_owned_fd(fd) {
                Ok(pipe) => Box::new(pipe),
                Err(_) => Box::new(tokio::io::stdin()),
            },
            Some((Kind::Socket, fd)) => match socket(fd) {
                Ok(socket) => Box::new(socket),
                Err(_) => Box::new(tokio::io::stdin()),
            },
            _ => Box::new(tokio::io::stdin()),
        };
    let writer: Box<dyn AsyncWrite + Unpin + Send> =
        match nonblocking(std::io::stdout().as_fd(), &mut restore) {
            Some((Kind::Pipe, fd)) => match tokio::net::unix::pipe::Sender::from_owned_fd(fd) {
                Ok(pipe) => Box::new(pipe),
                Err(_) => Box::new(tokio::io::stdout()),
            },
            Some((Kind::Socket, fd)) => match socket(fd) {
                Ok(socket) => Box::new(socket),
                Err(_) => Box::new(tokio::io::stdout()),
            },
            _ => Box::new(tokio::io::stdout()),
        };
    ((reader, writer), restore)
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    tokio::net::UnixStream::from_std(std::os::unix::net::UnixStream::from(fd))
}

/// A copy of `fd`, non-blocking, when it is a pipe or a Unix stream socket; its flags as they
/// were are kept in `restore`.
fn nonblocking(fd: BorrowedFd<'_>, restore: &mut Restore) -> Option<(Kind, OwnedFd)> {
    let kind = kind(fd);
    if kind == Kind::Other {
        return None;
    }
    let flags = rustix::fs::fcntl_getfl(fd).ok()?;
    let copy = fd.try_clone_to_owned().ok()?;
    let kept = fd.try_clone_to_owned().ok()?;
    if kind == Kind::Socket {
        // Only a Unix stream socket (what Node's child processes get); anything else is left
        // to tokio's thread.
        let socket = std::os::unix::net::UnixStream::from(copy);
        if socket.local_addr().is_err() {
            return None;
        }
        restore.0.push((kept, flags));
        if socket.set_nonblocking(true).is_err() {
            return None;
        }
        return Some((kind, OwnedFd::from(socket)));
    }
    // A pipe: tokio's pipe types make it non-blocking themselves.
    restore.0.push((kept, flags));
    Some((kind, copy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_and_sockets_are_told_apart_from_the_rest() {
        let (read, write) = std::io::pipe().unwrap();
        assert_eq!(kind(read.as_fd()), Kind::Pipe);
        assert_eq!(kind(write.as_fd()), Kind::Pipe);
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(kind(a.as_fd()), Kind::Socket);
        let file = tempfile::tempfile().unwrap();
        assert_eq!(kind(file.as_fd()), Kind::Other);
    }
}

#[cfg(test)]
mod restore_tests {
    use super::*;

    #[test]
    fn a_pipe_made_non_blocking_gets_its_flags_back() {
        let (read, _write) = std::io::pipe().unwrap();
        let before = rustix::fs::fcntl_getfl(&read).unwrap();
        assert!(!before.contains(OFlags::NONBLOCK));
        let mut restore = Restore::default();
        let (kind, copy) = nonblocking(read.as_fd(), &mut restore).unwrap();
        assert_eq!(kind, Kind::Pipe);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _pipe = runtime
            .block_on(async { tokio::net::unix::pipe::Receiver::from_owned_fd(copy).unwrap() });
        assert!(
            rustix::fs::fcntl_getfl(&read)
                .unwrap()
                .contains(OFlags::NONBLOCK)
        );
        drop(restore);
        assert_eq!(rustix::fs::fcntl_getfl(&read).unwrap(), before);
    }
}
