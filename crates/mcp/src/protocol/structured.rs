//! Tool schemas checked on the client: a result's `structuredContent` against the tool's
//! `outputSchema` (the spec says clients SHOULD), and, when the caller asks
//! ([`ToolCallOptions::validate_arguments`](crate::ToolCallOptions::validate_arguments)), the
//! arguments against its `inputSchema` before anything is sent.
//!
//! Validation uses the `jsonschema` crate: draft 2020-12 unless the schema's `$schema` names
//! another, built **offline** (a `$ref` to anything outside the schema is an error, never a
//! fetch: the crate is built without its HTTP and file retrievers, and the validator is given
//! the refusing one besides). The tool keeps its schemas as their text ([`RawJson`]); each is
//! compiled the first time a call needs it and cached per connection by tool name, the text
//! compared so a relisted tool with a new schema is compiled again. The cache is bounded:
//! at most [`MAX_CACHED_SCHEMAS`] entries (full: emptied, then refilled as calls need them)
//! and a schema over [`MAX_SCHEMA_BYTES`] is not compiled. A schema that does not compile
//! or is too large is reported on the call that needed it ([`Error::is_schema_invalid`]),
//! never on the listing, which keeps the tool.
//!
//! A mismatch is an `Err`, not the result with a flag: a caller that passes results on to a
//! model with `?` must not pass on data that breaks the contract the tool declared, and the
//! spec treats such a result as invalid. The result stays available from the error
//! ([`Error::call_result`]) for diagnostics, with at most [`MAX_VIOLATIONS`] violations
//! ([`Error::schema_violations`]), each naming the instance path and the keyword.
//!
//! Both checks need the `structured` feature (jsonschema). Without it a result is passed on
//! unchecked (the spec's SHOULD), and asking to check arguments fails closed with
//! [`Error::is_schema_invalid`] before anything is sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sidewire_jsonrpc::lock;

use crate::Error;
use crate::error::Kind;
use crate::protocol::types::{CallToolResult, RawJson, Tool};

/// The most schemas a connection keeps compiled.
pub const MAX_CACHED_SCHEMAS: usize = 1024;

/// The largest schema compiled, in bytes of its JSON text.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// The most violations an error keeps.
pub const MAX_VIOLATIONS: usize = 16;

/// The longest violation message kept, in bytes.
const MAX_MESSAGE_BYTES: usize = 512;

/// One way a value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaViolation {
    /// Where in the value (a JSON Pointer, `""` for the whole value).
    pub instance_path: String,
    /// The schema keyword that failed (`type`, `required`, `additionalProperties`, ...).
    pub keyword: String,
    /// The validator's message (at most 512 bytes; it may quote the value: peer text).
    pub message: String,
}

/// Which of a tool's schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Which {
    Input,
    Output,
}

impl Which {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Which::Input => "inputSchema",
            Which::Output => "outputSchema",
        }
    }
}

/// A compiled schema.
#[cfg(feature = "structured")]
type Validator = jsonschema::Validator;
/// Without the `structured` feature nothing compiles, so no validator exists.
#[cfg(not(feature = "structured"))]
enum Validator {}

type Compiled = Result<Arc<Validator>, String>;

/// The compiled schemas of one connection's tools.
#[derive(Default)]
pub(crate) struct SchemaCache {
    entries: Mutex<HashMap<(String, Which), (RawJson, Compiled)>>,
}

impl SchemaCache {
    /// The compiled `which` schema of `tool`, compiling it on first use.
    fn compiled(&self, tool: &Tool, which: Which, schema: &RawJson) -> Compiled {
        let key = (tool.name.clone(), which);
        if let Some((text, compiled)) = lock(&self.entries).get(&key)
            && text == schema
        {
            return compiled.clone();
        }
        // Compiled outside the lock: a large schema takes a while.
        let compiled = compile(schema);
        let mut entries = lock(&self.entries);
        if entries.len() >= MAX_CACHED_SCHEMAS {
            entries.clear();
        }
        entries.insert(key, (schema.clone(), compiled.clone()));
        compiled
    }

