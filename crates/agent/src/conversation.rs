//! The conversation a caller keeps across turns, bounded in messages and bytes.
//!
//! A turn reads the messages so far and, when it ends, appends what it added (the user's
//! input, the model's answers, the tool results). Past either bound the oldest messages go,
//! and then any messages up to the next `user` message, so the history always starts at a
//! user's input and never with a tool result whose call is gone.

use std::collections::VecDeque;

use sidewire_ext_host::protocol::{ProviderMessage, ProviderRole};

/// The messages of a conversation, oldest first, bounded in count and in bytes.
#[derive(Debug, Clone)]
pub struct Conversation {
    messages: VecDeque<ProviderMessage>,
    /// [`message_bytes`] of every message held.
    bytes: usize,
    max_messages: usize,
    max_bytes: usize,
    /// Messages dropped to keep the bounds, ever.
    dropped: u64,
}

impl Default for Conversation {
    fn default() -> Self {
        Conversation::new()
    }
}

impl Conversation {
    /// The default bound on messages held.
    pub const DEFAULT_MAX_MESSAGES: usize = 512;
    /// The default bound on bytes held (the text of the messages, see [`bytes`](Self::bytes)).
    pub const DEFAULT_MAX_BYTES: usize = 4 * 1024 * 1024;

    /// An empty conversation with the default bounds.
    pub fn new() -> Self {
        Conversation::with_limits(Self::DEFAULT_MAX_MESSAGES, Self::DEFAULT_MAX_BYTES)
    }

    /// An empty conversation holding at most `max_messages` messages and `max_bytes` bytes.
    pub fn with_limits(max_messages: usize, max_bytes: usize) -> Self {
        Conversation {
            messages: VecDeque::new(),
            bytes: 0,
            max_messages,
            max_bytes,
            dropped: 0,
        }
    }

    /// The messages, oldest first.
    pub fn messages(&self) -> impl ExactSizeIterator<Item = &ProviderMessage> + '_ {
        self.messages.iter()
    }

    /// How many messages it holds.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether it holds no message.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The bytes it holds: the text of every member of every message (content, reasoning,
    /// names, ids, tool-call arguments, images), not counting JSON punctuation.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many messages were dropped to keep the bounds, over its life.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Forgets every message.
    pub fn clear(&mut self) {
        self.messages.clear();
        self.bytes = 0;
    }

    /// Appends `messages`, then drops the oldest until both bounds hold and the first message
    /// is a user's (a turn larger than the bounds by itself leaves nothing of it).
    pub fn extend(&mut self, messages: impl IntoIterator<Item = ProviderMessage>) {
        for message in messages {
            self.bytes += message_bytes(&message);
            self.messages.push_back(message);
        }
        let mut trimming = false;
        while let Some(first) = self.messages.front() {
            let over = self.messages.len() > self.max_messages || self.bytes > self.max_bytes;
            // Once trimming, go on to the next user message: a tool result or an answer
            // without the input before it is not a history a model can read.
            let orphan = trimming && first.role != Some(ProviderRole::User);
            if !over && !orphan {
                break;
            }
            trimming = true;
            let first = self.messages.pop_front().expect("checked non-empty");
            self.bytes -= message_bytes(&first);
            self.dropped += 1;
        }
    }
}

/// The bytes of a message's text members (see [`Conversation::bytes`]).
pub(crate) fn message_bytes(message: &ProviderMessage) -> usize {
    let calls: usize = (message.tool_calls.iter())
        .map(|c| c.id.len() + c.name.len() + c.arguments.len() + c.thought_signature.len())
        .sum();
    let images: usize = message.images.iter().map(String::len).sum();
    message.content.len()
        + message.reasoning_content.len()
        + message.reasoning_signature.len()
        + message.tool_call_id.len()
        + message.name.len()
        + images
        + calls
}

#[cfg(test)]
mod tests;
