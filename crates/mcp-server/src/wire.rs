//! One client message, read strictly: the intake every transport shares (and the fuzz target
//! `mcp_server_intake` drives).

use serde_json::{Map, Value, json};

use crate::error::{INVALID_REQUEST, PARSE_ERROR};

/// The most bytes of one message the transports accept by default (4 MiB).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 << 20;
/// The longest method name read (longer is `-32600`).
pub const MAX_METHOD_BYTES: usize = 256;

/// A message from the client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Inbound {
    /// A request: it gets exactly one answer.
    Request {
        /// Its id (a string or an integer), as sent.
        id: Value,
        /// The method.
        method: String,
        /// The params (an empty object when absent).
        params: Map<String, Value>,
    },
    /// A notification.
    Notification {
        /// The method.
        method: String,
        /// The params (an empty object when absent).
        params: Map<String, Value>,
    },
    /// The client's answer to one of our requests.
    Response {
        /// The id we sent.
        id: Value,
        /// The result, or the error object.
        outcome: Result<Value, Value>,
    },
}

/// A message that could not be read: answered with this error, under `id` (`null` when the id
/// could not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The id, when one could be read.
    pub id: Value,
    /// `-32700` or `-32600`.
    pub code: i64,
    /// Why.
    pub message: String,
}

impl Rejection {
    fn new(id: Value, code: i64, message: impl Into<String>) -> Self {
        Rejection {
            id,
            code,
            message: message.into(),
        }
    }

    /// The JSON-RPC error response.
    pub fn to_response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code, "message": self.message },
        })
    }
}

/// Reads one message. A batch (a JSON array) is refused: no revision this crate speaks has
/// them (2025-06-18 removed them).
///
/// # Errors
///
/// A [`Rejection`] to answer: not JSON (`-32700`), or not a JSON-RPC 2.0 message (`-32600`).
pub fn parse(frame: &[u8]) -> Result<Inbound, Rejection> {
    let value: Value = serde_json::from_slice(frame)
        .map_err(|err| Rejection::new(Value::Null, PARSE_ERROR, format!("parse error: {err}")))?;
    from_value(value)
}

/// [`parse`], of a message already read as JSON.
///
/// # Errors
///
/// As [`parse`].
pub fn from_value(value: Value) -> Result<Inbound, Rejection> {
    let Value::Object(mut object) = value else {
        return Err(Rejection::new(
            Value::Null,
            INVALID_REQUEST,
            "a message is a JSON object (batches are not supported)",
        ));
    };
    let id = object.remove("id");
    if let Some(id) = &id
        && !valid_id(id)
    {
        return Err(Rejection::new(
            Value::Null,
            INVALID_REQUEST,
            "an id is a string or an integer",
        ));
    }
    let echo = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Rejection::new(
            echo,
            INVALID_REQUEST,
            "jsonrpc must be \"2.0\"",
        ));
    }
    match object.remove("method") {
        Some(Value::String(method)) => {
            if method.is_empty() || method.len() > MAX_METHOD_BYTES {
                return Err(Rejection::new(echo, INVALID_REQUEST, "bad method name"));
            }
            let params = match object.remove("params") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(params)) => params,
                Some(_) => {
                    return Err(Rejection::new(
                        echo,
                        INVALID_REQUEST,
                        "params must be an object",
                    ));
                }
            };
            Ok(match id {
                Some(id) => Inbound::Request { id, method, params },
                None => Inbound::Notification { method, params },
            })
        }
        Some(_) => Err(Rejection::new(
            echo,
            INVALID_REQUEST,
            "method must be a string",
        )),
        None => {
            let Some(id) = id else {
                return Err(Rejection::new(
                    Value::Null,
                    INVALID_REQUEST,
                    "neither a request, a notification nor a response",
                ));
            };
            match (object.remove("result"), object.remove("error")) {
                (Some(result), None) => Ok(Inbound::Response {
                    id,
                    outcome: Ok(result),
                }),
                (None, Some(error)) if error.is_object() => Ok(Inbound::Response {
                    id,
                    outcome: Err(error),
                }),
                _ => Err(Rejection::new(
                    id,
                    INVALID_REQUEST,
                    "a response has exactly one of result and error",
                )),
            }
        }
    }
}

fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(number) => number.is_i64() || number.is_u64(),
        _ => false,
    }
}

/// A success response.
pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response.
pub(crate) fn error(id: &Value, error: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// A notification.
pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// A request from the server.
pub(crate) fn request(id: &Value, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_kind_and_refuses_the_rest() {
        let request = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(request, Inbound::Request { ref method, .. } if method == "ping"));
        let note = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(note, Inbound::Notification { .. }));
        let answer = parse(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#).unwrap();
        assert!(matches!(answer, Inbound::Response { outcome: Ok(_), .. }));
        for (bad, code) in [
            (&b"{"[..], PARSE_ERROR),
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
                INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
                INVALID_REQUEST,
            ),
        ] {
            assert_eq!(
                parse(bad).unwrap_err().code,
                code,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
