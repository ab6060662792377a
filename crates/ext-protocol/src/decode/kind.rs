//! Wire types ("kinds") for the member reader: each knows how to decode one JSON value strictly,
//! how to describe itself in the JSON Schema, and a placeholder value for schema generation.
//!
//! Kinds are the vocabulary of the spec's DTO tables: `string`, non-empty `string`, `uint`, `int`,
//! `number`, `bool`, enums, nested DTOs, arrays (with or without duplicates), `map<string,…>`,
//! `any`, JSON objects and *nullable*. They are not public: DTOs expose plain Rust types.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::marker::PhantomData;

use super::{
    Dto, Seg, WireEnum, bad_enum, blank, decode_map, mismatch, null, out_of_range, placeholder,
    rule, wrong_type,
};
use crate::constants::MAX_SAFE_INTEGER;
use crate::error::Error;
use crate::schema::Defs;

/// One wire type.
pub(crate) trait Kind {
    /// The Rust value it decodes to.
    type Out;

    /// Decodes a present member; `null` reaches this only when [`Kind::nullable`] is true.
    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Self::Out, Error>;

    /// The member's schema when it is required.
    fn schema(&self, defs: &mut Defs) -> Value;

    /// A value for schema generation; never seen by users.
    fn placeholder(&self) -> Self::Out;

    /// Whether the spec marks the member *nullable*.
    fn nullable(&self) -> bool {
        false
    }

    /// Whether a present value counts as absent for an optional member (`""` for enums, §4
    /// rule 6).
    fn empty_means_absent(&self, _value: &Value) -> bool {
        false
    }

    /// The member's schema when it is optional.
    fn optional_schema(&self, defs: &mut Defs) -> Value {
        self.schema(defs)
    }
}

/// Decodes a member value, rejecting `null` unless the kind is nullable (§4 rule 3).
pub(crate) fn member<K: Kind>(kind: &K, value: Value, at: &Seg<'_>) -> Result<K::Out, Error> {
    if value.is_null() && !kind.nullable() {
        return Err(null(at));
    }
    kind.decode(value, at)
}

/// Whether `text` has no character outside Unicode `White_Space` (§4 rule 7).
///
/// `char::is_whitespace` is defined as the `White_Space` property, which is exactly the spec's
/// definition (it includes U+3000 and U+0085, unlike ECMAScript's `\s`).
pub(crate) fn is_blank(text: &str) -> bool {
    text.chars().all(char::is_whitespace)
}

/// The schema pattern for "non-empty": one character outside `White_Space`, spelled out because
/// ECMAScript's `\s` is a different set.
pub(crate) const NON_BLANK_PATTERN: &str =
    r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]";

fn string(value: Value, at: &Seg<'_>) -> Result<String, Error> {
    match value {
        Value::String(text) => Ok(text),
        other => Err(wrong_type(at, "a string", &other)),
    }
}

/// `string`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Str;

impl Kind for Str {
    type Out = String;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<String, Error> {
        string(value, at)
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "string"})
    }

    fn placeholder(&self) -> String {
        String::new()
    }
}

/// `string` marked non-empty: at least one character outside `White_Space`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NonBlank;

impl Kind for NonBlank {
    type Out = String;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<String, Error> {
        let text = string(value, at)?;
        if is_blank(&text) {
            return Err(blank(at));
        }
        Ok(text)
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "string", "pattern": NON_BLANK_PATTERN})
    }

    fn placeholder(&self) -> String {
        String::new()
    }
}

/// A string that must equal one constant (`protocolId`, `protocolVersion`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exact(pub(crate) &'static str);

impl Kind for Exact {
    type Out = String;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<String, Error> {
        let text = string(value, at)?;
        if text != self.0 {
            return Err(bad_enum(at, &text, format!("{:?}", self.0)));
        }
        Ok(text)
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "string", "const": self.0})
    }

    fn placeholder(&self) -> String {
        self.0.to_owned()
    }
}

/// A string with a fixed syntax: the regex for the schema and an equivalent check.
#[derive(Debug)]
pub(crate) struct PatternDef {
    regex: &'static str,
    check: fn(&str) -> bool,
}

/// `sha256` members: `^[0-9a-f]{64}$` (§4 rule 7).
pub(crate) static SHA256: PatternDef = PatternDef {
    regex: "^[0-9a-f]{64}$",
    check: |s| s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
};

