//! Extension tools (spec delta §2.5, v2 only): `extension/tool/call` (H→E) asks a sidecar to
//! run one of the tools its manifest declares under `runtime.tools` and its handshake's `tools`
//! serves. Registered in the [`ProtocolProfile::V2`](crate::ProtocolProfile::V2) registry only:
//! on a V1 connection the method is unregistered (`-32601`).

use serde::Serialize;
use serde_json::Value;

use crate::decode::{Any, Bool, Dto, Fields, NonBlank, Nullable, Str, Uint};
use crate::error::Error;

/// The host's budget for one `extension/tool/call` (the reference documents 5 minutes): sent as
/// `timeoutMillis`, and the host gives up on the call after the same time.
pub const TOOL_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// `ToolCallParams` (H→E): which tool to run, with what.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallParams {
    /// The tool's name as the manifest declares it (non-empty).
    pub name: String,
    /// The model's arguments, any JSON value (`null` included); the host sends `{}` when the
    /// model passed none. Required on the wire.
    pub arguments: Value,
    /// The host's budget in milliseconds, ≥ 0; 0 means no deadline for the callback.
    pub timeout_millis: u64,
}

impl Dto for ToolCallParams {
    const NAME: &'static str = "ToolCallParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ToolCallParams {
            name: f.req("name", NonBlank)?,
            arguments: f.req("arguments", Nullable(Any))?.unwrap_or(Value::Null),
            timeout_millis: f.req("timeoutMillis", Uint::ANY)?,
        })
    }
}

/// `ToolCallResult` (E→H): what the model reads, and whether the tool reports a failure of its
/// own work (a call the extension cannot run at all is a JSON-RPC error instead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallResult {
    /// The text the model reads (may be empty).
    pub content: String,
    /// The tool reports that its work failed; sent only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl Dto for ToolCallResult {
    const NAME: &'static str = "ToolCallResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ToolCallResult {
            content: f.req("content", Str)?,
            is_error: f.opt("isError", Bool)?.unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests;