    /// Forgets every compiled schema (the tools were listed again).
    pub(crate) fn clear(&self) {
        lock(&self.entries).clear();
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    /// Checks `arguments` against `tool`'s input schema.
    pub(crate) fn check_arguments(&self, tool: &Tool, arguments: &Value) -> Result<(), Error> {
        let validator = self
            .compiled(tool, Which::Input, &tool.input_schema)
            .map_err(|why| schema_invalid(tool, Which::Input, why, None))?;
        // No arguments are sent as none; the schema sees an empty object.
        let empty = Value::Object(serde_json::Map::new());
        let instance = if arguments.is_null() {
            &empty
        } else {
            arguments
        };
        let violations = violations(&validator, instance);
        if violations.is_empty() {
            return Ok(());
        }
        Err(Error::new(Kind::InvalidArguments {
            tool: tool.name.clone(),
            violations,
        }))
    }

    /// Checks a successful result's `structuredContent` against `tool`'s output schema (a
    /// tool without one, or a result with `isError`, passes).
    pub(crate) fn check_result(
        &self,
        tool: &Tool,
        result: CallToolResult,
    ) -> Result<CallToolResult, Error> {
        let Some(schema) = &tool.output_schema else {
            return Ok(result);
        };
        if result.is_error || cfg!(not(feature = "structured")) {
            // Without the `structured` feature a result is not checked (the spec's SHOULD).
            return Ok(result);
        }
        let validator = match self.compiled(tool, Which::Output, schema) {
            Ok(validator) => validator,
            Err(why) => return Err(schema_invalid(tool, Which::Output, why, Some(result))),
        };
        let violations = match &result.structured_content {
            Some(structured) => violations(&validator, structured),
            None => vec![SchemaViolation {
                instance_path: String::new(),
                keyword: "structuredContent".to_owned(),
                message:
                    "the tool declares an output schema but its result has no structuredContent"
                        .to_owned(),
            }],
        };
        if violations.is_empty() {
            return Ok(result);
        }
        Err(Error::new(Kind::OutputSchemaMismatch {
            tool: tool.name.clone(),
            violations,
            result: Box::new(result),
        }))
    }
}

fn schema_invalid(tool: &Tool, which: Which, why: String, result: Option<CallToolResult>) -> Error {
    Error::new(Kind::SchemaInvalid {
        tool: tool.name.clone(),
        which: which.as_str(),
        why,
        result: result.map(Box::new),
    })
}

/// Without the `structured` feature a schema cannot be checked: asking to check arguments fails
/// closed with this reason.
#[cfg(not(feature = "structured"))]
fn compile(_schema: &RawJson) -> Compiled {
    Err("this build cannot check schemas (sidewire-mcp's `structured` feature is off)".to_owned())
}

#[cfg(not(feature = "structured"))]
fn violations(validator: &Validator, _instance: &Value) -> Vec<SchemaViolation> {
    match *validator {}
}

/// Compiles a schema offline, within the size cap.
#[cfg(feature = "structured")]
fn compile(schema: &RawJson) -> Compiled {
    let text = schema.get();
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "the schema is {} bytes, over the cap of {MAX_SCHEMA_BYTES}",
            text.len()
        ));
    }
    let value: Value =
        serde_json::from_str(text).map_err(|err| format!("the schema is not JSON: {err}"))?;
    jsonschema::options()
        .offline()
        .build(&value)
        .map(Arc::new)
        .map_err(|err| {
            crate::protocol::handler::cut(
                &format!("the schema does not compile: {err}"),
                MAX_MESSAGE_BYTES,
            )
            .to_owned()
        })
}

