#![doc = include_str!("../README.md")]
//!
//! # Main types
//!
//! [`Agent`] (the loop's settings; [`Agent::run_turn`] runs one turn), [`Conversation`] (the
//! messages a caller keeps across turns, bounded), [`TurnEvent`] (the turn as it happens),
//! [`TurnReport`] (what it did and why it ended) and [`chained_tool_call`] of a [`ToolCall`],
//! with its [`ToolCallReport`] (one tool call through the permission chain, also usable alone,
//! as the CLI's `/call` does).
//!
//! # A turn
//!
//! It is the seed host's loop in miniature. A turn goes through the points in the spec's order:
//!
//! 1. `input.receive`: a block ends the turn; a replacement's text is what the model gets.
//!    Then the events `agent.before_start` and `frontend.event` (`turn_started`).
//! 2. Each round: `context.prepare` (the conversation so far and this turn's messages; a
//!    replacement becomes the messages of this round's request, the conversation itself is not
//!    rewritten) → `provider.request` (the messages, the MCP tools as `ProviderToolSchema`s
//!    under the host's namespaced names with their input schemas, `maxTokens`; replaceable) →
//!    the provider's stream, each chunk handed to the caller as it arrives →
//!    `provider.response` (text, reasoning, calls, usage; replaceable).
//! 3. No tool calls: the turn has its answer. Otherwise each call goes `tool.before` →
//!    `permission.decision` (the host's verdict from a [`ToolPolicy`]) → the MCP call →
//!    `tool.after`, whose result goes back to the model as a `tool` message with the call's
//!    `tool_call_id`, and the next round starts. After the last round allowed (default 8) the
//!    turn ends with [`TurnEnd::RoundLimit`] instead of going on.
//! 4. The event `frontend.event` (`turn_finished`, the answer as `text`, the end as `detail`:
//!    `answered`, `blocked`, `round_limit`, or `failed` for a turn that ends in an error; none
//!    for a turn whose future was dropped, nor for one blocked at `input.receive`, which never
//!    started).
//!
//! A turn pins one generation of the extension host for its whole life (§13.3): every
//! intercept, event and stream of the turn, its tool calls included, goes to the same
//! sidecars even if a reload is requested meanwhile.
//!
//! # How the caller sees the turn
//!
//! [`Agent::run_turn`] takes a callback, `FnMut(TurnEvent<'_>)`, rather than returning a
//! channel. The loop never spawns, so a channel would need a second task (or a `select!`) on
//! the caller's side to drain it while the turn's future runs, and a bound with a policy for
//! when it is full; a callback runs inside the turn's own poll, in order, with nothing queued.
//! Backpressure is then natural: a slow printer slows the loop, and the provider's chunks wait
//! in the host's bounded stream. Events borrow the loop's data, so nothing is cloned for a
//! caller that does not keep it. A callback must not block for long; one that needs to await
//! hands the event to its own channel.
//!
//! # Bounds
//!
//! Rounds per turn ([`Agent::max_rounds`], 8), tool calls run per round
//! ([`Agent::max_tool_calls`], 16), one round's answer ([`Agent::max_response_bytes`], 1 MiB:
//! past it the stream is cancelled and the turn fails), one tool result as the model is told
//! it ([`Agent::max_tool_result_bytes`], 64 KiB, cut), and the [`Conversation`] (512 messages
//! and 4 MiB by default; the oldest exchanges go first). A turn's own messages are therefore
//! bounded by rounds × (answer + calls × result).
//!
//! # What it does not do
//!
//! It does not compact conversations (`compaction.*`), build system prompts
//! (`system_prompt.build`) or run tool calls in parallel.
//!
//! # Cancel safety
//!
//! Every `pub async fn` documents its own. Dropping a turn drops its provider stream (the host
//! sends the sidecar `stream/cancel`) and cancels the intercept or MCP call in flight; the
//! conversation is left as it was before the turn.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod conversation;
mod error;
mod hooks;
mod host_model;
mod response;
mod tools;
mod turn;

#[cfg(test)]
mod testing;

pub use crate::conversation::Conversation;
pub use crate::error::Error;
pub use crate::hooks::HooksMember;
pub use crate::response::ResponseCollector;
pub use crate::tools::{
    HostPolicy, PolicyReason, ToolCall, ToolCallReport, ToolPolicy, ToolResult, ToolStop,
    chained_tool_call, chained_tool_call_to,
};
pub use crate::turn::{Agent, TurnEnd, TurnEvent, TurnReport};
