//! Provider-extension DTOs (§14): the provider catalog and streamed completions
//! (`extension/provider/catalog`, `stream/open`, `stream/cancel`, `stream/chunk`, `stream/end`).
//!
//! Chunk invariants (each chunk type's required member, `error` iff the type is `error`) are
//! type-level rules of [`ProviderChunk`]. Sequencing, reordering windows and stream outcomes are
//! consumer and producer behaviour, not part of this module.

use serde::Serialize;
use serde_json::{Value, json};

use crate::constants::PLUGIN_PROVIDER_REF_PREFIX;
use crate::decode::{
    Bool, Dto, Enum, Fields, List, NonBlank, Number, Obj, Seg, Str, Uint, missing, rule, unique_by,
};
use crate::error::Error;
use crate::model::{ProviderRequest, ProviderToolCall, ProviderUsage};
use crate::reason::Reason;

/// Whether `reference` is a provider ref of plugin `plugin_id`: `plugin/<pluginId>/<rest>` with a
/// non-empty `<rest>` (§6.3 check 7, §14.1).
pub fn is_plugin_provider_ref(reference: &str, plugin_id: &str) -> bool {
    reference
        .strip_prefix(PLUGIN_PROVIDER_REF_PREFIX)
        .and_then(|rest| rest.strip_prefix(plugin_id))
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| !rest.is_empty())
}

/// The empty params of `extension/provider/catalog`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ProviderCatalogParams {}

impl Dto for ProviderCatalogParams {
    const NAME: &'static str = "ProviderCatalogParams";

    fn describe(_: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderCatalogParams {})
    }
}

/// `ProviderCatalogResult`: the refreshed catalog; refs unique.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProviderCatalogResult {
    /// The providers; always sent, `[]` when empty.
    pub providers: Vec<ProviderDescriptor>,
}

impl Dto for ProviderCatalogResult {
    const NAME: &'static str = "ProviderCatalogResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let result = ProviderCatalogResult {
            providers: f.req("providers", List(Obj::new()))?,
        };
        f.check(|at| {
            unique_by(
                &result.providers,
                |p| &p.reference,
                &at.key("providers"),
                "ref",
            )
        })?;
        Ok(result)
    }
}

/// `ProviderDescriptor`: one model a sidecar serves. It never carries endpoints or credentials.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderDescriptor {
    /// The ref users select, `plugin/<pluginId>/<provider>/<model>` (non-empty).
    #[serde(rename = "ref")]
    pub reference: String,
    /// A display name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    /// The model name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The currency of the prices.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub pricing_currency: String,
    /// The default reasoning effort.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub default_effort: String,
    /// The context window in tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Price per million input tokens (≥ 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_per_million: Option<f64>,
    /// Price per million output tokens (≥ 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_per_million: Option<f64>,
    /// Price per million cached input tokens (≥ 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_hit_per_million: Option<f64>,
    /// Accepts images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Supports tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    /// Produces reasoning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    /// Produces reasoning for tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_reasoning: Option<bool>,
    /// Needs reasoning sent back on later turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_round_trip: Option<bool>,
    /// Warn when tool-call reasoning is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warn_on_missing_tool_call_reasoning: Option<bool>,
    /// The reasoning efforts offered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub efforts: Vec<String>,
}

impl Dto for ProviderDescriptor {
    const NAME: &'static str = "ProviderDescriptor";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderDescriptor {
            reference: f.req("ref", NonBlank)?,
            display_name: f.or_default("displayName", Str)?,
            model: f.or_default("model", Str)?,
            pricing_currency: f.or_default("pricingCurrency", Str)?,
            default_effort: f.or_default("defaultEffort", Str)?,
            context_window: f.opt("contextWindow", Uint::ANY)?,
            input_per_million: f.opt("inputPerMillion", Number::NON_NEGATIVE)?,
            output_per_million: f.opt("outputPerMillion", Number::NON_NEGATIVE)?,
            cache_hit_per_million: f.opt("cacheHitPerMillion", Number::NON_NEGATIVE)?,
            vision: f.opt("vision", Bool)?,
            tools: f.opt("tools", Bool)?,
            reasoning: f.opt("reasoning", Bool)?,
            tool_call_reasoning: f.opt("toolCallReasoning", Bool)?,
            reasoning_round_trip: f.opt("reasoningRoundTrip", Bool)?,
            warn_on_missing_tool_call_reasoning: f.opt("warnOnMissingToolCallReasoning", Bool)?,
            efforts: f.or_default("efforts", List(Str))?,
        })
    }
}

