//! Finds a top-level `"id"` in the first bytes of a frame that was too large to read whole.
//!
//! A skipped oversized line is usually a response to one of our requests; its id is near the
//! start. This scanner walks JSON tokens just far enough to tell nesting depth, so an `"id"`
//! inside `result` is never mistaken for the response's own.

/// The integer value of the top-level `"id"` member in `prefix`, if one is complete there.
pub(crate) fn top_level_id(prefix: &[u8]) -> Option<u64> {
    let mut depth = 0usize;
    let mut i = 0;
    // Whether the last string at depth 1 was a key named `id`, waiting for its colon.
    let mut id_key = false;
    // Whether the previous significant token at depth 1 opened a key position (`{` or `,`).
    let mut key_position = false;
    while i < prefix.len() {
        match prefix[i] {
            b'"' => {
                let start = i + 1;
                i = start;
                while i < prefix.len() && prefix[i] != b'"' {
                    i += if prefix[i] == b'\\' { 2 } else { 1 };
                }
                if i >= prefix.len() {
                    return None;
                }
                id_key = depth == 1 && key_position && &prefix[start..i] == b"id";
                key_position = false;
            }
            b':' if id_key => {
                let rest = &prefix[i + 1..];
                let rest = trim_start(rest);
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 || digits == rest.len() {
                    // Not an integer, or cut off before its end.
                    return None;
                }
                return std::str::from_utf8(&rest[..digits]).ok()?.parse().ok();
            }
            b'{' | b'[' => {
                depth += 1;
                key_position = depth == 1 && prefix[i] == b'{';
                id_key = false;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                id_key = false;
            }
            b',' => {
                key_position = depth == 1;
                id_key = false;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => {
                id_key = false;
                key_position = false;
            }
        }
        i += 1;
    }
    None
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::top_level_id;

    #[test]
    fn finds_the_top_level_id_before_a_huge_result() {
        assert_eq!(
            top_level_id(br#"{"jsonrpc":"2.0","id":42,"result":{"text":"aaaa"#),
            Some(42)
        );
        assert_eq!(top_level_id(br#"{ "id" : 7 , "result": "#), Some(7));
    }

    #[test]
    fn ignores_nested_ids_and_id_values() {
        assert_eq!(
            top_level_id(br#"{"jsonrpc":"2.0","result":{"id":5,"x":"#),
            None
        );
        assert_eq!(top_level_id(br#"{"method":"id","params":{"id":3}"#), None);
        assert_eq!(top_level_id(br#"{"a":["id",1],"b":"#), None);
    }

    #[test]
    fn id_after_the_result_is_found_when_the_result_is_complete() {
        assert_eq!(
            top_level_id(br#"{"result":{"id":1,"s":"\"}"},"id":9,"#),
            Some(9)
        );
    }

    #[test]
    fn string_or_cut_off_ids_are_not_guessed() {
        assert_eq!(top_level_id(br#"{"id":"abc","result":"#), None);
        assert_eq!(top_level_id(br#"{"id":12"#), None);
        assert_eq!(top_level_id(br#"{"id":-1,"#), None);
    }
}
