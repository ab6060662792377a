//! Shared model DTOs (§7.4): provider requests, messages, tool calls and usage, used by hook
//! payloads and by Provider extensions.
//!
//! `ProviderMessage` and `ProviderToolCall` use snake_case member names on the wire; every other
//! DTO is camelCase. These types describe model traffic; they do not talk to a model.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::decode::{Dto, Enum, Fields, List, NonBlank, Number, Obj, Object, Str, Uint};
use crate::error::Error;

/// `ProviderRequest`: what is sent to a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderRequest {
    /// The conversation; always sent, `[]` when empty.
    pub messages: Vec<ProviderMessage>,
    /// The tools offered; always sent, `[]` when empty.
    pub tools: Vec<ProviderToolSchema>,
    /// Sampling temperature; absent means the provider's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The completion budget.
    pub max_tokens: u64,
    /// A response format request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
}

impl Dto for ProviderRequest {
    const NAME: &'static str = "ProviderRequest";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderRequest {
            messages: f.req("messages", List(Obj::new()))?,
            tools: f.req("tools", List(Obj::new()))?,
            temperature: f.opt("temperature", Number::ANY)?,
            max_tokens: f.req("maxTokens", Uint::ANY)?,
            response_format: f.opt("responseFormat", Obj::new())?,
        })
    }
}

/// `ProviderRequest.responseFormat`: `{ "type": string R non-empty }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResponseFormat {
    /// The format name, such as `json_object` (non-empty).
    #[serde(rename = "type")]
    pub kind: String,
}

impl Dto for ResponseFormat {
    const NAME: &'static str = "ResponseFormat";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ResponseFormat {
            kind: f.req("type", NonBlank)?,
        })
    }
}

/// `ProviderMessage.role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderRole {
    /// `system`.
    System,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `tool`.
    Tool,
}

wire_enum!(ProviderRole, "Role", {
    System => "system",
    User => "user",
    Assistant => "assistant",
    Tool => "tool",
});

/// `ProviderMessage` (snake_case members): one conversation message; every member is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProviderMessage {
    /// The author's role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<ProviderRole>,
    /// The text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content: String,
    /// Attached images.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// Model reasoning text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning_content: String,
    /// The provider's signature of the reasoning.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning_signature: String,
    /// For `tool` messages: the call answered.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool_call_id: String,
    /// For `tool` messages: the tool's name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// For `assistant` messages: the tool calls made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ProviderToolCall>,
}

impl Dto for ProviderMessage {
    const NAME: &'static str = "ProviderMessage";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderMessage {
            role: f.opt("role", Enum::new())?,
            content: f.or_default("content", Str)?,
            images: f.or_default("images", List(Str))?,
            reasoning_content: f.or_default("reasoning_content", Str)?,
            reasoning_signature: f.or_default("reasoning_signature", Str)?,
            tool_call_id: f.or_default("tool_call_id", Str)?,
            name: f.or_default("name", Str)?,
            tool_calls: f.or_default("tool_calls", List(Obj::new()))?,
        })
    }
}

/// `ProviderToolCall` (snake_case members): one tool call made by a model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProviderToolCall {
    /// The call id (non-empty).
    pub id: String,
    /// The tool name (non-empty).
    pub name: String,
    /// The arguments as JSON text; may be `""`.
    pub arguments: String,
    /// The provider's signature of the call.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub thought_signature: String,
}

impl Dto for ProviderToolCall {
    const NAME: &'static str = "ProviderToolCall";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderToolCall {
            id: f.req("id", NonBlank)?,
            name: f.req("name", NonBlank)?,
            arguments: f.req("arguments", Str)?,
            thought_signature: f.or_default("thought_signature", Str)?,
        })
    }
}

/// `ProviderToolSchema`: a tool offered to a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProviderToolSchema {
    /// The tool name (non-empty).
    pub name: String,
    /// What the tool does.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The JSON Schema of the arguments; always a JSON object.
    pub parameters: Map<String, Value>,
}

impl Dto for ProviderToolSchema {
    const NAME: &'static str = "ProviderToolSchema";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderToolSchema {
            name: f.req("name", NonBlank)?,
            description: f.or_default("description", Str)?,
            parameters: f.req("parameters", Object)?,
        })
    }
}

/// `ProviderUsage`: token accounting of one completion.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Prompt tokens served from cache.
    pub cache_hit_tokens: u64,
    /// Prompt tokens not served from cache.
    pub cache_miss_tokens: u64,
    /// Reasoning tokens.
    pub reasoning_tokens: u64,
    /// Why the completion stopped.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub finish_reason: String,
}

impl Dto for ProviderUsage {
    const NAME: &'static str = "ProviderUsage";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderUsage {
            prompt_tokens: f.req("promptTokens", Uint::ANY)?,
            completion_tokens: f.req("completionTokens", Uint::ANY)?,
            total_tokens: f.req("totalTokens", Uint::ANY)?,
            cache_hit_tokens: f.req("cacheHitTokens", Uint::ANY)?,
            cache_miss_tokens: f.req("cacheMissTokens", Uint::ANY)?,
            reasoning_tokens: f.req("reasoningTokens", Uint::ANY)?,
            finish_reason: f.or_default("finishReason", Str)?,
        })
    }
}

#[cfg(test)]
mod tests;
