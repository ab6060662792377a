//! Strict decoding (§4): the entry points, the duplicate-rejecting parser and the field reader
//! every DTO describes itself with.
//!
//! Decoding runs in two steps. First the text is parsed into a `serde_json::Value` by a visitor
//! that rejects a repeated member name in any object at any depth (serde_json and the serde derive
//! silently keep the last one for maps and untyped values) and rejects trailing data. Then the
//! value is read into the DTO by its [`Dto::describe`] function, which names each member once,
//! with its wire type ("kind") and whether it is required. The same description is run in two more
//! modes: to generate the JSON Schema (`schema` module) and to build placeholder values while
//! doing so. One description per DTO therefore drives both decoding and the schema, and the two
//! cannot drift apart.
//!
//! This module is not the envelope layer: it decodes `params` and `result` values that the
//! JSON-RPC peer has already separated from the frame.

mod kind;

use serde::Serialize;
use serde_json::{Map, Value};
use sidewire_jsonrpc::{NotUnique, PathStep};

use crate::error::{Error, Target};
use crate::schema::Defs;

pub(crate) use self::kind::{
    ACTION_ID, API_VERSION, Any, Bool, Enum, Exact, Int, Kind, List, MapOf, NonBlank, NonEmptyList,
    Nullable, Number, Obj, Object, PLUGIN_ID, Pattern, SHA256, Set, Str, Uint, is_blank, member,
};

/// A DTO of the protocol: a plain data type that encodes with `serde` and decodes only through
/// this crate's strict entry points ([`decode`], [`decode_params`], [`decode_result`]).
///
/// The trait is implemented by this crate's DTOs; its hidden method is an implementation detail
/// (the reader it takes cannot be used outside this crate).
pub trait Dto: Serialize + Sized {
    /// The DTO's name as the spec writes it (`InitializeParams`); also its `$defs` key in the
    /// schema.
    const NAME: &'static str;

    /// Reads the members through `fields`; see the module docs of `decode`.
    #[doc(hidden)]
    fn describe(fields: &mut Fields<'_>) -> Result<Self, Error>;
}

/// The crate-private view of a wire enum, implemented by `wire_enum!`.
pub(crate) trait WireEnum: Copy + 'static {
    /// The enum's `$defs` key.
    const NAME: &'static str;
    /// Every value.
    fn all() -> &'static [Self];
    /// The wire spelling.
    fn wire(self) -> &'static str;
}

/// Decodes `raw` (one JSON value) as `T` with every rule of §4; errors start at `target`'s root:
/// parse into a duplicate-free `Value`, then read it by the DTO's description.
pub fn decode<T: Dto>(raw: &str, target: Target) -> Result<T, Error> {
    let root = Seg::Root(target);
    let value = parse(raw, &root)?;
    decode_value(value, &root)
}

/// Decodes the params of a received request or notification; absent params (`None`) count as
/// `{}` (§2.2). Failures carry reason `invalid_params`.
pub fn decode_params<T: Dto>(raw: Option<&str>) -> Result<T, Error> {
    decode(raw.unwrap_or("{}"), Target::Params)
}

/// Decodes the result of a received response. Failures carry reason `protocol_error`.
pub fn decode_result<T: Dto>(raw: &str) -> Result<T, Error> {
    decode(raw, Target::Result)
}

/// Reads an already parsed (duplicate-free) value as `T`.
pub(crate) fn decode_value<T: Dto>(value: Value, at: &Seg<'_>) -> Result<T, Error> {
    Obj::<T>::new().decode(value, at)
}

/// Reads the members of one object as `T`, then rejects whatever members are left over.
pub(crate) fn decode_map<T: Dto>(map: Map<String, Value>, at: &Seg<'_>) -> Result<T, Error> {
    let mut fields = Fields {
        mode: Mode::Decode { map, at },
    };
    let value = T::describe(&mut fields)?;
    fields.finish()?;
    Ok(value)
}

/// A placeholder `T`, built by running its description without input (schema generation only).
pub(crate) fn placeholder<T: Dto>() -> T {
    let mut fields = Fields {
        mode: Mode::Placeholder,
    };
    // The placeholder mode never fails: every read returns a placeholder and rules are skipped.
    T::describe(&mut fields).expect("placeholder descriptions cannot fail")
}

/// The object schema of `T`, from its description.
pub(crate) fn object_schema<T: Dto>(defs: &mut Defs) -> Value {
    let mut fields = Fields {
        mode: Mode::Schema {
            defs,
            props: Map::new(),
            required: Vec::new(),
            all_of: Vec::new(),
        },
    };
    // The schema mode never fails either; its placeholder value is dropped.
    let _ = T::describe(&mut fields);
    let Mode::Schema {
        props,
        required,
        all_of,
        ..
    } = fields.mode
    else {
        unreachable!("the mode does not change")
    };
    let mut schema = Map::new();
    schema.insert("title".into(), Value::from(T::NAME));
    schema.insert("type".into(), Value::from("object"));
    schema.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), Value::Bool(false));
    if !all_of.is_empty() {
        schema.insert("allOf".into(), Value::Array(all_of));
    }
    Value::Object(schema)
}

