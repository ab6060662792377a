//! The committed schema is fresh, its hash constant is right, and it says what the decoder does.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

use crate::testkit::schema;
use crate::{MAX_SAFE_INTEGER, SCHEMA_SHA256, protocol_schema_json};

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/extension-protocol-v1.schema.json")
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn blessing() -> bool {
    std::env::var_os("SIDEWIRE_BLESS").is_some_and(|v| v == "1")
}

/// Rewrites the `SCHEMA_SHA256` line of `src/schema.rs`.
fn bless_hash(hash: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/schema.rs");
    let source = std::fs::read_to_string(&path).unwrap();
    let prefix = "pub const SCHEMA_SHA256: &str = \"";
    let start = source.find(prefix).expect("the constant exists") + prefix.len();
    let end = start + source[start..].find('"').unwrap();
    let updated = format!("{}{hash}{}", &source[..start], &source[end..]);
    if updated != source {
        std::fs::write(&path, updated).unwrap();
    }
}

#[test]
fn the_committed_schema_is_fresh() {
    let generated = protocol_schema_json();
    let path = committed_path();
    if blessing() {
        std::fs::write(&path, &generated).unwrap();
        bless_hash(&sha256_hex(generated.as_bytes()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale; run `SIDEWIRE_BLESS=1 cargo test -p sidewire-ext-protocol` and commit it",
        path.display()
    );
}

#[test]
fn the_hash_constant_matches_the_committed_file() {
    if blessing() {
        // The blessing test rewrites both; the next plain run checks them.
        return;
    }
    let committed = std::fs::read(committed_path()).unwrap();
    assert_eq!(
        SCHEMA_SHA256,
        sha256_hex(&committed),
        "SCHEMA_SHA256 is stale; run `SIDEWIRE_BLESS=1 cargo test -p sidewire-ext-protocol`"
    );
}

#[test]
fn every_dto_schema_is_closed() {
    let defs = schema()["$defs"].as_object().unwrap();
    let mut objects = 0;
    for (name, def) in defs {
        assert_eq!(def["title"], name.as_str());
        if def["type"] == "object" {
            objects += 1;
            assert_eq!(def["additionalProperties"], false, "{name}");
            for required in def["required"].as_array().into_iter().flatten() {
                let member = required.as_str().unwrap();
                assert!(def["properties"].get(member).is_some(), "{name}.{member}");
            }
        } else {
            assert!(def["enum"].is_array(), "{name}");
        }
    }
    // 63 DTOs (including the manifest and the per-kind UI payloads) plus 14 enums.
    assert_eq!(objects, 63, "DTO count changed");
}

/// Visits every schema node.
fn each_node(value: &Value, visit: &mut impl FnMut(&Value)) {
    visit(value);
    match value {
        Value::Object(map) => map.values().for_each(|v| each_node(v, visit)),
        Value::Array(items) => items.iter().for_each(|v| each_node(v, visit)),
        _ => {}
    }
}

#[test]
fn integers_are_bounded() {
    let mut integers = 0;
    each_node(&schema()["$defs"], &mut |node| {
        if node["type"] == "integer" {
            integers += 1;
            let max = node["maximum"].as_u64().unwrap_or_default();
            assert!(max > 0 && max <= MAX_SAFE_INTEGER, "{node}");
            assert!(node["minimum"].is_number(), "{node}");
        }
    });
    assert!(integers > 25, "{integers}");
}

#[test]
fn registries_are_in_the_schema() {
    let root = schema();
    assert_eq!(root["x-methods"].as_object().unwrap().len(), 16);
    assert_eq!(root["x-hookPoints"].as_object().unwrap().len(), 17);
    assert_eq!(root["x-reasons"].as_object().unwrap().len(), 15);
    assert_eq!(root["x-limits"]["frameBytes"], 8_388_608);
    assert_eq!(
        root["x-methods"]["extension/intercept"]["result"]["$ref"],
        "#/$defs/InterceptResult"
    );
    assert_eq!(
        root["x-hookPoints"]["permission.decision"]["decisions"]["chain"],
        serde_json::json!(["continue", "block", "replace", "allow", "deny"])
    );
}
