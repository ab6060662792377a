//! One-pass, borrowed parsing of an incoming frame into a classified message.
//!
//! The envelope is parsed once with every member kept as a `&RawValue` slice of the frame, so
//! routing never builds a `serde_json::Value` and the handler alone deserializes its own params
//! or result. Classification then applies the profile's rules (JSON-RPC 2.0, or the stricter
//! rules of the extension protocol).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::{ErrorObject, Id, Profile};

/// The members of a top-level JSON object that routing looks at.
#[derive(Default)]
pub(crate) struct Envelope<'a> {
    pub(crate) jsonrpc: Option<&'a RawValue>,
    pub(crate) method: Option<&'a RawValue>,
    pub(crate) id: Option<&'a RawValue>,
    pub(crate) params: Option<&'a RawValue>,
    pub(crate) result: Option<&'a RawValue>,
    pub(crate) error: Option<&'a RawValue>,
    /// Some member name appeared twice.
    pub(crate) duplicate: bool,
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut env = Envelope::default();
        // Names of unknown members, kept only to notice a repeat; most frames have none.
        let mut others: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let slot = match key {
                Key::Jsonrpc => &mut env.jsonrpc,
                Key::Method => &mut env.method,
                Key::Id => &mut env.id,
                Key::Params => &mut env.params,
                Key::Result => &mut env.result,
                Key::Error => &mut env.error,
                Key::Other(key) => {
                    if others.contains(&key) {
                        env.duplicate = true;
                    } else {
                        others.push(key);
                    }
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                env.duplicate = true;
            }
            *slot = Some(map.next_value::<&'de RawValue>()?);
        }
        Ok(env)
    }
}

/// A member name of the envelope: one of the names routing reads, matched where it lies in
/// the frame (serde's `Cow<str>` would copy every name into a `String`), or another name,
/// borrowed unless it has escapes. A name is compared unescaped either way, as before.
enum Key<'de> {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    Other(Cow<'de, str>),
}

impl Key<'_> {
    fn known(name: &str) -> Option<Self> {
        Some(match name {
            "jsonrpc" => Key::Jsonrpc,
            "method" => Key::Method,
            "id" => Key::Id,
            "params" => Key::Params,
            "result" => Key::Result,
            "error" => Key::Error,
            _ => return None,
        })
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, name: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::known(name).unwrap_or(Key::Other(Cow::Borrowed(name))))
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Key<'de>, E> {
        Ok(Key::known(name).unwrap_or_else(|| Key::Other(Cow::Owned(name.to_owned()))))
    }
}

/// What a frame turned out to be.
pub(crate) enum Inbound<'a> {
    /// A well-formed request.
    Request {
        id: Id,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A well-formed notification.
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A well-formed response.
    Response { id: &'a str, outcome: Outcome<'a> },
    /// A response that breaks the rules; the request it names (if pending) fails.
    BadResponse { id: &'a str, reason: &'static str },
    /// A request to answer with an error and not run: `id` is `None` for `"id":null`.
    Reject { id: Option<Id>, error: ErrorObject },
    /// Malformed, with no id: dropped without an answer.
    Drop { reason: &'static str },
}

/// The outcome member of a response.
pub(crate) enum Outcome<'a> {
    Result(&'a RawValue),
    Error(ErrorObject),
}

/// Why a frame could not be parsed as a message at all (fatal or skipped per the garbage
/// policy).
#[derive(Debug)]
pub(crate) enum Garbage {
    /// Not JSON, or not an object.
    NotAnObject(String),
    /// A top-level member appears twice (fatal in the strict profile).
    DuplicateMember,
}

/// Parses and classifies one frame. Batches are handled by the caller before this.
pub(crate) fn classify<'a>(frame: &'a str, profile: Profile) -> Result<Inbound<'a>, Garbage> {
    let env: Envelope<'a> =
        serde_json::from_str(frame).map_err(|err| Garbage::NotAnObject(err.to_string()))?;
    if env.duplicate && profile == Profile::Strict {
        return Err(Garbage::DuplicateMember);
    }
    Ok(classify_envelope(env, profile))
}

