//! The two protocol eras and how a request says which one it is in.
//!
//! - **Legacy** (2024-11-05 to 2025-11-25): a session starts with `initialize`; the version and
//!   the client's capabilities hold for the session.
//! - **Modern** (2026-07-28): no handshake; every request carries `_meta` with
//!   `io.modelcontextprotocol/protocolVersion` and `io.modelcontextprotocol/clientCapabilities`
//!   (and may carry `clientInfo` and `logLevel`), and every result carries `resultType`.

use serde_json::{Map, Value, json};
use sidewire_mcp::{LogLevel, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS};

use crate::Error;

/// `_meta` key: the modern request's protocol version.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the modern request's client capabilities.
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the modern request's client information.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the modern request's log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `-32022`: the request's protocol version is not one this server speaks.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = sidewire_mcp::UNSUPPORTED_PROTOCOL_VERSION;
/// `-32021`: a request needs a client capability the request did not announce.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 =
    sidewire_mcp::MISSING_REQUIRED_CLIENT_CAPABILITY;
/// `-32020`: an `Mcp-*` header does not match the body.
pub const HEADER_MISMATCH: i64 = sidewire_mcp::HEADER_MISMATCH;

/// The legacy versions `initialize` accepts, newest first.
pub fn legacy_versions() -> &'static [&'static str] {
    SUPPORTED_PROTOCOL_VERSIONS
}

/// The modern versions a request's `_meta` may name.
pub fn modern_versions() -> &'static [&'static str] {
    MODERN_PROTOCOL_VERSIONS
}

/// Which era a request is served in, and at which version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// An initialized session at this version.
    Legacy(&'static str),
    /// A self-describing request at this version.
    Modern(&'static str),
}

impl Era {
    /// The protocol version.
    pub fn version(self) -> &'static str {
        match self {
            Era::Legacy(version) | Era::Modern(version) => version,
        }
    }

    /// The modern era.
    pub fn is_modern(self) -> bool {
        matches!(self, Era::Modern(_))
    }
}

/// What a modern request's `_meta` says about its client.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Envelope {
    /// `clientCapabilities`, as sent.
    pub capabilities: Map<String, Value>,
    /// `clientInfo`, as sent.
    pub client_info: Option<Value>,
    /// `logLevel`: log messages at or above it go out on the request's stream.
    pub log_level: Option<LogLevel>,
}

/// The legacy version `initialize` answers with: the one the client asked for when this
/// server speaks it, else the newest.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    legacy_versions()
        .iter()
        .find(|version| Some(**version) == requested)
        .copied()
        .unwrap_or(legacy_versions()[0])
}

/// Reads a modern request's envelope from its params' `_meta`.
///
/// # Errors
///
/// `-32602` naming the missing keys, or `-32022` with `data: {supported, requested}` when the
/// version is not one this server speaks.
pub fn envelope(params: &Map<String, Value>) -> Result<(&'static str, Envelope), Error> {
    let meta = params.get("_meta").and_then(Value::as_object);
    let requested = meta.and_then(|meta| meta.get(META_VERSION));
    let version = match requested {
        None => None,
        Some(Value::String(requested)) => {
            let found = modern_versions().iter().find(|v| **v == requested.as_str());
            match found {
                Some(version) => Some(*version),
                None => return Err(unsupported(requested)),
            }
        }
        Some(_) => {
            return Err(Error::invalid_params(format!(
                "{META_VERSION} must be a string"
            )));
        }
    };
    let capabilities = meta.and_then(|meta| meta.get(META_CAPABILITIES));
    let (Some(version), Some(capabilities)) = (version, capabilities) else {
        let missing: Vec<&str> = [
            (version.is_none(), META_VERSION),
            (capabilities.is_none(), META_CAPABILITIES),
        ]
        .into_iter()
        .filter_map(|(missing, key)| missing.then_some(key))
        .collect();
        return Err(Error::invalid_params(format!(
            "missing _meta keys: {}",
            missing.join(", ")
        )));
    };
    let Value::Object(capabilities) = capabilities else {
        return Err(Error::invalid_params(format!(
            "{META_CAPABILITIES} must be an object"
        )));
    };
    let meta = meta.expect("read above");
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(level) => Some(
            serde_json::from_value(level.clone())
                .map_err(|_| Error::invalid_params(format!("{META_LOG_LEVEL} is not a level")))?,
        ),
    };
    Ok((
        version,
        Envelope {
            capabilities: capabilities.clone(),
            client_info: meta.get(META_CLIENT_INFO).cloned(),
            log_level,
        },
    ))
}

/// The `-32022` for a version this server does not speak.
pub fn unsupported(requested: &str) -> Error {
    Error::Rpc {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: "Unsupported protocol version".to_owned(),
        data: Some(json!({ "supported": modern_versions(), "requested": requested })),
    }
}

/// Whether the client announced `capability` (a top-level key, or `key.sub`).
pub fn has_capability(capabilities: &Map<String, Value>, capability: &str) -> bool {
    let mut parts = capability.split('.');
    let Some(first) = parts.next() else {
        return false;
    };
    let mut at = match capabilities.get(first) {
        Some(value) if !value.is_null() => value,
        _ => return false,
    };
    for part in parts {
        match at.get(part) {
            Some(value) if !value.is_null() => at = value,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        json!({ "_meta": meta }).as_object().cloned().unwrap()
    }

    #[test]
    fn an_envelope_names_what_is_missing_or_unsupported() {
        let missing = envelope(&Map::new()).unwrap_err();
        assert!(missing.is_invalid_params());
        assert!(missing.to_string().contains(META_CAPABILITIES));
        let old = envelope(&params(
            json!({ META_VERSION: "1999-01-01", META_CAPABILITIES: {} }),
        ));
        assert_eq!(old.unwrap_err().code(), UNSUPPORTED_PROTOCOL_VERSION);
        let (version, envelope) = envelope(&params(json!({
            META_VERSION: modern_versions()[0],
            META_CAPABILITIES: { "elicitation": {} },
            META_LOG_LEVEL: "info",
        })))
        .unwrap();
        assert_eq!(version, modern_versions()[0]);
        assert!(has_capability(&envelope.capabilities, "elicitation"));
        assert!(!has_capability(&envelope.capabilities, "sampling"));
        assert_eq!(envelope.log_level, Some(LogLevel::Info));
    }

    #[test]
    fn initialize_echoes_a_known_version_else_the_newest() {
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("1999-01-01")), legacy_versions()[0]);
        assert_eq!(negotiate(None), legacy_versions()[0]);
    }
}
