//! Fuzzing a listing page and its items: the bytes go through the listing's own page decode
//! ([`Collector::page`]) as a `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list` result, twice in a row (a second page repeating the first, so
//! duplicates and the caps across pages are exercised), under small caps taken from the
//! first two bytes.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::protocol::listing::Collector;
use crate::protocol::methods::{
    ListMethod, ListPrompts, ListResourceTemplates, ListResources, ListTools,
};

/// Runs a listing page and its items on `data` and checks its invariants: no panic, no more
/// items or item bytes kept than the caps allow, and every kept item re-serialises and decodes
/// back to itself.
pub fn list_page(data: &[u8]) {
    let (max_items, max_bytes, page) = match data {
        [items, bytes, page @ ..] => (
            usize::from(*items % 16).max(1),
            (usize::from(*bytes) * 16).max(1),
            page,
        ),
        _ => return,
    };
    let Ok(text) = std::str::from_utf8(page) else {
        return;
    };
    check::<ListTools>(text, max_items, max_bytes);
    check::<ListPrompts>(text, max_items, max_bytes);
    check::<ListResources>(text, max_items, max_bytes);
    check::<ListResourceTemplates>(text, max_items, max_bytes);
}

fn check<M: ListMethod>(text: &str, max_items: usize, max_bytes: usize)
where
    M::Item: PartialEq + std::fmt::Debug,
{
    let mut collector = Collector::<M>::new("fuzz", max_items, max_bytes);
    for _ in 0..2 {
        match collector.page(text) {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    assert!(collector.items().len() <= max_items, "items past the cap");
    assert!(collector.bytes() <= max_bytes, "bytes past the cap");
    let listing = collector.finish();
    if let Some(truncation) = listing.truncation {
        assert_eq!(truncation.kept, listing.items.len());
    }
    for item in &listing.items {
        roundtrip(item);
    }
}

fn roundtrip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(item: &T) {
    let text = serde_json::to_string(item).expect("a kept item serialises");
    let again: T = serde_json::from_str(&text).expect("a kept item decodes from its own JSON");
    assert_eq!(&again, item, "a kept item survives its round trip");
}

#[cfg(test)]
mod tests {
    /// The checked-in seeds and every prefix of each pass the checks in every `cargo test`.
    #[test]
    fn the_seeds_and_their_prefixes_hold() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/mcp_list_page");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let seed = std::fs::read(entry.unwrap().path()).unwrap();
            for end in 0..=seed.len() {
                super::list_page(&seed[..end]);
            }
            seen += 1;
        }
        assert!(seen >= 4, "{seen} seeds");
    }
}
