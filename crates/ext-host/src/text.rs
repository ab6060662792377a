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

#[cfg(test)]
mod tests {
    use super::*;

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
