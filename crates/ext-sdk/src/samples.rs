//! The sample extensions behind `examples/`, as library code so that other crates can embed
//! them (the `sidewire` CLI ships starter and allow-all as a built-in sidecar; ext-host's tests
//! run the built examples as real processes).
//!
//! Each function returns a ready [`Extension`]; the example binaries only serve it. Read them
//! as the reference for writing a sidecar: each is a few lines of the public API and nothing
//! else. The pure parts (the starter rewrite) are separate functions so they are testable on
//! their own. These are demonstrations, not policy: allow-all approves every tool call.
//!
//! Behind the `samples` feature (off by default): the examples require it, and the crate's own
//! tests, ext-host's tests and the CLI enable it.
//!
//! The scripted model has a twin in Python (stdlib only, a complete v1 provider that the
//! conformance kit passes): ext-host's test fixture `tests/fixtures/python_provider/`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sidewire_ext_protocol::{
    ChunkType, ENV_PLUGIN_NAME, InputPayload, PermissionPayload, ProviderChunk, ProviderDescriptor,
    ProviderRequest, ProviderRole, ProviderToolCall, ProviderUsage, Severity, StatusPayload,
    StreamOpenParams, UiActionResult, Verdict,
};

use crate::point::{self, Decision};
use crate::{ChunkStream, Extension, HostHandle, Provider, StreamContext};

/// The starter extension's plugin id (its manifest `name`).
pub const STARTER_NAME: &str = "starter-extension";
/// The allow-all extension's plugin id.
pub const ALLOW_ALL_NAME: &str = "allow-all";
/// The status-card extension's plugin id.
pub const STATUS_CARD_NAME: &str = "status-card";
/// The version every sample reports; the examples' manifests carry the same.
pub const SAMPLE_VERSION: &str = "0.1.0";

/// The input prefix the starter extension rewrites.
pub const STARTER_PREFIX: &str = "starter: ";
/// What the starter extension appends to a rewritten input.
pub const STARTER_SUFFIX: &str = " [rewritten by starter-extension]";

/// The starter rewrite: text starting with `starter: ` loses the prefix and gains
/// ` [rewritten by starter-extension]`; other text is left alone (`None`).
pub fn starter_rewrite(text: &str) -> Option<String> {
    text.strip_prefix(STARTER_PREFIX)
        .map(|rest| format!("{rest}{STARTER_SUFFIX}"))
}

/// `starter-extension`: intercepts `input.receive` and applies [`starter_rewrite`].
pub fn starter() -> Extension {
    Extension::new(STARTER_NAME, SAMPLE_VERSION).on_intercept(
        point::INPUT_RECEIVE,
        |_ctx, input: InputPayload| async move {
            Ok(match starter_rewrite(&input.text) {
                Some(text) => Decision::Replace(InputPayload { text }),
                None => Decision::Continue,
            })
        },
    )
}

/// `allow-all`: answers `allow` at `permission.decision`. Should the host call it as the
/// owner of the `permission` slot (it claims none, but a manifest could be edited), it
/// replaces the payload with `hostDecision: allow` instead, the owner's way of deciding.
pub fn allow_all() -> Extension {
    Extension::new(ALLOW_ALL_NAME, SAMPLE_VERSION).on_intercept(
        point::PERMISSION_DECISION,
        |ctx, payload: PermissionPayload| async move {
            if ctx.is_strategy_call() {
                return Ok(Decision::Replace(PermissionPayload {
                    host_decision: Verdict::Allow,
                    ..payload
                }));
            }
            Ok(Decision::Allow(
                "allowed by the allow-all extension".to_owned(),
            ))
        },
    )
}

/// The text-tools extension's plugin id.
pub const TEXT_TOOLS_NAME: &str = "text-tools";
/// The text-tools extension's read-only tool: the number of words of `text`.
pub const WORD_COUNT_TOOL: &str = "word_count";
/// The text-tools extension's other tool: `text` with its words in reverse order.
pub const REVERSE_WORDS_TOOL: &str = "reverse_words";

/// `text-tools`: two extension tools (Extension Protocol v2 only; manifest capability `tools`
/// and both under `runtime.tools`), each taking `{"text": "…"}`: `word_count` answers the
/// number of words, `reverse_words` the words in reverse order. Arguments without a string
/// `text` are a tool error (`isError`), not a protocol error.
pub fn text_tools() -> Extension {
    fn text(arguments: &serde_json::Value) -> Result<&str, crate::Error> {
        arguments["text"]
            .as_str()
            .ok_or_else(|| crate::Error::callback("the arguments need a string member \"text\""))
    }
    Extension::new(TEXT_TOOLS_NAME, SAMPLE_VERSION)
        .tool(WORD_COUNT_TOOL, |_host, arguments| async move {
            Ok(text(&arguments)?.split_whitespace().count().to_string())
        })
        .tool(REVERSE_WORDS_TOOL, |_host, arguments| async move {
            let words: Vec<&str> = text(&arguments)?.split_whitespace().rev().collect();
            Ok(words.join(" "))
        })
}

