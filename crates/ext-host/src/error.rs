//! The one error type of this crate, and the two structured failures it carries: a sidecar that
//! did not start ([`StartupFailure`]) and an operation an extension made fail
//! ([`OperationFailure`]).
//!
//! Messages are for people and are already redacted; callers branch on the `is_*` predicates,
//! [`Error::reason`] and the structured fields, never on the text.
//!
//! Each cause appears once when a chain is printed (`anyhow`'s `{:#}` prints every
//! [`source`](std::error::Error::source) after the message): a variant either says its cause
//! in its message and returns no source (an I/O error, a manifest decoding error: the message is
//! the whole story, so code that only formats `{err}` loses nothing), or leaves the cause out
//! of its message and returns it as the source ([`Error::Reload`]). Never both. Wire errors (`ErrorObject`,
//! `Reason`) are plain data in `sidewire-ext-protocol`; this module only reports them.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sidewire_ext_protocol::{HookPoint, Reason, Refusal, Slot};

use crate::chain::TraceEntry;

/// What can go wrong in the host.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file or directory failed. The message names the path and the I/O
    /// error; the I/O error is not also returned as the `source`, so a printed chain shows it
    /// once (see the module documentation).
    #[error("{}: {error}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A file a package or the store controls was refused before it was read, or could not be
    /// read: not a regular file (a FIFO, a device), a symbolic link out of the package, larger
    /// than its cap, or not UTF-8 (see [`sidewire_process::file`]). The message names the file
    /// and the rule; [`Error::file`] gives the typed cause.
    #[error(transparent)]
    File(sidewire_process::file::FileError),
    /// The installed-plugin store exists but cannot be read as one; it is never reset silently.
    #[error("{}: the installed-plugin store is corrupt: {detail}", path.display())]
    StoreCorrupt {
        /// The store file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A manifest failed strict decoding; the message names the file and the member's JSON
    /// path.
    #[error("{}: invalid manifest: {error}", path.display())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// Why, with the member's path.
        error: sidewire_ext_protocol::Error,
    },
    /// An install, link, replace or remove was refused.
    #[error("cannot install {plugin}: {detail}")]
    Install {
        /// The plugin id (or the package directory when the id is not known yet).
        plugin: String,
        /// Why.
        detail: String,
    },
    /// A package decodes but can never be installed (spec §12.1, §12.3): a member the consent
    /// screen shows holds a control character, or the command could never be launched. The
    /// message names the member and states the rule, and never repeats the member's value.
    #[error("cannot install {plugin}: manifest member {field} {refusal}")]
    Refused {
        /// The plugin id (the manifest `name`, or the package directory when the name itself is
        /// refused).
        plugin: String,
        /// The member's path: `name`, `version`, `runtime.command`, `runtime.args[2]`.
        field: String,
        /// Which rule it breaks.
        refusal: Refusal,
    },
    /// A path a v2 manifest contributes breaks a rule only the file system shows (spec delta
    /// §4.1): it leaves the plugin root through a symlink, or a theme is not a regular file.
    #[error("cannot install {plugin}: contributes.{} path {path:?} {refusal}", kind.as_str())]
    Contribution {
        /// The plugin id.
        plugin: String,
        /// The list the path is in.
        kind: sidewire_ext_protocol::v2::PathKind,
        /// The path, normalised.
        path: String,
        /// Which rule it breaks.
        refusal: crate::ContributionRefusal,
    },
    /// The plugin is not in the installed-plugin store.
    #[error("plugin {0} is not installed")]
    NotInstalled(String),
    /// A sidecar failed to start (spec §13.2).
    #[error(transparent)]
    Startup(Box<StartupFailure>),
    /// Two enabled plugins claim the same slot (§7.7); nothing was spawned.
    #[error("slot {} is claimed by both {first} and {second}", slot.as_str())]
    SlotConflict {
        /// The slot.
        slot: Slot,
        /// The plugin id that comes first.
        first: String,
        /// The other plugin id.
        second: String,
    },
    /// Two enabled v2 plugins claim the same `tool:<name>` or `provider:<ref>` slot (spec delta
    /// §2.8); nothing was spawned. The slot is shown quoted, as the manifest wrote it.
    #[error("slot {slot:?} is claimed by both {first} and {second}")]
    SlotFormConflict {
        /// The slot, `tool:…` or `provider:…`.
        slot: String,
        /// The plugin id that comes first.
        first: String,
        /// The other plugin id.
        second: String,
    },
    /// An extension made an intercepted operation fail (§7.10).
    #[error(transparent)]
    Operation(Box<OperationFailure>),
    /// A UI action, submission or prompt answer was refused or failed.
    #[error("{detail}")]
    Ui {
        /// The reason (`stale_generation`, `invalid_params`, `intercept_timeout`, …).
        reason: Reason,
        /// What happened, redacted.
        detail: String,
    },
    /// A reload failed; the old generation keeps running (§13.3). Why is the
    /// [`source`](std::error::Error::source) (not repeated in this message), also reachable
    /// typed through [`Error::startup`] and [`Error::reason`].
    #[error("reload to generation {generation} failed")]
    Reload {
        /// The generation number the failed build took (never reused).
        generation: u64,
        /// Why; shared by every request that joined this reload.
        #[source]
        source: Arc<Error>,
    },
    /// A provider stream could not be opened or did not end cleanly (§14.5), or its ref is
    /// not in the catalog (refused before anything is sent).
    #[error(transparent)]
    Provider(Box<ProviderFailure>),
    /// An extension tool call (spec delta §2.5) could not run: no such tool
    /// (`invalid_params`, nothing sent), a crashed or not-ready sidecar
    /// (`provider_interrupted`, nothing sent), an invalid result (`protocol_error`), the
    /// deadline (`intercept_timeout`) or the sidecar's error answer (its reason). A tool that
    /// reports a failure of its own work is not this: that is a result with `is_error`.
    #[error("{detail}")]
    Tool {
        /// The reason.
        reason: Reason,
        /// What happened, redacted.
        detail: String,
    },
    /// The host was shut down.
    #[error("the extension host is shut down")]
    ShutDown,
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error,
        }
    }

    pub(crate) fn install(plugin: impl Into<String>, detail: impl Into<String>) -> Self {
        Error::Install {
            plugin: plugin.into(),
            detail: detail.into(),
        }
    }

    pub(crate) fn ui(reason: Reason, detail: impl Into<String>) -> Self {
        Error::Ui {
            reason,
            detail: detail.into(),
        }
    }

    /// A file could not be read or written, or was refused before it was read
    /// ([`Error::file`] says why).
    pub fn is_io(&self) -> bool {
        matches!(self, Error::Io { .. } | Error::File(_))
    }

    /// The file that was refused or could not be read, and why (its `is_not_regular`,
    /// `is_symlink`, `is_too_large`, `is_not_utf8`, `is_not_found` predicates).
    pub fn file(&self) -> Option<&sidewire_process::file::FileError> {
        match self {
            Error::File(err) => Some(err),
            _ => None,
        }
    }

    /// The installed-plugin store is corrupt.
    pub fn is_store_corrupt(&self) -> bool {
        matches!(self, Error::StoreCorrupt { .. })
    }

    /// A manifest did not decode.
    pub fn is_manifest(&self) -> bool {
        matches!(self, Error::Manifest { .. })
    }

    /// An install operation was refused.
    pub fn is_install(&self) -> bool {
        matches!(self, Error::Install { .. })
    }

    /// A package was refused at install: see [`refusal`](Error::refusal).
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Refused { .. })
    }

    /// The member and the rule, when a package was refused at install.
    pub fn refusal(&self) -> Option<(&str, &Refusal)> {
        match self {
            Error::Refused { field, refusal, .. } => Some((field, refusal)),
            _ => None,
        }
    }

    /// A contributed path was refused: see [`Error::Contribution`].
    pub fn is_contribution(&self) -> bool {
        matches!(self, Error::Contribution { .. })
    }

    /// The plugin is not installed.
    pub fn is_not_installed(&self) -> bool {
        matches!(self, Error::NotInstalled(_))
    }

    /// A sidecar failed to start.
    pub fn is_startup(&self) -> bool {
        matches!(self, Error::Startup(_))
    }

    /// Two plugins claim one slot: a named one, or a v2 `tool:`/`provider:` one.
    pub fn is_slot_conflict(&self) -> bool {
        matches!(
            self,
            Error::SlotConflict { .. } | Error::SlotFormConflict { .. }
        )
    }

    /// An extension made the operation fail.
    pub fn is_operation(&self) -> bool {
        matches!(self, Error::Operation(_))
    }

    /// A UI call was refused or failed.
    pub fn is_ui(&self) -> bool {
        matches!(self, Error::Ui { .. })
    }

    /// A reload failed.
    pub fn is_reload(&self) -> bool {
        matches!(self, Error::Reload { .. })
    }

    /// A provider stream failed, or its ref is not in the catalog: see
    /// [`provider`](Error::provider) and [`reason`](Error::reason).
    pub fn is_provider(&self) -> bool {
        matches!(self, Error::Provider(_))
    }

    /// A provider stream went idle: nothing arrived within its idle bound
    /// ([`StreamRequest::idle_timeout`](crate::StreamRequest::idle_timeout),
    /// [`HostConfig::stream_idle_timeout`](crate::HostConfig::stream_idle_timeout)), so the host
    /// cancelled it.
    pub fn is_stream_idle(&self) -> bool {
        self.provider()
            .is_some_and(|failure| failure.idle_timeout.is_some())
    }

    /// The provider failure, when that is what this is.
    pub fn provider(&self) -> Option<&ProviderFailure> {
        match self {
            Error::Provider(failure) => Some(failure),
            _ => None,
        }
    }

    /// The host is shut down.
    pub fn is_shut_down(&self) -> bool {
        matches!(self, Error::ShutDown)
    }

    /// The startup failure, when that is what this is (also inside a failed reload).
    pub fn startup(&self) -> Option<&StartupFailure> {
        match self {
            Error::Startup(failure) => Some(failure),
            Error::Reload { source, .. } => source.startup(),
            _ => None,
        }
    }

    /// The operation failure, when that is what this is.
    pub fn operation(&self) -> Option<&OperationFailure> {
        match self {
            Error::Operation(failure) => Some(failure),
            _ => None,
        }
    }

    /// The protocol reason behind this error, when there is one.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Error::Startup(failure) => failure.reason,
            Error::Operation(failure) => failure.reason,
            Error::Ui { reason, .. } | Error::Tool { reason, .. } => Some(*reason),
            Error::Provider(failure) => Some(failure.reason),
            Error::Reload { source, .. } => source.reason(),
            Error::ShutDown => Some(Reason::ProviderInterrupted),
            _ => None,
        }
    }
}

