//! The one-pass decoder for the DTOs on a hot path: provider stream chunks and ends (§14.3),
//! which a host decodes once per streamed token.
//!
//! The reference decoder (the rest of `decode`) parses the text into a `serde_json::Value` and
//! then takes it apart member by member, which costs an allocation per member and a map per
//! object. This decoder reads the text straight into the DTO with a serde `Visitor`: each
//! object's member names are matched against the DTO's names as they are read, a repeated or
//! unknown name, a wrong type, `null`, a blank non-empty string, an out-of-range integer or a
//! broken type-level rule fails at once, and required members are checked at the object's end.
//! It is driven by the same `serde_json` parser as the reference, so every token (strings and
//! their escapes, number classification, depth, trailing data) is read the same way.
//!
//! It only ever answers "this is the value" or "not accepted here": every failure falls back to
//! the reference decoder, which produces the error (the same error, path and reason as before,
//! by construction). The one-pass decoder must therefore never accept an input the reference
//! rejects, and must decode what both accept to the same value; the differential tests in
//! `decode/tests.rs` and the `chunk_decode` fuzz target check exactly that. Accepting less than
//! the reference would only cost speed, and the tests check that it does not either.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

use super::{Seg, WireEnum, is_blank};
use crate::constants::MAX_SAFE_INTEGER;
use crate::error::Target;
use crate::model::{ProviderToolCall, ProviderUsage};
use crate::provider::{ProviderChunk, ProviderError, StreamChunkParams, StreamEndParams};

/// A DTO with a one-pass reader: `read` consumes one object's members.
pub(crate) trait OnePass: Sized {
    /// Reads the members of one object; any failure means "not accepted here".
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

/// Decodes `raw` (one JSON value, as in [`super::decode`]) as `T` in one pass; `None` for
/// anything the reference decoder should look at (every rejection, and nothing else).
pub(crate) fn decode<T: OnePass>(raw: &str) -> Option<T> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let value = Object::<T>(PhantomData).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// "Not accepted here": the reason never leaves this module, so one fixed text serves.
fn refuse<E: de::Error>() -> E {
    E::custom("not accepted by the one-pass decoder")
}

/// Reads one object's members: `member` gets the index in `names` of each name read, in text
/// order; an unknown or repeated name fails, and so does a missing member of the `required`
/// bit set (bit `i` for `names[i]`).
fn members<'de, A: MapAccess<'de>>(
    mut map: A,
    names: &'static [&'static str],
    required: u32,
    mut member: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    debug_assert!(names.len() <= 32, "the seen set is one u32");
    let mut seen = 0u32;
    while let Some(index) = map.next_key_seed(Name(names))? {
        let bit = 1 << index;
        if seen & bit != 0 {
            return Err(refuse());
        }
        seen |= bit;
        member(index, &mut map)?;
    }
    if seen & required != required {
        return Err(refuse());
    }
    Ok(())
}

/// A nested DTO: an object read by its [`OnePass`] reader.
struct Object<T>(PhantomData<T>);

impl<'de, T: OnePass> DeserializeSeed<'de> for Object<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: OnePass> Visitor<'de> for Object<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::read(map)
    }
}

/// A member name: its index in the list of names the object has, without copying it.
struct Name(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Name {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Name {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<usize, E> {
        self.0.iter().position(|n| *n == name).ok_or_else(refuse)
    }
}

/// `string`: read by serde's `String`, which takes only a string token (not `null`).
fn string<'de, A: MapAccess<'de>>(map: &mut A) -> Result<String, A::Error> {
    map.next_value::<String>()
}

/// `string` marked non-empty (§4 rule 7).
fn non_blank<'de, A: MapAccess<'de>>(map: &mut A) -> Result<String, A::Error> {
    let text = string(map)?;
    if is_blank(&text) {
        return Err(refuse());
    }
    Ok(text)
}

/// `uint` ≥ `min`: only an integer token that serde_json reads as a `u64` (as the reference's
/// `Value` would), within `min ..= 2^53−1`.
fn uint<'de, A: MapAccess<'de>>(map: &mut A, min: u64) -> Result<u64, A::Error> {
    map.next_value_seed(Uint { min })
}

struct Uint {
    min: u64,
}

impl<'de> DeserializeSeed<'de> for Uint {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u64, D::Error> {
        // `deserialize_any` hands over the token as parsed: `visit_i64` for a negative integer
        // and `visit_f64` for a fraction, an exponent, `-0` or an integer beyond 64 bits, all of
        // which the default visitor methods refuse.
        deserializer.deserialize_any(self)
    }
}

impl Visitor<'_> for Uint {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an unsigned integer")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<u64, E> {
        if n < self.min || n > MAX_SAFE_INTEGER {
            return Err(refuse());
        }
        Ok(n)
    }
}

/// `bool`: only `true` or `false`.
fn boolean<'de, A: MapAccess<'de>>(map: &mut A) -> Result<bool, A::Error> {
    map.next_value::<bool>()
}

