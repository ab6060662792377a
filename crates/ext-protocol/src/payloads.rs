//! The 13 hook payload DTOs of §7.3, carried by the 17 hook points.
//!
//! Members are optional unless the spec marks them **R**; optional strings and lists are plain
//! values that are omitted when empty, optional scalars are `Option`s so that `false` and `0` can
//! still be sent when meaningful (§0). The point rules a *replacement* must also satisfy (§7.2)
//! are not decoding rules and live with the registry in `hooks`.

use serde::Serialize;

use crate::decode::{Bool, Dto, Enum, Fields, List, Obj, Str, Uint};
use crate::error::Error;
use crate::hooks::{SessionPhase, Verdict};
use crate::model::{ProviderMessage, ProviderRequest, ProviderToolCall, ProviderUsage};

/// `SessionPayload`: the five session points.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPayload {
    /// The session file path.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub session_path: String,
    /// The phase; the host always sets it to match the point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<SessionPhase>,
}

impl Dto for SessionPayload {
    const NAME: &'static str = "SessionPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(SessionPayload {
            session_path: f.or_default("sessionPath", Str)?,
            phase: f.opt("phase", Enum::new())?,
        })
    }
}

/// `InputPayload`: `input.receive`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InputPayload {
    /// The user's input.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
}

impl Dto for InputPayload {
    const NAME: &'static str = "InputPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(InputPayload {
            text: f.or_default("text", Str)?,
        })
    }
}

/// `AgentStartPayload`: `agent.before_start`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStartPayload {
    /// The model in use.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// How many tools are offered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<u64>,
    /// The session id.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub session_id: String,
}

impl Dto for AgentStartPayload {
    const NAME: &'static str = "AgentStartPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(AgentStartPayload {
            model: f.or_default("model", Str)?,
            tool_count: f.opt("toolCount", Uint::ANY)?,
            session_id: f.or_default("sessionId", Str)?,
        })
    }
}

/// `SystemPromptPayload`: `system_prompt.build`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemPromptPayload {
    /// The assembled system prompt.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub prompt: String,
    /// The workspace root, an absolute path.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub workspace_root: String,
}

impl Dto for SystemPromptPayload {
    const NAME: &'static str = "SystemPromptPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(SystemPromptPayload {
            prompt: f.or_default("prompt", Str)?,
            workspace_root: f.or_default("workspaceRoot", Str)?,
        })
    }
}

/// `ContextPayload`: `context.prepare`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContextPayload {
    /// The conversation about to be sent; always sent, `[]` when empty.
    pub messages: Vec<ProviderMessage>,
}

impl Dto for ContextPayload {
    const NAME: &'static str = "ContextPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ContextPayload {
            messages: f.req("messages", List(Obj::new()))?,
        })
    }
}

/// `ProviderRequestPayload`: `provider.request`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProviderRequestPayload {
    /// The request about to be sent.
    pub request: ProviderRequest,
}

impl Dto for ProviderRequestPayload {
    const NAME: &'static str = "ProviderRequestPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderRequestPayload {
            request: f.req("request", Obj::new())?,
        })
    }
}

/// `ProviderResponsePayload`: `provider.response`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProviderResponsePayload {
    /// The response text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The reasoning text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// The reasoning signature.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signature: String,
    /// The tool calls made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ProviderToolCall>,
    /// Token accounting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<ProviderUsage>,
}

impl Dto for ProviderResponsePayload {
    const NAME: &'static str = "ProviderResponsePayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ProviderResponsePayload {
            text: f.or_default("text", Str)?,
            reasoning: f.or_default("reasoning", Str)?,
            signature: f.or_default("signature", Str)?,
            calls: f.or_default("calls", List(Obj::new()))?,
            usage: f.opt("usage", Obj::new())?,
        })
    }
}

/// `ToolBeforePayload`: `tool.before`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolBeforePayload {
    /// The tool name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The arguments, a JSON object as text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub arguments: String,
    /// Pairs `tool.before` with `tool.after`; informational only.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub call_id: String,
}

impl Dto for ToolBeforePayload {
    const NAME: &'static str = "ToolBeforePayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ToolBeforePayload {
            name: f.or_default("name", Str)?,
            arguments: f.or_default("arguments", Str)?,
            call_id: f.or_default("callId", Str)?,
        })
    }
}

/// `ToolAfterPayload`: `tool.after`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAfterPayload {
    /// The tool name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The arguments, a JSON object as text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub arguments: String,
    /// Pairs `tool.before` with `tool.after`; informational only.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub call_id: String,
    /// The tool's output.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub result: String,
    /// Whether the tool failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl Dto for ToolAfterPayload {
    const NAME: &'static str = "ToolAfterPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(ToolAfterPayload {
            name: f.or_default("name", Str)?,
            arguments: f.or_default("arguments", Str)?,
            call_id: f.or_default("callId", Str)?,
            result: f.or_default("result", Str)?,
            is_error: f.opt("isError", Bool)?,
        })
    }
}

/// `PermissionPayload`: `permission.decision`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionPayload {
    /// The tool name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The arguments, a JSON object as text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub arguments: String,
    /// Whether the host classifies the call as read-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The host's own verdict.
    pub host_decision: Verdict,
}

impl Dto for PermissionPayload {
    const NAME: &'static str = "PermissionPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(PermissionPayload {
            name: f.or_default("name", Str)?,
            arguments: f.or_default("arguments", Str)?,
            read_only: f.opt("readOnly", Bool)?,
            host_decision: f.req("hostDecision", Enum::new())?,
        })
    }
}

/// `CompactionPreparePayload`: `compaction.prepare`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompactionPreparePayload {
    /// The history to compact; always sent, `[]` when empty.
    pub messages: Vec<ProviderMessage>,
    /// Guidance for the summary.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub guidance: String,
}

impl Dto for CompactionPreparePayload {
    const NAME: &'static str = "CompactionPreparePayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(CompactionPreparePayload {
            messages: f.req("messages", List(Obj::new()))?,
            guidance: f.or_default("guidance", Str)?,
        })
    }
}

/// `CompactionCompletePayload`: `compaction.complete`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CompactionCompletePayload {
    /// The summary produced.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub summary: String,
}

impl Dto for CompactionCompletePayload {
    const NAME: &'static str = "CompactionCompletePayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(CompactionCompletePayload {
            summary: f.or_default("summary", Str)?,
        })
    }
}

/// `FrontendEventPayload`: `frontend.event`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FrontendEventPayload {
    /// The event kind, such as `turn_started`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Event text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Event detail.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl Dto for FrontendEventPayload {
    const NAME: &'static str = "FrontendEventPayload";

    fn describe(f: &mut Fields<'_>) -> Result<Self, Error> {
        Ok(FrontendEventPayload {
            kind: f.or_default("kind", Str)?,
            text: f.or_default("text", Str)?,
            detail: f.or_default("detail", Str)?,
        })
    }
}

#[cfg(test)]
mod tests;
