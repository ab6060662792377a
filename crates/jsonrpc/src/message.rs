//! JSON-RPC 2.0 message types and the encoders that write them straight into a frame buffer.

use std::borrow::Cow;
use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A typed request: one zero-sized type per method.
///
/// ```
/// # use serde::{Deserialize, Serialize};
/// struct Add;
/// #[derive(Serialize, Deserialize)]
/// struct AddParams { a: i64, b: i64 }
/// impl sidewire_jsonrpc::Request for Add {
///     const METHOD: &'static str = "math/add";
///     type Params = AddParams;
///     type Result = i64;
/// }
/// ```
pub trait Request {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The `result` member.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A typed notification: one zero-sized type per method.
pub trait Notification {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Send + 'static;
}

/// A request id, kept exactly as it appeared on the wire so it can be echoed byte for byte.
///
/// Ids this peer allocates are integers from 1 up; ids a peer sends may be any JSON string or
/// integer token (of any magnitude), and are never normalised.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Id(IdRepr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum IdRepr {
    /// An integer whose canonical decimal form is exactly its wire form.
    Int(i64),
    /// Any other valid id token, verbatim (a string literal with its quotes, or a long number).
    Raw(Box<str>),
}

impl Id {
    /// An integer id.
    pub fn int(value: i64) -> Self {
        Id(IdRepr::Int(value))
    }

    /// A string id.
    pub fn string(value: &str) -> Self {
        let json = serde_json::to_string(value).expect("a string always serializes");
        Id(IdRepr::Raw(json.into_boxed_str()))
    }

    /// Builds an id from a wire token already checked to be a string or an integer token.
    pub(crate) fn from_token(token: &str) -> Self {
        if let Ok(value) = token.parse::<i64>() {
            // "-0" parses as 0 but must be echoed as "-0".
            if token != "-0" {
                return Id(IdRepr::Int(value));
            }
        }
        Id(IdRepr::Raw(token.into()))
    }

    /// The integer value, when the id is an integer that fits in an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Int(value) => Some(*value),
            IdRepr::Raw(_) => None,
        }
    }

    /// The string value, when the id is a JSON string.
    pub fn as_string(&self) -> Option<String> {
        match &self.0 {
            IdRepr::Raw(raw) if raw.starts_with('"') => serde_json::from_str(raw).ok(),
            _ => None,
        }
    }

    /// The id exactly as it is written on the wire.
    pub fn to_json(&self) -> Cow<'_, str> {
        match &self.0 {
            IdRepr::Int(value) => Cow::Owned(value.to_string()),
            IdRepr::Raw(raw) => Cow::Borrowed(raw),
        }
    }

    /// The pending-table key this id would have if we had sent it: its integer value, for an
    /// integer id that fits (ours are integers from 1 up).
    pub(crate) fn pending_key(&self) -> Option<u64> {
        match &self.0 {
            IdRepr::Int(value) => u64::try_from(*value).ok(),
            IdRepr::Raw(raw) => crate::envelope::pending_key(raw),
        }
    }

    pub(crate) fn write_json(&self, dst: &mut BytesMut) {
        match &self.0 {
            IdRepr::Int(value) => {
                let mut buf = itoa::Buffer::new();
                dst.put_slice(buf.format(*value).as_bytes());
            }
            IdRepr::Raw(raw) => dst.put_slice(raw.as_bytes()),
        }
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug shows the wire form, so `92` and `"92"` can be told apart.
        f.write_str(&self.to_json())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

impl Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            IdRepr::Int(value) => serializer.serialize_i64(*value),
            IdRepr::Raw(raw) => {
                let raw: &RawValue =
                    serde_json::from_str(raw).map_err(serde::ser::Error::custom)?;
                raw.serialize(serializer)
            }
        }
    }
}

/// The error member of a JSON-RPC response: plain data, separate from this crate's Rust `Error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (`-32768` … `-32000` are reserved by JSON-RPC).
    pub code: i64,
    /// A short human text; receivers must not branch on it.
    pub message: String,
    /// Extra structured detail, omitted when absent (an explicit `null` is kept as
    /// `Some(Value::Null)`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub data: Option<serde_json::Value>,
}