pub(crate) fn classify_envelope<'a>(env: Envelope<'a>, profile: Profile) -> Inbound<'a> {
    let version_ok = env.jsonrpc.is_some_and(|v| v.get() == "\"2.0\"");
    if let Some(method) = env.method {
        let Some(id) = env.id else {
            return notification(
                env.params,
                method,
                version_ok,
                env.result.is_some() || env.error.is_some(),
                profile,
            );
        };
        let id = match request_id(id.get(), profile) {
            Some(id) => id,
            None => return reject(None, "invalid request id"),
        };
        if !version_ok {
            return reject(Some(id), "jsonrpc must be \"2.0\"");
        }
        let Some(method) = string_of(method) else {
            return reject(Some(id), "method must be a string");
        };
        if !params_ok(env.params, profile) {
            return reject(Some(id), params_rule(profile));
        }
        if env.result.is_some() || env.error.is_some() {
            return reject(Some(id), "a request carries no result or error");
        }
        return Inbound::Request {
            id,
            method,
            params: env.params,
        };
    }
    let Some(id) = env.id else {
        return Inbound::Drop {
            reason: "neither a method nor an id",
        };
    };
    let id = id.get();
    if !version_ok {
        return Inbound::BadResponse {
            id,
            reason: "response without \"jsonrpc\":\"2.0\"",
        };
    }
    match (env.result, env.error) {
        (Some(result), None) => Inbound::Response {
            id,
            outcome: Outcome::Result(result),
        },
        (None, Some(error)) => match serde_json::from_str::<ErrorObject>(error.get()) {
            Ok(error) => Inbound::Response {
                id,
                outcome: Outcome::Error(error),
            },
            Err(_) => Inbound::BadResponse {
                id,
                reason: "error member lacks an integer code or a string message",
            },
        },
        (None, None) => Inbound::BadResponse {
            id,
            reason: "response with neither result nor error",
        },
        (Some(_), Some(_)) => Inbound::BadResponse {
            id,
            reason: "response with both result and error",
        },
    }
}

fn notification<'a>(
    params: Option<&'a RawValue>,
    method: &'a RawValue,
    version_ok: bool,
    has_outcome: bool,
    profile: Profile,
) -> Inbound<'a> {
    if !version_ok {
        return Inbound::Drop {
            reason: "notification without \"jsonrpc\":\"2.0\"",
        };
    }
    if has_outcome {
        return Inbound::Drop {
            reason: "notification with a result or error",
        };
    }
    let Some(method) = string_of(method) else {
        return Inbound::Drop {
            reason: "notification method is not a string",
        };
    };
    if !params_ok(params, profile) {
        return Inbound::Drop {
            reason: "notification params of the wrong type",
        };
    }
    Inbound::Notification { method, params }
}

fn reject<'a>(id: Option<Id>, message: &str) -> Inbound<'a> {
    Inbound::Reject {
        id,
        error: ErrorObject::new(
            ErrorObject::INVALID_REQUEST,
            format!("invalid request: {message}"),
        ),
    }
}

fn params_ok(params: Option<&RawValue>, profile: Profile) -> bool {
    match params.map(|p| p.get().as_bytes().first()) {
        None => true,
        Some(Some(b'{')) => true,
        Some(Some(b'[')) => profile == Profile::Lenient,
        Some(_) => false,
    }
}

fn params_rule(profile: Profile) -> &'static str {
    match profile {
        Profile::Strict => "params must be an object",
        Profile::Lenient => "params must be an object or an array",
    }
}

/// A request id token: a string, or an integer token (`-?(0|[1-9][0-9]*)`, any magnitude). The
/// lenient profile also takes other number tokens (JSON-RPC only says ids SHOULD NOT have
/// fractions), and echoes them verbatim.
fn request_id(token: &str, profile: Profile) -> Option<Id> {
    let first = *token.as_bytes().first()?;
    let ok = match first {
        b'"' => true,
        b'-' | b'0'..=b'9' => profile == Profile::Lenient || is_integer_token(token),
        _ => false,
    };
    ok.then(|| Id::from_token(token))
}

/// `^-?(0|[1-9][0-9]*)$`
pub(crate) fn is_integer_token(token: &str) -> bool {
    let digits = token.strip_prefix('-').unwrap_or(token).as_bytes();
    match digits {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// The string value of a raw JSON value, borrowed when it holds no escapes.
fn string_of(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// The key under which a response id is looked up among this peer's pending requests: our ids
/// are integers, so only an integer token can match.
pub(crate) fn pending_key(id_token: &str) -> Option<u64> {
    if is_integer_token(id_token) {
        id_token.parse().ok()
    } else {
        None
    }
}

impl std::error::Error for Garbage {}

impl fmt::Display for Garbage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Garbage::NotAnObject(detail) => write!(f, "not a JSON-RPC object: {detail}"),
            Garbage::DuplicateMember => f.write_str("a top-level member appears twice"),
        }
    }
}

#[cfg(test)]
mod tests;
