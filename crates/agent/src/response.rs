//! Assembling one round's streamed chunks into the `provider.response` payload, under a byte
//! bound.
//!
//! Text and reasoning chunks are appended in order; a `tool_call` chunk is a complete call
//! (the `tool_call_start` and `tool_call_args_delta` chunks before it are progress only); the
//! last `usage` chunk wins; `done` adds nothing. An `error` chunk never reaches here: the host
//! turns it into the stream's failure.

use sidewire_ext_host::protocol::{ChunkType, ProviderChunk, ProviderResponsePayload};

use crate::error::Error;

/// One round's answer as it streams in, under a byte bound: how a turn collects the answer and
/// stops it at [`Agent::max_response_bytes`](crate::Agent::max_response_bytes), for callers that
/// read a provider stream themselves (`sidewire ext complete`) and want the same bound.
#[derive(Debug)]
pub struct ResponseCollector {
    response: ProviderResponsePayload,
    /// Bytes of text, reasoning, signatures and tool calls so far.
    bytes: usize,
    limit: usize,
}

impl ResponseCollector {
    /// A collector that fails once the answer holds more than `limit` bytes
    /// ([`Agent::DEFAULT_MAX_RESPONSE_BYTES`](crate::Agent::DEFAULT_MAX_RESPONSE_BYTES) is a
    /// turn's default).
    pub fn new(limit: usize) -> Self {
        ResponseCollector {
            response: ProviderResponsePayload::default(),
            bytes: 0,
            limit,
        }
    }

    /// Adds a chunk. Check it before showing the chunk to anyone: the chunk that takes the
    /// answer past the bound is the one not to print.
    ///
    /// # Errors
    ///
    /// [`Error::ResponseTooLarge`] once the answer grows past the bound (that chunk is counted
    /// but the caller should drop the stream, which cancels it).
    pub fn push(&mut self, chunk: &ProviderChunk) -> Result<(), Error> {
        let response = &mut self.response;
        let added = match chunk.kind {
            ChunkType::Text => {
                response.text.push_str(&chunk.text);
                chunk.text.len()
            }
            ChunkType::Reasoning => {
                response.reasoning.push_str(&chunk.text);
                response.signature.push_str(&chunk.signature);
                chunk.text.len() + chunk.signature.len()
            }
            ChunkType::ToolCall => match &chunk.tool_call {
                Some(call) => {
                    response.calls.push(call.clone());
                    call.id.len() + call.name.len() + call.arguments.len()
                }
                None => 0,
            },
            ChunkType::Usage => {
                response.usage.clone_from(&chunk.usage);
                0
            }
            // Progress of a call that a `tool_call` chunk completes; the end; and a failure,
            // which the host never hands out as a chunk.
            ChunkType::ToolCallStart
            | ChunkType::ToolCallArgsDelta
            | ChunkType::Done
            | ChunkType::Error => 0,
        };
        self.bytes = self.bytes.saturating_add(added);
        if self.bytes > self.limit {
            return Err(Error::ResponseTooLarge { limit: self.limit });
        }
        Ok(())
    }

    /// The answer so far.
    pub fn response(&self) -> &ProviderResponsePayload {
        &self.response
    }

    /// The answer.
    pub fn finish(self) -> ProviderResponsePayload {
        self.response
    }
}

#[cfg(test)]
mod tests;