/// The surface id of the status-card extension's status line.
pub const STATUS_SURFACE: &str = "status";
/// The status-card extension's action id.
pub const REFRESH_ACTION: &str = "refresh";

/// `status-card`: publishes a status surface as soon as the connection is ready, and offers a
/// `refresh` action that publishes it again with a count.
pub fn status_card() -> Extension {
    let refreshes = Arc::new(AtomicU64::new(0));
    Extension::new(STATUS_CARD_NAME, SAMPLE_VERSION)
        .on_ready(|host| async move {
            publish_status(&host, "status-card ready").await?;
            Ok(())
        })
        .on_action(REFRESH_ACTION, "Refresh", move |host, _params| {
            let refreshes = Arc::clone(&refreshes);
            async move {
                let n = refreshes.fetch_add(1, Ordering::Relaxed) + 1;
                let accepted = publish_status(&host, &format!("refreshed {n} times")).await?;
                Ok(UiActionResult {
                    accepted,
                    message: String::new(),
                })
            }
        })
}

async fn publish_status(host: &HostHandle, label: &str) -> Result<bool, crate::Error> {
    let status = StatusPayload {
        label: label.to_owned(),
        severity: Some(Severity::Info),
        ..StatusPayload::default()
    };
    host.publish(STATUS_SURFACE, status).await
}

/// The scripted model's plugin id (its example's manifest `name`).
pub const SCRIPTED_MODEL_NAME: &str = "scripted-model";
/// The provider and model parts of the scripted model's ref,
/// `plugin/<pluginId>/scripted/echo-1`.
pub const SCRIPTED_PROVIDER_MODEL: &str = "scripted/echo-1";
/// The id of the scripted model's one tool call.
pub const SCRIPTED_CALL_ID: &str = "call-1";

/// A deterministic local "model", with no network: it answers from the request alone.
///
/// * When the last message is a tool result (`role: tool`), it answers
///   `The tool said: <content>.` word by word as `text` chunks.
/// * When the last user message contains the words `add A and B` (two integers) and a tool
///   whose name ends in `add` is offered, it emits a `reasoning` chunk, then
///   `tool_call_start`, `tool_call_args_delta` and `tool_call` (id `call-1`, arguments
///   `{"a":A,"b":B}`).
/// * Otherwise it emits a `reasoning` chunk, then `You said: <last user message>` word by
///   word as `text` chunks.
///
/// Every answer ends with a `usage` chunk (words counted as tokens) and `done`. The logic is
/// [`scripted_chunks`], a pure function; this type only serves it.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    plugin_id: String,
}

impl ScriptedModel {
    /// The scripted model of plugin `plugin_id`: its one ref is
    /// `plugin/<plugin_id>/scripted/echo-1`.
    pub fn new(plugin_id: impl Into<String>) -> Self {
        ScriptedModel {
            plugin_id: plugin_id.into(),
        }
    }

    /// The scripted model of the plugin the host launched (`REASONIX_PLUGIN_NAME`), or of
    /// `fallback` when the variable is not set.
    pub fn from_env(fallback: &str) -> Self {
        let plugin_id = std::env::var(ENV_PLUGIN_NAME)
            .ok()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| fallback.to_owned());
        ScriptedModel::new(plugin_id)
    }

    /// Its one provider ref.
    pub fn provider_ref(&self) -> String {
        format!("plugin/{}/{SCRIPTED_PROVIDER_MODEL}", self.plugin_id)
    }

    /// Its one catalog entry.
    pub fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor {
            reference: self.provider_ref(),
            display_name: "Scripted echo model (local, deterministic)".to_owned(),
            model: "echo-1".to_owned(),
            tools: Some(true),
            reasoning: Some(true),
            ..ProviderDescriptor::default()
        }
    }
}

impl Provider for ScriptedModel {
    async fn catalog(&self, _host: &HostHandle) -> Result<Vec<ProviderDescriptor>, crate::Error> {
        Ok(vec![self.descriptor()])
    }

    async fn open(
        &self,
        _ctx: StreamContext,
        params: StreamOpenParams,
    ) -> Result<ChunkStream, crate::Error> {
        let chunks = scripted_chunks(&params.request);
        Ok(Box::pin(futures_util::stream::iter(
            chunks.into_iter().map(Ok),
        )))
    }
}

