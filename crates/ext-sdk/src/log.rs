//! Diagnostics on stderr, the only place a sidecar may write free text (§2.1, §13.5).
//!
//! Every line carries the prefix [`SDK_STDERR_PREFIX`] so a host's stderr tail shows whose it
//! is. [`log`] is for extension authors; the SDK's own diagnostics go through the
//! [`Options::logger`](crate::Options::logger) sink, which defaults to the same stderr lines and
//! can be redirected (tests, or a sidecar embedded in another process). Nothing here writes to
//! stdout, which belongs to the protocol.

use std::fmt;
use std::io::Write as _;
use std::sync::Arc;

use sidewire_ext_protocol::SDK_STDERR_PREFIX;

/// Writes `message` to stderr, one `reasonix-extension: `-prefixed line per line of text.
///
/// This is the way for a sidecar to log: `println!` (or anything else writing to stdout)
/// corrupts the protocol stream and makes the host kill the sidecar.
pub fn log(message: impl fmt::Display) {
    write_stderr(&message.to_string());
}

fn write_stderr(message: &str) {
    let mut out = String::with_capacity(message.len() + SDK_STDERR_PREFIX.len() + 1);
    for line in message.lines() {
        out.push_str(SDK_STDERR_PREFIX);
        out.push_str(line);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(SDK_STDERR_PREFIX);
        out.push('\n');
    }
    // One write of whole lines, so lines from concurrent callers do not interleave. A failed
    // write to stderr has nowhere to be reported.
    let _ = std::io::stderr().lock().write_all(out.as_bytes());
}

/// Where the SDK's own diagnostics go.
#[derive(Clone)]
pub(crate) struct Logger(Arc<dyn Fn(&str) + Send + Sync>);

impl Logger {
    /// Prefixed lines on stderr.
    pub(crate) fn stderr() -> Self {
        Logger(Arc::new(write_stderr))
    }

    pub(crate) fn new(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Logger(Arc::new(sink))
    }

    pub(crate) fn log(&self, message: &str) {
        (self.0)(message);
    }
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Logger")
    }
}
