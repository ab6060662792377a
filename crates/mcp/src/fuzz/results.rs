//! Fuzzing a `tools/call` result: the decode [`crate::Client::call_tool`] runs on the result's
//! bytes.

use crate::CallToolResult;

/// Decodes `data` as a `tools/call` result. Invariants: no panic; a result that decodes has
/// its text joined without panicking, re-serialises, and the re-serialised text decodes to a
/// result with the same shape (content kinds, error flag, structured part present or not).
pub fn call_tool_result(data: &[u8]) {
    let Ok(result) = serde_json::from_slice::<CallToolResult>(data) else {
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
