//! One agent turn: the points of the spec in its order around a provider stream and MCP tools.
//!
//! ```text
//! input.receive ──blocked──▶ end (Blocked)
//!      │ text (a replacement's)
//!      ▼  events: agent.before_start, frontend.event turn_started
//! ┌─▶ context.prepare (messages so far + this turn's) ──blocked──▶ end
//! │    ▼  the replacement's messages
//! │   provider.request (messages, MCP tools, maxTokens) ──blocked──▶ end
//! │    ▼  the replacement's request
//! │   the provider stream: chunks to the caller as they arrive
//! │    ▼
//! │   provider.response (text, reasoning, calls, usage) ──blocked──▶ end
//! │    ▼  no calls ──▶ end (Answered)
//! │   each call: tool.before → permission.decision → MCP → tool.after
//! │    │ results as `tool` messages
//! └────┘ next round, unless this was the last one ──▶ end (RoundLimit)
//!         event: frontend.event turn_finished
//! ```
//!
//! The loop runs on one pinned generation (one ext-host `Turn`, §13.3), spawns nothing and
//! keeps everything it builds bounded by the [`Agent`]'s limits.
//!
//! It runs over two crate-private seams, `Model` (open a stream for a request; `host_model.rs`
//! implements it on a pinned `Turn`) and `ToolHost` (the tools' schemas, hints and calls;
//! `tools.rs` implements it for the `McpHost`), so the unit tests drive it with a scripted model
//! and in-memory tools. The caller sees events through a callback (`FnMut(TurnEvent<'_>)`, borrowed
//! data, no queue), and a turn's messages reach the [`Conversation`] only when it ends.

use std::future::Future;
use std::pin::Pin;

use futures_core::Stream;
use futures_util::StreamExt as _;
use sidewire_ext_host::protocol::{
    AgentStartPayload, ContextPayload, FrontendEventPayload, HookPayload, HookPoint, InputPayload,
    ProviderChunk, ProviderMessage, ProviderRequest, ProviderRequestPayload,
    ProviderResponsePayload, ProviderRole, ProviderToolCall, ProviderToolSchema, ProviderUsage,
};
use sidewire_ext_host::{Outcome, Turn};
use sidewire_mcp::ToolCallOptions;

use crate::conversation::Conversation;
use crate::error::Error;
use crate::response::ResponseCollector;
use crate::tools::{self, ToolCall, ToolCallReport, ToolHost, ToolPolicy, ToolStop};

/// The settings of the turn loop: which provider, which bounds, which tool policy. Cheap to
/// clone; one value serves every turn of a session.
#[derive(Debug, Clone)]
pub struct Agent {
    pub(crate) provider_ref: String,
    pub(crate) model: String,
    session_id: String,
    max_rounds: u32,
    max_tokens: u64,
    max_tool_calls: usize,
    max_response_bytes: usize,
    max_tool_result_bytes: usize,
    tool_policy: ToolPolicy,
}

impl Agent {
    /// The default bound on rounds (provider requests) per turn.
    pub const DEFAULT_MAX_ROUNDS: u32 = 8;
    /// The default `maxTokens` of each request.
    pub const DEFAULT_MAX_TOKENS: u64 = 4096;
    /// The default bound on tool calls run per round.
    pub const DEFAULT_MAX_TOOL_CALLS: usize = 16;
    /// The default bound on one round's answer: text, reasoning and tool calls, in bytes.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 1024 * 1024;
    /// The default bound on one tool result as the model is told it, in bytes.
    pub const DEFAULT_MAX_TOOL_RESULT_BYTES: usize = 64 * 1024;

    /// Turns served by the provider `provider_ref` (`plugin/<plugin>/<provider>/<model>`),
    /// with the default bounds and [`ToolPolicy::ReadOnly`].
    pub fn new(provider_ref: impl Into<String>) -> Self {
        Agent {
            provider_ref: provider_ref.into(),
            model: String::new(),
            session_id: String::new(),
            max_rounds: Self::DEFAULT_MAX_ROUNDS,
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            max_tool_calls: Self::DEFAULT_MAX_TOOL_CALLS,
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
            max_tool_result_bytes: Self::DEFAULT_MAX_TOOL_RESULT_BYTES,
            tool_policy: ToolPolicy::ReadOnly,
        }
    }

