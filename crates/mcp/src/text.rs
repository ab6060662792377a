//! Text a peer or a file wrote, fit to put in an error or a log line: cut to a documented
//! bound, saying so, with control and bidirectional-override characters escaped.
//!
//! A server's error message, a protocol version it names, an unknown `resultType`, a task's
//! status message are all of any size: without a cut, a 7 MiB
//! string becomes a 7 MiB error message. Each such piece goes through [`peer`] (at most
//! [`PEER_TEXT_BYTES`]) or [`peer_list`] (at most [`PEER_LIST_ITEMS`] items); a cut piece ends
//! with `… (N bytes in all)`. As a backstop for text no site cut, an [`Error`](crate::Error)'s
//! own text is written through [`write_bounded`] (at most [`ERROR_TEXT_BYTES`]). A value a
//! message must not quote (a credential, a value a caller gave) is named by its type ([`json_kind`]).

use std::fmt::{self, Display, Write as _};

/// The most bytes of one piece of peer text a message quotes, after escaping.
pub(crate) const PEER_TEXT_BYTES: usize = 1024;

/// The most items of a peer's list (the protocol versions of a `-32022`) a message names.
pub(crate) const PEER_LIST_ITEMS: usize = 8;

/// The most bytes of an error's own text (what went wrong, without the server's name, the
/// startup stage, the exit status and the stderr tail around it). Over the largest text any
/// site builds on purpose: an HTTP error's 4 KiB of body, its URL and a schema violation.
pub(crate) const ERROR_TEXT_BYTES: usize = 16 * 1024;

/// The most bytes the mark of a cut (`… (N bytes in all)`) adds to a limit.
pub(crate) const CUT_MARK_BYTES: usize = "… ( bytes in all)".len() + 20;

/// The first bytes of `bytes` as text that is safe to show: invalid UTF-8 replaced, control
/// and bidirectional-override characters escaped, cut to `limit` bytes (then
/// `… (N bytes in all)`).
pub(crate) fn quote(bytes: &[u8], limit: usize) -> String {
    // Four bytes of input per output byte is more than escaping can ever need.
    let head = &bytes[..bytes.len().min(limit.saturating_mul(4))];
    let text = String::from_utf8_lossy(head);
    let mut out = String::new();
    let mut cut = head.len() < bytes.len();
    for c in text.chars() {
        let piece: String = if c.is_control() || is_bidi(c) {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        if out.len() + piece.len() > limit {
            cut = true;
            break;
        }
        out.push_str(&piece);
    }
    if cut {
        let _ = write!(out, "… ({} bytes in all)", bytes.len());
    }
    out
}

/// One piece of peer text (see [`quote`]), at most [`PEER_TEXT_BYTES`].
pub(crate) fn peer(text: &str) -> String {
    quote(text.as_bytes(), PEER_TEXT_BYTES)
}

/// The first `items` of a peer's list of `named` items as `["a", "b", … and N more]`: at most
/// [`PEER_LIST_ITEMS`] items, each cut by [`peer`].
pub(crate) fn peer_list(items: &[String], named: usize) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().take(PEER_LIST_ITEMS).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "\"{}\"", peer(item));
    }
    let more = named.saturating_sub(items.len().min(PEER_LIST_ITEMS));
    if more > 0 {
        let _ = write!(out, ", … and {more} more");
    }
    out.push(']');
    out
}

/// Writes `value` to `f`, cut to `limit` bytes on a character boundary (then
/// `… (N bytes in all)`); nothing past the limit is kept, however long `value`'s text is.
pub(crate) fn write_bounded(
    f: &mut fmt::Formatter<'_>,
    value: &dyn Display,
    limit: usize,
) -> fmt::Result {
    let mut bounded = Bounded {
        kept: String::new(),
        limit,
        total: 0,
    };
    write!(bounded, "{value}")?;
    f.write_str(&bounded.kept)?;
    if bounded.total > bounded.kept.len() {
        write!(f, "… ({} bytes in all)", bounded.total)?;
    }
    Ok(())
}

/// A writer that keeps the first `limit` bytes and counts the rest.
struct Bounded {
    kept: String,
    limit: usize,
    total: usize,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.total += s.len();
        let room = self.limit.saturating_sub(self.kept.len());
        if room > 0 {
            let mut end = s.len().min(room);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            // Once a piece is cut, nothing after it is kept either.
            self.kept.push_str(&s[..end]);
            if end < s.len() {
                self.limit = self.kept.len();
            }
        }
        Ok(())
    }
}

/// The characters that reorder text on a terminal (bidirectional embeddings and isolates).
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// The type of a JSON value in words ("a string", "null"), for a message that must not quote
/// the value itself.
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_text_is_escaped_cut_and_says_so() {
        assert_eq!(peer("a\u{1b}[31m\r\nb"), "a\\u{1b}[31m\\r\\nb");
        let long = "x".repeat(7 * 1024 * 1024);
        let cut = peer(&long);
        assert!(
            cut.len() <= PEER_TEXT_BYTES + CUT_MARK_BYTES,
            "{}",
            cut.len()
        );
        assert!(cut.ends_with("… (7340032 bytes in all)"), "{cut}");
        assert_eq!(peer("short"), "short");
    }

    #[test]
    fn a_list_names_its_first_items_and_counts_the_rest() {
        let versions: Vec<String> = (0..200_000).map(|i| format!("v{i}")).collect();
        let text = peer_list(&versions, versions.len());
        assert!(text.starts_with("[\"v0\", \"v1\""), "{text}");
        assert!(text.ends_with(", … and 199992 more]"), "{text}");
        assert!(peer_list(&versions[..2], 10).ends_with(", … and 8 more]"));
        assert_eq!(peer_list(&["a".to_owned()], 1), "[\"a\"]");
        assert_eq!(peer_list(&[], 0), "[]");
    }

    #[test]
    fn a_bounded_write_keeps_the_limit_and_counts_the_rest() {
        struct Show<'a>(&'a str);
        impl Display for Show<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_bounded(f, &self.0, 10)
            }
        }
        assert_eq!(Show("short").to_string(), "short");
        assert_eq!(Show("ééééééééé").to_string(), "ééééé… (18 bytes in all)");
    }
}
