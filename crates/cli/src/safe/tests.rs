//! The escaping rules, character by character, and the borrowed fast path.

use std::borrow::Cow;

use super::*;

/// The spoof from issue 11: on a terminal it erases its own line and prints a fake one.
const SPOOF: &str = "${REASONIX_PLUGIN_ROOT}/run\u{1b}[2K\r  command:      node index.js";

#[test]
fn plain_text_is_borrowed_in_every_mode() {
    for text in [
        "",
        "hello",
        "path/to/a b",
        "é€日本語 ✓",
        "C:\\x1b is not an escape",
        "a\tb",
    ] {
        if !text.contains('\t') {
            assert!(matches!(line(text), Cow::Borrowed(_)), "{text:?}");
        }
        assert!(matches!(block(text, "  "), Cow::Borrowed(_)), "{text:?}");
        assert!(matches!(controls(text), Cow::Borrowed(_)), "{text:?}");
    }
    assert!(matches!(controls("two\nlines"), Cow::Borrowed(_)));
}

#[test]
fn the_spoof_shows_its_escape_and_no_raw_control() {
    let shown = line(SPOOF);
    assert_eq!(
        shown,
        "${REASONIX_PLUGIN_ROOT}/run\\x1b[2K\\r  command:      node index.js"
    );
    assert!(!shown.contains('\u{1b}') && !shown.contains('\r'));
}

#[test]
fn each_kind_of_control_gets_its_visible_escape() {
    let cases = [
        ("\u{1b}", "\\x1b"),
        ("\r", "\\r"),
        ("\n", "\\n"),
        ("\t", "\\t"),
        ("\u{0}", "\\x00"),
        ("\u{7}", "\\x07"),
        ("\u{8}", "\\x08"),
        ("\u{7f}", "\\x7f"),
        ("\u{80}", "\\u{80}"),
        ("\u{9b}", "\\u{9b}"),
        ("\u{9f}", "\\u{9f}"),
        ("\u{61c}", "\\u{61c}"),
        ("\u{200e}", "\\u{200e}"),
        ("\u{200f}", "\\u{200f}"),
        ("\u{2028}", "\\u{2028}"),
        ("\u{2029}", "\\u{2029}"),
        ("\u{202a}", "\\u{202a}"),
        ("\u{202e}", "\\u{202e}"),
        ("\u{2066}", "\\u{2066}"),
        ("\u{2069}", "\\u{2069}"),
    ];
    for (raw, escaped) in cases {
        assert_eq!(line(&format!("a{raw}b")), format!("a{escaped}b"), "{raw:?}");
    }
    // Neighbours of the set, and characters that share its lead bytes, pass untouched.
    for kept in [
        "\u{a0}", "\u{a9}", "\u{600}", "\u{2027}", "\u{202f}", "\u{2065}", "\u{206a}", "€", "—",
    ] {
        assert_eq!(line(kept), kept, "{kept:?}");
    }
}

#[test]
fn a_block_keeps_and_indents_its_lines_and_escapes_the_rest() {
    assert_eq!(block("one\ntwo\nthree", "  "), "one\n  two\n  three");
    // CRLF is a line break; a lone CR is not.
    assert_eq!(block("one\r\ntwo\rthree", "> "), "one\n> two\\rthree");
    // Tabs stay in a block: they cannot leave the line.
    assert_eq!(block("a\tb", "  "), "a\tb");
    assert_eq!(
        block("ok\n\u{1b}[1Aerror: \u{202e}gnp.exe", "  "),
        "ok\n  \\x1b[1Aerror: \\u{202e}gnp.exe"
    );
    // A fake field after a newline is indented, so it cannot line up with real ones.
    assert_eq!(
        block("x\n  command:      node index.js", "    "),
        "x\n      command:      node index.js"
    );
}

#[test]
fn the_net_keeps_newlines_and_tabs_and_escapes_everything_else() {
    assert_eq!(controls("a\n\tb"), "a\n\tb");
    assert_eq!(controls(SPOOF), line(SPOOF));
    assert_eq!(controls("x\r\ny"), "x\ny");
    assert_eq!(controls("\u{9b}31m"), "\\u{9b}31m");
}

#[test]
fn every_cause_of_an_error_chain_is_escaped_and_shown_once() {
    let err = anyhow::anyhow!("HTTP 500: \u{1b}]0;owned\u{7}body\nsecond line")
        .context("calling \u{202e}tool");
    let text = error_chain(&err);
    assert_eq!(
        text,
        "calling \\u{202e}tool: HTTP 500: \\x1b]0;owned\\x07body\n  second line"
    );
}

#[test]
fn json_stays_the_same_value_with_no_raw_control() {
    let value = serde_json::json!({
        "name": SPOOF,
        "bidi": "a\u{202e}b\u{2066}",
        "c1": "\u{9b}\u{7f}",
        "plain": "é €",
        "nested": [{"k": "\u{85}"}]
    });
    let text = json(&value);
    for c in text.chars() {
        assert!(
            c == '\n' || !sidewire_ext_host::is_terminal_control(c),
            "raw {c:?} in {text}"
        );
    }
    assert!(text.contains("\\u202e") && text.contains("\\u009b") && text.contains("\\u007f"));
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back, value);
    // Laid out like serde_json's own pretty printer.
    let plain = serde_json::json!({"a": [1, {"b": "c"}]});
    assert_eq!(json(&plain), serde_json::to_string_pretty(&plain).unwrap());
}

#[test]
fn a_json_line_is_one_line_lossless_and_free_of_raw_controls() {
    let value = serde_json::json!({"text": format!("a\nb {SPOOF} \u{9b}x \u{202e}y é")});
    let line = json_line(&value);
    assert!(!line.contains('\n'), "{line}");
    assert!(!line.chars().any(is_terminal_control), "{line}");
    assert!(
        line.contains("\\u009b") && line.contains("\\u202e"),
        "{line}"
    );
    let back: serde_json::Value = serde_json::from_str(&line).expect("valid JSON");
    assert_eq!(back, value);
    // Nothing to escape: serde_json's own compact text.
    assert_eq!(
        json_line(&serde_json::json!({"a": [1, "é"]})),
        r#"{"a":[1,"é"]}"#
    );
}