/// The member reader a DTO's [`Dto::describe`] uses. It cannot be built or used outside this
/// crate.
#[derive(Debug)]
pub struct Fields<'a> {
    mode: Mode<'a>,
}

#[derive(Debug)]
enum Mode<'a> {
    /// Reading a received object; members are removed as they are read, so what is left at the
    /// end is unknown.
    Decode {
        map: Map<String, Value>,
        at: &'a Seg<'a>,
    },
    /// Recording the object's schema.
    Schema {
        defs: &'a mut Defs,
        props: Map<String, Value>,
        required: Vec<Value>,
        all_of: Vec<Value>,
    },
    /// Producing a placeholder value.
    Placeholder,
}

impl Fields<'_> {
    /// Reads a required member.
    pub(crate) fn req<K: Kind>(&mut self, name: &'static str, kind: K) -> Result<K::Out, Error> {
        match &mut self.mode {
            Mode::Decode { map, at } => {
                let here = Seg::Key(at, name);
                match map.remove(name) {
                    None => Err(missing(&here)),
                    Some(value) => member(&kind, value, &here),
                }
            }
            Mode::Schema {
                defs,
                props,
                required,
                ..
            } => {
                props.insert(name.into(), kind.schema(defs));
                required.push(Value::from(name));
                Ok(kind.placeholder())
            }
            Mode::Placeholder => Ok(kind.placeholder()),
        }
    }

    /// Reads an optional member; `None` when it is absent (or, for an optional enum, `""`).
    pub(crate) fn opt<K: Kind>(
        &mut self,
        name: &'static str,
        kind: K,
    ) -> Result<Option<K::Out>, Error> {
        match &mut self.mode {
            Mode::Decode { map, at } => match map.remove(name) {
                None => Ok(None),
                Some(value) if kind.empty_means_absent(&value) => Ok(None),
                Some(value) => member(&kind, value, &Seg::Key(at, name)).map(Some),
            },
            Mode::Schema { defs, props, .. } => {
                props.insert(name.into(), kind.optional_schema(defs));
                Ok(None)
            }
            Mode::Placeholder => Ok(None),
        }
    }

    /// Reads an optional member whose absence means its empty value (`""`, `[]`, `{}`, or a
    /// manifest default).
    pub(crate) fn or_default<K: Kind>(
        &mut self,
        name: &'static str,
        kind: K,
    ) -> Result<K::Out, Error>
    where
        K::Out: Default,
    {
        self.opt(name, kind).map(Option::unwrap_or_default)
    }

    /// Runs a type-level rule (§4 rule 8) once every member has been read: unknown members are
    /// reported first, then `rule` gets the object's path. Skipped outside decoding.
    pub(crate) fn check(
        &mut self,
        rule: impl FnOnce(&Seg<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.finish()?;
        match &self.mode {
            Mode::Decode { at, .. } => rule(at),
            _ => Ok(()),
        }
    }

    /// Adds an `allOf` entry to the object's schema (conditional rules); ignored when decoding.
    pub(crate) fn schema_rule(&mut self, rule: impl FnOnce(&mut Defs) -> Value) {
        if let Mode::Schema { defs, all_of, .. } = &mut self.mode {
            // A rule that is itself only an `allOf` is spliced in rather than nested.
            match rule(defs) {
                Value::Object(mut map) if map.len() == 1 && map.contains_key("allOf") => {
                    if let Some(Value::Array(rules)) = map.remove("allOf") {
                        all_of.extend(rules);
                    }
                }
                other => all_of.push(other),
            }
        }
    }

    /// Rejects the first member that nothing read.
    fn finish(&mut self) -> Result<(), Error> {
        if let Mode::Decode { map, at } = &self.mode
            && let Some(name) = map.keys().next()
        {
            return Err(unknown(&Seg::Key(at, name)));
        }
        Ok(())
    }
}

/// A JSON path, built on the stack while decoding and rendered only when an error needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seg<'a> {
    /// The decoded value itself.
    Root(Target),
    /// A member of an object.
    Key(&'a Seg<'a>, &'a str),
    /// An element of an array.
    Index(&'a Seg<'a>, usize),
}

impl<'a> Seg<'a> {
    /// What is being decoded.
    pub(crate) fn target(&self) -> Target {
        match self {
            Seg::Root(target) => *target,
            Seg::Key(parent, _) | Seg::Index(parent, _) => parent.target(),
        }
    }

