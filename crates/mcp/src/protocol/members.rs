//! [`Members`]: a request's params streamed member by member into the map of the modern
//! envelope ([`Wrapped`](crate::protocol::era::Wrapped)), instead of being turned into a
//! `Value` first.
//!
//! `serde_json::to_value(params)` deep-copied every request's params (a tool call's arguments
//! with them) into a tree of maps and strings, only for the envelope to read its members back
//! out: 8 allocations and about 2,500 instructions of a modern `tools/call`. [`Members`] is a
//! `Serializer` that takes the params' own `serialize` calls: each member is written straight
//! into the outer map, except `_meta` (kept as its JSON text, for the envelope to merge its own
//! members into) and the members a leg replaces. What it writes is what the `Value` route
//! wrote, member for member (`era::tests`): a struct or a map gives its members, an enum
//! variant with data the one member `{variant: data}` that `to_value` makes of it, and
//! anything that is not an object (none, a number, a list) gives no members.
//!
//! Not for params with repeated member names (a `#[serde(flatten)]` map colliding with a
//! field): `to_value` kept the last, this writes both. No params type of this crate has one.

use serde::Serialize;
use serde::ser::{self, Error as _, SerializeMap};
use serde_json::{Map, Value};

/// Where a request's params go member by member; see the module docs.
pub(crate) struct Members<'a, M> {
    map: &'a mut M,
    /// Members the caller's params may hold that are not passed on (a leg sets its own).
    replaced: [Option<&'static str>; 2],
    /// The caller's `_meta` as serde writes it, when it is an object.
    pub(crate) meta: Option<String>,
    /// The params were an object (a struct, a map, a variant with data).
    pub(crate) object: bool,
    /// A map's key, between its `serialize_key` and `serialize_value`.
    key: Option<String>,
}

impl<'a, M: SerializeMap> Members<'a, M> {
    /// Members written into `map`, leaving out the `replaced` ones.
    pub(crate) fn new(map: &'a mut M, replaced: [Option<&'static str>; 2]) -> Self {
        Members {
            map,
            replaced,
            meta: None,
            object: false,
            key: None,
        }
    }

    /// An enum variant with data, `{variant: data}`: its data is collected first.
    fn variant<'m>(&'m mut self, name: &'static str) -> Variant<'m, 'a, M> {
        self.object = true;
        Variant {
            members: self,
            name,
            fields: Map::new(),
            items: Vec::new(),
        }
    }

    fn member<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) -> Result<(), M::Error> {
        if name == "_meta" {
            let text = serde_json::to_string(value).map_err(M::Error::custom)?;
            self.meta = text.starts_with('{').then_some(text);
            return Ok(());
        }
        if self.replaced.contains(&Some(name)) {
            return Ok(());
        }
        self.map.serialize_entry(name, value)
    }
}

/// A value as `serde_json::to_value` makes it, with the map's error type.
fn value<T: Serialize + ?Sized, E: ser::Error>(value: &T) -> Result<Value, E> {
    serde_json::to_value(value).map_err(E::custom)
}

/// Not an object: the params give no members. Its parts are taken and dropped.
pub(crate) struct NoMembers<E>(std::marker::PhantomData<E>);

/// `NoMembers` takes a list's parts (`$part` is the trait's method for one) and drops them.
macro_rules! drops_its_parts {
    ($($trait:ident :: $part:ident),*) => {$(
        impl<E: ser::Error> ser::$trait for NoMembers<E> {
            type Ok = ();
            type Error = E;
            fn $part<T: Serialize + ?Sized>(&mut self, _: &T) -> Result<(), E> {
                Ok(())
            }
            fn end(self) -> Result<(), E> {
                Ok(())
            }
        }
    )*};
}

drops_its_parts!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field
);

/// An enum variant with data: collected, then written as the one member `{variant: data}`.
pub(crate) struct Variant<'m, 'a, M: SerializeMap> {
    members: &'m mut Members<'a, M>,
    name: &'static str,
    fields: Map<String, Value>,
    items: Vec<Value>,
}

impl<M: SerializeMap> ser::SerializeTupleVariant for Variant<'_, '_, M> {
    type Ok = ();
    type Error = M::Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, item: &T) -> Result<(), M::Error> {
        self.items.push(value(item)?);
        Ok(())
    }
    fn end(self) -> Result<(), M::Error> {
        self.members.member(self.name, &self.items)
    }
}

impl<M: SerializeMap> ser::SerializeStructVariant for Variant<'_, '_, M> {
    type Ok = ();
    type Error = M::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        field: &T,
    ) -> Result<(), M::Error> {
        self.fields.insert(key.to_owned(), value(field)?);
        Ok(())
    }
    fn end(self) -> Result<(), M::Error> {
        self.members.member(self.name, &self.fields)
    }
}

impl<M: SerializeMap> ser::SerializeStruct for &mut Members<'_, M> {
    type Ok = ();
    type Error = M::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        field: &T,
    ) -> Result<(), M::Error> {
        self.member(key, field)
    }
    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

impl<M: SerializeMap> ser::SerializeMap for &mut Members<'_, M> {
    type Ok = ();
    type Error = M::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), M::Error> {
        // As `to_value` names a member: a string, or a number or a bool written out.
        self.key = Some(match value(key)? {
            Value::String(name) => name,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(M::Error::custom("a member name must be a string")),
        });
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, field: &T) -> Result<(), M::Error> {
        let name = self
            .key
            .take()
            .ok_or_else(|| M::Error::custom("a map value without its key"))?;
        self.member(&name, field)
    }
    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

impl<'m, 'a, M: SerializeMap> ser::Serializer for &'m mut Members<'a, M> {
    type Ok = ();
    type Error = M::Error;
    type SerializeSeq = NoMembers<M::Error>;
    type SerializeTuple = NoMembers<M::Error>;
    type SerializeTupleStruct = NoMembers<M::Error>;
    type SerializeTupleVariant = Variant<'m, 'a, M>;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Variant<'m, 'a, M>;

    fn serialize_bool(self, _: bool) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_i8(self, _: i8) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_i16(self, _: i16) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_i32(self, _: i32) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_i64(self, _: i64) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_u8(self, _: u8) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_u16(self, _: u16) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_u32(self, _: u32) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_u64(self, _: u64) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_f32(self, _: f32) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_f64(self, _: f64) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_char(self, _: char) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_str(self, _: &str) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_none(self) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, inner: &T) -> Result<(), M::Error> {
        inner.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        inner: &T,
    ) -> Result<(), M::Error> {
        inner.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        inner: &T,
    ) -> Result<(), M::Error> {
        self.object = true;
        self.member(variant, inner)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<NoMembers<M::Error>, M::Error> {
        Ok(NoMembers(std::marker::PhantomData))
    }
    fn serialize_tuple(self, _: usize) -> Result<NoMembers<M::Error>, M::Error> {
        Ok(NoMembers(std::marker::PhantomData))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<NoMembers<M::Error>, M::Error> {
        Ok(NoMembers(std::marker::PhantomData))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, M::Error> {
        Ok(self.variant(variant))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, M::Error> {
        self.object = true;
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, M::Error> {
        self.object = true;
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, M::Error> {
        Ok(self.variant(variant))
    }
}
