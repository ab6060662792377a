//! Whether a text is one JSON value, told in one pass over its bytes with no allocation.
//!
//! It answers what `serde_json::from_str::<IgnoredAny>` answers (the check a result or a
//! canonical frame's params got before; the `jsonrpc_message` fuzz target and the proptests
//! hold it to that): JSON's grammar (RFC 8259) with any number nesting, escapes checked as
//! serde checks them when it skips a string (`\u` and four hex digits, any code unit), and
//! whitespace around the value. serde's walk costs a heap-allocated stack and a `Read` call
//! per token; this was most of the 1,580 instructions a `tools/call` result's check took.
//! Values nested deeper than [`MAX_DEPTH`] are left to serde ([`Verdict::TooDeep`]): the
//! open containers are kept as bits of one word.

/// How deep this scan follows nesting.
pub(crate) const MAX_DEPTH: u32 = 64;

/// What [`verdict`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// One JSON value, with only whitespace around it.
    Valid,
    /// Anything else.
    Invalid,
    /// Nested deeper than [`MAX_DEPTH`] before the scan found an error: not told.
    TooDeep,
}

/// Whether `text` is one JSON value with only JSON whitespace around it.
pub(crate) fn verdict(text: &str) -> Verdict {
    match walk(text.as_bytes()) {
        Ok(()) => Verdict::Valid,
        Err(Stop::Invalid) => Verdict::Invalid,
        Err(Stop::TooDeep) => Verdict::TooDeep,
    }
}

/// Why a walk stopped early.
enum Stop {
    Invalid,
    TooDeep,
}

/// The walk: a value, then closing brackets or a comma (and a member's name in an object),
/// then a value again, until the outermost value ends. `open` holds a bit per open container,
/// the innermost lowest, 1 for an object.
fn walk(bytes: &[u8]) -> Result<(), Stop> {
    let mut at = whitespace(bytes, 0);
    let mut open: u64 = 0;
    let mut depth: u32 = 0;
    loop {
        // A value starts at `at`.
        let next = *bytes.get(at).ok_or(Stop::Invalid)?;
        at = match next {
            b'{' | b'[' => {
                if depth == MAX_DEPTH {
                    return Err(Stop::TooDeep);
                }
                let object = next == b'{';
                let inner = whitespace(bytes, at + 1);
                let empty = if object { b'}' } else { b']' };
                if bytes.get(inner) == Some(&empty) {
                    inner + 1
                } else {
                    open = open << 1 | u64::from(object);
                    depth += 1;
                    at = if object { name(bytes, inner)? } else { inner };
                    continue;
                }
            }
            b'"' => string(bytes, at + 1)?,
            b't' => literal(bytes, at, b"true")?,
            b'f' => literal(bytes, at, b"false")?,
            b'n' => literal(bytes, at, b"null")?,
            b'-' | b'0'..=b'9' => number(bytes, at)?,
            _ => return Err(Stop::Invalid),
        };
        // A value ended before `at`: close what it ends, or go on after a comma.
        loop {
            at = whitespace(bytes, at);
            if depth == 0 {
                return if at == bytes.len() {
                    Ok(())
                } else {
                    Err(Stop::Invalid)
                };
            }
            let object = open & 1 == 1;
            match bytes.get(at) {
                Some(b',') => {
                    let inner = whitespace(bytes, at + 1);
                    at = if object { name(bytes, inner)? } else { inner };
                    break;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                _ => return Err(Stop::Invalid),
            }
            at += 1;
            open >>= 1;
            depth -= 1;
        }
    }
}

/// Past JSON whitespace from `at`.
#[inline]
fn whitespace(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// A member's name at `at`, its colon and the whitespace after: where its value starts.
#[inline]
fn name(bytes: &[u8], at: usize) -> Result<usize, Stop> {
    if bytes.get(at) != Some(&b'"') {
        return Err(Stop::Invalid);
    }
    let at = whitespace(bytes, string(bytes, at + 1)?);
    if bytes.get(at) != Some(&b':') {
        return Err(Stop::Invalid);
    }
    Ok(whitespace(bytes, at + 1))
}

/// A string's contents from `at` (past its opening quote): where it ends, past its closing
/// quote. A raw control character is not allowed; an escape is one of JSON's.
#[inline]
fn string(bytes: &[u8], mut at: usize) -> Result<usize, Stop> {
    loop {
        // A byte at a time through a table: the strings of a message are short, and a call
        // into a vectorized search costs more than it saves on them.
        while let Some(&byte) = bytes.get(at)
            && PLAIN[usize::from(byte)]
        {
            at += 1;
        }
        match bytes.get(at) {
            Some(b'"') => return Ok(at + 1),
            Some(b'\\') => {
                at = match bytes.get(at + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at + 2,
                    Some(b'u') => {
                        let hex = bytes.get(at + 2..at + 6).ok_or(Stop::Invalid)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(Stop::Invalid);
                        }
                        at + 6
                    }
                    _ => return Err(Stop::Invalid),
                };
            }
            _ => return Err(Stop::Invalid),
        }
    }
}

/// The bytes a string holds as they are: all but the quote, the backslash and the control
/// characters.
static PLAIN: [bool; 256] = {
    let mut plain = [true; 256];
    let mut byte = 0;
    while byte < 0x20 {
        plain[byte] = false;
        byte += 1;
    }
    plain[b'"' as usize] = false;
    plain[b'\\' as usize] = false;
    plain
};

/// `word` at `at`: where it ends.
#[inline]
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Result<usize, Stop> {
    if bytes.get(at..at + word.len()) == Some(word) {
        Ok(at + word.len())
    } else {
        Err(Stop::Invalid)
    }
}

/// A number at `at` (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`): where it ends.
#[inline]
fn number(bytes: &[u8], mut at: usize) -> Result<usize, Stop> {
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => at = digits(bytes, at + 1),
        _ => return Err(Stop::Invalid),
    }
    if bytes.get(at) == Some(&b'.') {
        let end = digits(bytes, at + 1);
        if end == at + 1 {
            return Err(Stop::Invalid);
        }
        at = end;
    }
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = bytes.get(at) {
            at += 1;
        }
        let end = digits(bytes, at);
        if end == at {
            return Err(Stop::Invalid);
        }
        at = end;
    }
    Ok(at)
}

