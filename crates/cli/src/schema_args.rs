//! `key=value` words typed by a tool's `inputSchema` into the JSON arguments of a call, before
//! anything is sent (`sidewire mcp call`, and `/call` in `sidewire run`).
//!
//! A word is split at its first `=`; the key's property schema (from `properties`, else
//! `additionalProperties`) says what its value becomes:
//!
//! | schema says | `value` becomes |
//! |---|---|
//! | `string` | the text as it is (`message=123` is `"123"`; `key=` is `""`) |
//! | `integer`, `number` | a JSON number (`3.0` is `3` for an integer); anything else fails |
//! | `boolean` | `true`/`false` (any case) |
//! | `null` | `null` |
//! | `array` | repeated keys (`tag=a tag=b`) are the items, each typed by `items`; one value is a JSON array when it starts with `[`, else the one item |
//! | `object` | a JSON object |
//! | `enum`, `const` | a member spelled as text (`unit=celsius`), or as JSON (`n=3`); anything else fails, listing the members |
//! | nothing (`{}`, `true`, an unknown `$ref`) | JSON when it parses, else the text (the old behaviour) |
//!
//! Combinations: `$ref` is followed within the schema (`#/$defs/...`, any JSON pointer);
//! `anyOf`, `oneOf` and a `type` array give several alternatives, and the first that accepts
//! the text wins in this order: enum/const members, `null`, `boolean`, `integer`, `number`, a
//! JSON array, a JSON object, `string`, a one-item array, untyped. So `anyOf: [integer,
//! string]` makes `7` a number and `7a` a string, and `[string, null]` makes `null` null.
//! `allOf` uses its first member that says anything. A JSON array or object given as a value
//! is checked for the types of its items and properties (not for `required`, formats or
//! ranges: the server validates those). `patternProperties` are not matched (no regex): a
//! schema with them never rejects a key as unknown.
//!
//! Errors ([`ArgError`]) name the argument and the expected type: a value that cannot be
//! converted, a key given twice that is not an array, a required property left out, and a key
//! the schema does not know when it says `additionalProperties: false`.
//!
//! Bounds: following `$ref`s and nesting stops at [`MAX_DEPTH`] levels (deeper, the schema is
//! taken as untyped: a cyclic `$ref` cannot loop); at most [`MAX_ALTERNATIVES`] alternatives
//! are considered per value; an error lists at most [`MAX_LISTED`] names or members. Schema
//! text (names, enum members) in an error is escaped where the error is printed
//! ([`crate::safe::error_chain`]).

use serde_json::{Map, Value};

/// How deep `$ref`s, `anyOf`s and nested items are followed before a schema counts as untyped.
pub(crate) const MAX_DEPTH: usize = 32;
/// The alternatives (`anyOf`, `oneOf`, type arrays, flattened) considered for one value.
pub(crate) const MAX_ALTERNATIVES: usize = 64;
/// The property names or enum members an error or a type description lists.
pub(crate) const MAX_LISTED: usize = 12;

/// The schema that allows anything.
const UNTYPED: &Value = &Value::Bool(true);

/// Why `key=value` words could not become a tool's arguments. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ArgError {
    /// A word without `=`.
    #[error("arguments are key=value, got {0:?}")]
    NotAPair(String),
    /// The value cannot be read as the type the schema says.
    #[error("argument {name}: expected {expected}, got {value:?}")]
    Invalid {
        name: String,
        expected: String,
        value: String,
    },
    /// The key was given more than once, but its schema is not an array.
    #[error("argument {name} is given more than once, but it takes {expected}, not an array")]
    Repeated { name: String, expected: String },
    /// A property the schema lists in `required` was not given.
    #[error("missing required argument {name} ({expected})")]
    Missing { name: String, expected: String },
    /// A key the schema does not list, where it says `additionalProperties: false`.
    #[error("unknown argument {name}; the tool takes: {known}")]
    Unknown { name: String, known: String },
}

