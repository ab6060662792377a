//! The one error type of this crate.
//!
//! Each cause appears once in a printed chain: a variant that wraps another crate's error
//! leaves it out of its message and returns it as the [`source`](std::error::Error::source)
//! (the hook point, the provider, the tool); a leaf says everything in its message and has no
//! source. Callers branch on the `is_*` predicates and [`Error::reason`], never on the text.

use sidewire_ext_host::protocol::{HookPoint, Reason};

/// What can make a turn or a tool call fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A hook point's chain could not run: a required plugin or a slot owner failed or blocked
    /// as a slot owner, or the extension host was shut down. The host's error is the source.
    #[error("the {} chain failed", point.as_str())]
    Hook {
        /// The point whose chain failed.
        point: HookPoint,
        /// The host's error (boxed: it is large, and errors travel in every `Result`).
        #[source]
        source: Box<sidewire_ext_host::Error>,
    },
    /// The provider's stream could not be opened, or ended in a failure (`provider_failed`,
    /// `provider_interrupted`, `stream_cancelled`, `stream_gap`, ...; see [`Error::reason`]).
    #[error("the provider {provider_ref} failed")]
    Provider {
        /// The provider ref the turn used.
        provider_ref: String,
        /// The host's error (boxed: it is large, and errors travel in every `Result`).
        #[source]
        source: Box<sidewire_ext_host::Error>,
    },
    /// The model's answer of one round grew past [`Agent::max_response_bytes`]; the stream was
    /// dropped (which cancels it).
    ///
    /// [`Agent::max_response_bytes`]: crate::Agent::max_response_bytes
    #[error("the model's answer grew past {limit} bytes; the stream was cancelled")]
    ResponseTooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
    /// The MCP call of a tool failed (the server's `isError` results are not errors: they go
    /// back to the model as results).
    #[error("calling {tool}")]
    Tool {
        /// The namespaced tool name.
        tool: String,
        /// The MCP error (boxed, as above).
        #[source]
        source: Box<sidewire_mcp::Error>,
    },
    /// The call of an extension tool (`ext__<plugin>__<tool>`, spec delta §2.5) failed: the
    /// sidecar could not run it at all (a tool that reports a failure of its own work answers
    /// a result with `isError`, which goes back to the model). [`Error::reason`] says why.
    #[error("calling {tool}")]
    ExtensionTool {
        /// The tool's model name.
        tool: String,
        /// The host's error (boxed, as above).
        #[source]
        source: Box<sidewire_ext_host::Error>,
    },
    /// A tool call's arguments are not a JSON object: the model's, or those `tool.before` left.
    #[error("the arguments of {tool} are not a JSON object: {detail}")]
    InvalidArguments {
        /// The namespaced tool name.
        tool: String,
        /// What is wrong with them.
        detail: String,
    },
}

impl Error {
    /// A hook point's chain failed.
    pub fn is_hook(&self) -> bool {
        matches!(self, Error::Hook { .. })
    }

    /// The provider's stream failed or could not be opened.
    pub fn is_provider(&self) -> bool {
        matches!(self, Error::Provider { .. })
    }

    /// The model's answer went over the byte bound.
    pub fn is_response_too_large(&self) -> bool {
        matches!(self, Error::ResponseTooLarge { .. })
    }

    /// The MCP call of a tool failed.
    pub fn is_tool(&self) -> bool {
        matches!(self, Error::Tool { .. })
    }

    /// The call of an extension tool failed.
    pub fn is_extension_tool(&self) -> bool {
        matches!(self, Error::ExtensionTool { .. })
    }

    /// A tool call's arguments are not a JSON object.
    pub fn is_invalid_arguments(&self) -> bool {
        matches!(self, Error::InvalidArguments { .. })
    }

    /// The wire reason of a hook or provider failure, when the host knows one
    /// (`provider_failed`, `provider_interrupted`, `stream_cancelled`, `intercept_timeout`, ...).
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Error::Hook { source, .. }
            | Error::Provider { source, .. }
            | Error::ExtensionTool { source, .. } => source.reason(),
            _ => None,
        }
    }
}
