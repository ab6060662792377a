//! The crate's one error type.

use std::path::PathBuf;

/// What can go wrong starting or tending a child process.
///
/// Each variant's message says what failed; the underlying I/O error, when there is one, is its
/// [`source`](std::error::Error::source) and is not repeated in the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command could not be found; the message says where it was looked for and how to fix
    /// it.
    #[error("{message}")]
    NotFound {
        /// The command as given.
        command: String,
        /// What was searched and how to fix it.
        message: String,
    },
    /// The program is not something this crate runs: not a path (resolve it with
    /// [`resolve`](crate::resolve) first) or a working directory that does not exist.
    #[error("{message}")]
    Invalid {
        /// What is wrong with it.
        message: String,
    },
    /// The operating system refused to start it.
    #[error("cannot start {}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A process-wide operation (the subreaper flag, a `/proc` scan) failed.
    #[error("cannot {what}")]
    Os {
        /// What was attempted.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The command was not found (on `PATH`, or at the path given).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// The command or its working directory was refused before anything ran.
    pub fn is_invalid(&self) -> bool {
        matches!(self, Error::Invalid { .. })
    }

    /// The operating system refused to start the program.
    pub fn is_spawn(&self) -> bool {
        matches!(self, Error::Spawn { .. })
    }

    /// A process-wide operation failed.
    pub fn is_os(&self) -> bool {
        matches!(self, Error::Os { .. })
    }
}