/// `scripted-model`: serves [`ScriptedModel`] (manifest capability `providers`); its plugin id
/// is `REASONIX_PLUGIN_NAME`, or `scripted-model`.
pub fn scripted_model() -> Extension {
    Extension::new(SCRIPTED_MODEL_NAME, SAMPLE_VERSION)
        .provider(ScriptedModel::from_env(SCRIPTED_MODEL_NAME))
}

/// The scripted model's answer to `request`, chunk by chunk (see [`ScriptedModel`]).
pub fn scripted_chunks(request: &ProviderRequest) -> Vec<ProviderChunk> {
    let prompt_tokens: usize = request
        .messages
        .iter()
        .map(|m| m.content.split_whitespace().count())
        .sum();
    let mut chunks = Vec::new();
    let mut reasoning_tokens = 0;
    let finish;
    let last = request.messages.last();
    let last_user = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Some(ProviderRole::User))
        .map_or("", |m| m.content.as_str());
    if let Some(tool) = last.filter(|m| m.role == Some(ProviderRole::Tool)) {
        words(
            &mut chunks,
            &format!("The tool said: {}.", tool.content.trim()),
        );
        finish = "stop";
    } else if let Some(((a, b), tool)) = addition(last_user).zip(
        request
            .tools
            .iter()
            .find(|t| t.name.ends_with("add"))
            .map(|t| t.name.as_str()),
    ) {
        let thought = format!("The user wants {a} + {b}; I will call {tool}.");
        reasoning_tokens = thought.split_whitespace().count();
        chunks.push(text_chunk(ChunkType::Reasoning, thought));
        let arguments = format!("{{\"a\":{a},\"b\":{b}}}");
        let call = |arguments: String| ProviderToolCall {
            id: SCRIPTED_CALL_ID.to_owned(),
            name: tool.to_owned(),
            arguments,
            thought_signature: String::new(),
        };
        let mut start = ProviderChunk::new(ChunkType::ToolCallStart);
        start.tool_call = Some(call(String::new()));
        let mut delta = ProviderChunk::new(ChunkType::ToolCallArgsDelta);
        delta.arg_chars = Some(arguments.chars().count() as u64);
        let mut complete = ProviderChunk::new(ChunkType::ToolCall);
        complete.tool_call = Some(call(arguments));
        chunks.extend([start, delta, complete]);
        finish = "tool_calls";
    } else {
        let thought = "The user said something; I will echo it.".to_owned();
        reasoning_tokens = thought.split_whitespace().count();
        chunks.push(text_chunk(ChunkType::Reasoning, thought));
        words(&mut chunks, &format!("You said: {}", last_user.trim()));
        finish = "stop";
    }
    // Words answered, plus reasoning words, plus one for a tool call.
    let answered = chunks.iter().filter(|c| c.kind == ChunkType::Text).count();
    let calls = chunks
        .iter()
        .filter(|c| c.kind == ChunkType::ToolCall)
        .count();
    let completion_tokens = answered + reasoning_tokens + calls;
    let mut usage = ProviderChunk::new(ChunkType::Usage);
    usage.usage = Some(ProviderUsage {
        prompt_tokens: prompt_tokens as u64,
        completion_tokens: completion_tokens as u64,
        total_tokens: (prompt_tokens + completion_tokens) as u64,
        cache_hit_tokens: 0,
        cache_miss_tokens: prompt_tokens as u64,
        reasoning_tokens: reasoning_tokens as u64,
        finish_reason: finish.to_owned(),
    });
    chunks.push(usage);
    chunks.push(ProviderChunk::new(ChunkType::Done));
    chunks
}

/// `text` word by word as `text` chunks, each word after the first with its leading space, so
/// the chunks concatenate to the text with its spacing collapsed.
fn words(chunks: &mut Vec<ProviderChunk>, text: &str) {
    for (i, word) in text.split_whitespace().enumerate() {
        let piece = if i == 0 {
            word.to_owned()
        } else {
            format!(" {word}")
        };
        chunks.push(text_chunk(ChunkType::Text, piece));
    }
}

fn text_chunk(kind: ChunkType, text: String) -> ProviderChunk {
    let mut chunk = ProviderChunk::new(kind);
    chunk.text = text;
    chunk
}

/// The integers of the first `add A and B` in `text` (case-insensitive, punctuation around
/// the numbers ignored).
fn addition(text: &str) -> Option<(i64, i64)> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-')
                .to_lowercase()
        })
        .collect();
    words.windows(4).find_map(|w| match w {
        [add, a, and, b] if add == "add" && and == "and" => {
            Some((a.parse().ok()?, b.parse().ok()?))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests;
