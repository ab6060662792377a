//! The HTTP headers a modern (2026-07-28) request carries besides its body: `Mcp-Method`,
//! `Mcp-Name` and the `Mcp-Param-{name}` mirrors of the arguments a tool's `inputSchema`
//! designates with `x-mcp-header`.
//!
//! A designation is valid only on a property reached from the schema's root through
//! `properties` alone, names a non-empty RFC 9110 token, sits on a `string`, `integer` or
//! `boolean` property, and is unique (case-insensitively) in the schema. A tool with an invalid
//! one is not listed at all in the modern era: a client must not call it. The walk enters every
//! JSON Schema 2020-12 applicator but never follows a `$ref`, so it ends on any finite schema.
//!
//! A value is mirrored as its text (`true`/`false` for booleans); a value that would not survive
//! an HTTP field (anything but printable ASCII, leading or trailing whitespace, or text that
//! looks like the encoding itself) is sent as `=?base64?{base64 of its UTF-8}?=`. An argument
//! that is absent or `null` gets no header.
//!
//! What is known per tool is kept in [`ToolHeaders`], written when tools are listed and read
//! when a `tools/call` goes out; it holds at most the listed tools' designations.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::Value;
use sidewire_jsonrpc::lock;

/// The prefix of a mirrored argument's header.
pub(crate) const PARAM_PREFIX: &str = "Mcp-Param-";

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "items",
    "contains",
    "unevaluatedItems",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords whose value is a list of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is a map of subschemas.
const MAP: &[&str] = &[
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// The most schema positions one walk visits: a schema past it is refused, not walked further.
const MAX_POSITIONS: usize = 10_000;

/// One argument a tool's schema designates for a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// The `properties` keys from the schema's root to the argument.
    pub(crate) path: Vec<String>,
    /// The header is `Mcp-Param-{token}`.
    pub(crate) token: String,
}