/// A required enum member: one of its wire spellings exactly.
fn enumeration<'de, A: MapAccess<'de>, E: WireEnum>(map: &mut A) -> Result<E, A::Error> {
    map.next_value_seed(Enum(PhantomData))
}

struct Enum<E>(PhantomData<E>);

impl<'de, E: WireEnum> DeserializeSeed<'de> for Enum<E> {
    type Value = E;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<E, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<E: WireEnum> Visitor<'_> for Enum<E> {
    type Value = E;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(E::NAME)
    }

    fn visit_str<Er: de::Error>(self, text: &str) -> Result<E, Er> {
        E::all()
            .iter()
            .copied()
            .find(|e| e.wire() == text)
            .ok_or_else(refuse)
    }
}

/// A nested DTO member.
fn object<'de, A: MapAccess<'de>, T: OnePass>(map: &mut A) -> Result<T, A::Error> {
    map.next_value_seed(Object(PhantomData))
}

impl OnePass for StreamChunkParams {
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        const NAMES: &[&str] = &["streamId", "seq", "chunk"];
        let (mut stream_id, mut seq, mut chunk) = (String::new(), 0, None);
        members(map, NAMES, 0b111, |index, map| {
            match index {
                0 => stream_id = string(map)?,
                1 => seq = uint(map, 1)?,
                _ => chunk = Some(object(map)?),
            }
            Ok(())
        })?;
        Ok(StreamChunkParams {
            stream_id,
            seq,
            chunk: chunk.ok_or_else(refuse)?,
        })
    }
}

impl OnePass for StreamEndParams {
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        const NAMES: &[&str] = &["streamId", "lastSeq", "error", "interrupted"];
        let mut end = StreamEndParams {
            stream_id: String::new(),
            last_seq: 0,
            error: String::new(),
            interrupted: None,
        };
        members(map, NAMES, 0b11, |index, map| {
            match index {
                0 => end.stream_id = string(map)?,
                1 => end.last_seq = uint(map, 0)?,
                2 => end.error = string(map)?,
                _ => end.interrupted = Some(boolean(map)?),
            }
            Ok(())
        })?;
        Ok(end)
    }
}

impl OnePass for ProviderChunk {
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        const NAMES: &[&str] = &[
            "type",
            "text",
            "signature",
            "toolCall",
            "argChars",
            "usage",
            "error",
        ];
        let mut kind = None;
        let mut chunk = ProviderChunk::new(crate::provider::ChunkType::Done);
        members(map, NAMES, 0b1, |index, map| {
            match index {
                0 => kind = Some(enumeration(map)?),
                1 => chunk.text = string(map)?,
                2 => chunk.signature = string(map)?,
                3 => chunk.tool_call = Some(object(map)?),
                4 => chunk.arg_chars = Some(uint(map, 0)?),
                5 => chunk.usage = Some(object(map)?),
                _ => chunk.error = Some(object(map)?),
            }
            Ok(())
        })?;
        chunk.kind = kind.ok_or_else(refuse)?;
        // The type-level rules are the reference's own check; its error is only a refusal here
        // (the path it would render is never built on success).
        chunk
            .check(&Seg::Root(Target::Params))
            .map_err(|_| refuse())?;
        Ok(chunk)
    }
}

impl OnePass for ProviderToolCall {
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        const NAMES: &[&str] = &["id", "name", "arguments", "thought_signature"];
        let mut call = ProviderToolCall::default();
        members(map, NAMES, 0b111, |index, map| {
            match index {
                0 => call.id = non_blank(map)?,
                1 => call.name = non_blank(map)?,
                2 => call.arguments = string(map)?,
                _ => call.thought_signature = string(map)?,
            }
            Ok(())
        })?;
        Ok(call)
    }
}

impl OnePass for ProviderUsage {
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        const NAMES: &[&str] = &[
            "promptTokens",
            "completionTokens",
            "totalTokens",
            "cacheHitTokens",
            "cacheMissTokens",
            "reasoningTokens",
            "finishReason",
        ];
        let mut usage = ProviderUsage::default();
        members(map, NAMES, 0b11_1111, |index, map| {
            match index {
                0 => usage.prompt_tokens = uint(map, 0)?,
                1 => usage.completion_tokens = uint(map, 0)?,
                2 => usage.total_tokens = uint(map, 0)?,
                3 => usage.cache_hit_tokens = uint(map, 0)?,
                4 => usage.cache_miss_tokens = uint(map, 0)?,
                5 => usage.reasoning_tokens = uint(map, 0)?,
                _ => usage.finish_reason = string(map)?,
            }
            Ok(())
        })?;
        Ok(usage)
    }
}

impl OnePass for ProviderError {
    fn read<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        const NAMES: &[&str] = &["code", "message"];
        let (mut code, mut message) = (None, String::new());
        members(map, NAMES, 0b11, |index, map| {
            match index {
                0 => code = Some(enumeration(map)?),
                _ => message = non_blank(map)?,
            }
            Ok(())
        })?;
        Ok(ProviderError {
            code: code.ok_or_else(refuse)?,
            message,
        })
    }
}

#[cfg(test)]
mod tests;