/// Where a sidecar's start failed (§12.3, §13.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StartupStage {
    /// Not started: the generation's boot budget was spent before its turn.
    Queued,
    /// The install record, manifest or launch contract refused it before spawning.
    Resolve,
    /// The child's pipes could not be set up. Not produced any more: `sidewire-process` sets
    /// the pipes up as part of the spawn, so such a failure is a [`StartupStage::Spawn`].
    Pipes,
    /// The process could not be spawned.
    Spawn,
    /// The handshake failed: timeout, early exit, an error answer or a validation rule.
    Handshake,
    /// Not started: a required v2 plugin is inactive, a non-optional requirement of its
    /// manifest being unmet (spec delta §2.6; see
    /// [`InactivePlugin`](crate::InactivePlugin)).
    Inactive,
}

impl StartupStage {
    /// The stage's name as §13.2 writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            StartupStage::Queued => "queued",
            StartupStage::Resolve => "resolve",
            StartupStage::Pipes => "pipes",
            StartupStage::Spawn => "spawn",
            StartupStage::Handshake => "handshake",
            StartupStage::Inactive => "inactive",
        }
    }
}

impl fmt::Display for StartupStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which side of a handshake refused the other (§6.1): the same reason, `unsupported_version`
/// say, means "the sidecar speaks another version" when the host refused and "the sidecar does
/// not accept this host's version" when the sidecar did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RefusedBy {
    /// The host refused what the sidecar sent: its `InitializeResult` failed the checks of
    /// §6.3 (version, strict decoding, claims beyond the manifest), or it broke the readiness
    /// barrier (§6.4) or the framing rules (§2.3) during the handshake.
    Host,
    /// The sidecar refused the host: it answered `extension/initialize` with an error (§6.1
    /// step 2 or 3), for instance because it does not accept the host's protocol version.
    Sidecar,
}

