//! Text a config file wrote, fit to put in an error: cut to a documented bound, saying so,
//! with control and bidirectional-override characters escaped (`sidewire_mcp::shown_text`, the
//! rules every `sidewire-mcp` error quotes peer text by).
//!
//! A key, a TOML line or a dialect name may be of any size: each piece an error quotes goes
//! through [`peer`] (at most [`PEER_TEXT_BYTES`]) or [`quote`], and a cut piece ends with
//! `… (N bytes in all)`. As a backstop for text no site cut, every [`Error`](crate::Error)'s
//! message is cut by [`bounded`] (at most [`ERROR_TEXT_BYTES`]). A value an error must not
//! quote (it may be a secret) is named by its type ([`json_kind`]).

use std::fmt::Write as _;

/// The most bytes of one piece of a file's text an error quotes, after escaping.
pub(crate) const PEER_TEXT_BYTES: usize = 1024;

/// The most bytes of an error's message, whatever built it.
pub(crate) const ERROR_TEXT_BYTES: usize = 16 * 1024;

/// The first bytes of `bytes` as text that is safe to show (`sidewire_mcp::shown_text`: invalid
/// UTF-8 replaced, control and bidirectional-override characters escaped, cut to `limit` bytes,
/// then `… (N bytes in all)`).
pub(crate) fn quote(bytes: &[u8], limit: usize) -> String {
    sidewire_mcp::shown_text(bytes, limit)
}

/// One piece of a file's text (see [`quote`]), at most [`PEER_TEXT_BYTES`].
pub(crate) fn peer(text: &str) -> String {
    quote(text.as_bytes(), PEER_TEXT_BYTES)
}

/// `message` cut to [`ERROR_TEXT_BYTES`] on a character boundary (then `… (N bytes in all)`).
pub(crate) fn bounded(mut message: String) -> String {
    if message.len() <= ERROR_TEXT_BYTES {
        return message;
    }
    let all = message.len();
    let mut end = ERROR_TEXT_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    let _ = write!(message, "… ({all} bytes in all)");
    message
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
    fn a_files_text_is_escaped_cut_and_says_so() {
        assert_eq!(
            peer("a\u{1b}[31m\r\nb\u{202e}"),
            "a\\u{1b}[31m\\r\\nb\\u{202e}"
        );
        let cut = peer(&"x".repeat(7 * 1024 * 1024));
        assert!(cut.len() <= PEER_TEXT_BYTES + 40, "{}", cut.len());
        assert!(cut.ends_with("… (7340032 bytes in all)"), "{cut}");
        assert_eq!(peer("short"), "short");
    }

    #[test]
    fn a_message_is_bounded_on_a_character_boundary() {
        assert_eq!(bounded("short".to_owned()), "short");
        let long = "é".repeat(ERROR_TEXT_BYTES);
        let cut = bounded(long.clone());
        assert!(cut.len() <= ERROR_TEXT_BYTES + 40, "{}", cut.len());
        assert!(cut.ends_with(&format!("… ({} bytes in all)", long.len())));
    }
}