#[allow(
    dead_code,
    reason = "predicates for callers that branch on the cause: the tests, `/call`"
)]
impl ArgError {
    /// The argument the error is about (none for a word without `=`).
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            ArgError::NotAPair(_) => None,
            ArgError::Invalid { name, .. }
            | ArgError::Repeated { name, .. }
            | ArgError::Missing { name, .. }
            | ArgError::Unknown { name, .. } => Some(name),
        }
    }

    pub(crate) fn is_invalid(&self) -> bool {
        matches!(self, ArgError::Invalid { .. })
    }

    pub(crate) fn is_missing(&self) -> bool {
        matches!(self, ArgError::Missing { .. })
    }

    pub(crate) fn is_unknown(&self) -> bool {
        matches!(self, ArgError::Unknown { .. })
    }

    pub(crate) fn is_repeated(&self) -> bool {
        matches!(self, ArgError::Repeated { .. })
    }

    pub(crate) fn is_not_a_pair(&self) -> bool {
        matches!(self, ArgError::NotAPair(_))
    }
}

/// Splits each word at its first `=` (a key may not be empty).
pub(crate) fn split_pairs(words: &[String]) -> Result<Vec<(String, String)>, ArgError> {
    words
        .iter()
        .map(|word| match word.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
            _ => Err(ArgError::NotAPair(word.clone())),
        })
        .collect()
}

/// The arguments object for `pairs`, typed by `schema` (a
/// tool's `inputSchema`). See the module docs for the conversions.
pub(crate) fn arguments(
    schema: &Value,
    pairs: &[(String, String)],
) -> Result<Map<String, Value>, ArgError> {
    let top = resolve(schema, schema, 0).unwrap_or(schema);
    let empty = Map::new();
    let properties = top
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let additional = top.get("additionalProperties");
    let closed = additional == Some(&Value::Bool(false)) && top.get("patternProperties").is_none();
    let additional = additional.filter(|a| a.is_object()).unwrap_or(UNTYPED);

    // The values of each key, keys in the order first given.
    let mut grouped: Vec<(&str, Vec<&str>)> = Vec::new();
    for (key, value) in pairs {
        match grouped.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => values.push(value),
            None => grouped.push((key, vec![value])),
        }
    }

    let mut map = Map::new();
    for (key, values) in grouped {
        let property = match properties.get(key) {
            Some(property) => property,
            None if closed => {
                return Err(ArgError::Unknown {
                    name: key.to_owned(),
                    known: listed(properties.keys().map(String::as_str), properties.len()),
                });
            }
            None => additional,
        };
        let value = match values.as_slice() {
            [one] => convert(schema, property, one, 0).map_err(|expected| ArgError::Invalid {
                name: key.to_owned(),
                expected,
                value: (*one).to_owned(),
            })?,
            many => repeated(schema, key, property, many)?,
        };
        map.insert(key.to_owned(), value);
    }

    if let Some(required) = top.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                let property = properties.get(name).unwrap_or(additional);
                return Err(ArgError::Missing {
                    name: name.to_owned(),
                    expected: describe(schema, property, 0),
                });
            }
        }
    }
    Ok(map)
}

