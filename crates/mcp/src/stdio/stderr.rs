//! The stderr side of a server process: always drained (a full pipe blocks the child, the most
//! reported MCP client bug), kept as a bounded, redacted tail for errors, and optionally
//! forwarded line by line to `tracing`.
//!
//! Lines are redacted as they complete, so a secret never sits in the tail unredacted; an
//! unfinished last line is redacted when a snapshot is taken. One line keeps at most 4 KiB.

use std::sync::{Arc, Mutex};

use tokio::io::AsyncReadExt;

use crate::protocol::session::lock;
use crate::stdio::redact::redact;

/// How much stderr the tail keeps.
pub(crate) const TAIL_BYTES: usize = 16 * 1024;
/// The most of one line kept or forwarded.
pub(crate) const LINE_CAP: usize = 4 * 1024;

/// The redacted end of a process's stderr.
#[derive(Debug)]
pub(crate) struct StderrTail {
    kept: String,
    partial: Vec<u8>,
    partial_cut: bool,
    /// The server name to forward lines under, when forwarding is on.
    forward: Option<Arc<str>>,
}

impl StderrTail {
    pub(crate) fn new(forward: Option<Arc<str>>) -> Self {
        StderrTail {
            kept: String::new(),
            partial: Vec::new(),
            partial_cut: false,
            forward,
        }
    }

    /// Takes a chunk of stderr as read.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        while let Some(newline) = bytes.iter().position(|&b| b == b'\n') {
            self.extend_partial(&bytes[..newline]);
            self.finish_line();
            bytes = &bytes[newline + 1..];
        }
        self.extend_partial(bytes);
    }

    fn extend_partial(&mut self, chunk: &[u8]) {
        let room = LINE_CAP.saturating_sub(self.partial.len());
        if chunk.len() > room {
            self.partial.extend_from_slice(&chunk[..room]);
            self.partial_cut = true;
        } else {
            self.partial.extend_from_slice(chunk);
        }
    }

    fn finish_line(&mut self) {
        let mut line = self.render_partial();
        self.partial.clear();
        self.partial_cut = false;
        if let Some(server) = &self.forward {
            tracing::info!(target: "sidewire_mcp::stderr", server = %server, "{line}");
        }
        line.push('\n');
        self.kept.push_str(&line);
        // Trim in bulk so each line costs amortised O(its length).
        if self.kept.len() > 2 * TAIL_BYTES {
            let cut = boundary_at_or_after(&self.kept, self.kept.len() - TAIL_BYTES);
            self.kept.drain(..cut);
        }
    }

    fn render_partial(&self) -> String {
        let raw = String::from_utf8_lossy(&self.partial);
        let mut line = redact(raw.strip_suffix('\r').unwrap_or(&raw));
        if self.partial_cut {
            line.push_str(" [line cut at 4 KiB]");
        }
        line
    }

    /// The last 16 KiB, unfinished last line included.
    pub(crate) fn snapshot(&self) -> String {
        let mut text = self.kept.clone();
        if !self.partial.is_empty() {
            text.push_str(&self.render_partial());
        }
        if text.len() > TAIL_BYTES {
            let cut = boundary_at_or_after(&text, text.len() - TAIL_BYTES);
            text.drain(..cut);
        }
        text
    }
}

fn boundary_at_or_after(text: &str, at: usize) -> usize {
    (at..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}

/// Reads stderr to its end into the tail. Read errors end it like end of file: the tail is a
/// diagnostic, and a broken stderr must not take the connection down.
pub(crate) async fn drain<R: tokio::io::AsyncRead + Unpin>(
    mut stderr: R,
    tail: Arc<Mutex<StderrTail>>,
) {
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => lock(&tail).push(&buf[..n]),
        }
    }
}

#[cfg(test)]
mod tests;