    /// The `model` sent with each stream (empty: the provider's own).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The session id `agent.before_start` carries.
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = session_id.into();
        self
    }

    /// At most this many rounds per turn (at least 1; default 8). A model still asking for
    /// tools in the last round ends the turn with [`TurnEnd::RoundLimit`] once its calls ran.
    pub fn max_rounds(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// The `maxTokens` of each request (default 4096).
    pub fn max_tokens(mut self, tokens: u64) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// At most this many tool calls run per round (default 16); the answer's further calls are
    /// not run and the model is told so ([`ToolStop::TooMany`]).
    pub fn max_tool_calls(mut self, calls: usize) -> Self {
        self.max_tool_calls = calls;
        self
    }

    /// At most this many bytes of one round's answer (default 1 MiB); past it the stream is
    /// cancelled and the turn fails with [`Error::ResponseTooLarge`].
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// At most this many bytes of a tool result go back to the model (default 64 KiB); the rest
    /// is cut at a character boundary and the model is told how much was cut. The report keeps
    /// the whole result.
    pub fn max_tool_result_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_result_bytes = bytes;
        self
    }

    /// The host's own permission policy for the model's tool calls (default
    /// [`ToolPolicy::ReadOnly`]).
    pub fn tool_policy(mut self, policy: ToolPolicy) -> Self {
        self.tool_policy = policy;
        self
    }

    /// The provider ref.
    pub fn provider_ref(&self) -> &str {
        &self.provider_ref
    }

    /// The rounds bound.
    pub fn get_max_rounds(&self) -> u32 {
        self.max_rounds
    }
}

/// What the caller sees of a turn as it happens, in order. Every reference lives only for the
/// call of the callback; copy what you keep.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum TurnEvent<'a> {
    /// A turn-level point's chain ran (`input.receive` in round 0; `context.prepare`,
    /// `provider.request` and `provider.response` in each round): the payload it left, the
    /// trace, who blocked or replaced.
    Hook {
        /// The round (0 for `input.receive`).
        round: u32,
        /// The point.
        point: HookPoint,
        /// Its outcome.
        outcome: &'a Outcome,
    },
    /// The request about to be streamed (after `provider.request`).
    Request {
        /// The round, from 1.
        round: u32,
        /// The request.
        request: &'a ProviderRequest,
    },
    /// A chunk of the provider's stream, as it arrived.
    Chunk {
        /// The round.
        round: u32,
        /// The chunk (never an `error` chunk: a failure ends the turn with an error; never
        /// the chunk that takes the round's answer past [`Agent::max_response_bytes`]: that
        /// ends the turn with [`Error::ResponseTooLarge`] unseen).
        chunk: &'a ProviderChunk,
    },
    /// The answer the loop acts on (after `provider.response`).
    Response {
        /// The round.
        round: u32,
        /// The answer.
        response: &'a ProviderResponsePayload,
    },
    /// A tool call ended (ran, or stopped).
    ToolCall {
        /// The round.
        round: u32,
        /// What it did.
        report: &'a ToolCallReport,
    },
}

/// Why a turn ended (when it did not fail).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnEnd {
    /// The model answered without asking for a tool.
    Answered,
    /// A chain member blocked at `point` (`input.receive`, `context.prepare`,
    /// `provider.request` or `provider.response`).
    Blocked {
        /// The point.
        point: HookPoint,
        /// The plugin that blocked.
        plugin: String,
        /// Its redacted reason (may be empty).
        reason: String,
    },
    /// The model still asked for tools in the last round allowed; its calls ran, and their
    /// results are in the conversation for the next turn.
    RoundLimit {
        /// The bound reached.
        rounds: u32,
    },
}

