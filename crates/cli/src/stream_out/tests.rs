//! Unit tests of what the stream printers write.

use super::{ARGUMENTS_PREVIEW_CHARS, arguments_preview};

/// Arguments print whole up to the preview bound, escaped; past it, cut on a character
/// boundary with the whole size said.
#[test]
fn tool_call_arguments_print_as_a_bounded_escaped_preview() {
    assert_eq!(arguments_preview(r#"{"a":1}"#), r#"{"a":1}"#);
    assert_eq!(
        arguments_preview("{\"a\":\"\u{1b}[2K\"}"),
        "{\"a\":\"\\x1b[2K\"}"
    );
    let exact = "é".repeat(ARGUMENTS_PREVIEW_CHARS);
    assert_eq!(arguments_preview(&exact), exact);
    let huge = format!("{{\"data\":\"{}\"}}", "é".repeat(7 * 1024 * 1024 / 2));
    let preview = arguments_preview(&huge);
    assert!(preview.starts_with("{\"data\":\"éé"), "{preview}");
    assert!(
        preview.ends_with(&format!("... ({} bytes in all)", huge.len())),
        "{preview}"
    );
    assert!(
        preview.chars().count() < ARGUMENTS_PREVIEW_CHARS + 40,
        "{preview}"
    );
}
