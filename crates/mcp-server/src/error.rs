//! The crate's one error type: what a handler answers instead of a result, and why serving
//! failed.

use serde_json::{Value, json};

/// JSON-RPC: the request is not valid (`-32600`).
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method does not exist or is not offered (`-32601`).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the params are not valid (`-32602`).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the server failed (`-32603`).
pub const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC: the message is not JSON (`-32700`).
pub const PARSE_ERROR: i64 = -32700;
/// MCP before 2026-07-28: the resource does not exist (`-32002`; since then `-32602`).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// Why a request failed or serving stopped. Each cause is said once; a peer's text in it is
/// kept as the peer sent it (show it through `sidewire_mcp::shown_text`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request's params are not valid (`-32602`): a missing argument, a wrong type, an
    /// unknown tool or prompt, a forged cursor or `requestState`.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// The method is not offered (`-32601`).
    #[error("method not found: {0}")]
    MethodNotFound(String),
    /// The resource does not exist (`-32602` with `data.uri`, SEP-2164; `-32002` in the
    /// legacy era, [`Error::to_error_object_in`]).
    #[error("resource not found: {uri}")]
    ResourceNotFound {
        /// The URI asked for.
        uri: String,
    },
    /// A JSON-RPC error the handler chose, sent as it is.
    #[error("error {code}: {message}")]
    Rpc {
        /// The code.
        code: i64,
        /// The message.
        message: String,
        /// `data`, when any.
        data: Option<Value>,
    },
    /// The handler failed (`-32603`).
    #[error("internal error: {0}")]
    Internal(String),
    /// A request to the client (sampling, elicitation, roots) was not answered in time.
    #[error("the client did not answer {method} within {seconds} s")]
    InputTimeout {
        /// The request's method.
        method: String,
        /// The bound, in seconds.
        seconds: u64,
    },
    /// The client refused a request to it (its JSON-RPC error).
    #[error("the client refused {method}: {message}")]
    InputRefused {
        /// The request's method.
        method: String,
        /// The client's message.
        message: String,
    },
    /// The client did not announce the capability a request to it needs (`-32021`, with
    /// `data.requiredCapabilities`).
    #[error("the client does not offer {0}")]
    MissingCapability(&'static str),
    /// A bound was hit (queue, session count, concurrent requests, message size).
    #[error("limit reached: {0}")]
    Limit(&'static str),
    /// The connection or session is gone.
    #[error("the connection closed")]
    Closed,
    /// Reading or writing the transport failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// A `-32602` with this message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Error::InvalidParams(message.into())
    }

    /// A `-32603` with this message.
    pub fn internal(message: impl Into<String>) -> Self {
        Error::Internal(message.into())
    }

    /// The params were not valid.
    pub fn is_invalid_params(&self) -> bool {
        matches!(self, Error::InvalidParams(_))
    }

    /// The method is not offered.
    pub fn is_method_not_found(&self) -> bool {
        matches!(self, Error::MethodNotFound(_))
    }

    /// The resource does not exist.
    pub fn is_resource_not_found(&self) -> bool {
        matches!(self, Error::ResourceNotFound { .. })
    }

    /// A request to the client timed out.
    pub fn is_input_timeout(&self) -> bool {
        matches!(self, Error::InputTimeout { .. })
    }

    /// The client refused a request to it, or lacks its capability.
    pub fn is_input_refused(&self) -> bool {
        matches!(
            self,
            Error::InputRefused { .. } | Error::MissingCapability(_)
        )
    }

    /// A bound was hit.
    pub fn is_limit(&self) -> bool {
        matches!(self, Error::Limit(_))
    }

    /// The connection is gone.
    pub fn is_closed(&self) -> bool {
        matches!(self, Error::Closed)
    }

    /// The JSON-RPC error code this is answered with.
    pub fn code(&self) -> i64 {
        match self {
            Error::InvalidParams(_) => INVALID_PARAMS,
            Error::MissingCapability(_) => crate::era::MISSING_REQUIRED_CLIENT_CAPABILITY,
            Error::MethodNotFound(_) => METHOD_NOT_FOUND,
            Error::ResourceNotFound { .. } => INVALID_PARAMS,
            Error::Rpc { code, .. } => *code,
            _ => INTERNAL_ERROR,
        }
    }

    /// The JSON-RPC error object in `era`: as [`Error::to_error_object`], but a missing
    /// resource is `-32002` in the legacy era.
    pub fn to_error_object_in(&self, era: crate::era::Era) -> Value {
        let mut object = self.to_error_object();
        if let (Error::ResourceNotFound { .. }, crate::era::Era::Legacy(_)) = (self, era) {
            object["code"] = json!(RESOURCE_NOT_FOUND);
        }
        object
    }

    /// The JSON-RPC error object (`{code, message, data?}`).
    pub fn to_error_object(&self) -> Value {
        let message = match self {
            Error::Rpc { message, .. } => message.clone(),
            Error::InvalidParams(message) => message.clone(),
            Error::MethodNotFound(method) => format!("method not found: {method}"),
            Error::ResourceNotFound { .. } => "Resource not found".to_owned(),
            other => other.to_string(),
        };
        let mut object = json!({ "code": self.code(), "message": message });
        match self {
            Error::Rpc {
                data: Some(data), ..
            } => object["data"] = data.clone(),
            Error::ResourceNotFound { uri } => object["data"] = json!({ "uri": uri }),
            Error::MissingCapability(capability) => {
                object["data"] = json!({ "requiredCapabilities": { *capability: {} } });
            }
            _ => {}
        }
        object
    }
}
