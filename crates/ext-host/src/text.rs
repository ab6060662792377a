//! Which characters a terminal must never receive raw from a plugin or a peer.
//!
//! One predicate, [`is_terminal_control`], decides both what `PluginStore::install` refuses in
//! the manifest members the consent screen shows, and what a renderer (the `sidewire` CLI) must
//! escape before printing anything a peer or a manifest said. Keeping the two on one set means
//! a manifest that installs can never hold a character the consent screen would have to hide.

/// Whether `c` can move the cursor, change the terminal's state or reorder the text around it:
///
/// * every C0 control (U+0000–U+001F, which includes tab, newline, carriage return and ESC),
///   DEL (U+007F) and every C1 control (U+0080–U+009F; U+009B is a one-character CSI);
/// * the Unicode bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), and the
///   implicit marks U+200E, U+200F and U+061C, which reorder neighbouring text ("Trojan
///   Source", CVE-2021-42574);
/// * the line and paragraph separators U+2028 and U+2029, which some renderers break lines at.
pub fn is_terminal_control(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// The first character of `text` for which [`is_terminal_control`] holds, with its byte offset.
pub(crate) fn first_terminal_control(text: &str) -> Option<(usize, char)> {
    text.char_indices().find(|&(_, c)| is_terminal_control(c))
}

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

    #[test]
    fn the_set_is_exactly_controls_del_c1_and_bidi() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            assert!(is_terminal_control(c), "{:?}", c);
        }
        for c in [
            '\u{61c}', '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}', '\u{202a}', '\u{202b}',
            '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            assert!(is_terminal_control(c), "{:?}", c);
        }
        for c in [
            ' ', '~', 'a', '\u{a0}', 'é', '€', '\u{200b}', '\u{2027}', '\u{202f}', '\u{2065}',
            '\u{206a}', '日',
        ] {
            assert!(!is_terminal_control(c), "{:?}", c);
        }
    }

    #[test]
    fn the_first_control_is_found_with_its_byte_offset() {
        assert_eq!(first_terminal_control("plain text, é€"), None);
        assert_eq!(first_terminal_control("é\u{1b}[2K"), Some((2, '\u{1b}')));
        assert_eq!(
            first_terminal_control("ab\u{202e}cd\r"),
            Some((2, '\u{202e}'))
        );
    }
}
