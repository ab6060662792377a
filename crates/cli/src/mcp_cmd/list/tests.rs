//! Unit tests of the listings' helpers.

use std::cell::Cell;

use super::by_name;

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
