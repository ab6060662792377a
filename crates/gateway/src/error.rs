//! The gateway's one error type.

/// Why the gateway could not start or do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration cannot work: an alias breaks the rule or is taken twice, bridge mode
    /// with other than one server, two tools under one name.
    #[error("{0}")]
    Config(String),
    /// The audit file could not be opened or written.
    #[error("audit log {path}")]
    Audit {
        /// The file (`-` for stdout).
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The upstream host failed.
    #[error(transparent)]
    Mcp(#[from] sidewire_mcp::Error),
}

impl Error {
    pub(crate) fn config(message: impl Into<String>) -> Self {
        Error::Config(message.into())
    }

    /// The configuration cannot work.
    pub fn is_config(&self) -> bool {
        matches!(self, Error::Config(_))
    }

    /// The audit log could not be opened or written.
    pub fn is_audit(&self) -> bool {
        matches!(self, Error::Audit { .. })
    }

    /// The upstream host failed.
    pub fn is_mcp(&self) -> bool {
        matches!(self, Error::Mcp(_))
    }
}