impl TurnEnd {
    /// A short, stable name: `answered`, `blocked`, `round_limit`.
    pub fn as_str(&self) -> &'static str {
        match self {
            TurnEnd::Answered => "answered",
            TurnEnd::Blocked { .. } => "blocked",
            TurnEnd::RoundLimit { .. } => "round_limit",
        }
    }
}

/// What a turn did.
#[derive(Debug)]
#[non_exhaustive]
pub struct TurnReport {
    /// The input as the model got it (after `input.receive`; as typed when it was blocked).
    pub input: String,
    /// The text of the last answer (empty when no round answered).
    pub answer: String,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallReport>,
    /// The rounds run (provider requests made).
    pub rounds: u32,
    /// The usage of every round, summed (`finishReason` the last round's).
    pub usage: Option<ProviderUsage>,
    /// Why the turn ended.
    pub end: TurnEnd,
}

/// Where the answers come from: the provider stream of the turn's generation, or a fake in
/// tests.
pub(crate) trait Model: Sync {
    /// The stream of one request.
    type Stream: Stream<Item = Result<ProviderChunk, sidewire_ext_host::Error>> + Send;
    /// Opens a stream for `request`.
    fn open(
        &self,
        request: ProviderRequest,
    ) -> impl Future<Output = Result<Self::Stream, sidewire_ext_host::Error>> + Send;
}

/// The callback, type-erased so the loop is compiled once.
type OnEvent<'f> = dyn FnMut(TurnEvent<'_>) + Send + 'f;

/// The turn loop over any [`Model`] and [`ToolHost`].
pub(crate) async fn run<M: Model, T: ToolHost>(
    agent: &Agent,
    turn: &Turn,
    model: &M,
    tools: &T,
    conversation: &mut Conversation,
    input: &str,
    on_event: &mut OnEvent<'_>,
) -> Result<TurnReport, Error> {
    let mut report = TurnReport {
        input: input.to_owned(),
        answer: String::new(),
        tool_calls: Vec::new(),
        rounds: 0,
        usage: None,
        end: TurnEnd::Answered,
    };
    let payload = HookPayload::Input(InputPayload {
        text: input.to_owned(),
    });
    let outcome = intercept(turn, 0, HookPoint::InputReceive, payload, on_event).await?;
    if let Some(end) = blocked(HookPoint::InputReceive, &outcome) {
        report.end = end;
        return Ok(report);
    }
    if let HookPayload::Input(p) = outcome.payload {
        report.input = p.text;
    }
    let schemas = tools.schemas();
    turn.event(
        HookPoint::AgentBeforeStart,
        &HookPayload::AgentStart(AgentStartPayload {
            model: agent.provider_ref.clone(),
            tool_count: Some(schemas.len() as u64),
            session_id: agent.session_id.clone(),
        }),
    );
    frontend_event(turn, "turn_started", &report.input, "");
    // This turn's messages, appended to the conversation only when the turn ends (so a failed
    // or dropped turn leaves it unchanged).
    let mut added = vec![ProviderMessage {
        role: Some(ProviderRole::User),
        content: report.input.clone(),
        ..ProviderMessage::default()
    }];
    let env = Env {
        agent,
        turn,
        model,
        tools,
        schemas: &schemas,
    };
    let result = rounds(&env, conversation, &mut added, &mut report, on_event).await;
    match &result {
        Ok(()) => {
            conversation.extend(added);
            frontend_event(turn, "turn_finished", &report.answer, report.end.as_str());
        }
        Err(_) => frontend_event(turn, "turn_finished", "", "failed"),
    }
    result.map(|()| report)
}

/// What the rounds of one turn run against.
struct Env<'a, M, T> {
    agent: &'a Agent,
    turn: &'a Turn,
    model: &'a M,
    tools: &'a T,
    /// The tools offered, listed once per turn.
    schemas: &'a [ProviderToolSchema],
}

