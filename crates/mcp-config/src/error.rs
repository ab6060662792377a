//! The crate's one error type: what kind of thing is wrong with a config file, with a message
//! that names the file, the field's path and the rule.
//!
//! Every variant is a leaf: its message says everything (the field's path first, then what is
//! wrong), and it has no [`source`](std::error::Error::source), so a printed chain shows each
//! cause once. A message never quotes a value that may be a secret (an expanded variable, a
//! header): it names the variable or the field instead, and what a file wrote is quoted
//! escaped and cut (see `text.rs`). Callers branch on the `is_*` predicates, never on the text.

use std::fmt;

use crate::detect::Dialect;
use crate::text;

/// What is wrong with a config file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read: the config file or a server's `envFile` is missing, is not a
    /// regular file (a FIFO, a device, a directory), is over its cap
    /// ([`MAX_CONFIG_BYTES`](crate::MAX_CONFIG_BYTES),
    /// [`MAX_ENV_FILE_BYTES`](crate::MAX_ENV_FILE_BYTES)) or is not UTF-8.
    #[error("{message}")]
    #[non_exhaustive]
    Read {
        /// The file (and the `envFile` field) and the rule that refused it.
        message: String,
    },
    /// The text is not a document of its format: JSON (with comments) that does not parse,
    /// TOML that does not parse, an `envFile` line that is not `KEY=VALUE`.
    #[error("{message}")]
    #[non_exhaustive]
    Syntax {
        /// Where (line and column, or the `envFile` line) and what the parser said.
        message: String,
    },
    /// A member is wrong: of the wrong type, an unknown value, missing where it is needed, in
    /// contradiction with another, or a server whose spec `sidewire-mcp` refuses (an `http`
    /// server without an http(s) URL).
    #[error("{message}")]
    #[non_exhaustive]
    Invalid {
        /// The member's path (`mcpServers.files.args[1]`) and what is wrong with it.
        message: String,
    },
    /// A value could not be expanded: a variable that is not set and has no default, an
    /// `${input:ID}` with no answer and no default (or naming no input), a reference written
    /// wrong or nested, or a result over [`MAX_EXPANDED_BYTES`](crate::MAX_EXPANDED_BYTES).
    #[error("{message}")]
    #[non_exhaustive]
    Unexpanded {
        /// The field's path and the variable or input, never a value.
        message: String,
    },
    /// A dialect name that is none of the nine ([`Dialect`]'s `FromStr`).
    #[error(
        "unknown config dialect \"{}\"; expected one of {}",
        text::peer(name),
        DialectNames
    )]
    #[non_exhaustive]
    UnknownDialect {
        /// The name as given.
        name: String,
    },
}

impl Error {
    pub(crate) fn read(message: impl Into<String>) -> Self {
        Error::Read {
            message: text::bounded(message.into()),
        }
    }

    pub(crate) fn syntax(message: impl Into<String>) -> Self {
        Error::Syntax {
            message: text::bounded(message.into()),
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid {
            message: text::bounded(message.into()),
        }
    }

    pub(crate) fn unexpanded(message: impl Into<String>) -> Self {
        Error::Unexpanded {
            message: text::bounded(message.into()),
        }
    }

    /// The same error, its message saying where first (`{at}: {message}`): the file, or the
    /// field that named a file.
    pub(crate) fn at(self, at: impl fmt::Display) -> Self {
        let prefixed = |message: String| text::bounded(format!("{at}: {message}"));
        match self {
            Error::Read { message } => Error::Read {
                message: prefixed(message),
            },
            Error::Syntax { message } => Error::Syntax {
                message: prefixed(message),
            },
            Error::Invalid { message } => Error::Invalid {
                message: prefixed(message),
            },
            Error::Unexpanded { message } => Error::Unexpanded {
                message: prefixed(message),
            },
            other @ Error::UnknownDialect { .. } => other,
        }
    }

    /// A file could not be read (see [`Error::Read`]).
    pub fn is_read(&self) -> bool {
        matches!(self, Error::Read { .. })
    }

    /// The text does not parse as its format (see [`Error::Syntax`]).
    pub fn is_syntax(&self) -> bool {
        matches!(self, Error::Syntax { .. })
    }

    /// A member is wrong (see [`Error::Invalid`]).
    pub fn is_invalid(&self) -> bool {
        matches!(self, Error::Invalid { .. })
    }

    /// A value could not be expanded (see [`Error::Unexpanded`]).
    pub fn is_unexpanded(&self) -> bool {
        matches!(self, Error::Unexpanded { .. })
    }

    /// A dialect name is none of the nine.
    pub fn is_unknown_dialect(&self) -> bool {
        matches!(self, Error::UnknownDialect { .. })
    }
}

/// The dialects' names, comma separated.
struct DialectNames;

impl fmt::Display for DialectNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, dialect) in Dialect::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(dialect.as_str())?;
        }
        Ok(())
    }
}
