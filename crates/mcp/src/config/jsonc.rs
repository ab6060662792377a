//! JSON with comments (VS Code's `mcp.json`, opencode's `opencode.jsonc`): `//` and `/* */`
//! comments and trailing commas are blanked out (each byte turned into a space, newlines kept),
//! so the result is plain JSON whose error positions are those of the original text.

/// `text` with its comments and trailing commas blanked; strings are left alone.
pub(crate) fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    // The last comma outside a string, blanked when the next significant byte closes.
    let mut comma: Option<usize> = None;
    // The last significant byte outside comments: a comma right after `{`, `[` or another
    // comma follows no value, so it is not a trailing comma and is left for the parser.
    let mut last = b' ';
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                comma = None;
                last = b'"';
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
                for byte in &mut out[i..end] {
                    if *byte != b'\n' {
                        *byte = b' ';
                    }
                }
                i = end;
            }
            b',' => {
                comma = (!matches!(last, b'{' | b'[' | b',')).then_some(i);
                last = b',';
                i += 1;
            }
            b'}' | b']' => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                }
                last = bytes[i];
                i += 1;
            }
            byte => {
                if !byte.is_ascii_whitespace() {
                    comma = None;
                    last = byte;
                }
                i += 1;
            }
        }
    }
    // Only ASCII bytes outside strings were replaced by ASCII spaces (a comment's multi-byte
    // characters are replaced whole), so the text stays UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}