/// The rounds of a turn whose input was accepted: each appends its answer and tool results
/// to `added` and what it did to `report`.
async fn rounds<M: Model, T: ToolHost>(
    env: &Env<'_, M, T>,
    conversation: &Conversation,
    added: &mut Vec<ProviderMessage>,
    report: &mut TurnReport,
    on_event: &mut OnEvent<'_>,
) -> Result<(), Error> {
    let Env {
        agent,
        turn,
        model,
        schemas,
        ..
    } = *env;
    for round in 1..=agent.max_rounds {
        report.rounds = round;
        let messages: Vec<ProviderMessage> = conversation
            .messages()
            .chain(added.iter())
            .cloned()
            .collect();
        let payload = HookPayload::Context(ContextPayload { messages });
        let outcome = intercept(turn, round, HookPoint::ContextPrepare, payload, on_event).await?;
        if let Some(end) = blocked(HookPoint::ContextPrepare, &outcome) {
            report.end = end;
            return Ok(());
        }
        let HookPayload::Context(ContextPayload { messages }) = outcome.payload else {
            unreachable!("the host keeps a point's payload type")
        };
        let request = ProviderRequest {
            messages,
            tools: schemas.to_vec(),
            temperature: None,
            max_tokens: agent.max_tokens,
            response_format: None,
        };
        let payload = HookPayload::ProviderRequest(ProviderRequestPayload { request });
        let outcome = intercept(turn, round, HookPoint::ProviderRequest, payload, on_event).await?;
        if let Some(end) = blocked(HookPoint::ProviderRequest, &outcome) {
            report.end = end;
            return Ok(());
        }
        let HookPayload::ProviderRequest(ProviderRequestPayload { request }) = outcome.payload
        else {
            unreachable!("the host keeps a point's payload type")
        };
        on_event(TurnEvent::Request {
            round,
            request: &request,
        });
        let response = stream(agent, model, request, round, on_event).await?;
        let payload = HookPayload::ProviderResponse(response);
        let outcome =
            intercept(turn, round, HookPoint::ProviderResponse, payload, on_event).await?;
        if let Some(end) = blocked(HookPoint::ProviderResponse, &outcome) {
            report.end = end;
            return Ok(());
        }
        let HookPayload::ProviderResponse(response) = outcome.payload else {
            unreachable!("the host keeps a point's payload type")
        };
        on_event(TurnEvent::Response {
            round,
            response: &response,
        });
        add_usage(&mut report.usage, response.usage.as_ref());
        report.answer.clone_from(&response.text);
        let calls = response.calls;
        added.push(ProviderMessage {
            role: Some(ProviderRole::Assistant),
            content: response.text,
            reasoning_content: response.reasoning,
            reasoning_signature: response.signature,
            tool_calls: calls.clone(),
            ..ProviderMessage::default()
        });
        if calls.is_empty() {
            report.end = TurnEnd::Answered;
            return Ok(());
        }
        call_tools(env, round, &calls, added, report, on_event).await;
    }
    report.end = TurnEnd::RoundLimit {
        rounds: agent.max_rounds,
    };
    Ok(())
}

/// Runs one answer's tool calls in order, each through the chain, and adds a `tool` message
/// for every call, run or not: a call without its result is a history no provider accepts.
async fn call_tools<M: Model, T: ToolHost>(
    env: &Env<'_, M, T>,
    round: u32,
    calls: &[ProviderToolCall],
    added: &mut Vec<ProviderMessage>,
    report: &mut TurnReport,
    on_event: &mut OnEvent<'_>,
) {
    let agent = env.agent;
    for (index, call) in calls.iter().enumerate() {
        // A call that does not run is reported with its arguments as the model wrote them.
        let unparsed = || {
            let arguments = serde_json::Value::String(call.arguments.clone());
            ToolCall::new(&call.id, &call.name, arguments)
        };
        let tool_report = if index >= agent.max_tool_calls {
            let limit = agent.max_tool_calls;
            ToolCallReport::stopped(unparsed(), ToolStop::TooMany { limit })
        } else {
            match tools::parse_arguments(&call.name, &call.arguments) {
                Ok(arguments) => {
                    let tool_call = ToolCall::new(&call.id, &call.name, arguments);
                    let options = ToolCallOptions::new();
                    tools::chained_call(env.turn, env.tools, tool_call, agent.tool_policy, options)
                        .await
                }
                Err(stop) => ToolCallReport::stopped(unparsed(), stop),
            }
        };
        on_event(TurnEvent::ToolCall {
            round,
            report: &tool_report,
        });
        let (text, _is_error) = tool_report.model_text();
        added.push(ProviderMessage {
            role: Some(ProviderRole::Tool),
            content: cut(text, agent.max_tool_result_bytes),
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            ..ProviderMessage::default()
        });
        report.tool_calls.push(tool_report);
    }
}

