//! The chained tool call: `tool.before` → `permission.decision` → the MCP call (or the
//! extension tool call) → `tool.after`, recorded stage by stage in a [`ToolCallReport`].
//!
//! Extension tools (spec delta §2.5: `ext__<plugin>__<tool>`, served by V2 sidecars of the
//! turn's pinned generation) are offered beside the MCP tools and take exactly the same path:
//! the same points, the same policy (their manifest `readOnly` is the read-only hint), the
//! same audit of overrides. Only the call in the middle differs: `extension/tool/call`, whose
//! `content` becomes one text item and whose `isError` is the result's.
//!
//! This is how an agent host runs one tool call a model (or a user's `/call`) asked for. The
//! host's own permission verdict comes from a [`ToolPolicy`]: tools whose annotations say
//! read-only are allowed, others are denied unless the policy allows every tool; an extension
//! may still turn a deny into an allow at `permission.decision` (audited by the host) or the
//! other way round. A call that stops early (blocked, denied, failed) is not an error of the
//! caller: the report says where and why, and [`ToolCallReport::model_text`] is what the model
//! is told instead of a result.

use std::future::Future;

use serde_json::Value;
use sidewire_ext_host::protocol::{
    HookPayload, HookPoint, PermissionPayload, ProviderToolSchema, ToolAfterPayload,
    ToolBeforePayload, Verdict,
};
use sidewire_ext_host::{ExtensionTool, Outcome, Turn};
use sidewire_mcp::{CallToolResult, McpHost, ToolCallOptions};

use crate::error::Error;

/// The host's own permission policy for tool calls (the `hostDecision` that
/// `permission.decision` starts from).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolPolicy {
    /// Tools whose annotations say read-only (`readOnlyHint`) are allowed; every other tool is
    /// denied unless an extension allows it at `permission.decision`.
    #[default]
    ReadOnly,
    /// Every tool is allowed by the host (the CLI's `--allow-tools`); an extension may still
    /// deny.
    AllowAll,
    /// Every tool is denied by the host, read-only or not; an extension may still allow a call
    /// at `permission.decision` (audited by the host, as any override).
    DenyAll,
}

impl ToolPolicy {
    /// The host's verdict on a tool, and why.
    pub fn decide(self, read_only: bool) -> HostPolicy {
        let why = match (read_only, self) {
            (_, ToolPolicy::DenyAll) => PolicyReason::DenyAll,
            (true, _) => PolicyReason::ReadOnly,
            (false, ToolPolicy::AllowAll) => PolicyReason::AllowAll,
            (false, ToolPolicy::ReadOnly) => PolicyReason::NotReadOnly,
        };
        let decision = match why {
            PolicyReason::ReadOnly | PolicyReason::AllowAll => Verdict::Allow,
            PolicyReason::NotReadOnly | PolicyReason::DenyAll => Verdict::Deny,
        };
        HostPolicy { decision, why }
    }
}

/// The host's own permission verdict on one call, before `permission.decision` may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostPolicy {
    /// `allow` or `deny`.
    pub decision: Verdict,
    /// Why.
    pub why: PolicyReason,
}

/// Why the host's policy decided as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyReason {
    /// The tool's annotations say it is read-only: allowed.
    ReadOnly,
    /// Not read-only, allowed by [`ToolPolicy::AllowAll`].
    AllowAll,
    /// Not read-only: denied.
    NotReadOnly,
    /// Denied by [`ToolPolicy::DenyAll`], read-only or not.
    DenyAll,
}

/// The MCP call's result as the chain saw it: each content item as text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolResult {
    /// Each content item: its text, or its JSON when it is not text.
    pub text: Vec<String>,
    /// The server said the tool failed (`isError`).
    pub is_error: bool,
}

impl ToolResult {
    fn new(result: &CallToolResult) -> Self {
        ToolResult {
            text: result.content.iter().map(content_text).collect(),
            is_error: result.is_error,
        }
    }
}

/// One content item as text: its text, or its JSON when it is not text.
fn content_text(content: &sidewire_mcp::Content) -> String {
    match content.as_text() {
        Some(text) => text.to_owned(),
        None => serde_json::to_string(content).unwrap_or_default(),
    }
}

/// One tool call to run through the chain: what a model asked for, or a user's `/call`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call's id, sent as `callId` at `tool.before` and `tool.after`: the model's, or one
    /// the caller makes. Each call needs its own (unique within the session), or a sidecar
    /// cannot tell two calls apart.
    pub call_id: String,
    /// The namespaced tool name.
    pub name: String,
    /// The arguments, which must be a JSON object.
    pub arguments: Value,
}

