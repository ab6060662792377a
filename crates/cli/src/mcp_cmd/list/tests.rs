//! Unit tests of the listings' helpers.

use std::cell::Cell;

use serde_json::json;

use super::{MAX_PARAMETER_CHARS, MAX_PARAMETERS_SHOWN, by_name, parameters};

/// `servers` finds each row's config entry through one map built in one pass: the names are
/// read once per entry, however many rows look them up (a scan per row read them
/// rows × entries / 2 times: quadratic in the servers).
#[test]
fn config_entries_are_found_by_name_in_one_pass() {
    let entries: Vec<String> = (0..2000).map(|i| format!("s{i}")).collect();
    let reads = Cell::new(0usize);
    let map = by_name(&entries, |entry| {
        reads.set(reads.get() + 1);
        entry.as_str()
    });
    for entry in entries.iter().rev() {
        assert_eq!(map.get(entry.as_str()).copied(), Some(entry));
    }
    assert_eq!(map.get("s2000"), None);
    assert_eq!(reads.get(), entries.len());
}

/// A repeated name keeps its first entry.
#[test]
fn a_repeated_name_keeps_its_first_entry() {
    let entries = [("a", 1), ("b", 2), ("a", 3)];
    let map = by_name(&entries, |entry| entry.0);
    assert_eq!(map.get("a").map(|e| e.1), Some(1));
    assert_eq!(map.len(), 2);
}

#[test]
fn parameters_show_name_type_and_whether_required_compactly_and_bounded() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "steps": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"enum": ["x", "y"]},
            "either": {"type": ["string", "null"]},
            "evil\u{1b}[2J": {"type": "x".repeat(100)},
        },
        "required": ["a"],
    });
    let line = parameters(&schema).unwrap();
    for part in [
        "a: number",
        "steps?: integer",
        "tags?: string[]",
        "mode?: enum",
        "either?: string|null",
        "evil\\x1b[2J?: ",
    ] {
        assert!(line.contains(part), "{part} in {line}");
    }
    assert!(
        !line.contains(&"x".repeat(MAX_PARAMETER_CHARS + 1)),
        "{line}"
    );
    assert_eq!(parameters(&json!({"type": "object"})), None);
    assert_eq!(parameters(&json!({"properties": {}})), None);
    let many: serde_json::Map<String, serde_json::Value> = (0..40)
        .map(|n| (format!("p{n:02}"), json!({"type": "string"})))
        .collect();
    let line = parameters(&json!({ "properties": many })).unwrap();
    assert_eq!(line.matches(": string").count(), MAX_PARAMETERS_SHOWN);
    assert!(line.ends_with("+24 more"), "{line}");
}