/// A key given several times: the items of an array its schema allows.
fn repeated(root: &Value, key: &str, schema: &Value, values: &[&str]) -> Result<Value, ArgError> {
    let kinds = alternatives(root, schema, 0);
    let Some(items) = kinds.iter().find_map(|kind| match kind {
        Kind::Array(array) => Some(items_of(array)),
        Kind::Any => Some(UNTYPED),
        _ => None,
    }) else {
        return Err(ArgError::Repeated {
            name: key.to_owned(),
            expected: describe(root, schema, 0),
        });
    };
    values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            convert(root, items, value, 1).map_err(|expected| ArgError::Invalid {
                name: format!("{key}[{i}]"),
                expected,
                value: (*value).to_owned(),
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// One alternative a schema allows.
#[derive(Debug, Clone, Copy)]
enum Kind<'a> {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    /// An array, with its schema (for `items`).
    Array(&'a Value),
    /// An object, with its schema (for `properties`).
    Object(&'a Value),
    /// `enum`'s members.
    Enum(&'a [Value]),
    /// `const`'s value.
    Const(&'a Value),
    /// No type said (or none that can be followed): anything.
    Any,
}

/// The order alternatives are tried in: the first attempt that accepts the text wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    Member,
    Null,
    Boolean,
    Integer,
    Number,
    JsonArray,
    JsonObject,
    String,
    OneItem,
    Untyped,
}

const ATTEMPTS: [Attempt; 10] = [
    Attempt::Member,
    Attempt::Null,
    Attempt::Boolean,
    Attempt::Integer,
    Attempt::Number,
    Attempt::JsonArray,
    Attempt::JsonObject,
    Attempt::String,
    Attempt::OneItem,
    Attempt::Untyped,
];

/// `text` as the value `schema` wants, or a description of what it wants.
fn convert(root: &Value, schema: &Value, text: &str, depth: usize) -> Result<Value, String> {
    let kinds = alternatives(root, schema, depth);
    for attempt in ATTEMPTS {
        for kind in &kinds {
            if let Some(value) = try_kind(root, *kind, attempt, text, depth) {
                return Ok(value);
            }
        }
    }
    Err(describe_kinds(root, &kinds, depth))
}

/// `text` read as `kind` in the way `attempt` reads it, when that applies and succeeds.
fn try_kind(
    root: &Value,
    kind: Kind<'_>,
    attempt: Attempt,
    text: &str,
    depth: usize,
) -> Option<Value> {
    match (attempt, kind) {
        (Attempt::Member, Kind::Enum(members)) => member(members, text),
        (Attempt::Member, Kind::Const(value)) => member(std::slice::from_ref(value), text),
        (Attempt::Null, Kind::Null) => (text == "null").then_some(Value::Null),
        (Attempt::Boolean, Kind::Boolean) => {
            if text.eq_ignore_ascii_case("true") {
                Some(Value::Bool(true))
            } else if text.eq_ignore_ascii_case("false") {
                Some(Value::Bool(false))
            } else {
                None
            }
        }
        (Attempt::Integer, Kind::Integer) => integer(text),
        (Attempt::Number, Kind::Number) => {
            // Strict JSON numbers: no `NaN`, `inf`, `0x10`, leading `+` or spaces.
            let trimmed = text.trim() == text;
            match serde_json::from_str::<Value>(text) {
                Ok(number @ Value::Number(_)) if trimmed => Some(number),
                _ => None,
            }
        }
        (Attempt::JsonArray, Kind::Array(array)) if text.trim_start().starts_with('[') => {
            let value: Value = serde_json::from_str(text).ok()?;
            conforms(root, array, &value, depth).then_some(value)
        }
        (Attempt::JsonObject, Kind::Object(object)) => {
            let value: Value = serde_json::from_str(text).ok()?;
            (value.is_object() && conforms(root, object, &value, depth)).then_some(value)
        }
        (Attempt::String, Kind::String) => Some(Value::String(text.to_owned())),
        (Attempt::OneItem, Kind::Array(array)) if !text.trim_start().starts_with('[') => {
            let item = convert(root, items_of(array), text, depth + 1).ok()?;
            Some(Value::Array(vec![item]))
        }
        (Attempt::Untyped, Kind::Any) => {
            Some(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())))
        }
        _ => None,
    }
}

/// The member of `members` that `text` spells: as a string member, or as JSON.
fn member(members: &[Value], text: &str) -> Option<Value> {
    if let Some(found) = members.iter().find(|m| m.as_str() == Some(text)) {
        return Some(found.clone());
    }
    let parsed: Value = serde_json::from_str(text).ok()?;
    members.iter().find(|m| **m == parsed).cloned()
}

/// `text` as a JSON integer: `3`, `-3`, or a number with no fraction (`3.0`, `3e2`).
fn integer(text: &str) -> Option<Value> {
    if text.trim() != text {
        return None;
    }
    let number = match serde_json::from_str::<Value>(text).ok()? {
        Value::Number(number) => number,
        _ => return None,
    };
    if number.is_i64() || number.is_u64() {
        return Some(Value::Number(number));
    }
    let float = number.as_f64()?;
    // Exactly representable whole numbers only (|x| < 2^53).
    if float.fract() == 0.0 && float.abs() < 9_007_199_254_740_992.0 {
        #[allow(clippy::cast_possible_truncation)]
        return Some(Value::from(float as i64));
    }
    None
}

/// Whether a JSON `value` has the types `schema` says (items and properties followed; not
/// `required`, formats or ranges).
fn conforms(root: &Value, schema: &Value, value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    alternatives(root, schema, depth)
        .iter()
        .any(|kind| match kind {
            Kind::Null => value.is_null(),
            Kind::Boolean => value.is_boolean(),
            Kind::Integer => value.as_number().is_some_and(|n| {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }),
            Kind::Number => value.is_number(),
            Kind::String => value.is_string(),
            Kind::Array(array) => value.as_array().is_some_and(|items| {
                let schema = items_of(array);
                items
                    .iter()
                    .all(|item| conforms(root, schema, item, depth + 1))
            }),
            Kind::Object(object) => value.as_object().is_some_and(|fields| {
                let properties = object.get("properties").and_then(Value::as_object);
                fields.iter().all(|(name, field)| {
                    properties
                        .and_then(|p| p.get(name))
                        .is_none_or(|schema| conforms(root, schema, field, depth + 1))
                })
            }),
            Kind::Enum(members) => members.contains(value),
            Kind::Const(constant) => *constant == value,
            Kind::Any => true,
        })
}

/// The schema of an array's items (`items`, or a tuple's first; untyped when absent).
fn items_of(array: &Value) -> &Value {
    match array.get("items").or_else(|| array.get("prefixItems")) {
        Some(Value::Array(tuple)) => tuple.first().unwrap_or(UNTYPED),
        Some(items) => items,
        None => UNTYPED,
    }
}

/// `schema` with its `$ref` followed (within `root`), or `None` when it cannot be (an
/// unknown target, too deep).
fn resolve<'a>(root: &'a Value, schema: &'a Value, depth: usize) -> Option<&'a Value> {
    let mut schema = schema;
    for _ in depth..MAX_DEPTH {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let pointer = reference.strip_prefix('#')?;
                schema = root.pointer(pointer)?;
            }
            None => return Some(schema),
        }
    }
    None
}

/// The alternatives `schema` allows, flattened (`$ref`, `anyOf`, `oneOf`, type arrays), at
/// most [`MAX_ALTERNATIVES`].
fn alternatives<'a>(root: &'a Value, schema: &'a Value, depth: usize) -> Vec<Kind<'a>> {
    let mut kinds = Vec::new();
    collect(root, schema, depth, &mut kinds);
    kinds.truncate(MAX_ALTERNATIVES);
    kinds
}

fn collect<'a>(root: &'a Value, schema: &'a Value, depth: usize, kinds: &mut Vec<Kind<'a>>) {
    if kinds.len() >= MAX_ALTERNATIVES {
        return;
    }
    if depth > MAX_DEPTH {
        kinds.push(Kind::Any);
        return;
    }
    let schema = match schema {
        Value::Bool(false) => return,
        Value::Object(_) => match resolve(root, schema, depth) {
            Some(schema) => schema,
            None => {
                kinds.push(Kind::Any);
                return;
            }
        },
        _ => {
            kinds.push(Kind::Any);
            return;
        }
    };
    if let Some(constant) = schema.get("const") {
        kinds.push(Kind::Const(constant));
        return;
    }
    if let Some(members) = schema.get("enum").and_then(Value::as_array) {
        kinds.push(Kind::Enum(members));
        return;
    }
    let branches = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .next();
    if let Some(branches) = branches {
        for branch in branches {
            collect(root, branch, depth + 1, kinds);
        }
        return;
    }
    match schema.get("type") {
        Some(Value::String(name)) => kinds.push(kind(name, schema)),
        Some(Value::Array(names)) => kinds.extend(
            names
                .iter()
                .filter_map(Value::as_str)
                .map(|name| kind(name, schema)),
        ),
        _ => {
            if let Some(first) = schema
                .get("allOf")
                .and_then(Value::as_array)
                .and_then(|all| all.iter().find(|member| says_anything(member)))
            {
                collect(root, first, depth + 1, kinds);
            } else if schema.get("properties").is_some() {
                kinds.push(Kind::Object(schema));
            } else if schema.get("items").is_some() {
                kinds.push(Kind::Array(schema));
            } else {
                kinds.push(Kind::Any);
            }
        }
    }
}