impl ToolCall {
    /// The call `call_id` of the tool `name` with `arguments`.
    pub fn new(call_id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// Why a chained tool call stopped before `tool.after` ran.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolStop {
    /// No MCP tool has the name: nothing ran.
    UnknownTool,
    /// A chain member blocked the call at `point`.
    Blocked {
        /// `tool.before` or `permission.decision`.
        point: HookPoint,
        /// The plugin that blocked.
        plugin: String,
        /// Its redacted reason (may be empty).
        reason: String,
    },
    /// `permission.decision` did not end in `allow`.
    Denied,
    /// The model's answer asked for more calls in one round than the agent runs; this one was
    /// not run.
    TooMany {
        /// The bound ([`Agent::max_tool_calls`](crate::Agent::max_tool_calls)).
        limit: usize,
    },
    /// A chain or the MCP call could not run, or the arguments are not a JSON object.
    Failed(Error),
}

/// What a chained tool call did, stage by stage, as far as it got. Each stage is there only
/// when the one before it let the call go on; [`stop`](Self::stop) says why it went no
/// further (`None` when `tool.after` ran).
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolCallReport {
    /// The namespaced tool name.
    pub tool: String,
    /// The call's id: the model's, or the caller's.
    pub call_id: String,
    /// The arguments as requested.
    pub requested: Value,
    /// The arguments sent: as `tool.before` left them.
    pub arguments: Value,
    /// `tool.before`'s outcome.
    pub before: Option<Outcome>,
    /// The host's own verdict.
    pub policy: Option<HostPolicy>,
    /// `permission.decision`'s outcome.
    pub permission: Option<Outcome>,
    /// The MCP call's result, as the chain saw it (text).
    pub result: Option<ToolResult>,
    /// The MCP call's result as the server sent it (every content item, structured content),
    /// for a caller that passes it on whole (a gateway) when `tool.after` left it as it was.
    pub call_result: Option<CallToolResult>,
    /// `tool.after`'s outcome.
    pub after: Option<Outcome>,
    /// Why the call stopped before its end.
    pub stop: Option<ToolStop>,
}

impl ToolCallReport {
    /// A call that has not run yet.
    fn new(call: ToolCall) -> Self {
        ToolCallReport {
            tool: call.name,
            call_id: call.call_id,
            requested: call.arguments.clone(),
            arguments: call.arguments,
            before: None,
            policy: None,
            permission: None,
            result: None,
            call_result: None,
            after: None,
            stop: None,
        }
    }

    /// A call that stopped before anything ran.
    pub(crate) fn stopped(call: ToolCall, stop: ToolStop) -> Self {
        let mut report = ToolCallReport::new(call);
        report.stop = Some(stop);
        report
    }

    /// Whether every stage ran (the MCP result may still be `isError`).
    pub fn is_complete(&self) -> bool {
        self.stop.is_none()
    }

    /// What the model is told: `tool.after`'s result (an extension may have rewritten it), or
    /// why the call did not run, and whether it counts as an error.
    pub fn model_text(&self) -> (String, bool) {
        if let Some(Outcome {
            payload: HookPayload::ToolAfter(after),
            ..
        }) = &self.after
        {
            return (after.result.clone(), after.is_error.unwrap_or(false));
        }
        let text = match &self.stop {
            None => match &self.result {
                Some(result) => return (result.text.join("\n"), result.is_error),
                None => String::new(),
            },
            Some(ToolStop::UnknownTool) => format!("there is no tool named {}", self.tool),
            Some(ToolStop::Blocked {
                point,
                plugin,
                reason,
            }) => format!(
                "the call was blocked at {} by {plugin}: {reason}",
                point.as_str()
            ),
            Some(ToolStop::Denied) => format!("permission to call {} was denied", self.tool),
            Some(ToolStop::TooMany { limit }) => format!(
                "not run: one answer may call at most {limit} tools; ask again in the next answer"
            ),
            Some(ToolStop::Failed(err)) => {
                format!("the call failed: {}", sidewire_mcp::error_line(err))
            }
        };
        (text, true)
    }

