//! Printing a provider's stream and an agent turn as they happen: `ext complete`, `run --model`
//! and the demo's agent step.
//!
//! In text mode the answer is written chunk by chunk as it arrives, indented by two spaces
//! (a newline in the model's text starts an indented line, so the model cannot fake a line of
//! ours); reasoning goes on its own `thinking:` line, dimmed on a terminal; each tool call
//! prints a compact report (or the full one in the demo). With `--json` every event is one
//! JSON object on its own line. Everything a peer said goes through [`safe`].

use serde_json::{Value, json};
use sidewire_agent::{ToolCallReport, ToolStop, TurnEnd, TurnEvent, TurnReport};
use sidewire_ext_sdk::protocol::{ChunkType, HookPayload, HookPoint, ProviderChunk, ProviderUsage};

use crate::ext_cmd::{outcome_json, print_tool_call, tool_call_json};
use crate::out::Out;
use crate::safe;

/// What the current output line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Nothing: the next text starts a line.
    Start,
    /// The `thinking:` line.
    Reasoning,
    /// The answer.
    Text,
}

/// Writes chunks as they arrive (text mode; nothing with `--json`).
#[derive(Debug)]
pub(crate) struct ChunkPrinter<'a> {
    out: &'a Out,
    line: Line,
}

impl<'a> ChunkPrinter<'a> {
    pub(crate) fn new(out: &'a Out) -> Self {
        ChunkPrinter {
            out,
            line: Line::Start,
        }
    }

    /// Prints `chunk`: text and reasoning as they come, a complete tool call on a line of its
    /// own. Usage and progress chunks print nothing (the caller prints usage at the end).
    pub(crate) fn chunk(&mut self, chunk: &ProviderChunk) {
        match chunk.kind {
            ChunkType::Reasoning => {
                if self.line != Line::Reasoning {
                    self.end_line();
                    self.out.stream("  thinking: ", true);
                    self.line = Line::Reasoning;
                }
                self.out.stream(&safe::block(&chunk.text, "    "), true);
            }
            ChunkType::Text => {
                if self.line != Line::Text {
                    self.end_line();
                    self.out.stream("  ", false);
                    self.line = Line::Text;
                }
                self.out.stream(&safe::block(&chunk.text, "  "), false);
            }
            ChunkType::ToolCall => {
                if let Some(call) = &chunk.tool_call {
                    self.end_line();
                    self.out.line(format!(
                        "  asks for {} {}",
                        safe::line(&call.name),
                        arguments_preview(&call.arguments)
                    ));
                }
            }
            _ => {}
        }
    }

    /// Ends a line the stream left open.
    pub(crate) fn end_line(&mut self) {
        if self.line != Line::Start {
            self.out.stream("\n", false);
            self.line = Line::Start;
        }
    }
}

/// At most this many characters of a tool call's arguments are printed in text mode: they may
/// be as large as the answer's bound (`Agent::max_response_bytes`, 1 MiB), which is no line for
/// a person. `--json` keeps them whole.
pub(crate) const ARGUMENTS_PREVIEW_CHARS: usize = 200;

/// A tool call's `arguments` for one line: escaped, and past [`ARGUMENTS_PREVIEW_CHARS`]
/// characters cut, saying how many bytes the whole has.
pub(crate) fn arguments_preview(arguments: &str) -> String {
    match arguments.char_indices().nth(ARGUMENTS_PREVIEW_CHARS) {
        None => safe::line(arguments).into_owned(),
        Some((at, _)) => format!(
            "{}... ({} bytes in all)",
            safe::line(&arguments[..at]),
            arguments.len()
        ),
    }
}

/// `usage: 3 prompt + 8 completion = 11 tokens (stop)`.
pub(crate) fn usage_line(usage: &ProviderUsage) -> String {
    let finish = if usage.finish_reason.is_empty() {
        String::new()
    } else {
        format!(" ({})", safe::line(&usage.finish_reason))
    };
    format!(
        "  usage: {} prompt + {} completion = {} tokens{finish}",
        usage.prompt_tokens, usage.completion_tokens, usage.total_tokens
    )
}

/// Prints an agent turn's events as they come.
#[derive(Debug)]
pub(crate) struct TurnPrinter<'a> {
    out: &'a Out,
    chunks: ChunkPrinter<'a>,
    /// Print each tool call's whole report (the demo) instead of one line.
    detailed: bool,
}

impl<'a> TurnPrinter<'a> {
    pub(crate) fn new(out: &'a Out, detailed: bool) -> Self {
        TurnPrinter {
            out,
            chunks: ChunkPrinter::new(out),
            detailed,
        }
    }

