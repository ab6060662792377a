//! JSON values read with every object's member names unique, at any depth.
//!
//! `serde_json::Value` keeps the last of a repeated member name, so a value kept whole could
//! say one thing on the wire (`"type"` twice: `audio`, then `text`) and another once re-sent or
//! decoded (a text block). The extension protocol refuses a repeated name anywhere in a message
//! (spec §4), with the path to it; MCP refuses one in a content block it keeps whole. Both read
//! through this one visitor: [`parse_unique`] (with the path) and [`unique_value`] (for
//! `#[serde(deserialize_with)]`).

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// One step of the path to a repeated member name ([`NotUnique::Repeated`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// A member of an object, by name.
    Key(String),
    /// An element of an array, by index.
    Index(usize),
}

/// Why [`parse_unique`] refused a text.
#[derive(Debug)]
pub enum NotUnique {
    /// A member name repeated in one object: the steps from the top value down to the repeated
    /// member, whose name is the last step.
    Repeated(Vec<PathStep>),
    /// Anything else (not JSON, or more after the value): serde_json's error.
    Syntax(serde_json::Error),
}

/// Deserializes a [`Value`] as serde_json does, except that a member name repeated in any
/// object fails (serde_json keeps the last). For `#[serde(deserialize_with = "…")]`.
///
/// # Errors
///
/// The deserializer's error, on a repeated name as on anything else.
pub fn unique_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    Seed { repeated: None }.deserialize(deserializer)
}

/// Parses `text` as one JSON value, with no member name repeated in any object and nothing
/// after it but white space.
///
/// # Errors
///
/// [`NotUnique::Repeated`] with the path to the first repeated name, [`NotUnique::Syntax`] for
/// any other failure.
pub fn parse_unique(text: &str) -> Result<Value, NotUnique> {
    let repeated = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Seed {
        repeated: Some(&repeated),
    }
    .deserialize(&mut de)
    .and_then(|value| de.end().map(|()| value));
    parsed.map_err(|err| match repeated.into_inner() {
        Some(mut path) => {
            // Recorded from the repeated name outwards, as the error went up.
            path.reverse();
            NotUnique::Repeated(path)
        }
        None => NotUnique::Syntax(err),
    })
}

/// Builds a [`Value`], failing on a repeated member name. With `repeated`, it also records
/// where: the name when it is found, then each enclosing step as the error goes up.
#[derive(Clone, Copy)]
struct Seed<'s> {
    repeated: Option<&'s RefCell<Option<Vec<PathStep>>>>,
}

impl Seed<'_> {
    /// Adds `step` to the path when what failed below it was a repeated name.
    fn failed_below(self, step: impl FnOnce() -> PathStep) {
        if let Some(slot) = self.repeated
            && let Some(path) = slot.borrow_mut().as_mut()
        {
            path.push(step());
        }
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value whose objects repeat no member name")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // JSON text cannot spell NaN or an infinity; serde_json gives a non-finite number as
        // null, and so does this.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        loop {
            match seq.next_element_seed(self) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(Value::Array(items)),
                Err(err) => {
                    self.failed_below(|| PathStep::Index(items.len()));
                    return Err(err);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            if members.contains_key(&name) {
                if let Some(slot) = self.repeated {
                    *slot.borrow_mut() = Some(vec![PathStep::Key(name.clone())]);
                }
                return Err(de::Error::custom(format_args!(
                    "member name `{name}` repeated in one object"
                )));
            }
            match map.next_value_seed(self) {
                Ok(value) => {
                    members.insert(name, value);
                }
                Err(err) => {
                    self.failed_below(|| PathStep::Key(name));
                    return Err(err);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests;