impl RefusedBy {
    /// `host` or `sidecar`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusedBy::Host => "host",
            RefusedBy::Sidecar => "sidecar",
        }
    }
}

impl fmt::Display for RefusedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sidecar that did not start: the plugin id, the stage, the time it took, the cause, the
/// wire reason when there is one, which side refused the handshake, and the redacted stderr
/// tail (§13.2).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub struct StartupFailure {
    /// The plugin id.
    pub plugin: String,
    /// Where it failed.
    pub stage: StartupStage,
    /// From the start of the boot to the failure.
    pub elapsed: Duration,
    /// The wire reason (`protocol_error`, `unsupported_version`, `capability_not_declared`, …),
    /// or `None` for a timeout, an early exit or a launch failure.
    pub reason: Option<Reason>,
    /// At stage `handshake`, which side refused the other; `None` when nobody did (a timeout,
    /// an early exit, a write that failed) and at every other stage.
    pub refused_by: Option<RefusedBy>,
    /// What happened: `timeout after N ms`, `exited with status N`, `killed by signal N`, or the
    /// validation rule that failed. Redacted.
    pub cause: String,
    /// The last 16 KiB of the sidecar's stderr, redacted (empty when it never ran).
    pub stderr_tail: String,
}

impl fmt::Display for StartupFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "extension {} failed to start (stage {}, after {} ms",
            self.plugin,
            self.stage,
            self.elapsed.as_millis()
        )?;
        if let Some(reason) = self.reason {
            write!(f, ", {}", reason.as_str())?;
        }
        if let Some(side) = self.refused_by {
            write!(f, ", refused by the {side}")?;
        }
        write!(f, "): {}", self.cause)?;
        if !self.stderr_tail.is_empty() {
            write!(f, "\nstderr:\n{}", self.stderr_tail.trim_end())?;
        }
        Ok(())
    }
}

