//! Presentation: human text or `--json` on stdout, diagnostics on stderr, colour only on a
//! terminal and never with `NO_COLOR`.

use std::io::{IsTerminal, Write};

/// Where and how results are printed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Out {
    pub(crate) json: bool,
    color: bool,
}

impl Out {
    pub(crate) fn new(json: bool) -> Self {
        let color =
            !json && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Out { json, color }
    }

    /// A line of human output (ignored with `--json`).
    pub(crate) fn line(&self, text: impl AsRef<str>) {
        if !self.json {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", text.as_ref());
        }
    }

    /// A heading, bold on a terminal.
    pub(crate) fn heading(&self, text: impl AsRef<str>) {
        if self.color {
            self.line(format!("\x1b[1m{}\x1b[0m", text.as_ref()));
        } else {
            self.line(text);
        }
    }

    /// The JSON document of a command (only with `--json`).
    pub(crate) fn json(&self, value: &serde_json::Value) {
        if self.json {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(
                stdout,
                "{}",
                serde_json::to_string_pretty(value).unwrap_or_default()
            );
        }
    }

    /// A note on stderr.
    pub(crate) fn note(&self, text: impl AsRef<str>) {
        let _ = writeln!(std::io::stderr().lock(), "{}", text.as_ref());
    }

    /// An error on stderr, with its causes.
    pub(crate) fn error(&self, err: &anyhow::Error) {
        let _ = writeln!(std::io::stderr().lock(), "error: {err:#}");
    }
}