    /// One event: a JSON line with `--json`, else text.
    pub(crate) fn event(&mut self, event: &TurnEvent<'_>) {
        if self.out.json {
            self.out.json_line(&event_json(event));
            return;
        }
        match *event {
            TurnEvent::Hook { point, outcome, .. } => {
                if let Some(blocked) = &outcome.blocked {
                    self.chunks.end_line();
                    self.out.line(format!(
                        "  {} blocked by {}: {}",
                        point.as_str(),
                        safe::line(&blocked.plugin),
                        safe::line(&blocked.reason)
                    ));
                } else if point == HookPoint::InputReceive
                    && let HookPayload::Input(input) = &outcome.payload
                {
                    let rewritten = if outcome.applied.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (rewritten by {})",
                            safe::line(&outcome.applied.join(", "))
                        )
                    };
                    self.out
                        .line(format!("> {}{rewritten}", safe::block(&input.text, "  ")));
                } else if !outcome.applied.is_empty() {
                    self.chunks.end_line();
                    self.out.line(format!(
                        "  {} replaced by {}",
                        point.as_str(),
                        safe::line(&outcome.applied.join(", "))
                    ));
                }
            }
            TurnEvent::Chunk { chunk, .. } => self.chunks.chunk(chunk),
            TurnEvent::ToolCall { report, .. } => {
                self.chunks.end_line();
                if self.detailed {
                    print_tool_call(self.out, report);
                } else {
                    self.out.line(compact_tool_call(report));
                }
            }
            TurnEvent::Response { .. } | TurnEvent::Request { .. } => self.chunks.end_line(),
            _ => {}
        }
    }

    /// The turn's end: why, and the usage (a JSON line with `--json`).
    pub(crate) fn finish(&mut self, report: &TurnReport) {
        self.chunks.end_line();
        if self.out.json {
            self.out.json_line(&turn_json(report));
            return;
        }
        match &report.end {
            TurnEnd::Answered => {}
            TurnEnd::Blocked { .. } => self.out.line("  (the turn was blocked)"),
            TurnEnd::RoundLimit { rounds } => self.out.line(format!(
                "  (stopped after {rounds} rounds: the model still asked for tools)"
            )),
            _ => self.out.line(format!("  (ended: {})", report.end.as_str())),
        }
        if let Some(usage) = &report.usage {
            self.out.line(usage_line(usage));
        }
    }

    /// Ends a line the stream left open (before an error is printed).
    pub(crate) fn end_line(&mut self) {
        self.chunks.end_line();
    }
}

/// One line for a tool call: what was called, the permission, and the result or why not.
pub(crate) fn compact_tool_call(report: &ToolCallReport) -> String {
    let permission = match (&report.policy, &report.permission) {
        (Some(policy), Some(outcome)) => {
            let by = outcome
                .trace
                .iter()
                .map(|t| safe::line(&t.plugin).into_owned())
                .collect::<Vec<_>>();
            let verdict = outcome.permission.map_or("?", |v| v.as_str());
            if by.is_empty() {
                format!(" [{verdict}]")
            } else {
                format!(
                    " [host {}, {verdict} after {}]",
                    policy.decision.as_str(),
                    by.join(", ")
                )
            }
        }
        _ => String::new(),
    };
    let outcome = match (&report.stop, &report.result) {
        (None, Some(result)) => format!(
            "{} {}",
            if result.is_error { "-> error:" } else { "->" },
            safe::line(&result.text.join(" "))
        ),
        (
            Some(ToolStop::Blocked {
                point,
                plugin,
                reason,
            }),
            _,
        ) => format!(
            "blocked at {} by {}: {}",
            point.as_str(),
            safe::line(plugin),
            safe::line(reason)
        ),
        (Some(ToolStop::Denied), _) => "denied".to_owned(),
        (Some(ToolStop::UnknownTool), _) => "no such tool".to_owned(),
        (Some(ToolStop::TooMany { limit }), _) => format!("not run (more than {limit} calls)"),
        (Some(ToolStop::Failed(err)), _) => {
            format!("failed: {}", safe::line(&sidewire_mcp::error_line(err)))
        }
        _ => String::new(),
    };
    format!(
        "  tool {} {}{permission} {outcome}",
        safe::line(&report.tool),
        arguments_preview(&report.arguments.to_string())
    )
}

/// A turn event as JSON.
fn event_json(event: &TurnEvent<'_>) -> Value {
    match *event {
        TurnEvent::Hook {
            round,
            point,
            outcome,
        } => json!({
            "event": "hook", "round": round, "point": point.as_str(), "outcome": outcome_json(outcome),
        }),
        TurnEvent::Request { round, request } => {
            json!({ "event": "request", "round": round, "request": request })
        }
        TurnEvent::Chunk { round, chunk } => {
            json!({ "event": "chunk", "round": round, "chunk": chunk })
        }
        TurnEvent::Response { round, response } => {
            json!({ "event": "response", "round": round, "response": response })
        }
        TurnEvent::ToolCall { round, report } => {
            json!({ "event": "toolCall", "round": round, "report": tool_call_json(report) })
        }
        _ => json!({ "event": "unknown" }),
    }
}

/// A turn's report as JSON (its tool calls were events already).
pub(crate) fn turn_json(report: &TurnReport) -> Value {
    let end = match &report.end {
        TurnEnd::Blocked {
            point,
            plugin,
            reason,
        } => {
            json!({ "kind": "blocked", "point": point.as_str(), "plugin": plugin, "reason": reason })
        }
        TurnEnd::RoundLimit { rounds } => json!({ "kind": "round_limit", "rounds": rounds }),
        other => json!({ "kind": other.as_str() }),
    };
    json!({
        "event": "turn",
        "input": report.input,
        "answer": report.answer,
        "rounds": report.rounds,
        "toolCalls": report.tool_calls.len(),
        "usage": report.usage,
        "end": end,
    })
}

#[cfg(test)]
mod tests;