/// UI action ids: `^[a-z0-9-]{1,64}$` (§6.2, §10.4).
pub(crate) static ACTION_ID: PatternDef = PatternDef {
    regex: "^[a-z0-9-]{1,64}$",
    check: crate::lifecycle::is_action_id,
};

/// Plugin ids: `^[a-z0-9][a-z0-9-]{0,63}$` (§12.1).
pub(crate) static PLUGIN_ID: PatternDef = PatternDef {
    regex: "^[a-z0-9][a-z0-9-]{0,63}$",
    check: crate::manifest::is_plugin_id,
};

/// Manifest `apiVersion`: `reasonix.io/plugin/v1` with an optional `.<digits>` minor (§12.1).
pub(crate) static API_VERSION: PatternDef = PatternDef {
    regex: "^reasonix\\.io/plugin/v1(\\.[0-9]+)?$",
    check: crate::manifest::is_accepted_manifest_api_version,
};

/// A string matching a [`PatternDef`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pattern(pub(crate) &'static PatternDef);

impl Kind for Pattern {
    type Out = String;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<String, Error> {
        let text = string(value, at)?;
        if !(self.0.check)(&text) {
            return Err(mismatch(at, &text, self.0.regex));
        }
        Ok(text)
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "string", "pattern": self.0.regex})
    }

    fn placeholder(&self) -> String {
        String::new()
    }
}

/// `bool`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bool;

impl Kind for Bool {
    type Out = bool;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<bool, Error> {
        value
            .as_bool()
            .ok_or_else(|| wrong_type(at, "a boolean", &value))
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "boolean"})
    }

    fn placeholder(&self) -> bool {
        false
    }
}

/// Classifies a number that is not a (representable) integer token.
///
/// serde_json reads `1.0`, `1e3` and integers beyond 64 bits alike as floats. A float with a
/// fraction, or a small one (which can only have been written with a fraction or exponent), is a
/// type error; a whole float at or beyond 2^53 is reported as out of range, which it is whatever
/// its spelling.
fn not_an_integer(value: &Value, at: &Seg<'_>, expected: &str) -> Error {
    let whole_and_huge = value
        .as_f64()
        .is_some_and(|f| f.fract() == 0.0 && f.abs() > MAX_SAFE_INTEGER as f64);
    if whole_and_huge {
        out_of_range(at, expected, value)
    } else {
        wrong_type(at, "an integer without fraction or exponent", value)
    }
}

/// `uint` (`0 … 2^53−1`) with an optional lower bound.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Uint {
    pub(crate) min: u64,
}

impl Uint {
    /// Any `uint`.
    pub(crate) const ANY: Uint = Uint { min: 0 };
    /// A `uint` ≥ 1.
    pub(crate) const POSITIVE: Uint = Uint { min: 1 };
}

impl Kind for Uint {
    type Out = u64;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<u64, Error> {
        let range = || format!("{} … {MAX_SAFE_INTEGER}", self.min);
        let Value::Number(number) = &value else {
            return Err(wrong_type(at, "an unsigned integer", &value));
        };
        if let Some(n) = number.as_u64() {
            if n < self.min || n > MAX_SAFE_INTEGER {
                return Err(out_of_range(at, range(), &value));
            }
            return Ok(n);
        }
        if number.is_i64() {
            return Err(out_of_range(at, range(), &value));
        }
        Err(not_an_integer(&value, at, &range()))
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "integer", "minimum": self.min, "maximum": MAX_SAFE_INTEGER})
    }

    fn placeholder(&self) -> u64 {
        self.min
    }
}

/// `int` (`−(2^53−1) … 2^53−1`) within `min ..= max`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Int {
    pub(crate) min: i64,
    pub(crate) max: i64,
}

impl Int {
    /// The widest `int`.
    pub(crate) const SAFE: i64 = MAX_SAFE_INTEGER as i64;
}

impl Kind for Int {
    type Out = i64;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<i64, Error> {
        let range = || format!("{} … {}", self.min, self.max);
        let Value::Number(number) = &value else {
            return Err(wrong_type(at, "an integer", &value));
        };
        if let Some(n) = number.as_i64() {
            if n < self.min || n > self.max {
                return Err(out_of_range(at, range(), &value));
            }
            return Ok(n);
        }
        if number.is_u64() {
            return Err(out_of_range(at, range(), &value));
        }
        Err(not_an_integer(&value, at, &range()))
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "integer", "minimum": self.min, "maximum": self.max})
    }

    fn placeholder(&self) -> i64 {
        self.min.max(0)
    }
}

