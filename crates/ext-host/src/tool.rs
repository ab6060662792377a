//! Extension tools (spec delta §2.5): the tools ready V2 sidecars serve, as a catalog of
//! model-safe names, and `extension/tool/call`.
//!
//! A tool is offered when the sidecar's handshake `tools` names it; the host's handshake check
//! 7 already refused a name outside the manifest's `runtime.tools` (or without capability
//! `tools`), so every served tool has the manifest's description, input schema and `readOnly`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use sidewire_ext_protocol::{Method, Reason, ToolCallParams, ToolCallResult, decode_result};

use crate::conn::Connection;
use crate::content::sha256_hex;
use crate::error::Error;
use crate::generation::Generation;

/// The prefix of every extension tool's name: `ext__<plugin>__<tool>`, as the reference host
/// names them.
pub const TOOL_NAME_PREFIX: &str = "ext__";

/// The longest tool name model APIs accept (`^[a-zA-Z0-9_-]{1,64}$`, the rule MCP tool names
/// follow too).
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// `_` plus 8 hex digits.
const SUFFIX_LEN: usize = 9;

/// The name a model sees for `tool` of plugin `plugin`: `ext__<plugin>__<tool>` when that fits
/// `^[a-zA-Z0-9_-]{1,64}$`; otherwise (a v2 plugin name may hold `.`, a tool name anything but
/// whitespace, and either may be long) each character outside the set becomes `_`, the name is
/// cut to 55 bytes and `_` plus the first 8 hex digits of the SHA-256 of the raw name is
/// appended, so two raw names that sanitise or cut alike still differ.
///
/// ```
/// use sidewire_ext_host::tool_name;
/// assert_eq!(tool_name("notes", "search"), "ext__notes__search");
/// assert!(tool_name("acme.notes", "search").starts_with("ext__acme_notes__search_"));
/// ```
pub fn tool_name(plugin: &str, tool: &str) -> String {
    let raw = format!("{TOOL_NAME_PREFIX}{plugin}__{tool}");
    if is_model_tool_name(&raw) {
        return raw;
    }
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Every character is ASCII now, so cutting bytes cannot split one.
    name.truncate(MAX_TOOL_NAME_LEN - SUFFIX_LEN);
    name.push('_');
    name.push_str(&sha256_hex(raw.as_bytes())[..8]);
    name
}

/// Whether `name` fits `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_model_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One tool a ready V2 sidecar serves.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExtensionTool {
    /// The name the model sees ([`tool_name`]): unique in the catalog.
    pub name: String,
    /// The plugin whose sidecar serves it.
    pub plugin: String,
    /// The tool's own name, as the manifest declares it and the wire carries it.
    pub tool: String,
    /// The manifest's description.
    pub description: String,
    /// The manifest's input schema (a JSON Schema object, `"type": "object"`).
    pub input_schema: Map<String, Value>,
    /// The manifest's `readOnly`.
    pub read_only: bool,
}

/// The catalog of `generation`: every ready V2 sidecar's served tools, by plugin id then the
/// handshake's order. A model name already taken (only possible through a hash clash of
/// [`tool_name`]) keeps its first owner.
pub(crate) fn entries(generation: &Generation) -> Vec<ExtensionTool> {
    let mut names = BTreeSet::new();
    generation
        .conns
        .values()
        .filter(|conn| conn.is_ready())
        .flat_map(|conn| served(conn))
        .filter(|tool| names.insert(tool.name.clone()))
        .collect()
}

/// The tools `conn` serves, whatever its state.
fn served(conn: &Connection) -> Vec<ExtensionTool> {
    let Some(declared) = &conn.plugin.v2 else {
        return Vec::new();
    };
    conn.handshake()
        .tools
        .iter()
        .filter_map(|name| declared.tools.iter().find(|t| &t.name == name))
        .map(|tool| ExtensionTool {
            name: tool_name(&conn.plugin.id, &tool.name),
            plugin: conn.plugin.id.clone(),
            tool: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            read_only: tool.read_only,
        })
        .collect()
}

/// Calls the tool the model knows as `name` on the sidecar that serves it in `generation`.
/// A sidecar that crashed or shut down is still found, so the call fails fast with
/// `provider_interrupted` rather than as an unknown tool; nothing is written to it.
pub(crate) async fn call(
    generation: &Generation,
    name: &str,
    arguments: Option<Value>,
) -> Result<ToolCallResult, Error> {
    let found = generation.conns.values().find_map(|conn| {
        served(conn)
            .into_iter()
            .find(|tool| tool.name == name)
            .map(|tool| (Arc::clone(conn), tool))
    });
    let Some((conn, tool)) = found else {
        return Err(Error::Tool {
            reason: Reason::InvalidParams,
            detail: format!("no extension serves a tool named {name:?}"),
        });
    };
    let budget = conn.shared.config.get_tool_call_timeout();
    let params = ToolCallParams {
        name: tool.tool.clone(),
        arguments: arguments.unwrap_or_else(|| Value::Object(Map::new())),
        timeout_millis: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
    };
    let what = format!("tool {}", tool.tool);
    let raw = conn
        .call(Method::ToolCall, &params, budget, &what)
        .await
        .map_err(|err| Error::Tool {
            reason: err.reason,
            detail: err.message,
        })?;
    decode_result::<ToolCallResult>(raw.get()).map_err(|err| Error::Tool {
        reason: Reason::ProtocolError,
        detail: conn.shared.redact(&format!(
            "extension {} sent an invalid tool result: {err}",
            conn.plugin.id
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_model_rule_and_stay_distinct() {
        assert_eq!(tool_name("notes", "search"), "ext__notes__search");
        // Exactly 64 bytes is kept as it is; one more is cut and hashed to 64.
        let fits = "t".repeat(MAX_TOOL_NAME_LEN - "ext__p__".len());
        assert_eq!(tool_name("p", &fits).len(), MAX_TOOL_NAME_LEN);
        assert_eq!(tool_name("p", &fits), format!("ext__p__{fits}"));
        let long = format!("{fits}t");
        let cut = tool_name("p", &long);
        assert_eq!(cut.len(), MAX_TOOL_NAME_LEN);
        assert!(is_model_tool_name(&cut), "{cut}");
        // Names that sanitise or cut alike still differ.
        for (a, b) in [("a.b", "a_b"), ("a.b", "a:b"), ("über", "_ber")] {
            let (x, y) = (tool_name("p", a), tool_name("p", b));
            assert!(is_model_tool_name(&x) && is_model_tool_name(&y), "{x} {y}");
            assert_ne!(x, y);
        }
        assert_ne!(
            tool_name("p", &format!("{long}1")),
            tool_name("p", &format!("{long}2"))
        );
        assert!(!is_model_tool_name(""));
        assert!(!is_model_tool_name(&"a".repeat(MAX_TOOL_NAME_LEN + 1)));
    }
}
