//! The one error type of this crate: why the kit could not launch the sidecar at all.
//!
//! Everything a sidecar does once started is a finding in the [`Report`](crate::Report), never
//! an error. Messages are for people; callers branch on the `is_*` predicates. Each variant says
//! its cause in its message and returns no [`source`](std::error::Error::source), so a printed
//! chain shows it once.

use std::path::PathBuf;

use sidewire_ext_protocol::LaunchRefused;
use sidewire_process::file::FileError;

/// Why the kit could not launch the sidecar under test.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A path could not be used: its absolute form could not be formed, or the manifest's
    /// directory is not UTF-8 (so `REASONIX_PLUGIN_ROOT` would have no value). The message
    /// names the path and the I/O error.
    #[error("{}: {error}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The manifest was refused before it was read, or could not be read: not a regular file,
    /// a symbolic link out of the package, larger than
    /// [`MAX_MANIFEST_BYTES`](sidewire_ext_protocol::MAX_MANIFEST_BYTES), not UTF-8, missing.
    #[error(transparent)]
    File(FileError),
    /// The manifest failed strict decoding; the message names the file and the member's JSON
    /// path.
    #[error("{}: invalid manifest: {error}", path.display())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// Why, with the member's path.
        error: sidewire_ext_protocol::Error,
    },
    /// The manifest has no `runtime`: the plugin is declarative only, there is no sidecar.
    #[error("cannot check {plugin}: its manifest has no `runtime`: there is no sidecar to check")]
    NoRuntime {
        /// The plugin id.
        plugin: String,
    },
    /// The launch contract (spec §12.3) refuses the plugin's command or a member the consent
    /// screen shows, as a host would refuse to start it.
    #[error("cannot check {plugin}: {refused}")]
    Refused {
        /// The plugin id.
        plugin: String,
        /// The member and the rule it breaks.
        refused: LaunchRefused,
    },
    /// The program of a [`Sidecar::Command`](crate::Sidecar::Command) cannot be found or run;
    /// the message says where it was looked for.
    #[error("cannot check {program}: {error}")]
    Program {
        /// The program as given.
        program: String,
        /// Why.
        error: sidewire_process::Error,
    },
}

impl Error {
    /// A path could not be used, or the manifest file was refused or could not be read.
    pub fn is_io(&self) -> bool {
        matches!(self, Error::Io { .. } | Error::File(_))
    }

    /// The manifest did not decode.
    pub fn is_manifest(&self) -> bool {
        matches!(self, Error::Manifest { .. })
    }

    /// The manifest has no `runtime`.
    pub fn is_no_runtime(&self) -> bool {
        matches!(self, Error::NoRuntime { .. })
    }

    /// The launch contract refuses the plugin.
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Refused { .. })
    }

    /// A command's program cannot be found or run.
    pub fn is_program(&self) -> bool {
        matches!(self, Error::Program { .. })
    }
}
