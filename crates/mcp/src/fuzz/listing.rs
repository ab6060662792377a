//! Fuzzing a listing page and its items.

/// Runs a listing page and its items on `data` and checks its invariants.
pub fn list_page(data: &[u8]) {
    let _ = data;
}
