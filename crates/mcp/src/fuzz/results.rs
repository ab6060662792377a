//! Fuzzing a `tools/call` result: the decode [`crate::Client::call_tool`] runs on the result's
//! bytes.

use crate::CallToolResult;
use crate::protocol::era::{ResultType, result_type};

/// Decodes `data` as a `tools/call` result. Invariants: no panic; a result that decodes has
/// its text joined without panicking, re-serialises, and the re-serialised text decodes to a
/// result with the same shape (content kinds, error flag, structured part present or not).
///
/// And `CallToolResult::decode_text`, the decode the client runs, gives what the derived
/// decode gives: the same result, or an error when it fails; and what
/// `CallToolResult::decode_final` (a modern call's one pass) reads is that result, of a text
/// `era::result_type` reads as complete.
pub fn call_tool_result(data: &[u8]) {
    let derived = serde_json::from_slice::<CallToolResult>(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let fast = CallToolResult::decode_text(text);
        assert_eq!(fast.as_ref().ok(), derived.as_ref().ok());
        assert_eq!(fast.is_err(), derived.is_err());
        // What a modern call reads in one pass is a final result, and the derived one.
        if let Some(quick) = CallToolResult::decode_final(text) {
            assert_eq!(result_type(text), Ok(ResultType::Complete));
            assert_eq!(Some(&quick), derived.as_ref().ok());
        }
    }
    let Ok(result) = derived else {
        return;
    };
    let _ = result.joined_text();
    let text = serde_json::to_string(&result).expect("a decoded result re-serialises");
    let again: CallToolResult =
        serde_json::from_str(&text).expect("a re-serialised result decodes");
    assert_eq!(again.content.len(), result.content.len());
    assert_eq!(again.is_error, result.is_error);
    assert_eq!(
        again.structured_content.is_some(),
        result.structured_content.is_some()
    );
    for (a, b) in again.content.iter().zip(&result.content) {
        assert_eq!(a.as_text(), b.as_text());
    }
}