/// `StreamOpenParams` (H→E): start a streamed completion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamOpenParams {
    /// Host-minted, unique per connection (non-empty).
    pub stream_id: String,
    /// The selected provider ref.
    pub provider_ref: String,
    /// A model override.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// A reasoning effort.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub effort: String,
    /// The request.
    pub request: ProviderRequest,
    /// Chunks are numbered from `seqBase + 1` (hosts send 0).
    pub seq_base: u64,
}

impl Dto for StreamOpenParams {
    const NAME: &'static str = "StreamOpenParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StreamOpenParams {
            stream_id: f.req("streamId", NonBlank)?,
            provider_ref: f.req("providerRef", Str)?,
            model: f.or_default("model", Str)?,
            effort: f.or_default("effort", Str)?,
            request: f.req("request", Obj::new())?,
            seq_base: f.req("seqBase", Uint::ANY)?,
        })
    }
}

/// `StreamOpenResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StreamOpenResult {
    /// `false` counts as `provider_failed`.
    pub accepted: bool,
}

impl Dto for StreamOpenResult {
    const NAME: &'static str = "StreamOpenResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StreamOpenResult {
            accepted: f.req("accepted", Bool)?,
        })
    }
}

/// `StreamCancelParams` (H→E).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamCancelParams {
    /// The stream to cancel.
    pub stream_id: String,
}

impl Dto for StreamCancelParams {
    const NAME: &'static str = "StreamCancelParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StreamCancelParams {
            stream_id: f.req("streamId", Str)?,
        })
    }
}

/// `StreamCancelResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StreamCancelResult {
    /// `false` if the stream is unknown or already ended.
    pub cancelled: bool,
}

impl Dto for StreamCancelResult {
    const NAME: &'static str = "StreamCancelResult";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StreamCancelResult {
            cancelled: f.req("cancelled", Bool)?,
        })
    }
}

/// `StreamChunkParams` (E→H notification).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamChunkParams {
    /// The stream.
    pub stream_id: String,
    /// The chunk's number, ≥ 1, contiguous from `seqBase + 1`.
    pub seq: u64,
    /// The chunk.
    pub chunk: ProviderChunk,
}

impl Dto for StreamChunkParams {
    const NAME: &'static str = "StreamChunkParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StreamChunkParams {
            stream_id: f.req("streamId", Str)?,
            seq: f.req("seq", Uint::POSITIVE)?,
            chunk: f.req("chunk", Obj::new())?,
        })
    }
}

/// `StreamEndParams` (E→H notification): exactly one per stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamEndParams {
    /// The stream.
    pub stream_id: String,
    /// The last chunk sent (`seqBase` if none).
    pub last_seq: u64,
    /// A producer error (redacted); the stream failed with `provider_failed`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// The stream was cut short (after a cancel, or mid-flight).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<bool>,
}

impl Dto for StreamEndParams {
    const NAME: &'static str = "StreamEndParams";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(StreamEndParams {
            stream_id: f.req("streamId", Str)?,
            last_seq: f.req("lastSeq", Uint::ANY)?,
            error: f.or_default("error", Str)?,
            interrupted: f.opt("interrupted", Bool)?,
        })
    }
}

/// `ProviderChunk.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkType {
    /// Response text (`text` required).
    Text,
    /// Reasoning text (`text` required, `signature` optional).
    Reasoning,
    /// A tool call begins (`toolCall` required; `arguments` may be `""`).
    ToolCallStart,
    /// Tool-call arguments grew (`argChars` required: characters so far).
    ToolCallArgsDelta,
    /// A complete tool call (`toolCall` required).
    ToolCall,
    /// Token accounting (`usage` required).
    Usage,
    /// The completion finished.
    Done,
    /// A failure (`error` required). SDKs never send it; they end the stream with `end.error`.
    Error,
}

wire_enum!(ChunkType, "ChunkType", {
    Text => "text",
    Reasoning => "reasoning",
    ToolCallStart => "tool_call_start",
    ToolCallArgsDelta => "tool_call_args_delta",
    ToolCall => "tool_call",
    Usage => "usage",
    Done => "done",
    Error => "error",
});