    /// The stages, each recorded as it ends.
    async fn chain<T: ToolHost>(
        &mut self,
        turn: &Turn,
        tools: &T,
        policy: ToolPolicy,
        options: ToolCallOptions,
    ) -> Result<(), ToolStop> {
        let Some(read_only) = tools.read_only(&self.tool) else {
            return Err(ToolStop::UnknownTool);
        };
        if !self.requested.is_object() {
            return Err(ToolStop::Failed(Error::InvalidArguments {
                tool: self.tool.clone(),
                detail: format!("got {}", kind(&self.requested)),
            }));
        }
        let payload = HookPayload::ToolBefore(ToolBeforePayload {
            name: self.tool.clone(),
            arguments: self.arguments.to_string(),
            call_id: self.call_id.clone(),
        });
        let before = self
            .before
            .insert(intercept(turn, HookPoint::ToolBefore, payload).await?);
        if_blocked(HookPoint::ToolBefore, before)?;
        if let HookPayload::ToolBefore(p) = &before.payload {
            self.arguments = parse_arguments(&self.tool, &p.arguments)?;
        }
        let host = policy.decide(read_only);
        self.policy = Some(host);
        let payload = HookPayload::Permission(PermissionPayload {
            name: self.tool.clone(),
            arguments: self.arguments.to_string(),
            read_only: Some(read_only),
            host_decision: host.decision,
        });
        let permission = self
            .permission
            .insert(intercept(turn, HookPoint::PermissionDecision, payload).await?);
        if_blocked(HookPoint::PermissionDecision, permission)?;
        if permission.permission != Some(Verdict::Allow) {
            return Err(ToolStop::Denied);
        }
        let result_raw = tools
            .call(&self.tool, self.arguments.clone(), options)
            .await
            .map_err(ToolStop::Failed)?;
        let result = &*self.result.insert(ToolResult::new(&result_raw));
        self.call_result = Some(result_raw);
        let payload = HookPayload::ToolAfter(ToolAfterPayload {
            name: self.tool.clone(),
            arguments: self.arguments.to_string(),
            call_id: self.call_id.clone(),
            result: result.text.join("\n"),
            is_error: Some(result.is_error),
        });
        self.after = Some(intercept(turn, HookPoint::ToolAfter, payload).await?);
        Ok(())
    }
}

/// Runs one tool call through the chain on `turn`'s generation: `tool.before` (which may block
/// or rewrite the arguments) → `permission.decision` (starting from `policy`'s verdict) → the
/// MCP call of the tool on `mcp`, or the call of the extension tool of that name on `turn`'s
/// generation ([`Turn::tools`]) → `tool.after`. The call's id is the `callId` both
/// `tool.before` and `tool.after` carry. Never fails: the report says how far it got and
/// why it stopped (an unknown tool is [`ToolStop::UnknownTool`], with nothing run).
///
/// # Cancel safety
///
/// Dropping the future abandons the call where it is: an intercept in flight is cancelled
/// (its late answer ignored), an MCP call in flight is cancelled (the server gets
/// `notifications/cancelled`); nothing is reported.
pub async fn chained_tool_call(
    turn: &Turn,
    mcp: &McpHost,
    call: ToolCall,
    policy: ToolPolicy,
    options: ToolCallOptions,
) -> ToolCallReport {
    let tools = WithExtensionTools::new(mcp, turn);
    chained_call(turn, &tools, call, policy, options).await
}

/// [`chained_tool_call`] where the MCP call goes to `target`, another host name of the same
/// tool (a gateway's per-session instance of a stateful server, `mcp__notes#3__add`), while
/// the chain, the policy and the report see `call`'s own name (`mcp__notes__add`), so a
/// sidecar's rules and the audit do not depend on which instance serves the call. Whether the
/// tool is read-only is read from `call`'s name.
///
/// # Cancel safety
///
/// As [`chained_tool_call`].
pub async fn chained_tool_call_to(
    turn: &Turn,
    mcp: &McpHost,
    call: ToolCall,
    target: &str,
    policy: ToolPolicy,
    options: ToolCallOptions,
) -> ToolCallReport {
    let redirect = Redirect {
        host: mcp,
        from: call.name.clone(),
        to: target.to_owned(),
    };
    let tools = WithExtensionTools::new(&redirect, turn);
    chained_call(turn, &tools, call, policy, options).await
}

/// Another tool host's tools plus the extension tools of a pinned generation, offered after
/// them (their `ext__` names never clash with the MCP `mcp__` ones).
pub(crate) struct WithExtensionTools<'a, T> {
    inner: &'a T,
    turn: &'a Turn,
    /// The catalog when this was made: one turn sees one list.
    extension: Vec<ExtensionTool>,
}

impl<'a, T: ToolHost> WithExtensionTools<'a, T> {
    pub(crate) fn new(inner: &'a T, turn: &'a Turn) -> Self {
        WithExtensionTools {
            inner,
            turn,
            extension: turn.tools(),
        }
    }

    fn extension(&self, name: &str) -> Option<&ExtensionTool> {
        self.extension.iter().find(|tool| tool.name == name)
    }
}

impl<T: ToolHost> ToolHost for WithExtensionTools<'_, T> {
    fn schemas(&self) -> Vec<ProviderToolSchema> {
        let mut schemas = self.inner.schemas();
        schemas.extend(self.extension.iter().map(|tool| ProviderToolSchema {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: tool.input_schema.clone(),
        }));
        schemas
    }

    fn read_only(&self, name: &str) -> Option<bool> {
        match self.extension(name) {
            Some(tool) => Some(tool.read_only),
            None => self.inner.read_only(name),
        }
    }

    async fn call(
        &self,
        name: &str,
        arguments: Value,
        options: ToolCallOptions,
    ) -> Result<CallToolResult, Error> {
        if self.extension(name).is_none() {
            return self.inner.call(name, arguments, options).await;
        }
        let result = self
            .turn
            .call_tool(name, Some(arguments))
            .await
            .map_err(|source| Error::ExtensionTool {
                tool: name.to_owned(),
                source: Box::new(source),
            })?;
        let mut answer = CallToolResult::text(result.content);
        answer.is_error = result.is_error;
        Ok(answer)
    }
}