/// `number`, optionally bounded (inclusive).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Number {
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
}

impl Number {
    /// Any number.
    pub(crate) const ANY: Number = Number {
        min: None,
        max: None,
    };
    /// A number ≥ 0 (prices).
    pub(crate) const NON_NEGATIVE: Number = Number {
        min: Some(0.0),
        max: None,
    };
    /// A fraction in 0–1 (progress).
    pub(crate) const FRACTION: Number = Number {
        min: Some(0.0),
        max: Some(1.0),
    };
}

impl Kind for Number {
    type Out = f64;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<f64, Error> {
        let Some(n) = value.as_f64() else {
            return Err(wrong_type(at, "a number", &value));
        };
        let below = self.min.is_some_and(|min| n < min);
        let above = self.max.is_some_and(|max| n > max);
        if below || above {
            let bound = |b: Option<f64>| b.map_or_else(|| "…".to_owned(), |b| b.to_string());
            let expected = format!("{} … {}", bound(self.min), bound(self.max));
            return Err(out_of_range(at, expected, &value));
        }
        Ok(n)
    }

    fn schema(&self, _: &mut Defs) -> Value {
        let mut schema = Map::new();
        schema.insert("type".into(), Value::from("number"));
        if let Some(min) = self.min {
            schema.insert("minimum".into(), Value::from(min));
        }
        if let Some(max) = self.max {
            schema.insert("maximum".into(), Value::from(max));
        }
        Value::Object(schema)
    }

    fn placeholder(&self) -> f64 {
        self.min.unwrap_or(0.0)
    }
}

/// An enum member.
#[derive(Debug)]
pub(crate) struct Enum<E>(PhantomData<E>);

impl<E> Enum<E> {
    pub(crate) const fn new() -> Self {
        Enum(PhantomData)
    }
}

impl<E: WireEnum> Kind for Enum<E> {
    type Out = E;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<E, Error> {
        let text = string(value, at)?;
        E::all()
            .iter()
            .copied()
            .find(|e| e.wire() == text)
            .ok_or_else(|| {
                let expected: Vec<&str> = E::all().iter().map(|e| e.wire()).collect();
                bad_enum(at, &text, expected.join(", "))
            })
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        defs.enumeration::<E>()
    }

    fn placeholder(&self) -> E {
        E::all()[0]
    }

    fn empty_means_absent(&self, value: &Value) -> bool {
        value.as_str() == Some("")
    }

    fn optional_schema(&self, defs: &mut Defs) -> Value {
        json!({"anyOf": [defs.enumeration::<E>(), {"const": ""}]})
    }
}

/// A nested DTO.
#[derive(Debug)]
pub(crate) struct Obj<T>(PhantomData<T>);

impl<T> Obj<T> {
    pub(crate) const fn new() -> Self {
        Obj(PhantomData)
    }
}

impl<T: Dto> Kind for Obj<T> {
    type Out = T;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<T, Error> {
        match value {
            Value::Object(map) => decode_map(map, at),
            other => Err(wrong_type(at, "an object", &other)),
        }
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        defs.dto::<T>()
    }

    fn placeholder(&self) -> T {
        placeholder::<T>()
    }
}

fn array(value: Value, at: &Seg<'_>) -> Result<Vec<Value>, Error> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(wrong_type(at, "an array", &other)),
    }
}

/// `[T]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct List<K>(pub(crate) K);

impl<K: Kind> Kind for List<K> {
    type Out = Vec<K::Out>;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Vec<K::Out>, Error> {
        let items = array(value, at)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            out.push(member(&self.0, item, &at.index(i))?);
        }
        Ok(out)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        json!({"type": "array", "items": self.0.schema(defs)})
    }

    fn placeholder(&self) -> Vec<K::Out> {
        Vec::new()
    }
}

/// `[T]` marked "no duplicates".
#[derive(Debug, Clone, Copy)]
pub(crate) struct Set<K>(pub(crate) K);