/// Whether an `allOf` member constrains the type.
fn says_anything(schema: &Value) -> bool {
    [
        "type",
        "$ref",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "properties",
        "items",
    ]
    .iter()
    .any(|key| schema.get(*key).is_some())
}

fn kind<'a>(name: &str, schema: &'a Value) -> Kind<'a> {
    match name {
        "null" => Kind::Null,
        "boolean" => Kind::Boolean,
        "integer" => Kind::Integer,
        "number" => Kind::Number,
        "string" => Kind::String,
        "array" => Kind::Array(schema),
        "object" => Kind::Object(schema),
        _ => Kind::Any,
    }
}

/// What `schema` wants, in words (`integer`, `string or null`, `one of "a", "b"`).
fn describe(root: &Value, schema: &Value, depth: usize) -> String {
    describe_kinds(root, &alternatives(root, schema, depth), depth)
}

fn describe_kinds(root: &Value, kinds: &[Kind<'_>], depth: usize) -> String {
    if kinds.is_empty() {
        return "nothing (the schema allows no value)".to_owned();
    }
    let words: Vec<String> = kinds
        .iter()
        .map(|kind| match kind {
            Kind::Null => "null".to_owned(),
            Kind::Boolean => "boolean (true or false)".to_owned(),
            Kind::Integer => "integer".to_owned(),
            Kind::Number => "number".to_owned(),
            Kind::String => "string".to_owned(),
            Kind::Array(array) if depth < 2 => format!(
                "array of {} (repeat the key, or a JSON array)",
                describe(root, items_of(array), depth + 1)
            ),
            Kind::Array(_) => "array".to_owned(),
            Kind::Object(_) => "object (as JSON)".to_owned(),
            Kind::Enum(members) => format!(
                "one of {}",
                listed(members.iter().map(member_text), members.len())
            ),
            Kind::Const(value) => member_text(value),
            Kind::Any => "any JSON value".to_owned(),
        })
        .collect();
    let mut unique: Vec<String> = Vec::new();
    for word in words {
        if !unique.contains(&word) {
            unique.push(word);
        }
    }
    unique.join(" or ")
}

/// An enum member as the user would type it (a string bare, anything else as JSON).
fn member_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// At most [`MAX_LISTED`] of `names`, comma-separated, with how many more there are.
fn listed<S: AsRef<str>>(names: impl Iterator<Item = S>, total: usize) -> String {
    if total == 0 {
        return "(no arguments)".to_owned();
    }
    let shown: Vec<String> = names
        .take(MAX_LISTED)
        .map(|name| name.as_ref().to_owned())
        .collect();
    let mut text = shown.join(", ");
    if total > shown.len() {
        text.push_str(&format!(" and {} more", total - shown.len()));
    }
    text
}

#[cfg(test)]
mod tests;
