//! Fuzzing what a modern-era (2026-07-28) server controls on the client's side: a tool's
//! `inputSchema` (read for `x-mcp-header` designations, then mirrored into headers), and a
//! result's `resultType`.

use serde_json::Value;

use crate::protocol::era::result_type;
use crate::protocol::headers::{designations, encode, param_headers};

/// Reads `data` as a JSON schema and walks it for designations, then mirrors an arguments
/// object built from the same bytes. Invariants: no panic; valid designations are unique
/// (case-insensitively), each with a non-empty path and a token that makes a valid HTTP header
/// name; every mirrored value is a valid HTTP header value; `encode` keeps safe text as it is
/// and otherwise yields the base64 form, which decodes back to the text. Reading `resultType`
/// never panics.
pub fn modern_wire(data: &[u8]) {
    let _ = result_type(&String::from_utf8_lossy(data));
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        if let Ok(text) = std::str::from_utf8(data) {
            check_encoding(text);
        }
        return;
    };
    if let Ok(found) = designations(&schema) {
        let mut tokens = std::collections::HashSet::new();
        for designation in &found {
            assert!(!designation.path.is_empty());
            assert!(tokens.insert(designation.token.to_ascii_lowercase()));
            let name = format!("Mcp-Param-{}", designation.token);
            assert!(
                http::HeaderName::from_bytes(name.as_bytes()).is_ok(),
                "{name:?}"
            );
        }
        // The schema itself as the arguments: any shape must mirror without panicking.
        for (name, value) in param_headers(&found, &schema) {
            assert!(http::HeaderName::from_bytes(name.as_bytes()).is_ok());
            assert!(http::HeaderValue::from_str(&value).is_ok(), "{value:?}");
        }
    }
    if let Value::String(text) = &schema {
        check_encoding(text);
    }
}

fn check_encoding(text: &str) {
    use base64::Engine as _;
    let encoded = encode(text);
    assert!(http::HeaderValue::from_str(&encoded).is_ok(), "{encoded:?}");
    if encoded != text {
        let payload = encoded
            .strip_prefix("=?base64?")
            .and_then(|rest| rest.strip_suffix("?="))
            .expect("the base64 form");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(payload)
            .expect("valid base64");
        assert_eq!(decoded, text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_seeds_hold_the_invariants() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/seeds/mcp_modern_wire"
        );
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("the seed directory") {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            super::modern_wire(&bytes);
            seen += 1;
        }
        assert!(seen > 0);
    }
}