    /// The path of a member of this object.
    pub(crate) fn key(&'a self, name: &'a str) -> Seg<'a> {
        Seg::Key(self, name)
    }

    /// The path of an element of this array.
    pub(crate) fn index(&'a self, index: usize) -> Seg<'a> {
        Seg::Index(self, index)
    }

    /// The path as text: `params.messages[2].role`, with `["…"]` for keys that are not plain
    /// identifiers.
    pub(crate) fn render(&self) -> String {
        match self {
            Seg::Root(target) => target.root().to_owned(),
            Seg::Key(parent, key) => {
                let mut out = parent.render();
                let plain = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$'));
                if plain {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                } else {
                    out.push('[');
                    out.push_str(&Value::from(*key).to_string());
                    out.push(']');
                }
                out
            }
            Seg::Index(parent, index) => format!("{}[{index}]", parent.render()),
        }
    }
}

/// Keeps error text short: a peer's value is echoed only in part.
fn shorten(text: &str) -> String {
    const LIMIT: usize = 64;
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Names a JSON value's type (or, for numbers, the number) for an error message.
fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

pub(crate) fn missing(at: &Seg<'_>) -> Error {
    Error::Missing {
        target: at.target(),
        path: at.render(),
    }
}

pub(crate) fn unknown(at: &Seg<'_>) -> Error {
    Error::Unknown {
        target: at.target(),
        path: at.render(),
    }
}

pub(crate) fn duplicate(at: &Seg<'_>) -> Error {
    Error::Duplicate {
        target: at.target(),
        path: at.render(),
    }
}

pub(crate) fn null(at: &Seg<'_>) -> Error {
    Error::Null {
        target: at.target(),
        path: at.render(),
    }
}

pub(crate) fn blank(at: &Seg<'_>) -> Error {
    Error::Blank {
        target: at.target(),
        path: at.render(),
    }
}

pub(crate) fn wrong_type(at: &Seg<'_>, expected: &'static str, value: &Value) -> Error {
    Error::Type {
        target: at.target(),
        path: at.render(),
        expected,
        found: found(value),
    }
}

pub(crate) fn out_of_range(at: &Seg<'_>, expected: impl Into<String>, value: &Value) -> Error {
    Error::Range {
        target: at.target(),
        path: at.render(),
        expected: expected.into(),
        found: found(value),
    }
}

pub(crate) fn bad_enum(at: &Seg<'_>, value: &str, expected: impl Into<String>) -> Error {
    Error::Enum {
        target: at.target(),
        path: at.render(),
        found: shorten(value),
        expected: expected.into(),
    }
}

pub(crate) fn mismatch(at: &Seg<'_>, value: &str, expected: &'static str) -> Error {
    Error::Pattern {
        target: at.target(),
        path: at.render(),
        found: shorten(value),
        expected,
    }
}

pub(crate) fn rule(at: &Seg<'_>, rule: impl Into<String>) -> Error {
    Error::Rule {
        target: at.target(),
        path: at.render(),
        rule: rule.into(),
    }
}

/// Rejects the first element whose key repeats an earlier element's key (`member` names the key
/// in the path, as in `uiActions[2].actionId`).
pub(crate) fn unique_by<T, K: PartialEq + ?Sized>(
    items: &[T],
    key: impl Fn(&T) -> &K,
    at: &Seg<'_>,
    member: &str,
) -> Result<(), Error> {
    for (i, item) in items.iter().enumerate() {
        if items[..i].iter().any(|earlier| key(earlier) == key(item)) {
            return Err(rule(
                &at.index(i).key(member),
                format!("repeats an earlier {member}"),
            ));
        }
    }
    Ok(())
}

/// Parses one JSON value, rejecting repeated member names at every depth and trailing data
/// (jsonrpc's [`parse_unique`](sidewire_jsonrpc::parse_unique)); a repeated name is reported
/// with its path below `at`.
pub(crate) fn parse(raw: &str, at: &Seg<'_>) -> Result<Value, Error> {
    sidewire_jsonrpc::parse_unique(raw).map_err(|err| match err {
        NotUnique::Repeated(path) => duplicate_below(at, &path),
        NotUnique::Syntax(err) => Error::Syntax {
            target: at.target(),
            path: at.render(),
            detail: err.to_string(),
        },
    })
}

/// [`duplicate`] at the member `path` leads to from `at`.
fn duplicate_below(at: &Seg<'_>, path: &[PathStep]) -> Error {
    match path.split_first() {
        None => duplicate(at),
        Some((PathStep::Key(name), rest)) => duplicate_below(&at.key(name), rest),
        Some((PathStep::Index(index), rest)) => duplicate_below(&at.index(*index), rest),
    }
}

#[cfg(test)]
mod tests;