/// The designations of a schema, or why the schema's designations are invalid.
pub(crate) fn designations(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    // (path from the root through `properties` only, or None once off that chain; the node)
    let mut stack: Vec<(Option<Vec<String>>, &Value)> = vec![(Some(Vec::new()), schema)];
    let mut visited = 0;
    while let Some((path, node)) = stack.pop() {
        let Value::Object(object) = node else {
            continue;
        };
        visited += 1;
        if visited > MAX_POSITIONS {
            return Err(format!(
                "the schema has more than {MAX_POSITIONS} positions"
            ));
        }
        if let Some(token) = object.get("x-mcp-header") {
            let path = match &path {
                Some(path) if !path.is_empty() => path,
                _ => {
                    return Err(
                        "x-mcp-header sits where no `properties` chain from the root reaches"
                            .to_owned(),
                    );
                }
            };
            let where_ = path.join(".");
            let Value::String(token) = token else {
                return Err(format!("property {where_:?}: x-mcp-header is not a string"));
            };
            if token.is_empty() || !token.bytes().all(is_token_byte) {
                return Err(format!(
                    "property {where_:?}: x-mcp-header {token:?} is not an HTTP token"
                ));
            }
            match object.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                other => {
                    return Err(format!(
                        "property {where_:?}: x-mcp-header is allowed on string, integer and boolean properties only (type {other:?})"
                    ));
                }
            }
            if !seen.insert(token.to_ascii_lowercase()) {
                return Err(format!(
                    "property {where_:?}: x-mcp-header {token:?} is used twice"
                ));
            }
            found.push(ParamHeader {
                path: path.clone(),
                token: token.clone(),
            });
        }
        for (keyword, value) in object {
            match (keyword.as_str(), value) {
                ("properties", Value::Object(properties)) => {
                    for (name, sub) in properties {
                        let path = path.as_ref().map(|path| {
                            let mut path = path.clone();
                            path.push(name.clone());
                            path
                        });
                        stack.push((path, sub));
                    }
                }
                (keyword, sub) if SINGLE.contains(&keyword) => stack.push((None, sub)),
                (keyword, Value::Array(subs)) if LIST.contains(&keyword) => {
                    stack.extend(subs.iter().map(|sub| (None, sub)));
                }
                (keyword, Value::Object(subs)) if MAP.contains(&keyword) => {
                    stack.extend(subs.values().map(|sub| (None, sub)));
                }
                _ => {}
            }
        }
    }
    // Walk order is a stack's; headers go out in schema order, which is stable.
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// RFC 9110 `tchar`.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// `value` as a header value: itself when it is safe, else the base64 form.
pub(crate) fn encode(value: &str) -> String {
    let safe = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if safe {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

/// An argument's text as mirrored, or `None` when it has none (absent, `null`, not a scalar).
fn render(value: &Value) -> Option<String> {
    match value {
        Value::Bool(true) => Some("true".to_owned()),
        Value::Bool(false) => Some("false".to_owned()),
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The `Mcp-Param-*` headers (name, encoded value) for `arguments` of a tool with these
/// designations.
pub(crate) fn param_headers(
    designations: &[ParamHeader],
    arguments: &Value,
) -> Vec<(String, String)> {
    designations
        .iter()
        .filter_map(|designation| {
            let mut node = arguments;
            for key in &designation.path {
                node = node.as_object()?.get(key)?;
            }
            let text = render(node)?;
            Some((
                format!("{PARAM_PREFIX}{}", designation.token),
                encode(&text),
            ))
        })
        .collect()
}

/// The header designations of the tools as last listed, by tool name.
#[derive(Debug, Default)]
pub(crate) struct ToolHeaders(Mutex<HashMap<String, Arc<[ParamHeader]>>>);

impl ToolHeaders {
    /// Replaces what is known with these tools' designations (tools with none are not kept).
    pub(crate) fn replace(&self, tools: impl IntoIterator<Item = (String, Vec<ParamHeader>)>) {
        let map = tools
            .into_iter()
            .filter(|(_, headers)| !headers.is_empty())
            .map(|(name, headers)| (name, Arc::from(headers)))
            .collect();
        *lock(&self.0) = map;
    }

    /// The designations of `tool`, when it has any.
    pub(crate) fn get(&self, tool: &str) -> Option<Arc<[ParamHeader]>> {
        lock(&self.0).get(tool).cloned()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_that_would_not_survive_a_header_are_base64() {
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("a b"), "a b");
        assert_eq!(encode(""), "");
        assert_eq!(encode(" lead"), "=?base64?IGxlYWQ=?=");
        assert_eq!(encode("trail "), "=?base64?dHJhaWwg?=");
        assert_eq!(encode("\tx"), "=?base64?CXg=?=");
        assert_eq!(encode("a\r\nb"), "=?base64?YQ0KYg==?=");
        assert_eq!(encode("Région"), "=?base64?UsOpZ2lvbg==?=");
        assert_eq!(encode("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }

    #[test]
    fn designations_are_found_and_mirrored() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                "nested": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}
                }},
                "query": {"type": "string"}
            }
        });
        let found = designations(&schema).unwrap();
        assert_eq!(found.len(), 4);
        let headers = param_headers(
            &found,
            &json!({"region": "eu", "priority": 3, "verbose": null, "nested": {"zone": "b"}, "query": "q"}),
        );
        assert_eq!(
            headers,
            vec![
                ("Mcp-Param-Zone".to_owned(), "b".to_owned()),
                ("Mcp-Param-Priority".to_owned(), "3".to_owned()),
                ("Mcp-Param-Region".to_owned(), "eu".to_owned()),
            ]
        );
    }

    #[test]
    fn invalid_designations_are_refused() {
        let one = |property: Value| {
            designations(&json!({"type": "object", "properties": {"p": property}}))
        };
        assert!(one(json!({"type": "string", "x-mcp-header": ""})).is_err());
        assert!(one(json!({"type": "object", "x-mcp-header": "D"})).is_err());
        assert!(one(json!({"type": "array", "x-mcp-header": "D"})).is_err());
        assert!(one(json!({"type": "null", "x-mcp-header": "D"})).is_err());
        assert!(one(json!({"type": "number", "x-mcp-header": "D"})).is_err());
        assert!(one(json!({"type": "string", "x-mcp-header": "My Region"})).is_err());
        assert!(one(json!({"type": "string", "x-mcp-header": "Region:Primary"})).is_err());
        assert!(one(json!({"type": "string", "x-mcp-header": "Région"})).is_err());
        assert!(one(json!({"type": "string", "x-mcp-header": "Region\t1"})).is_err());
        assert!(one(json!({"type": "string", "x-mcp-header": 7})).is_err());
        assert!(one(json!({"type": "string", "x-mcp-header": "Ok"})).is_ok());
        let twice = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}
        }});
        assert!(designations(&twice).is_err());
        let off_chain = json!({"type": "object", "anyOf": [
            {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}
        ]});
        assert!(designations(&off_chain).is_err());
        let at_root = json!({"type": "string", "x-mcp-header": "A"});
        assert!(designations(&at_root).is_err());
        // A `$ref` is data here: never followed.
        let reference =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
        assert_eq!(designations(&reference).unwrap(), vec![]);
    }
}
