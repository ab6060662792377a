//! The crate's one error type.

use std::path::PathBuf;

/// Why the hook files, or sidewire's approvals of them, could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A hook file exists but could not be read (not a regular file, over the cap, not UTF-8,
    /// or an I/O error).
    #[error("hook file: {0}")]
    File(#[source] sidewire_process::file::FileError),
    /// A hook file is not what its format says: not JSON, or a value of the wrong shape.
    #[error("{}: {json_path}: {message}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Where in it (`hooks.PreToolUse[0].hooks[1].command`).
        json_path: String,
        /// What is wrong.
        message: String,
    },
    /// sidewire's approvals file could not be written.
    #[error("cannot write {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// A hook file could not be read.
    pub fn is_file(&self) -> bool {
        matches!(self, Error::File(_))
    }

    /// A hook file is malformed.
    pub fn is_malformed(&self) -> bool {
        matches!(self, Error::Malformed { .. })
    }

    /// A file could not be written.
    pub fn is_io(&self) -> bool {
        matches!(self, Error::Io { .. })
    }
}
