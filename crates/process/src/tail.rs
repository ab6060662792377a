//! The stderr tail: the last bytes a child wrote to stderr, kept raw in a ring and redacted only
//! when someone asks for them; and the optional line-by-line forwarding to `tracing`.
//!
//! Keeping bytes raw makes the drain's hot path one `memcpy` per read, whatever the child
//! prints (a 1 GiB flood costs about what reading it costs). Redaction happens at snapshot time,
//! over at most the ring's size, and forwarding redacts each line only while a subscriber wants
//! it.

use std::sync::Arc;

use crate::redact::Redactor;

/// How many bytes of stderr a tail keeps unless told otherwise.
pub const TAIL_BYTES: usize = 16 * 1024;

/// The most of one line a snapshot shows or forwarding logs.
pub const LINE_CAP: usize = 4 * 1024;

/// What a line longer than [`LINE_CAP`] ends with.
const CUT_MARK: &str = " [line cut at 4 KiB]";

/// The `tracing` target forwarded stderr lines are logged under.
pub const STDERR_TARGET: &str = "sidewire_process::stderr";

/// The last `cap` bytes written to a stderr pipe.
#[derive(Debug)]
pub(crate) struct Tail {
    /// Grows to `cap` and then wraps; `start` is where the oldest byte is once full.
    ring: Vec<u8>,
    start: usize,
    cap: usize,
    /// Bytes were discarded; the text then starts after the first LF.
    lost: bool,
}

impl Tail {
    pub(crate) fn new(cap: usize) -> Self {
        Tail {
            ring: Vec::new(),
            start: 0,
            cap: cap.max(1),
            lost: false,
        }
    }

    /// Appends bytes, discarding the oldest beyond the cap.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if bytes.len() >= self.cap {
            self.lost |= !self.ring.is_empty() || bytes.len() > self.cap;
            bytes = &bytes[bytes.len() - self.cap..];
            self.ring.clear();
            self.ring.extend_from_slice(bytes);
            self.start = 0;
            return;
        }
        let room = self.cap - self.ring.len();
        if room > 0 {
            let now = room.min(bytes.len());
            self.ring.extend_from_slice(&bytes[..now]);
            bytes = &bytes[now..];
        }
        if bytes.is_empty() {
            return;
        }
        // Full: overwrite the oldest bytes, in at most two copies.
        self.lost = true;
        let first = (self.cap - self.start).min(bytes.len());
        self.ring[self.start..self.start + first].copy_from_slice(&bytes[..first]);
        let rest = bytes.len() - first;
        self.ring[..rest].copy_from_slice(&bytes[first..]);
        self.start = (self.start + bytes.len()) % self.cap;
    }

    /// The kept bytes in order. Once bytes were lost, everything up to and including the first
    /// LF is dropped (all of it without one), so the text never starts inside a line, a
    /// credential or a UTF-8 sequence.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.ring.len());
        bytes.extend_from_slice(&self.ring[self.start..]);
        bytes.extend_from_slice(&self.ring[..self.start]);
        if self.lost {
            let from = memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |i| i + 1);
            bytes.drain(..from);
        }
        bytes
    }

    /// The tail as text: lossy UTF-8, `\r` before each LF removed, each line redacted whole and
    /// then cut at [`LINE_CAP`], and at most `cap` bytes (oldest lines dropped first).
    #[cfg(test)]
    pub(crate) fn snapshot(&self, redactor: &Redactor) -> String {
        render(&self.bytes(), self.cap, redactor)
    }

    /// The ring's size.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }
}