/// The host, with one tool name's calls sent to another name.
struct Redirect<'a> {
    host: &'a McpHost,
    from: String,
    to: String,
}

impl ToolHost for Redirect<'_> {
    fn schemas(&self) -> Vec<ProviderToolSchema> {
        self.host.schemas()
    }

    fn read_only(&self, name: &str) -> Option<bool> {
        self.host.read_only(name)
    }

    fn call(
        &self,
        name: &str,
        arguments: Value,
        options: ToolCallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send {
        let to = (name == self.from).then_some(self.to.as_str());
        async move {
            self.host
                .call_tool(to.unwrap_or(name), arguments, options)
                .await
                .map_err(|source| Error::Tool {
                    tool: name.to_owned(),
                    source: Box::new(source),
                })
        }
    }
}

/// [`chained_tool_call`] over any [`ToolHost`].
pub(crate) async fn chained_call<T: ToolHost>(
    turn: &Turn,
    tools: &T,
    call: ToolCall,
    policy: ToolPolicy,
    options: ToolCallOptions,
) -> ToolCallReport {
    let mut report = ToolCallReport::new(call);
    if let Err(stop) = report.chain(turn, tools, policy, options).await {
        report.stop = Some(stop);
    }
    report
}

/// Where the tools come from: the MCP host, or a fake in tests.
pub(crate) trait ToolHost: Sync {
    /// The tools offered to a model, in the host's order.
    fn schemas(&self) -> Vec<ProviderToolSchema>;
    /// Whether a tool is read-only; `None` when there is no such tool.
    fn read_only(&self, name: &str) -> Option<bool>;
    /// Calls a tool; a failure is [`Error::Tool`] (MCP) or [`Error::ExtensionTool`].
    fn call(
        &self,
        name: &str,
        arguments: Value,
        options: ToolCallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send;
}

impl ToolHost for McpHost {
    fn schemas(&self) -> Vec<ProviderToolSchema> {
        self.snapshot()
            .tools()
            .map(|tool| ProviderToolSchema {
                description: tool.item.description.clone().unwrap_or_default(),
                parameters: match tool.item.input_schema.to_value() {
                    Value::Object(schema) => schema,
                    // A schema that is not an object (the MCP spec requires one) is offered as
                    // "any object" rather than dropping the tool.
                    _ => serde_json::Map::from_iter([("type".to_owned(), "object".into())]),
                },
                name: tool.name,
            })
            .collect()
    }

    fn read_only(&self, name: &str) -> Option<bool> {
        // A lookup in the host's index (a walk of every tool cost O(tools) per call).
        let tool = self.find_tool(name)?;
        // As the CLI always did: the `readOnlyHint` annotation alone decides.
        Some(tool.tool.hint("readOnlyHint").unwrap_or(false))
    }

    async fn call(
        &self,
        name: &str,
        arguments: Value,
        options: ToolCallOptions,
    ) -> Result<CallToolResult, Error> {
        self.call_tool(name, arguments, options)
            .await
            .map_err(|source| Error::Tool {
                tool: name.to_owned(),
                source: Box::new(source),
            })
    }
}

async fn intercept(
    turn: &Turn,
    point: HookPoint,
    payload: HookPayload,
) -> Result<Outcome, ToolStop> {
    turn.intercept(point, payload).await.map_err(|source| {
        ToolStop::Failed(Error::Hook {
            point,
            source: Box::new(source),
        })
    })
}

/// Stops the call when `point`'s chain blocked it.
fn if_blocked(point: HookPoint, outcome: &Outcome) -> Result<(), ToolStop> {
    match &outcome.blocked {
        Some(blocked) => Err(ToolStop::Blocked {
            point,
            plugin: blocked.plugin.clone(),
            reason: blocked.reason.clone(),
        }),
        None => Ok(()),
    }
}

/// Arguments as JSON text (the model's, or `tool.before`'s): `""` is `{}`, anything else must
/// be a JSON object.
pub(crate) fn parse_arguments(tool: &str, text: &str) -> Result<Value, ToolStop> {
    let invalid = |detail: String| {
        ToolStop::Failed(Error::InvalidArguments {
            tool: tool.to_owned(),
            detail,
        })
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(value) => Err(invalid(format!("got {}", kind(&value)))),
        Err(err) => Err(invalid(err.to_string())),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