/// Streams one request, handing each chunk to the caller, and collects the answer.
async fn stream<M: Model>(
    agent: &Agent,
    model: &M,
    request: ProviderRequest,
    round: u32,
    on_event: &mut OnEvent<'_>,
) -> Result<ProviderResponsePayload, Error> {
    let provider = |source| Error::Provider {
        provider_ref: agent.provider_ref.clone(),
        source: Box::new(source),
    };
    let stream = model.open(request).await.map_err(provider)?;
    let mut stream: Pin<Box<M::Stream>> = Box::pin(stream);
    let mut collector = ResponseCollector::new(agent.max_response_bytes);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(provider)?;
        // The bound is checked before the caller sees the chunk, so the chunk that takes the
        // answer past it (7 MiB of tool-call arguments, say) is never printed. Over the bound,
        // returning drops the stream, which cancels it.
        collector.push(&chunk)?;
        on_event(TurnEvent::Chunk {
            round,
            chunk: &chunk,
        });
    }
    Ok(collector.finish())
}

async fn intercept(
    turn: &Turn,
    round: u32,
    point: HookPoint,
    payload: HookPayload,
    on_event: &mut OnEvent<'_>,
) -> Result<Outcome, Error> {
    let outcome = turn
        .intercept(point, payload)
        .await
        .map_err(|source| Error::Hook {
            point,
            source: Box::new(source),
        })?;
    on_event(TurnEvent::Hook {
        round,
        point,
        outcome: &outcome,
    });
    Ok(outcome)
}

/// The end of the turn when `point`'s chain blocked.
fn blocked(point: HookPoint, outcome: &Outcome) -> Option<TurnEnd> {
    outcome.blocked.as_ref().map(|b| TurnEnd::Blocked {
        point,
        plugin: b.plugin.clone(),
        reason: b.reason.clone(),
    })
}

fn frontend_event(turn: &Turn, kind: &str, text: &str, detail: &str) {
    turn.event(
        HookPoint::FrontendEvent,
        &HookPayload::FrontendEvent(FrontendEventPayload {
            kind: kind.to_owned(),
            text: text.to_owned(),
            detail: detail.to_owned(),
        }),
    );
}

fn add_usage(total: &mut Option<ProviderUsage>, usage: Option<&ProviderUsage>) {
    let Some(usage) = usage else { return };
    let total = total.get_or_insert_with(ProviderUsage::default);
    total.prompt_tokens = total.prompt_tokens.saturating_add(usage.prompt_tokens);
    total.completion_tokens = total
        .completion_tokens
        .saturating_add(usage.completion_tokens);
    total.total_tokens = total.total_tokens.saturating_add(usage.total_tokens);
    total.cache_hit_tokens = total
        .cache_hit_tokens
        .saturating_add(usage.cache_hit_tokens);
    total.cache_miss_tokens = total
        .cache_miss_tokens
        .saturating_add(usage.cache_miss_tokens);
    total.reasoning_tokens = total
        .reasoning_tokens
        .saturating_add(usage.reasoning_tokens);
    total.finish_reason.clone_from(&usage.finish_reason);
}

/// `text` cut to at most `limit` bytes (at a character boundary), saying how much was cut.
pub(crate) fn cut(mut text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    let mut at = limit;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let more = text.len() - at;
    text.truncate(at);
    text.push_str(&format!("\n[{more} more bytes cut]"));
    text
}

#[cfg(test)]
mod tests;