/// The text of a tail's bytes (`Tail::bytes`), at most `cap` bytes: lossy UTF-8, `\r` before
/// each LF removed, each line redacted whole and then cut at [`LINE_CAP`], oldest lines dropped
/// first.
pub(crate) fn render(bytes: &[u8], cap: usize, redactor: &Redactor) -> String {
    let raw = String::from_utf8_lossy(bytes);
    let redacted = redactor.redact(&raw);
    let mut text = String::with_capacity(redacted.len());
    for (i, line) in redacted.split('\n').enumerate() {
        if i > 0 {
            text.push('\n');
        }
        push_capped(&mut text, line.strip_suffix('\r').unwrap_or(line));
    }
    if text.len() > cap {
        // Redaction marks and replacement characters can grow the text; drop whole lines
        // from the front (or, for one huge line, cut it at a char boundary).
        let over = text.len() - cap;
        let cut = match memchr::memchr(b'\n', &text.as_bytes()[over..]) {
            Some(i) => over + i + 1,
            None => (over..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len()),
        };
        text.drain(..cut);
    }
    text
}

impl Tail {
    /// The kept bytes in order, without the LF rule.
    #[cfg(test)]
    pub(crate) fn raw(&self) -> Vec<u8> {
        [&self.ring[self.start..], &self.ring[..self.start]].concat()
    }

    /// How many bytes are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ring.len()
    }
}

/// Appends `line`, cut at [`LINE_CAP`] bytes (on a char boundary) with [`CUT_MARK`].
fn push_capped(out: &mut String, line: &str) {
    if line.len() <= LINE_CAP {
        out.push_str(line);
        return;
    }
    let end = (0..=LINE_CAP)
        .rev()
        .find(|&i| line.is_char_boundary(i))
        .unwrap_or(0);
    out.push_str(&line[..end]);
    out.push_str(CUT_MARK);
}

/// Logs each complete stderr line at `info` under [`STDERR_TARGET`], redacted, with the
/// process's label as the `process` field. It does nothing (not even split lines) while no
/// subscriber wants that target.
#[derive(Debug)]
pub(crate) struct Forward {
    label: Arc<str>,
    redactor: Redactor,
    partial: Vec<u8>,
    cut: bool,
}

impl Forward {
    pub(crate) fn new(label: Arc<str>, redactor: Redactor) -> Self {
        Forward {
            label,
            redactor,
            partial: Vec::new(),
            cut: false,
        }
    }

    fn enabled() -> bool {
        tracing::enabled!(target: "sidewire_process::stderr", tracing::Level::INFO)
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if !Forward::enabled() {
            self.partial.clear();
            self.cut = false;
            return;
        }
        while let Some(newline) = memchr::memchr(b'\n', bytes) {
            self.extend(&bytes[..newline]);
            self.emit();
            bytes = &bytes[newline + 1..];
        }
        self.extend(bytes);
    }

    fn extend(&mut self, chunk: &[u8]) {
        // One line's bytes are kept up to the cap plus a margin, so redaction sees a credential
        // that straddles the cut whole before the line is cut.
        let keep = LINE_CAP + 256;
        let room = keep.saturating_sub(self.partial.len());
        if chunk.len() > room {
            self.partial.extend_from_slice(&chunk[..room]);
            self.cut = true;
        } else {
            self.partial.extend_from_slice(chunk);
        }
    }

    fn emit(&mut self) {
        let raw = String::from_utf8_lossy(&self.partial);
        let raw = raw.strip_suffix('\r').unwrap_or(&raw);
        let redacted = self.redactor.redact(raw);
        let mut line = String::with_capacity(redacted.len().min(LINE_CAP + CUT_MARK.len()));
        push_capped(&mut line, &redacted);
        if self.cut && !line.ends_with(CUT_MARK) {
            line.push_str(CUT_MARK);
        }
        tracing::info!(target: "sidewire_process::stderr", process = %self.label, "{line}");
        self.partial.clear();
        self.cut = false;
    }

    /// Logs the unfinished last line, if any (at the end of stderr).
    pub(crate) fn finish(&mut self) {
        if !self.partial.is_empty() && Forward::enabled() {
            self.emit();
        }
    }
}

#[cfg(test)]
mod tests;
