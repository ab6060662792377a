//! A JSON value read with every object's member names unique, at any depth.
//!
//! `serde_json::Value` keeps the last of a repeated member name, so a content block kept whole as
//! [`Content::Other`](crate::Content::Other) could say one thing on the wire (`"type"` twice:
//! `audio`, then `text`) and another once re-sent (a text block). A repeated name in a kept block
//! is an error instead, as it is in every typed member of a result (serde's derive rejects a
//! duplicate field).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Deserializes a [`Value`], failing on a member name repeated in any object.
pub(crate) fn unique_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    deserializer.deserialize_any(UniqueVisitor)
}

/// One level of [`unique_value`], used again for every nested value.
struct Unique(Value);

impl<'de> de::Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        unique_value(deserializer).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
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
        // Non-finite numbers are not JSON; serde_json gives them as null, and so does this.
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
        unique_value(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            let Unique(value) = map.next_value()?;
            if members.contains_key(&name) {
                return Err(de::Error::custom(format_args!(
                    "member name `{name}` repeated in one object"
                )));
            }
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(text: &str) -> Result<Value, serde_json::Error> {
        unique_value(&mut serde_json::Deserializer::from_str(text))
    }

    #[test]
    fn reads_what_serde_json_reads_when_names_are_unique() {
        let text = r#"{"a":[1,-2,3.5,"s",null,true,{"b":{}}],"c":"\u00e9"}"#;
        assert_eq!(
            read(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert_eq!(read("7").unwrap(), json!(7));
    }

    #[test]
    fn a_repeated_name_at_any_depth_fails() {
        assert!(read(r#"{"type":"audio","type":"text"}"#).is_err());
        assert!(read(r#"{"a":[{"x":1,"y":2,"x":3}]}"#).is_err());
        assert!(read(r#"{"a":{"b":1},"c":{"b":2}}"#).is_ok());
    }
}
