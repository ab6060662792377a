//! Peer text made safe for a message: quoted or not, cut, and with every character for which
//! [`is_terminal_control`] holds escaped.
//!
//! The predicate itself is `sidewire-ext-protocol`'s (re-exported at this crate's root): one set
//! decides both what the launch rules refuse in the manifest members the consent screen shows,
//! and what a renderer (the `sidewire` CLI) must escape before printing anything a peer or a
//! manifest said.

use crate::is_terminal_control;

/// `text` for a message, whatever a peer put in it: in double quotes, cut to `max_chars`
/// characters (then `...` and how many characters there were), with the quotes, backslashes and
/// every character for which [`is_terminal_control`] holds escaped (`\n`, `\u{1b}`), so it
/// cannot end the quotes, break the line or act on a terminal.
pub(crate) fn quote_cut(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 2) + 2);
    out.push('"');
    let cut = push_escaped(&mut out, text, max_chars, true);
    out.push('"');
    if cut {
        out.push_str(&counted(text));
    }
    out
}

/// `text` (a message that may hold peer text) cut and escaped as [`quote_cut`] does, without
/// the quotes.
pub(crate) fn escape_cut(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 2));
    if push_escaped(&mut out, text, max_chars, false) {
        out.push_str(&counted(text));
    }
    out
}

/// `... (N characters)`, for a cut `text`.
fn counted(text: &str) -> String {
    format!("... ({} characters)", text.chars().count())
}

/// Appends at most `max_chars` characters of `text` to `out`, escaped (and `"` too when
/// `quotes`); `true` when some were left out.
fn push_escaped(out: &mut String, text: &str, max_chars: usize, quotes: bool) -> bool {
    use std::fmt::Write as _;
    let mut chars = text.chars();
    for c in chars.by_ref().take(max_chars) {
        match c {
            '"' if quotes => out.push_str("\\\""),
            '\\' if quotes => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_terminal_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    chars.next().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_peer_text_is_escaped_and_cut() {
        assert_eq!(quote_cut("text", 10), "\"text\"");
        assert_eq!(
            quote_cut("a\"b\\c\n\u{1b}[2K\u{202e}", 20),
            "\"a\\\"b\\\\c\\n\\u{1b}[2K\\u{202e}\""
        );
        assert_eq!(quote_cut("abcdef", 3), "\"abc\"... (6 characters)");
        assert_eq!(quote_cut("日本語", 3), "\"日本語\"");
        assert_eq!(escape_cut("a \"b\"\r\u{9b}", 20), "a \"b\"\\r\\u{9b}");
        assert_eq!(escape_cut("abcdef", 3), "abc... (6 characters)");
    }
}
