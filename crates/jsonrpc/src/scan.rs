//! Finds a top-level `"id"` in the first bytes of a frame that was too large to read whole, or
//! in a frame that does not decode.
//!
//! A skipped oversized line is usually a response to one of our requests; its id is near the
//! start. A line that is not UTF-8 or not valid JSON may still name the request it answers, so
//! that request fails at once instead of waiting for its timeout. This scanner walks JSON tokens just far enough to tell nesting depth, so an `"id"`
//! inside `result` is never mistaken for the response's own.

/// The integer value of the top-level `"id"` member in `prefix`, if one is complete there.
pub(crate) fn top_level_id(prefix: &[u8]) -> Option<u64> {
    scan(prefix).id
}

/// The id of the response a frame that does not decode (not UTF-8, broken JSON, a duplicate
/// member) was meant to be: its top-level integer `"id"`, when it has no top-level `"method"`
/// (a request or notification of the peer's never names one of ours).
pub(crate) fn response_id(frame: &[u8]) -> Option<u64> {
    let members = scan(frame);
    if members.method {
        return None;
    }
    members.id
}

/// What a scan saw at the top level.
#[derive(Debug, Default)]
struct Members {
    /// The first top-level `"id"`'s value, when it is a complete integer.
    id: Option<u64>,
    /// Whether a top-level `"id"` key (and its colon) appeared.
    id_seen: bool,
    /// Whether a top-level `"method"` key appeared.
    method: bool,
}

/// Walks JSON tokens over `bytes` (which may be cut off or broken anywhere), tracking nesting
/// depth, and notes the top-level `"id"` and `"method"` keys.
fn scan(bytes: &[u8]) -> Members {
    let mut members = Members::default();
    let mut depth = 0usize;
    let mut i = 0;
    // Whether the last string at depth 1 was a key named `id`, waiting for its colon.
    let mut id_key = false;
    // Whether the previous significant token at depth 1 opened a key position (`{` or `,`).
    let mut key_position = false;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i = start;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if i >= bytes.len() {
                    return members;
                }
                let key = depth == 1 && key_position;
                id_key = key && &bytes[start..i] == b"id";
                members.method |= key && &bytes[start..i] == b"method";
                key_position = false;
            }
            b':' if id_key => {
                id_key = false;
                let rest = trim_start(&bytes[i + 1..]);
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                // Not an integer, or cut off before its end: no id is guessed.
                if !members.id_seen && digits > 0 && digits < rest.len() {
                    members.id = std::str::from_utf8(&rest[..digits])
                        .ok()
                        .and_then(|digits| digits.parse().ok());
                }
                members.id_seen = true;
            }
            b'{' | b'[' => {
                depth += 1;
                key_position = depth == 1 && bytes[i] == b'{';
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
    members
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::{response_id, top_level_id};

    #[test]
    fn a_broken_frame_names_the_response_it_was_meant_to_be() {
        assert_eq!(
            response_id(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"x\":\xff}}"),
            Some(3)
        );
        assert_eq!(response_id(br#"{"id":4,"result":{"a":1,}"#), Some(4));
        assert_eq!(response_id(br#"{"id":5,"id":6,"result":1}"#), Some(5));
        // A request or notification of the peer's names none of ours, wherever its method is.
        assert_eq!(response_id(br#"{"id":1,"method":"ping","x":,}"#), None);
        assert_eq!(response_id(br#"{"method":"x","id":1,"#), None);
        assert_eq!(response_id(b"not json at all"), None);
        assert_eq!(response_id(br#"{"id":"7","result":}"#), None);
        assert_eq!(response_id(br#"{"id":"7","id":8,"result":}"#), None);
    }

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