/// The first [`MAX_VIOLATIONS`] ways `instance` breaks the schema.
#[cfg(feature = "structured")]
fn violations(validator: &Validator, instance: &Value) -> Vec<SchemaViolation> {
    validator
        .iter_errors(instance)
        .take(MAX_VIOLATIONS)
        .map(|error| SchemaViolation {
            instance_path: error.instance_path().to_string(),
            keyword: error.kind().keyword().to_owned(),
            message: crate::protocol::handler::cut(&error.to_string(), MAX_MESSAGE_BYTES)
                .to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(output: Value) -> Tool {
        let mut tool = Tool::new(
            "weather",
            "",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        );
        tool.output_schema = Some(RawJson::from(output));
        tool
    }

    fn result(structured: Option<Value>) -> CallToolResult {
        CallToolResult {
            structured_content: structured,
            ..CallToolResult::text("t")
        }
    }

    fn temperature() -> Value {
        json!({
            "type": "object",
            "properties": {"temperature": {"type": "number"}, "unit": {"enum": ["C", "F"]}},
            "required": ["temperature"],
            "additionalProperties": false
        })
    }

    #[test]
    fn matching_structured_content_passes_and_is_compiled_once() {
        let cache = SchemaCache::default();
        let tool = tool(temperature());
        for _ in 0..3 {
            let ok = cache.check_result(
                &tool,
                result(Some(json!({"temperature": 21.5, "unit": "C"}))),
            );
            assert!(ok.is_ok());
        }
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_mismatch_names_paths_and_keywords_and_keeps_the_result() {
        let cache = SchemaCache::default();
        let tool = tool(temperature());
        let err = cache
            .check_result(
                &tool,
                result(Some(json!({"temperature": "hot", "unit": "K", "x": 1}))),
            )
            .unwrap_err();
        assert!(err.is_output_schema_mismatch());
        let found: Vec<(&str, &str)> = err
            .schema_violations()
            .iter()
            .map(|v| (v.instance_path.as_str(), v.keyword.as_str()))
            .collect();
        assert!(found.contains(&("/temperature", "type")), "{found:?}");
        assert!(found.contains(&("/unit", "enum")), "{found:?}");
        assert!(found.contains(&("", "additionalProperties")), "{found:?}");
        assert_eq!(
            err.call_result()
                .unwrap()
                .structured_content
                .as_ref()
                .unwrap()["temperature"],
            "hot"
        );
        // No structured content at all, where a schema is declared, is a mismatch too.
        let err = cache.check_result(&tool, result(None)).unwrap_err();
        assert!(err.is_output_schema_mismatch());
        // A tool error is not checked.
        let mut failed = result(None);
        failed.is_error = true;
        assert!(cache.check_result(&tool, failed).is_ok());
    }

    #[test]
    fn violations_are_bounded() {
        let cache = SchemaCache::default();
        let tool = tool(json!({"type": "array", "items": {"type": "string"}}));
        let many: Vec<Value> = (0..100).map(Value::from).collect();
        let err = cache
            .check_result(&tool, result(Some(Value::Array(many))))
            .unwrap_err();
        assert_eq!(err.schema_violations().len(), MAX_VIOLATIONS);
    }

    #[test]
    fn a_remote_ref_is_never_fetched_and_a_bad_schema_is_reported() {
        let cache = SchemaCache::default();
        // A remote `$ref` fails to compile (offline), whatever the URL.
        let remote = tool(json!({"$ref": "http://127.0.0.1:9/never.json"}));
        let err = cache
            .check_result(&remote, result(Some(json!({}))))
            .unwrap_err();
        assert!(err.is_schema_invalid(), "{err}");
        assert!(err.call_result().is_some());
        let broken = tool(json!({"type": 12}));
        assert!(
            cache
                .check_result(&broken, result(Some(json!({}))))
                .unwrap_err()
                .is_schema_invalid()
        );
        let big = tool(json!({"description": "x".repeat(MAX_SCHEMA_BYTES)}));
        assert!(
            cache
                .check_result(&big, result(Some(json!({}))))
                .unwrap_err()
                .is_schema_invalid()
        );
        // A local `$ref` works.
        let local = tool(json!({"$defs": {"n": {"type": "number"}}, "$ref": "#/$defs/n"}));
        assert!(cache.check_result(&local, result(Some(json!(3)))).is_ok());
        assert!(
            cache
                .check_result(&local, result(Some(json!("3"))))
                .is_err()
        );
    }

    #[test]
    fn the_default_draft_is_2020_12() {
        // `prefixItems` is a 2020-12 keyword (draft 7 ignores it).
        let cache = SchemaCache::default();
        let tool = tool(json!({"type": "array", "prefixItems": [{"type": "string"}]}));
        assert!(cache.check_result(&tool, result(Some(json!([1])))).is_err());
    }

    #[test]
    fn a_changed_schema_is_compiled_again_and_the_cache_is_bounded() {
        let cache = SchemaCache::default();
        let first = tool(json!({"type": "number"}));
        assert!(cache.check_result(&first, result(Some(json!(1)))).is_ok());
        let second = tool(json!({"type": "string"}));
        assert!(cache.check_result(&second, result(Some(json!(1)))).is_err());
        assert_eq!(cache.len(), 1);
        for i in 0..MAX_CACHED_SCHEMAS + 10 {
            let mut t = tool(json!({"type": "number"}));
            t.name = format!("t{i}");
            assert!(cache.check_result(&t, result(Some(json!(1)))).is_ok());
        }
        assert!(cache.len() <= MAX_CACHED_SCHEMAS);
    }

    #[test]
    fn arguments_are_checked_against_the_input_schema() {
        let cache = SchemaCache::default();
        let tool = tool(json!({}));
        assert!(
            cache
                .check_arguments(&tool, &json!({"city": "Oslo"}))
                .is_ok()
        );
        let err = cache
            .check_arguments(&tool, &json!({"city": 3}))
            .unwrap_err();
        assert!(err.is_invalid_arguments());
        assert_eq!(err.schema_violations()[0].instance_path, "/city");
        let err = cache.check_arguments(&tool, &Value::Null).unwrap_err();
        assert_eq!(err.schema_violations()[0].keyword, "required");
    }
}
