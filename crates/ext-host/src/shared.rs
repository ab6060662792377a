//! The state one host shares across its generations: the session, the redactor, the event
//! stream to the application, the UI hub, the audit log and the warn-once set.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use sidewire_ext_protocol::Reason;

use crate::Redactor;
use crate::audit::AuditLog;
use crate::config::HostConfig;
use crate::events::{EventSender, HostEvent};
use crate::ui::Hub;
use crate::util::lock;

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: HostConfig,
    pub(crate) workspace_root: String,
    redactor: RwLock<Redactor>,
    events: EventSender,
    /// (plugin, kind) pairs already warned about: §7.10 asks for one warning per plugin per host
    /// process, and the same holds for dropped events.
    warned: Mutex<HashSet<(String, &'static str)>>,
    pub(crate) hub: Hub,
    pub(crate) audit: AuditLog,
    /// The currently published generation.
    pub(crate) published: AtomicU64,
}

impl Shared {
    /// A host's shared state; `first` is the number of the generation its first build binds
    /// the UI to.
    pub(crate) fn new(
        config: HostConfig,
        redactor: Redactor,
        events: EventSender,
        first: u64,
    ) -> Self {
        Shared {
            workspace_root: config.get_workspace_root().to_string_lossy().into_owned(),
            audit: AuditLog::new(config.get_audit_log().to_path_buf()),
            config,
            redactor: RwLock::new(redactor),
            events,
            warned: Mutex::new(HashSet::new()),
            hub: Hub::default(),
            published: AtomicU64::new(first),
        }
    }

    pub(crate) fn redactor(&self) -> Redactor {
        self.redactor
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_redactor(&self, redactor: Redactor) {
        *self
            .redactor
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = redactor;
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        self.redactor().redact(text)
    }

    pub(crate) fn published(&self) -> u64 {
        self.published.load(Ordering::Acquire)
    }

    /// Hands an event to the application without waiting; `false` when the stream is full
    /// (in count or bytes) or nobody listens.
    pub(crate) fn notify(&self, event: HostEvent) -> bool {
        self.events.try_send(event)
    }

    /// Emits a (redacted) warning, once per plugin and kind for the life of the host.
    pub(crate) fn warn_once(&self, plugin: &str, kind: &'static str, message: &str) {
        if !lock(&self.warned).insert((plugin.to_owned(), kind)) {
            return;
        }
        self.warn(Some(plugin), message);
    }

    /// Emits a (redacted) warning.
    pub(crate) fn warn(&self, plugin: Option<&str>, message: &str) {
        self.warn_because(plugin, None, message);
    }

    /// Emits a (redacted) warning with its protocol reason.
    pub(crate) fn warn_because(&self, plugin: Option<&str>, reason: Option<Reason>, message: &str) {
        let message = self.redact(message);
        tracing::warn!(plugin, "{message}");
        self.notify(HostEvent::Warning {
            plugin: plugin.map(str::to_owned),
            message,
            reason,
        });
    }
}