/// Deserializes a member that is present, `null` included, as `Some`.
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

impl ErrorObject {
    /// Invalid JSON was received. Never sent by this crate (see the crate docs).
    pub const PARSE_ERROR: i64 = -32700;
    /// The message is not a valid request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;

    /// An error object with no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` set.
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32602` with the given message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ErrorObject::new(Self::INVALID_PARAMS, message)
    }

    /// `-32603` with the given message.
    pub fn internal(message: impl Into<String>) -> Self {
        ErrorObject::new(Self::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// The capacity an outgoing frame's buffer starts with; a larger frame grows it.
const FRAME_HINT: usize = 256;

/// Encodes one frame with `encode` into a buffer of its own.
pub(crate) fn encode_frame<E>(
    encode: impl FnOnce(&mut BytesMut) -> Result<(), E>,
) -> Result<Bytes, E> {
    let mut frame = BytesMut::with_capacity(FRAME_HINT);
    encode(&mut frame).map(|()| frame.freeze())
}

/// Writes `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>}` into `dst`.
pub(crate) fn encode_request<P: Serialize + ?Sized>(
    dst: &mut BytesMut,
    limit: usize,
    id: &Id,
    method: &str,
    params: Option<&P>,
) -> Result<(), sidewire_framing::Error> {
    let start = dst.len();
    dst.put_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(dst);
    dst.put_slice(b",\"method\":");
    finish_call(dst, start, limit, method, params)
}

/// Writes `{"jsonrpc":"2.0","method":<method>,"params":<params>}` into `dst`.
pub(crate) fn encode_notification<P: Serialize + ?Sized>(
    dst: &mut BytesMut,
    limit: usize,
    method: &str,
    params: Option<&P>,
) -> Result<(), sidewire_framing::Error> {
    let start = dst.len();
    dst.put_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    finish_call(dst, start, limit, method, params)
}

fn finish_call<P: Serialize + ?Sized>(
    dst: &mut BytesMut,
    start: usize,
    limit: usize,
    method: &str,
    params: Option<&P>,
) -> Result<(), sidewire_framing::Error> {
    let result = (|| {
        crate::write_json(method, dst, limit)?;
        if let Some(params) = params {
            dst.put_slice(b",\"params\":");
            crate::write_json(params, dst, limit.saturating_sub(1))?;
        }
        close(dst, limit)
    })();
    if result.is_err() {
        dst.truncate(start);
    }
    result
}

/// Writes a success response around an already serialized result.
pub(crate) fn encode_result<T: Serialize + ?Sized>(
    dst: &mut BytesMut,
    limit: usize,
    id: &Id,
    result: &T,
) -> Result<(), sidewire_framing::Error> {
    let start = dst.len();
    dst.put_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(dst);
    dst.put_slice(b",\"result\":");
    let written =
        crate::write_json(result, dst, limit.saturating_sub(1)).and_then(|()| close(dst, limit));
    if written.is_err() {
        dst.truncate(start);
    }
    written
}

/// Writes an error response. `id` is `None` for `"id":null`.
pub(crate) fn encode_error(
    dst: &mut BytesMut,
    limit: usize,
    id: Option<&Id>,
    error: &ErrorObject,
) -> Result<(), sidewire_framing::Error> {
    let start = dst.len();
    dst.put_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        Some(id) => id.write_json(dst),
        None => dst.put_slice(b"null"),
    }
    dst.put_slice(b",\"error\":");
    let written =
        crate::write_json(error, dst, limit.saturating_sub(1)).and_then(|()| close(dst, limit));
    if written.is_err() {
        dst.truncate(start);
    }
    written
}

fn close(dst: &mut BytesMut, limit: usize) -> Result<(), sidewire_framing::Error> {
    if dst.len() + 1 > limit {
        return Err(sidewire_framing::Error::TooLarge {
            limit,
            prefix: bytes::Bytes::new(),
        });
    }
    dst.put_u8(b'}');
    Ok(())
}

#[cfg(test)]
mod tests;