/// An intercepted operation an extension made fail (§7.10): a required plugin or a strategy
/// call failed, or a slot owner blocked. The message names the plugin, the point and the cause
/// ("extension acme did not answer tool.before within 5 s").
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct OperationFailure {
    /// The plugin that failed the operation.
    pub plugin: String,
    /// The point.
    pub point: HookPoint,
    /// The reason: `intercept_timeout`, `provider_interrupted`, `protocol_error` (an illegal
    /// decision or invalid replacement), …; `None` when a slot owner blocked the operation.
    pub reason: Option<Reason>,
    /// The whole message, redacted.
    pub message: String,
    /// What every member called so far did, and how long it took.
    pub trace: Vec<TraceEntry>,
}

/// A provider stream that could not be opened or did not end cleanly (§14.5), or a ref no
/// running sidecar serves. The message names the plugin, the stream and the cause, redacted.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ProviderFailure {
    /// The plugin whose sidecar serves the ref; `None` when no sidecar's catalog lists it.
    pub plugin: Option<String>,
    /// The provider ref.
    pub provider_ref: String,
    /// The wire reason: `invalid_params` (a ref not in the catalog, host-local),
    /// `provider_failed`, `provider_interrupted`, `stream_cancelled`, `stream_gap`,
    /// `intercept_timeout` (the open was not answered in time, or the stream went idle: see
    /// [`idle_timeout`](Self::idle_timeout)), `frame_too_large` (the open does not fit a
    /// frame), `protocol_error` (an invalid result, or a chunk that did not decode: the message
    /// names its `seq`, its type and why), or the reason of the sidecar's error answer.
    pub reason: Reason,
    /// The whole message, redacted.
    pub message: String,
    /// The stream's idle bound, when the stream ended because nothing arrived within it
    /// (reason `intercept_timeout`); the host cancelled it on the sidecar. `None` for every
    /// other failure.
    pub idle_timeout: Option<Duration>,
}
