//! The usual `tools/call` result read by a small strict grammar instead of serde.
//!
//! Most results are text: `{"content":[{"type":"text","text":"…"}]}`, maybe with `isError`,
//! and `"resultType":"complete"` from a modern server. serde's derived decode of that costs
//! more than the rest of the client's call together (field matching, a visitor per item, an
//! enum per tag). [`read`] takes exactly this grammar, members and item members in any order:
//!
//! ```text
//! result  = ws "{" ws [ member *( ws "," ws member ) ] ws "}" ws
//! member  = "\"content\"" ws ":" ws "[" ws [ item *( ws "," ws item ) ] ws "]"
//!         / "\"isError\"" ws ":" ws ( "true" / "false" / "null" )
//!         / "\"resultType\"" ws ":" ws ( "\"complete\"" / "null" )
//! item    = "{" ws "\"type\"" ws ":" ws "\"text\"" ws "," ws "\"text\"" ws ":" ws plain ws "}"
//!           (or the two members the other way round)
//! plain   = a string with no escape and no control character
//! ```
//!
//! with no member twice. Anything else (another member, an escape, annotations, a second
//! `content`) is declined, and the caller decodes with serde, so what this reads is what the
//! derived decode reads: the `mcp_call_result` fuzz target and `protocol::tests` hold the two
//! equal on any text. It checks all of the text it reads as it goes, so it needs no text known
//! to be JSON.

use crate::protocol::types::{CallToolResult, Content};