impl<K: Kind> Kind for Set<K>
where
    K::Out: PartialEq,
{
    type Out = Vec<K::Out>;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Vec<K::Out>, Error> {
        let items = List(&self.0).decode(value, at)?;
        for (i, item) in items.iter().enumerate() {
            if items[..i].contains(item) {
                return Err(rule(&at.index(i), "repeats an earlier entry"));
            }
        }
        Ok(items)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        json!({"type": "array", "items": self.0.schema(defs), "uniqueItems": true})
    }

    fn placeholder(&self) -> Vec<K::Out> {
        Vec::new()
    }
}

/// `[T]` that must hold at least one entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NonEmptyList<K>(pub(crate) K);

impl<K: Kind> Kind for NonEmptyList<K> {
    type Out = Vec<K::Out>;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Vec<K::Out>, Error> {
        let items = List(&self.0).decode(value, at)?;
        if items.is_empty() {
            return Err(rule(at, "must not be empty"));
        }
        Ok(items)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        json!({"type": "array", "items": self.0.schema(defs), "minItems": 1})
    }

    fn placeholder(&self) -> Vec<K::Out> {
        Vec::new()
    }
}

/// Lets a borrowed kind stand in for an owned one.
impl<K: Kind> Kind for &K {
    type Out = K::Out;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<K::Out, Error> {
        (**self).decode(value, at)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        (**self).schema(defs)
    }

    fn placeholder(&self) -> K::Out {
        (**self).placeholder()
    }

    fn nullable(&self) -> bool {
        (**self).nullable()
    }

    fn empty_means_absent(&self, value: &Value) -> bool {
        (**self).empty_means_absent(value)
    }

    fn optional_schema(&self, defs: &mut Defs) -> Value {
        (**self).optional_schema(defs)
    }
}

/// `map<string, T>`: any key, values of one kind. Repeated keys were already rejected by the
/// parser.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MapOf<K> {
    pub(crate) value: K,
    /// Keys must be non-empty (manifest `env`).
    pub(crate) non_blank_keys: bool,
}

impl<K: Kind> Kind for MapOf<K> {
    type Out = BTreeMap<String, K::Out>;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Self::Out, Error> {
        let Value::Object(entries) = value else {
            return Err(wrong_type(at, "an object", &value));
        };
        let mut out = BTreeMap::new();
        for (key, item) in entries {
            let here = at.key(&key);
            if self.non_blank_keys && is_blank(&key) {
                return Err(blank(&here));
            }
            let item = member(&self.value, item, &here)?;
            out.insert(key, item);
        }
        Ok(out)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        let mut schema = json!({"type": "object", "additionalProperties": self.value.schema(defs)});
        if self.non_blank_keys {
            schema["propertyNames"] = json!({"pattern": NON_BLANK_PATTERN});
        }
        schema
    }

    fn placeholder(&self) -> Self::Out {
        BTreeMap::new()
    }
}

/// `any`: every JSON value except a top-level `null`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Any;

impl Kind for Any {
    type Out = Value;

    fn decode(&self, value: Value, _: &Seg<'_>) -> Result<Value, Error> {
        Ok(value)
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"not": {"type": "null"}})
    }

    fn placeholder(&self) -> Value {
        Value::Bool(false)
    }
}

/// A JSON object with any members (`parameters`, a manifest's `contributes`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Object;

impl Kind for Object {
    type Out = Map<String, Value>;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Self::Out, Error> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(wrong_type(at, "an object", &other)),
        }
    }

    fn schema(&self, _: &mut Defs) -> Value {
        json!({"type": "object"})
    }

    fn placeholder(&self) -> Self::Out {
        Map::new()
    }
}

/// A member the spec marks *nullable*.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Nullable<K>(pub(crate) K);

impl<K: Kind> Kind for Nullable<K> {
    type Out = Option<K::Out>;

    fn decode(&self, value: Value, at: &Seg<'_>) -> Result<Self::Out, Error> {
        if value.is_null() {
            return Ok(None);
        }
        member(&self.0, value, at).map(Some)
    }

    fn schema(&self, defs: &mut Defs) -> Value {
        json!({"anyOf": [self.0.schema(defs), {"type": "null"}]})
    }

    fn placeholder(&self) -> Self::Out {
        None
    }

    fn nullable(&self) -> bool {
        true
    }
}