/// Past the ASCII digits from `at`.
#[inline]
fn digits(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b'0'..=b'9') = bytes.get(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde::de::IgnoredAny;

    use super::{MAX_DEPTH, Verdict, verdict};

    /// serde's verdict, the reference.
    fn serde_says(text: &str) -> bool {
        serde_json::from_str::<IgnoredAny>(text).is_ok()
    }

    /// The scan's verdict matches serde's, or it leaves the text to serde.
    fn agrees(text: &str) {
        match verdict(text) {
            Verdict::Valid => assert!(serde_says(text), "accepted {text:?}"),
            Verdict::Invalid => assert!(!serde_says(text), "rejected {text:?}"),
            Verdict::TooDeep => {}
        }
    }

    #[test]
    fn it_tells_what_serde_tells() {
        let valid = [
            "0",
            "-0",
            " \t\r\n1.5e+3 \n",
            "-12.0E-7",
            "true",
            "false",
            "null",
            r#""""#,
            r#""a\"\\\/\b\f\n\r\tz\u00e9\uD800\uDFFF\uffff""#,
            "\"é ü 字 😀\"",
            "{}",
            "[]",
            " { } ",
            "[ ]",
            r#"{"a":1,"b":[true,false,null,{"c":{}}],"d":"x"}"#,
            r#"{ "a" : [ 1 , 2 ] , "b" : { } }"#,
            r#"[[[[]]],[[{}]]]"#,
            r#"{"content":[{"type":"text","text":"echo: hi"}],"isError":false}"#,
        ];
        let invalid = [
            "",
            " ",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "1 2",
            "tru",
            "nul",
            "nullx",
            "True",
            r#"""#,
            r#""\x""#,
            r#""\u12G4""#,
            r#""\u12""#,
            "\"\u{1}\"",
            "\"a\nb\"",
            "{",
            "}",
            "[",
            "[1,]",
            "[,1]",
            "{,}",
            r#"{"a"}"#,
            r#"{"a":}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{1:2}"#,
            "[1}",
            r#"{"a":1]"#,
            "[]]",
            "{}}",
            "[] []",
            "\u{a0}1",
            "1\u{0}",
        ];
        for text in valid {
            assert_eq!(verdict(text), Verdict::Valid, "{text:?}");
            agrees(text);
        }
        for text in invalid {
            assert_eq!(verdict(text), Verdict::Invalid, "{text:?}");
            agrees(text);
        }
    }

    /// Nesting to the limit is told; deeper is left to serde, which has no limit here.
    #[test]
    fn deep_nesting_is_left_to_serde() {
        let depth = MAX_DEPTH as usize;
        let at_limit = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(verdict(&at_limit), Verdict::Valid);
        let objects = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
        assert_eq!(verdict(&objects), Verdict::Valid);
        let deeper = format!("{}{}", "[".repeat(depth + 1), "]".repeat(depth + 1));
        assert_eq!(verdict(&deeper), Verdict::TooDeep);
        assert!(serde_says(&deeper));
        // The innermost container decides how it closes, at every depth.
        let mixed = format!(
            "{}1{}",
            "[{\"a\":".repeat(depth / 2),
            "}]".repeat(depth / 2)
        );
        assert_eq!(verdict(&mixed), Verdict::Valid);
        assert!(serde_says(&mixed));
        let crossed = format!(
            "{}1{}",
            "[{\"a\":".repeat(depth / 2),
            "]}".repeat(depth / 2)
        );
        assert_eq!(verdict(&crossed), Verdict::Invalid);
    }

    /// What a byte of a text is changed to, or has inserted beside it.
    const MUTATIONS: &[u8] = b"{}[],:\"\\ 0123456789.eE+-tfnul\x01\n/ax";

    /// Any JSON value serde writes, compact or pretty.
    fn json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            any::<String>().prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(6, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                prop::collection::btree_map(any::<String>(), inner, 0..6)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// What serde writes is valid, and a text with any of several bytes put in its place,
        /// inserted, or cut at any of eight places is told as serde tells it.
        #[test]
        fn it_agrees_with_serde_on_values_and_their_mutations(
            value in json(),
            pretty in any::<bool>(),
            places in prop::collection::vec(any::<prop::sample::Index>(), 8),
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            prop_assert_eq!(verdict(&text), Verdict::Valid);
            for place in places {
                let at = place.index(text.len() + 1);
                for broken in sidewire_test_support::mutations(&text, at, MUTATIONS) {
                    agrees(&broken);
                }
            }
        }

        /// Any text at all.
        #[test]
        fn it_agrees_with_serde_on_any_text(text in "[ \\[\\]{},:\"\\\\0-9.eE+\\-tfnrul\\t\\n\\x01a-c]{0,40}") {
            agrees(&text);
        }
    }
}