/// The result `text` holds, when it is all of the grammar above; `None` when it is not.
pub(crate) fn read(text: &str) -> Option<CallToolResult> {
    let bytes = text.as_bytes();
    let mut at = space(bytes, 0);
    at = byte(bytes, at, b'{')?;
    let mut content: Option<Vec<Content>> = None;
    let mut is_error: Option<bool> = None;
    let mut result_type = false;
    at = space(bytes, at);
    if bytes.get(at) == Some(&b'}') {
        at += 1;
    } else {
        loop {
            let (name, after) = plain(bytes, at)?;
            at = space(bytes, byte(bytes, space(bytes, after), b':')?);
            match name {
                b"content" if content.is_none() => {
                    let (items, after) = items(text, at)?;
                    content = Some(items);
                    at = after;
                }
                b"isError" if is_error.is_none() => {
                    let (flag, after) = if let Some(after) = word(bytes, at, b"true") {
                        (true, after)
                    } else if let Some(after) = word(bytes, at, b"false") {
                        (false, after)
                    } else {
                        (false, word(bytes, at, b"null")?)
                    };
                    is_error = Some(flag);
                    at = after;
                }
                b"resultType" if !result_type => {
                    result_type = true;
                    at = word(bytes, at, b"\"complete\"").or_else(|| word(bytes, at, b"null"))?;
                }
                _ => return None,
            }
            at = space(bytes, at);
            match bytes.get(at)? {
                b',' => at = space(bytes, at + 1),
                b'}' => {
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    if space(bytes, at) != bytes.len() {
        return None;
    }
    Some(CallToolResult {
        content: content.unwrap_or_default(),
        structured_content: None,
        is_error: is_error.unwrap_or(false),
        meta: None,
    })
}

/// `[` items `]` at `at`: the text items and where the list ends.
fn items(text: &str, at: usize) -> Option<(Vec<Content>, usize)> {
    let bytes = text.as_bytes();
    let mut at = space(bytes, byte(bytes, at, b'[')?);
    let mut items = Vec::new();
    if bytes.get(at) == Some(&b']') {
        return Some((items, at + 1));
    }
    loop {
        let (item, after) = item(text, at)?;
        items.push(item);
        at = space(bytes, after);
        match bytes.get(at)? {
            b',' => at = space(bytes, at + 1),
            b']' => return Some((items, at + 1)),
            _ => return None,
        }
    }
}

/// A text item at `at`: `{"type":"text","text":"…"}`, the two members in either order.
fn item(text: &str, at: usize) -> Option<(Content, usize)> {
    let bytes = text.as_bytes();
    let mut at = space(bytes, byte(bytes, at, b'{')?);
    let mut tagged = false;
    let mut body: Option<&str> = None;
    for last in [false, true] {
        let (name, after) = plain(bytes, at)?;
        at = space(bytes, byte(bytes, space(bytes, after), b':')?);
        match name {
            b"type" if !tagged => {
                tagged = true;
                at = word(bytes, at, b"\"text\"")?;
            }
            b"text" if body.is_none() => {
                let (_, after) = plain(bytes, at)?;
                // Cut at two ASCII quotes, so at character boundaries: no UTF-8 check.
                body = Some(text.get(at + 1..after - 1)?);
                at = after;
            }
            _ => return None,
        }
        at = space(bytes, at);
        at = byte(bytes, at, if last { b'}' } else { b',' })?;
        if !last {
            at = space(bytes, at);
        }
    }
    Some((Content::text(body?), at))
}

/// The contents of a string with no escape and no control character at `at`, and where it
/// ends (past its closing quote).
fn plain(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let rest = bytes.get(at + 1..)?;
    let len = rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    (rest[len] == b'"').then(|| (&rest[..len], at + len + 2))
}

/// `expected` at `at`: where it ends.
fn word(bytes: &[u8], at: usize, expected: &[u8]) -> Option<usize> {
    (bytes.get(at..at + expected.len())? == expected).then_some(at + expected.len())
}

/// The byte `expected` at `at`: past it.
fn byte(bytes: &[u8], at: usize, expected: u8) -> Option<usize> {
    (bytes.get(at) == Some(&expected)).then_some(at + 1)
}

/// Past JSON whitespace from `at`.
fn space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::read;
    use crate::protocol::era::{ResultType, result_type};
    use crate::protocol::types::CallToolResult;

    /// What `read` gives, when it gives anything, is the derived decode's result, of a final
    /// result.
    fn agrees(text: &str) {
        if let Some(quick) = read(text) {
            let derived = serde_json::from_str::<CallToolResult>(text);
            assert_eq!(Some(&quick), derived.as_ref().ok(), "{text:?}");
            assert_eq!(result_type(text), Ok(ResultType::Complete), "{text:?}");
        }
    }

    #[test]
    fn it_reads_the_usual_results_as_serde_does() {
        let read_ones = [
            "{}",
            r#"{"content":[]}"#,
            r#"{"content":[{"type":"text","text":"ok"}]}"#,
            r#"{"content":[{"text":"ok","type":"text"}],"isError":true}"#,
            r#"{"isError":false,"content":[{"type":"text","text":"a"},{"type":"text","text":""}]}"#,
            r#"{"content":[{"type":"text","text":"ok"}],"resultType":"complete"}"#,
            r#"{"resultType":null,"isError":null,"content":[{"type":"text","text":"é 字 😀"}]}"#,
            " {\n \"content\" : [ { \"type\" : \"text\" , \"text\" : \"ok\" } ] ,\t\"isError\" : false } \r\n",
        ];
        for text in read_ones {
            let quick = read(text).unwrap_or_else(|| panic!("declined {text:?}"));
            let derived: CallToolResult = serde_json::from_str(text).unwrap();
            assert_eq!(quick, derived, "{text:?}");
            agrees(text);
        }
        let declined = [
            "",
            "[]",
            "{",
            r#"{"content":[{"type":"text","text":"a\nb"}]}"#,
            r#"{"content":[{"type":"text","text":"a\"b"}]}"#,
            "{\"content\":[{\"type\":\"text\",\"text\":\"a\u{1}\"}]}",
            r#"{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}"#,
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#,
            r#"{"content":[{"type":"text"}]}"#,
            r#"{"content":[{"text":"a"}]}"#,
            r#"{"content":[{"type":"text","type":"text"}]}"#,
            r#"{"content":[{"type":"text","text":"a","text":"b"}]}"#,
            r#"{"content":[{"type":"text","text":5}]}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"isError":true,"isError":false}"#,
            r#"{"isError":"yes"}"#,
            r#"{"isError":truex}"#,
            r#"{"resultType":"input_required"}"#,
            r#"{"resultType":"completed"}"#,
            r#"{"resultType":"complete","resultType":"complete"}"#,
            r#"{"structuredContent":{"n":1}}"#,
            r#"{"_meta":{}}"#,
            r#"{"other":1}"#,
            r#"{"conten\u0074":[]}"#,
            r#"{"content":[],}"#,
            r#"{"content":[{"type":"text","text":"a"},]}"#,
            r#"{"content":[]} x"#,
            r#"{"content":[]}}"#,
            r#"{"content":null}"#,
        ];
        for text in declined {
            assert_eq!(read(text), None, "{text:?}");
        }
    }

    /// A text result as a server might write it: its members in any order, compact or pretty.
    fn result_text() -> impl Strategy<Value = (String, bool)> {
        (
            prop::collection::vec(any::<String>(), 0..4),
            prop::option::of(prop::option::of(any::<bool>())),
            prop::option::of(prop::option::of(Just("complete"))),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(texts, is_error, result_type, text_first, reversed, pretty)| {
                    let items: Vec<Value> = texts
                        .iter()
                        .map(|text| {
                            let mut item = Map::new();
                            if text_first {
                                item.insert("text".into(), json!(text));
                                item.insert("type".into(), json!("text"));
                            } else {
                                item.insert("type".into(), json!("text"));
                                item.insert("text".into(), json!(text));
                            }
                            Value::Object(item)
                        })
                        .collect();
                    let mut members = vec![("content", Value::from(items))];
                    if let Some(is_error) = is_error {
                        members.push(("isError", json!(is_error)));
                    }
                    if let Some(result_type) = result_type {
                        members.push(("resultType", json!(result_type)));
                    }
                    if reversed {
                        members.reverse();
                    }
                    let result: Map<String, Value> = members
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect();
                    let text = if pretty {
                        serde_json::to_string_pretty(&result).unwrap()
                    } else {
                        serde_json::to_string(&result).unwrap()
                    };
                    // serde writes a text with its escapes; the grammar declines those.
                    let plain = texts
                        .iter()
                        .all(|text| !text.chars().any(|c| c == '"' || c == '\\' || c < ' '));
                    (text, plain)
                },
            )
    }

    proptest! {
        /// Any text result is read as serde reads it, or declined; one without escapes is
        /// read. A byte changed, cut or inserted anywhere never makes it read otherwise.
        #[test]
        fn it_reads_as_serde_or_declines(
            (text, plain) in result_text(),
            places in prop::collection::vec(any::<prop::sample::Index>(), 4),
        ) {
            agrees(&text);
            prop_assert_eq!(read(&text).is_some(), plain, "{}", text);
            for place in places {
                let at = place.index(text.len() + 1);
                for broken in sidewire_test_support::mutations(&text, at, b"{}[],:\"\\ tfnrue0x\x01") {
                    agrees(&broken);
                }
            }
        }
    }
}