impl ChunkType {
    /// The member this chunk type requires, if any.
    pub fn required_member(self) -> Option<&'static str> {
        match self {
            ChunkType::Text | ChunkType::Reasoning => Some("text"),
            ChunkType::ToolCallStart | ChunkType::ToolCall => Some("toolCall"),
            ChunkType::ToolCallArgsDelta => Some("argChars"),
            ChunkType::Usage => Some("usage"),
            ChunkType::Error => Some("error"),
            ChunkType::Done => None,
        }
    }
}

/// `ProviderChunk`: one piece of a streamed completion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderChunk {
    /// The chunk type; it decides which member is required.
    #[serde(rename = "type")]
    pub kind: ChunkType,
    /// Text of `text` and `reasoning` chunks.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Signature of a `reasoning` chunk.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signature: String,
    /// The call of `tool_call_start` and `tool_call` chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ProviderToolCall>,
    /// Argument characters so far, for `tool_call_args_delta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arg_chars: Option<u64>,
    /// Token accounting of a `usage` chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<ProviderUsage>,
    /// The failure of an `error` chunk; present iff the type is `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ProviderError>,
}

impl ProviderChunk {
    /// A chunk of `kind` with no members set.
    pub fn new(kind: ChunkType) -> Self {
        ProviderChunk {
            kind,
            text: String::new(),
            signature: String::new(),
            tool_call: None,
            arg_chars: None,
            usage: None,
            error: None,
        }
    }

    /// The type-level rules (§14.3): the type's required member, `error` only in `error`.
    fn check(&self, at: &Seg<'_>) -> Result<(), Error> {
        let present = match self.kind {
            ChunkType::Text | ChunkType::Reasoning => !self.text.is_empty(),
            ChunkType::ToolCallStart | ChunkType::ToolCall => self.tool_call.is_some(),
            ChunkType::ToolCallArgsDelta => self.arg_chars.is_some(),
            ChunkType::Usage => self.usage.is_some(),
            ChunkType::Error => self.error.is_some(),
            ChunkType::Done => true,
        };
        if let (false, Some(name)) = (present, self.kind.required_member()) {
            return Err(missing(&at.key(name)));
        }
        if self.kind != ChunkType::Error && self.error.is_some() {
            return Err(rule(
                &at.key("error"),
                "is allowed only in an \"error\" chunk",
            ));
        }
        Ok(())
    }
}

impl Dto for ProviderChunk {
    const NAME: &'static str = "ProviderChunk";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        let chunk = ProviderChunk {
            kind: f.req("type", Enum::new())?,
            text: f.or_default("text", Str)?,
            signature: f.or_default("signature", Str)?,
            tool_call: f.opt("toolCall", Obj::new())?,
            arg_chars: f.opt("argChars", Uint::ANY)?,
            usage: f.opt("usage", Obj::new())?,
            error: f.opt("error", Obj::new())?,
        };
        f.check(|at| chunk.check(at))?;
        f.schema_rule(|_| {
            let mut rules: Vec<Value> = ChunkType::ALL
                .iter()
                .filter_map(|kind| {
                    kind.required_member().map(|name| {
                        json!({
                            "if": {"properties": {"type": {"const": kind.as_str()}}},
                            "then": {"required": [name]}
                        })
                    })
                })
                .collect();
            rules.push(json!({
                "if": {"required": ["error"]},
                "then": {"properties": {"type": {"const": "error"}}}
            }));
            json!({"allOf": rules})
        });
        Ok(chunk)
    }
}

/// `ProviderError.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderErrorCode {
    /// `provider_failed`.
    ProviderFailed,
    /// `provider_interrupted`.
    ProviderInterrupted,
}

wire_enum!(ProviderErrorCode, "ProviderErrorCode", {
    ProviderFailed => "provider_failed",
    ProviderInterrupted => "provider_interrupted",
});

impl ProviderErrorCode {
    /// The reason a stream failing with this code ends with (§14.5).
    pub fn reason(self) -> Reason {
        match self {
            ProviderErrorCode::ProviderFailed => Reason::ProviderFailed,
            ProviderErrorCode::ProviderInterrupted => Reason::ProviderInterrupted,
        }
    }
}

/// `ProviderError`: the failure of an `error` chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderError {
    /// The failure's reason.
    pub code: ProviderErrorCode,
    /// A message (non-empty).
    pub message: String,
}

impl Dto for ProviderError {
    const NAME: &'static str = "ProviderError";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderError {
            code: f.req("code", Enum::new())?,
            message: f.req("message", NonBlank)?,
        })
    }
}

#[cfg(test)]
mod tests;
