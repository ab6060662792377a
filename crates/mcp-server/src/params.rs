//! `Mcp-Param-{name}` headers (2026-07-28, SEP-2243): a tool's `inputSchema` designates
//! arguments with `x-mcp-header`, and a modern HTTP request mirrors each one that is present
//! and not `null` in a header the server checks against the body. A value is its text
//! (`true`/`false` for booleans), or `=?base64?{standard base64 of its UTF-8}?=`; the
//! base64 form is decoded strictly (alphabet, padding, length), anything else is literal.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// The most designations read from one schema.
const MAX_DESIGNATIONS: usize = 64;
/// The deepest `properties` nesting walked.
const MAX_DEPTH: usize = 8;

/// The designated arguments of a tool: the header name (as written) and the path of
/// property names from the root.
pub(crate) fn designations(schema: &Value) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), &mut found);
    found
}

fn walk(schema: &Value, path: &mut Vec<String>, found: &mut Vec<(String, Vec<String>)>) {
    if path.len() > MAX_DEPTH || found.len() >= MAX_DESIGNATIONS {
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        path.push(name.clone());
        if let Some(header) = property.get("x-mcp-header").and_then(Value::as_str)
            && found.len() < MAX_DESIGNATIONS
        {
            found.push((header.to_owned(), path.clone()));
        }
        walk(property, path, found);
        path.pop();
    }
}

/// The text a value is mirrored as, when it can be.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        _ => None,
    }
}

/// A header value as the text it stands for; `None` when it claims base64 and is not.
fn decode(header: &str) -> Option<String> {
    let header = header.trim_matches([' ', '\t']);
    match header
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(header.to_owned()),
    }
}

/// Checks the headers (suffix in lower case, value) against the arguments the schema
/// designates.
///
/// # Errors
///
/// Which header is missing or does not match.
pub(crate) fn check(
    schema: &Value,
    arguments: &Map<String, Value>,
    headers: &[(String, String)],
) -> Result<(), String> {
    for (header, path) in designations(schema) {
        let mut value = arguments.get(&path[0]);
        for step in &path[1..] {
            value = value.and_then(|value| value.get(step));
        }
        let Some(expected) = value.filter(|value| !value.is_null()).and_then(text_of) else {
            continue;
        };
        let wanted = header.to_ascii_lowercase();
        let Some((_, sent)) = headers.iter().find(|(name, _)| *name == wanted) else {
            return Err(format!("Mcp-Param-{header} is missing"));
        };
        if decode(sent).as_deref() != Some(expected.as_str()) {
            return Err(format!("Mcp-Param-{header} does not match the argument"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn designated_arguments_must_be_mirrored() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "inner": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}}});
        let args = |region: &str| {
            json!({"region": region, "inner": {"n": 3}})
                .as_object()
                .cloned()
                .unwrap()
        };
        let headers = |region: &str| {
            vec![
                ("region".to_owned(), region.to_owned()),
                ("n".to_owned(), "3".to_owned()),
            ]
        };
        assert!(check(&schema, &args("Hello"), &headers("=?base64?SGVsbG8=?=")).is_ok());
        assert!(check(&schema, &args("Hello"), &headers("=?base64?SGVsbG8?=")).is_err());
        assert!(check(&schema, &args("Hello"), &headers("=?base64?SGVs!!!bG8=?=")).is_err());
        assert!(check(&schema, &args("SGVsbG8="), &headers("SGVsbG8=")).is_ok());
        assert!(
            check(
                &schema,
                &args("=?base64?SGVsbG8="),
                &headers("=?base64?SGVsbG8=")
            )
            .is_ok()
        );
        assert!(check(&schema, &args("x"), &[("n".to_owned(), "3".to_owned())]).is_err());
        let absent = json!({"inner": {"n": 3}}).as_object().cloned().unwrap();
        assert!(check(&schema, &absent, &[("n".to_owned(), "3".to_owned())]).is_ok());
    }
}
