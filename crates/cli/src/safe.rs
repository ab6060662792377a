//! Text from peers and manifests, made safe to print on a terminal: the one place where the
//! CLI escapes what it did not write itself.
//!
//! A sidecar, an MCP server (its tool names, descriptions, results, stderr, HTTP error bodies),
//! or a manifest can say anything; printed raw, an ESC sequence, a carriage return or a bidi
//! override can rewrite what the user sees (the FULL TRUST consent screen included). Every such
//! character ([`sidewire_ext_host::is_terminal_control`]: C0 and C1 controls, DEL, the bidi
//! embeddings, overrides, isolates and marks, the line and paragraph separators) becomes a
//! visible escape: `\n`, `\r`, `\t`, `\x1b` below U+0080, `\u{9b}` and `\u{202e}` above.
//!
//! * [`line()`] is for a value that belongs on one line (a name, a label, a reason): everything
//!   in the set is escaped, newline and tab included.
//! * [`block`] is for text that may span lines (a tool result, a stderr tail): newlines (and
//!   CRLF) are kept, and every line after the first starts with the caller's indent, so a peer
//!   cannot start a line that looks like one of ours; tabs are kept (a tab moves the cursor
//!   right, never to another line or back over text). A lone CR is escaped.
//! * [`controls`] is the net under [`Out`](crate::out::Out): it escapes the set but keeps
//!   newlines and tabs, so the CLI's own multi-line text passes and no raw control byte leaves
//!   the process even from a print site that forgot [`line()`] or [`block`].
//!
//! Backslashes are not escaped: a peer can make text *look* escaped, which forges nothing, and
//! paths and regular expressions stay readable. `--json` output is never escaped (it must stay
//! lossless); [`json`] writes it with the same characters as `\u` escapes, which JSON readers
//! decode back to the original.
//!
//! Text with nothing to escape is returned borrowed, without allocating.

use std::borrow::Cow;

use sidewire_ext_host::is_terminal_control;

/// One line of peer text: every terminal control escaped, newline and tab included.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escape(text, Mode::Line)
}

/// Peer text that may span lines: newlines kept, each following line prefixed with `indent`
/// (which must be non-empty, or nothing would tell the peer's lines from ours).
pub(crate) fn block<'a>(text: &'a str, indent: &str) -> Cow<'a, str> {
    debug_assert!(!indent.is_empty(), "a block needs an indent");
    escape(text, Mode::Block(indent))
}

/// Every terminal control escaped except newline and tab: the net under all output.
pub(crate) fn controls(text: &str) -> Cow<'_, str> {
    escape(text, Mode::Block(""))
}

/// Every cause of `err`, each through [`block`], joined with `: ` (anyhow's `{:#}` layout).
pub(crate) fn error_chain(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for (i, cause) in err.chain().enumerate() {
        if i > 0 {
            text.push_str(": ");
        }
        text.push_str(&block(&cause.to_string(), "  "));
    }
    text
}

/// `value` as pretty JSON whose strings spell DEL, C1 controls and the bidi and separator
/// characters as `\u` escapes (serde_json already escapes C0). The document decodes to exactly
/// the same value, so `--json` stays lossless while printing nothing a terminal acts on.
pub(crate) fn json(value: &serde_json::Value) -> String {
    let mut buf = Vec::new();
    if write_json(&mut buf, value).is_err() {
        return String::new();
    }
    // The formatter writes only what serde_json gives it plus ASCII escapes, so the bytes
    // are UTF-8; the lossy conversion never replaces anything.
    String::from_utf8_lossy(&buf).into_owned()
}

/// `value` as one line of compact JSON, with the characters [`json`] escapes spelled as `\u`
/// escapes: for `--json` output of one object per event (NDJSON).
pub(crate) fn json_line(value: &impl serde::Serialize) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    // Compact JSON holds such characters only inside strings (C0 is escaped already), where a
    // `\u` escape means the same character; every one of them is in the BMP.
    if !text.chars().any(is_terminal_control) {
        return text;
    }
    let mut line = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_terminal_control(c) {
            line.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            line.push(c);
        }
    }
    line
}

/// Writes `value` as [`json`] does, straight to `writer`: a document serialised as it goes
/// (a listing of thousands of rows) is never held whole.
pub(crate) fn write_json<W: std::io::Write>(
    writer: W,
    value: &impl serde::Serialize,
) -> Result<(), serde_json::Error> {
    let mut serializer = serde_json::Serializer::with_formatter(writer, JsonFormatter::default());
    value.serialize(&mut serializer)
}

#[derive(Default)]
struct JsonFormatter(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for JsonFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if is_terminal_control(c) {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    // Everything else is the pretty formatter's layout, delegated.
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[derive(Clone, Copy)]
enum Mode<'i> {
    Line,
    Block(&'i str),
}

/// The offset of the first character `mode` changes, if any. Bytes that cannot start a
/// character in the set are skipped without decoding: every character in the set is ASCII or
/// starts with 0xC2 (C1), 0xD8 (U+061C) or 0xE2 (U+2000–U+2FFF), and those are lead bytes, so
/// each candidate offset is a character boundary.
fn first_change(text: &str, mode: Mode<'_>) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if b < 0x20 || b == 0x7f || b == 0xc2 || b == 0xd8 || b == 0xe2 {
            let c = text[at..]
                .chars()
                .next()
                .expect("a candidate is a char boundary");
            let kept = match (mode, c) {
                (Mode::Block(_), '\t') => true,
                (Mode::Block(indent), '\n') => indent.is_empty(),
                (_, c) => !is_terminal_control(c),
            };
            if !kept {
                return Some(at);
            }
        }
        at += 1;
    }
    None
}

fn escape<'a>(text: &'a str, mode: Mode<'_>) -> Cow<'a, str> {
    let Some(first) = first_change(text, mode) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut chars = text[first..].chars().peekable();
    while let Some(c) = chars.next() {
        match (mode, c) {
            (Mode::Block(_), '\t') => out.push('\t'),
            (Mode::Block(indent), '\n') => {
                out.push('\n');
                out.push_str(indent);
            }
            // CRLF is a line break in a block; a lone CR would move back over the line.
            (Mode::Block(indent), '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                out.push('\n');
                out.push_str(indent);
            }
            (_, c) if is_terminal_control(c) => push_escape(&mut out, c),
            (_, c) => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if u32::from(c) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

#[cfg(test)]
mod tests;
