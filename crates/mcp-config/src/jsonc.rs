//! JSON with comments (VS Code's `mcp.json`, opencode's `opencode.jsonc`): `//` and `/* */`
//! comments and trailing commas are blanked out (each byte turned into a space, newlines kept),
//! so the result is plain JSON whose error positions are those of the original text. Where the
//! first of each was is kept: whether the file's own tool would read them depends on its
//! dialect (see [`Dialect::takes_comments`](crate::Dialect)), which is known only once the JSON
//! is read, and a file that tool would refuse gets a warning.

/// A text with its comments and trailing commas blanked.
#[derive(Debug)]
pub(crate) struct Stripped {
    /// Plain JSON, with the original's positions.
    pub(crate) text: String,
    /// The byte offset of the first comment, if any.
    pub(crate) comment: Option<usize>,
    /// The byte offset of the first trailing comma, if any.
    pub(crate) trailing_comma: Option<usize>,
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
pub(crate) fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit_once('\n')
        .map_or(before, |(_, last)| last)
        .chars()
        .count()
        + 1;
    (line, column)
}

/// `text` with its comments and trailing commas blanked; strings are left alone.
pub(crate) fn strip(text: &str) -> Stripped {
    let mut comment = None;
    let mut trailing_comma = None;
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
                comment.get_or_insert(i);
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                comment.get_or_insert(i);
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
                    trailing_comma.get_or_insert(at);
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
    Stripped {
        text: String::from_utf8(out).unwrap_or_else(|_| text.to_owned()),
        comment,
        trailing_comma,
    }
}
