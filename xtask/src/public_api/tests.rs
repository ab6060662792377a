//! Unit tests of the public-API renderer over hand-written rustdoc JSON.

use serde_json::json;

use super::render;

fn krate(items: serde_json::Value) -> serde_json::Value {
    json!({ "root": 0, "index": items, "format_version": 57 })
}

#[test]
fn lists_public_items_under_their_public_path_and_not_private_ones() {
    let doc = krate(json!({
        "0": { "name": "demo", "visibility": "public",
               "inner": { "module": { "is_crate": true, "items": [1, 2, 5] } } },
        "1": { "name": null, "visibility": "public",
               "inner": { "use": { "source": "crate::inner::Thing", "name": "Thing", "id": 3, "is_glob": false } } },
        "2": { "name": "hidden", "visibility": "crate",
               "inner": { "function": { "sig": { "inputs": [], "output": null },
                           "generics": { "params": [], "where_predicates": [] }, "header": {} } } },
        "3": { "name": "Thing", "visibility": "public", "attrs": ["#[non_exhaustive]"],
               "inner": { "struct": { "kind": { "plain": { "fields": [4], "has_stripped_fields": true } },
                          "generics": { "params": [], "where_predicates": [] }, "impls": [6, 8] } } },
        "4": { "name": "size", "visibility": "public", "inner": { "struct_field": { "primitive": "usize" } } },
        "5": { "name": "serde_json", "visibility": "public",
               "inner": { "use": { "source": "serde_json", "name": "json", "id": 99, "is_glob": false } } },
        "6": { "name": null, "visibility": "default",
               "inner": { "impl": { "generics": { "params": [], "where_predicates": [] }, "trait": null,
                          "for": { "resolved_path": { "path": "Thing", "id": 3, "args": null } },
                          "items": [7], "blanket_impl": null } } },
        "7": { "name": "get", "visibility": "public",
               "inner": { "function": {
                   "sig": { "inputs": [["self", { "borrowed_ref": { "lifetime": null, "is_mutable": false, "type": { "generic": "Self" } } }],
                                       ["key", { "borrowed_ref": { "lifetime": null, "is_mutable": false, "type": { "primitive": "str" } } }]],
                            "output": { "resolved_path": { "path": "::core::option::Option",
                                        "args": { "angle_bracketed": { "args": [{ "type": { "primitive": "u8" } }], "constraints": [] } } } } },
                   "generics": { "params": [], "where_predicates": [] },
                   "header": { "is_async": true } } } },
        "8": { "name": null, "visibility": "default",
               "inner": { "impl": { "generics": { "params": [], "where_predicates": [] },
                          "trait": { "path": "Send", "args": null },
                          "for": { "resolved_path": { "path": "Thing", "id": 3, "args": null } },
                          "items": [], "blanket_impl": null, "is_synthetic": true } } }
    }));
    let listing = render(&doc);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(
        lines,
        [
            "#[non_exhaustive] pub struct demo::Thing { .. }",
            "pub demo::Thing.size: usize",
            "pub async fn demo::Thing::get(&self, key: &str) -> core::option::Option<u8>",
            "impl Send for demo::Thing",
            "pub use demo::json = serde_json",
        ],
        "{listing}"
    );
}

#[test]
fn a_reexport_cycle_is_listed_once() {
    let doc = krate(json!({
        "0": { "name": "demo", "visibility": "public",
               "inner": { "module": { "is_crate": true, "items": [1] } } },
        "1": { "name": "m", "visibility": "public",
               "inner": { "module": { "is_crate": false, "items": [2] } } },
        "2": { "name": null, "visibility": "public",
               "inner": { "use": { "source": "crate", "name": "m", "id": 1, "is_glob": true } } }
    }));
    assert_eq!(render(&doc), "pub mod demo::m\n");
}

#[test]
fn the_diff_names_the_crate_and_each_changed_line_and_is_empty_when_equal() {
    let path = std::path::Path::new("crates/demo/public-api.txt");
    assert_eq!(super::diff("demo", path, "a\nb\n", "a\nb\n"), "");
    let report = super::diff("demo", path, "a\nb\n", "a\nc\n");
    assert!(
        report.contains("demo (crates/demo/public-api.txt)"),
        "{report}"
    );
    assert!(report.contains("- b\n"), "{report}");
    assert!(report.contains("+ c\n"), "{report}");
    assert!(
        !report.contains("a\n- ") && !report.contains("+ a"),
        "{report}"
    );
}
