//! Presentation: human text or `--json` on stdout, diagnostics on stderr, colour only on a
//! terminal and never with `NO_COLOR`.
//!
//! Every line goes through [`safe::controls`] on its way out, so no raw control character
//! reaches the terminal even from a print site that forgot to escape a peer's text; the
//! print sites still escape each peer value with [`safe::line()`] or [`safe::block`], which also
//! stops a peer's newline from faking a line of ours. JSON is written by [`safe::json`].

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::safe;

/// How log lines look at the default level (no `-v`, no `RUST_LOG`): plain notes like the
/// CLI's own, `warning: restarting a crashed MCP server server=demo attempt=1`, without the
/// timestamp and level column, which are for debugging (`-v` has them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Notes;

impl<S, N> FormatEvent<S, N> for Notes
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let word = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            tracing::Level::INFO => "note",
            _ => "debug",
        };
        write!(writer, "{word}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Where terminal text goes instead of stdout and stderr while `run`'s line editor owns the
/// terminal: printed above the prompt, which is then drawn again (set once, by `run` on a
/// terminal; never with `--json`).
type Route = Box<dyn Fn(&str) + Send + Sync>;
static TERMINAL: OnceLock<Route> = OnceLock::new();

/// Sends every later line of text (stdout's and stderr's, already escaped, newline included)
/// through `route`. Only the first call has an effect.
pub(crate) fn route_terminal(route: impl Fn(&str) + Send + Sync + 'static) {
    let _ = TERMINAL.set(Box::new(route));
}

/// Writes `text` through the route, if one is set; returns whether it did.
fn routed(text: &str) -> bool {
    match TERMINAL.get() {
        Some(route) => {
            route(text);
            true
        }
        None => false,
    }
}

/// Where and how results are printed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Out {
    pub(crate) json: bool,
    color: bool,
    /// Stdout is a terminal (else a pipe or a file: see [`Out::verbatim`]).
    terminal: bool,
}

impl Out {
    pub(crate) fn new(json: bool) -> Self {
        let terminal = std::io::stdout().is_terminal();
        let color = !json && terminal && std::env::var_os("NO_COLOR").is_none();
        Out {
            json,
            color,
            terminal,
        }
    }

    /// Whether stdout is a terminal.
    pub(crate) fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// A peer's text written to stdout as it is, byte for byte, control characters included
    /// (ignored with `--json`). Only for text whose bytes are the point (a tool's text result
    /// piped to a file) and only when stdout is not a terminal: the callers check
    /// [`is_terminal`](Out::is_terminal) and escape on a terminal.
    pub(crate) fn verbatim(&self, text: &str) {
        debug_assert!(!self.terminal, "verbatim text is for a pipe or a file");
        if !self.json {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        }
    }

    /// A line of human output (ignored with `--json`).
    pub(crate) fn line(&self, text: impl AsRef<str>) {
        if !self.json {
            let text = format!("{}\n", safe::controls(text.as_ref()));
            if !routed(&text) {
                let _ = std::io::stdout().lock().write_all(text.as_bytes());
            }
        }
    }

    /// A heading (the CLI's own text), bold on a terminal.
    pub(crate) fn heading(&self, text: impl AsRef<str>) {
        if self.json {
            return;
        }
        let text = safe::controls(text.as_ref());
        let mut stdout = std::io::stdout().lock();
        // One of the two escape sequences the CLI writes on stdout on purpose (the other dims
        // reasoning), around text that is itself escaped.
        let _ = if self.color {
            writeln!(stdout, "\x1b[1m{text}\x1b[0m")
        } else {
            writeln!(stdout, "{text}")
        };
    }

    /// The JSON document of a command (only with `--json`).
    pub(crate) fn json(&self, value: &serde_json::Value) {
        if self.json {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", safe::json(value));
        }
    }

    /// The JSON document of a command written as it is serialised (only with `--json`), for
    /// documents too large to build first.
    pub(crate) fn json_stream(&self, value: &impl serde::Serialize) {
        if self.json {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let _ = safe::write_json(&mut stdout, value);
            let _ = writeln!(stdout);
        }
    }

    /// One JSON object on one line (only with `--json`): the events of a stream or a turn.
    pub(crate) fn json_line(&self, value: &impl serde::Serialize) {
        if self.json {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", safe::json_line(value));
            let _ = stdout.flush();
        }
    }

    /// Text written as it arrives, without a newline, flushed (ignored with `--json`); dimmed
    /// on a terminal when `dim`. The caller escapes peer text first; this escapes controls as
    /// the net.
    pub(crate) fn stream(&self, text: &str, dim: bool) {
        if self.json || text.is_empty() {
            return;
        }
        let text = safe::controls(text);
        let mut stdout = std::io::stdout().lock();
        // Besides the heading's bold, the only escape sequence the CLI writes on purpose.
        let _ = if dim && self.color {
            write!(stdout, "\x1b[2m{text}\x1b[0m")
        } else {
            write!(stdout, "{text}")
        };
        let _ = stdout.flush();
    }

    /// A note on stderr.
    pub(crate) fn note(&self, text: impl AsRef<str>) {
        let text = format!("{}\n", safe::controls(text.as_ref()));
        if !routed(&text) {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }

    /// An error on stderr, with its causes, each escaped (they carry peer text: HTTP bodies,
    /// stderr tails, reasons).
    pub(crate) fn error(&self, err: &anyhow::Error) {
        let text = format!("error: {}\n", safe::error_chain(err));
        if !routed(&text) {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            crate::lock(&self.0).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn default_level_log_lines_are_plain_notes() {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .event_format(Notes)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                server = "demo",
                attempt = 1,
                "restarting a crashed MCP server"
            );
        });
        let text = String::from_utf8(crate::lock(&buffer.0).clone()).unwrap();
        assert!(
            text.starts_with("warning: restarting a crashed MCP server"),
            "{text:?}"
        );
        assert!(text.contains("server") && text.contains("demo"), "{text:?}");
        assert!(!text.contains("WARN"), "{text:?}");
        assert_eq!(text.lines().count(), 1, "{text:?}");
    }
}
